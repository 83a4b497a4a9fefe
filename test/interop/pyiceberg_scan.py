"""Loads a table through PyIceberg (SqlCatalog on our Postgres, or a RestCatalog) and prints it as JSON.

  python pyiceberg_scan.py --sql-uri postgres://u:p@127.0.0.1:5432/db --catalog-name <warehouse>
      --s3-endpoint http://127.0.0.1:9000 --s3-access-key-id K --s3-secret-access-key S --s3-region us-east-1
      <namespace.table> [--order-by COL]... [--row-filter "id > 5"] [--snapshot-id N] [--no-files] [--no-rows]

Prints one document:
  {format_version, metadata_location, table_uuid, current_snapshot_id, schema (spec JSON),
   partition_spec, properties, row_count, rows: [...], snapshots: [{snapshot_id, parent, sequence_number,
   timestamp_ms, operation, summary, manifest_list}], files: [...], manifests: [...]}
`rows` follow the encoding of interop_common.py, sorted by --order-by (ascending, nulls last).
`files` are the live data files of the current snapshot as PyIceberg reads them from the manifests
(what table.inspect.files() gives, plus entry status and sequence numbers): metric maps as
[[field_id, n], ...] sorted by field id, raw lower/upper bounds (Appendix D binary) as base64,
`readable_bounds` {column name: {lower_bound, upper_bound}} decoded by PyIceberg and encoded like
values, `partition` {field name: value} likewise. `manifests`: the current manifest list.
"""

from __future__ import annotations

import argparse
import base64
import json
import uuid

import pyarrow as pa
from pyiceberg.conversions import from_bytes, to_bytes
from pyiceberg.io.pyarrow import schema_to_pyarrow

from interop_common import (
    snapshot_json,
    encode_scalar,
    add_connection_args,
    emit,
    encode_table,
    load_catalog,
    main_guard,
    schema_json,
    schema_field_types,
    sort_table,
)


def schema_json_type(t) -> object:
    """An Iceberg type in the spec's JSON form ("long", "decimal(38, 10)", {"type": "struct", ...})."""
    return json.loads(t.model_dump_json(by_alias=True))


def _pairs(d) -> list | None:
    return None if d is None else [[k, d[k]] for k in sorted(d)]


def _b64_pairs(d) -> list | None:
    return None if d is None else [[k, base64.b64encode(d[k]).decode()] for k in sorted(d)]


def _enum(v):
    return getattr(v, "name", v)


def encode_bound(field_type, raw: bytes | None):
    """A bound in Appendix D binary form, decoded by PyIceberg, in the interop encoding."""
    if raw is None:
        return None
    value = from_bytes(field_type, raw)
    itype = schema_json_type(field_type)
    arrow_type = schema_to_pyarrow(field_type)
    if isinstance(value, uuid.UUID):
        value = value.bytes
    if isinstance(arrow_type, pa.BaseExtensionType):
        arr = pa.ExtensionArray.from_storage(arrow_type, pa.array([value], type=arrow_type.storage_type))
    else:
        arr = pa.array([value], type=arrow_type)
    return encode_scalar(arr[0], itype)


def files_json(table) -> list[dict]:
    """What PyIceberg reads from the current snapshot's manifests, one object per live data file.

    The same content as table.inspect.files() (which fails on a uuid column in 0.12.0: Arrow's
    from_pylist cannot build the uuid extension type), plus each entry's status and sequence numbers.
    """
    md = table.metadata
    snapshot = table.current_snapshot()
    schema = table.schema()
    specs = md.specs()
    out = []
    for manifest in snapshot.manifests(table.io):
        spec = specs[manifest.partition_spec_id]
        partition_type = spec.partition_type(schema)
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            f = entry.data_file
            partition = {}
            for pos, pf in enumerate(spec.fields):
                ptype = partition_type.fields[pos].field_type
                value = f.partition[pos]
                partition[pf.name] = None if value is None else encode_bound(ptype, to_bytes(ptype, value))
            lower = f.lower_bounds or {}
            upper = f.upper_bounds or {}
            readable = {}
            for fid in sorted(set(lower) | set(upper)):
                try:
                    ftype = schema.find_field(fid).field_type
                except ValueError:
                    continue
                readable[schema.find_column_name(fid)] = {
                    "lower_bound": encode_bound(ftype, lower.get(fid)),
                    "upper_bound": encode_bound(ftype, upper.get(fid)),
                }
            out.append(
                {
                    "manifest_path": manifest.manifest_path,
                    "status": _enum(entry.status),
                    "snapshot_id": entry.snapshot_id,
                    "sequence_number": entry.sequence_number,
                    "file_sequence_number": entry.file_sequence_number,
                    "content": _enum(f.content),
                    "file_path": f.file_path,
                    "file_format": _enum(f.file_format),
                    "spec_id": f.spec_id,
                    "partition": partition,
                    "record_count": f.record_count,
                    "file_size_in_bytes": f.file_size_in_bytes,
                    "column_sizes": _pairs(f.column_sizes),
                    "value_counts": _pairs(f.value_counts),
                    "null_value_counts": _pairs(f.null_value_counts),
                    "nan_value_counts": _pairs(f.nan_value_counts),
                    "lower_bounds": _b64_pairs(f.lower_bounds),
                    "upper_bounds": _b64_pairs(f.upper_bounds),
                    "readable_bounds": readable,
                    "split_offsets": f.split_offsets,
                    "sort_order_id": f.sort_order_id,
                    "first_row_id": getattr(f, "first_row_id", None),
                }
            )
    out.sort(key=lambda x: x["file_path"])
    return out


