"""Catalog operations through PyIceberg's RestCatalog, one per run, for the REST catalog's tests.

  python pyiceberg_rest.py <connection options: --rest-uri, --rest-token | --rest-credential, --warehouse, s3>
      <op> [args]

ops:
  config                                  the catalog's properties after /v1/config (prefix, s3.*)
  namespaces [PARENT]                     list_namespaces(PARENT), and list_tables of each
  create-namespace NS [--property k=v]    create_namespace; answers load_namespace_properties
  update-namespace NS [--property k=v] [--remove k]
  drop-namespace NS
  exists NS.T                             table_exists and namespace_exists
  create-table NS.T --schema JSON [--format-version 2|3] [--stage] [--property k=v]
                                          create_table, or create_table_transaction (stage-create, then
                                          one commit with assert-create) appending stdin's rows
  conflict NS.T                           two loads of one table; both append a row: the second is stale
                                          (PyIceberg retries a failed commit commit.retry.num-retries times)
  rename NS.T NS.T2
  drop NS.T
  register NS.T LOCATION [--overwrite]    register_table at a metadata file; answers its metadata location,
                                          current snapshot and properties

Prints {"result": ...} or, when PyIceberg raised, {"error": {"type": <exception class>, "message"}}.
"""

from __future__ import annotations

import argparse
import decimal
import json
import sys

from interop_common import add_connection_args, emit, load_catalog, main_guard, rows_to_arrow, schema_json


def kv(pairs: list[str]) -> dict[str, str]:
    return dict(p.partition("=")[::2] for p in pairs)


def run(a: argparse.Namespace):
    from pyiceberg.schema import Schema

    catalog = load_catalog(a)
    op = a.op
    if op == "config":
        return {k: v for k, v in catalog.properties.items() if k in ("prefix", "uri", "warehouse") or k.startswith(("s3.", "client."))}
    if op == "namespaces":
        parent = tuple(a.args[0].split(".")) if a.args else ()
        namespaces = [list(n) for n in catalog.list_namespaces(parent)]
        return {"namespaces": namespaces, "tables": {".".join(n): [".".join(t) for t in catalog.list_tables(tuple(n))] for n in namespaces}}
    if op == "create-namespace":
        catalog.create_namespace(a.args[0], kv(a.property))
        return catalog.load_namespace_properties(a.args[0])
    if op == "update-namespace":
        s = catalog.update_namespace_properties(a.args[0], set(a.remove), kv(a.property))
        return {"updated": sorted(s.updated), "removed": sorted(s.removed), "missing": sorted(s.missing)}
    if op == "drop-namespace":
        catalog.drop_namespace(a.args[0])
        return None
    if op == "exists":
        return {"table": catalog.table_exists(a.args[0]), "namespace": catalog.namespace_exists(a.args[0].rsplit(".", 1)[0])}
    if op == "create-table":
        doc = json.loads(a.schema)
        doc.setdefault("type", "struct")
        doc.setdefault("schema-id", 0)
        schema = Schema.model_validate(doc)
        props = {"format-version": a.format_version, **kv(a.property)}
        text = sys.stdin.read()
        rows = json.loads(text, parse_int=int, parse_float=decimal.Decimal) if text.strip() else []
        if a.stage:
            with catalog.create_table_transaction(a.args[0], schema=schema, properties=props) as tx:
                if rows:
                    tx.append(rows_to_arrow(rows, schema.as_arrow(), schema_json(schema)))
            table = catalog.load_table(a.args[0])
        else:
            table = catalog.create_table(a.args[0], schema=schema, properties=props)
        return {"metadata_location": table.metadata_location, "location": table.location(), "format_version": table.format_version, "snapshot_id": table.metadata.current_snapshot_id}
    if op == "conflict":
        first, second = catalog.load_table(a.args[0]), catalog.load_table(a.args[0])
        arrow = first.schema().as_arrow()
        sj = schema_json(first.schema())
        first.append(rows_to_arrow([{"x": 1}], arrow, sj))
        second.append(rows_to_arrow([{"x": 2}], arrow, sj))
        return "both appended"
    if op == "rename":
        catalog.rename_table(a.args[0], a.args[1])
        return None
    if op == "drop":
        catalog.drop_table(a.args[0])
        return None
    if op == "register":
        table = catalog.register_table(a.args[0], a.args[1], overwrite=a.overwrite)
        return {"metadata_location": table.metadata_location, "snapshot_id": table.metadata.current_snapshot_id, "properties": table.properties}
    raise SystemExit(f"unknown op {op}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("op")
    p.add_argument("args", nargs="*")
    p.add_argument("--schema")
    p.add_argument("--format-version", default="2")
    p.add_argument("--stage", action="store_true")
    p.add_argument("--overwrite", action="store_true")
    p.add_argument("--property", action="append", default=[])
    p.add_argument("--remove", action="append", default=[])
    a = p.parse_args()
    try:
        emit({"result": run(a)})
    except Exception as e:  # noqa: BLE001 - the test asserts which exception PyIceberg raised
        emit({"error": {"type": type(e).__name__, "message": str(e)}})


if __name__ == "__main__":
    main_guard(main)
