"""Appends rows to a table with PyIceberg (pyarrow), optionally creating the table first.

  python pyiceberg_append.py <connection options> <namespace.table> [--create-schema JSON]
      [--partition-spec JSON] [--format-version 2|3] [--location s3://...] [--property k=v]... < rows.json

stdin: a JSON array of row objects (or {"rows": [...]}), in the encoding of interop_common.py
(decimals as strings or numbers, timestamps ISO 8601, binary base64, maps as [[k, v], ...] or an
object...). Numbers are parsed exactly (integers as int, others as Decimal). Empty stdin or [] with
--create-schema only creates the table.

--create-schema takes an Iceberg schema in the spec's JSON form ({"type": "struct", "fields": [{"id",
"name", "type", "required"}...]}); --partition-spec the spec's form ({"fields": [{"source-id",
"field-id", "name", "transform"}]}). The namespace is created when missing; an existing table is
kept (its schema is not compared).

Prints {snapshot_id, metadata_location, format_version, created, appended}.
"""

from __future__ import annotations

import argparse
import decimal
import json
import sys

from interop_common import add_connection_args, emit, load_catalog, main_guard, rows_to_arrow, schema_json


def json_arg(text: str):
    if text.lstrip().startswith(("{", "[")):
        return json.loads(text)
    with open(text) as f:
        return json.load(f)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("table", help="namespace.table")
    p.add_argument("--create-schema", help="Iceberg schema JSON (or a file path): create the table if missing")
    p.add_argument("--partition-spec", help="Iceberg partition spec JSON (or a file path)")
    p.add_argument("--format-version", default="2")
    p.add_argument("--location", help="table location (default: <warehouse>/<ns>.db/<table>)")
    p.add_argument("--property", action="append", default=[], help="table property k=v (repeatable)")
    p.add_argument("--snapshot-property", action="append", default=[], help="snapshot summary property k=v")
    a = p.parse_args()

    text = sys.stdin.read()
    rows = json.loads(text, parse_int=int, parse_float=decimal.Decimal) if text.strip() else []
    if isinstance(rows, dict):
        rows = rows["rows"]

    from pyiceberg.exceptions import NoSuchTableError
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
    from pyiceberg.schema import Schema

    catalog = load_catalog(a)
    namespace = tuple(a.table.split(".")[:-1])
    created = False
    if a.create_schema:
        try:
            table = catalog.load_table(a.table)
        except NoSuchTableError:
            schema_doc = json_arg(a.create_schema)
            schema_doc.setdefault("type", "struct")
            schema_doc.setdefault("schema-id", 0)
            schema = Schema.model_validate(schema_doc)
            spec = UNPARTITIONED_PARTITION_SPEC
            if a.partition_spec:
                spec_doc = json_arg(a.partition_spec)
                spec_doc.setdefault("spec-id", 0)
                spec = PartitionSpec.model_validate(spec_doc)
            props = {"format-version": str(a.format_version)}
            for kv in a.property:
                k, _, v = kv.partition("=")
                props[k] = v
            catalog.create_namespace_if_not_exists(namespace)
            kwargs = {"schema": schema, "partition_spec": spec, "properties": props}
            if a.location:
                kwargs["location"] = a.location
            table = catalog.create_table(a.table, **kwargs)
            created = True
    else:
        table = catalog.load_table(a.table)

    appended = 0
    if rows:
        arrow_schema = table.schema().as_arrow()
        data = rows_to_arrow(rows, arrow_schema, schema_json(table.schema()))
        props = dict(kv.partition("=")[::2] for kv in a.snapshot_property)
        table.append(data, snapshot_properties=props)
        appended = len(rows)

    table = table.refresh()
    emit(
        {
            "snapshot_id": table.metadata.current_snapshot_id,
            "metadata_location": table.metadata_location,
            "format_version": table.metadata.format_version,
            "created": created,
            "appended": appended,
        }
    )


if __name__ == "__main__":
    main_guard(main)