def manifests_json(table) -> list[dict]:
    out = []
    for m in table.current_snapshot().manifests(table.io):
        out.append(
            {
                "manifest_path": m.manifest_path,
                "manifest_length": m.manifest_length,
                "partition_spec_id": m.partition_spec_id,
                "content": _enum(m.content),
                "sequence_number": m.sequence_number,
                "min_sequence_number": m.min_sequence_number,
                "added_snapshot_id": m.added_snapshot_id,
                "added_files_count": m.added_files_count,
                "existing_files_count": m.existing_files_count,
                "deleted_files_count": m.deleted_files_count,
                "added_rows_count": m.added_rows_count,
                "existing_rows_count": m.existing_rows_count,
                "deleted_rows_count": m.deleted_rows_count,
                "partitions": None
                if m.partitions is None
                else [
                    {
                        "contains_null": p.contains_null,
                        "contains_nan": p.contains_nan,
                        "lower_bound": None if p.lower_bound is None else base64.b64encode(p.lower_bound).decode(),
                        "upper_bound": None if p.upper_bound is None else base64.b64encode(p.upper_bound).decode(),
                    }
                    for p in m.partitions
                ],
                "first_row_id": getattr(m, "first_row_id", None),
            }
        )
    return out




def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("table", help="namespace.table")
    p.add_argument("--order-by", action="append", default=[], help="column to sort rows by (repeatable)")
    p.add_argument("--row-filter", help="PyIceberg row filter expression, e.g. \"id >= 5\"")
    p.add_argument("--snapshot-id", type=int)
    p.add_argument("--select", action="append", default=[], help="column to select (repeatable; default all)")
    p.add_argument("--no-rows", action="store_true")
    p.add_argument("--no-files", action="store_true")
    a = p.parse_args()

    catalog = load_catalog(a)
    table = catalog.load_table(a.table)
    md = table.metadata
    schema = table.schema()
    sj = schema_json(schema)
    doc: dict = {
        "format_version": md.format_version,
        "metadata_location": table.metadata_location,
        "table_uuid": str(md.table_uuid),
        "location": md.location,
        "current_snapshot_id": md.current_snapshot_id,
        "schema": sj,
        "partition_spec": schema_json(table.spec()),
        "properties": dict(md.properties),
        "snapshots": [snapshot_json(s) for s in md.snapshots],
    }
    if getattr(md, "next_row_id", None) is not None:
        doc["next_row_id"] = md.next_row_id

    if not a.no_rows:
        kwargs = {}
        if a.row_filter:
            kwargs["row_filter"] = a.row_filter
        if a.snapshot_id is not None:
            kwargs["snapshot_id"] = a.snapshot_id
        if a.select:
            kwargs["selected_fields"] = tuple(a.select)
        arrow = table.scan(**kwargs).to_arrow()
        arrow = sort_table(arrow, a.order_by)
        doc["row_count"] = arrow.num_rows
        doc["rows"] = encode_table(arrow, schema_field_types(sj))

    if not a.no_files and md.current_snapshot_id is not None:
        doc["files"] = files_json(table)
        doc["manifests"] = manifests_json(table)

    emit(doc)


if __name__ == "__main__":
    main_guard(main)
