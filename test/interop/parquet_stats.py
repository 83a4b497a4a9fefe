"""What PyIceberg computes from a table's Parquet data files by itself (not from the manifests).

  python parquet_stats.py <connection options> <namespace.table> [--order-by COL]... [--rows-binary-geometry]

For every live data file of the current snapshot, the Parquet footer is read through the table's
FileIO and handed to PyIceberg's own metrics code (`data_file_statistics_from_parquet_metadata`
with `compute_statistics_plan` of the table's schema and properties, the code PyIceberg runs for
the files it writes), and the partition PyIceberg infers from those statistics.

--rows-binary-geometry also scans the rows with PyIceberg's ArrowScan, with every geometry and
geography column projected as binary: PyIceberg 0.12 cannot read a Parquet geometry column as
its Iceberg type (ResolveError "Cannot promote an binary to geometry"), but it reads the WKB bytes.

Prints {files: [{file_path, record_count, column_sizes, value_counts, null_value_counts,
nan_value_counts, lower_bounds, upper_bounds, split_offsets, partition}], counts_only: [field ids of
nanosecond timestamps, whose bounds PyIceberg cannot compute], rows?: [...]}: metric maps
as [[field_id, n], ...] sorted by field id, bounds as base64 (Appendix D binary form), the partition
{field name: value} and the rows in interop_common.py's encoding (geometry as WKB hex).
"""

from __future__ import annotations

import argparse
import base64
import json

import pyarrow.parquet as pq
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import (
    ArrowScan,
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
)
from pyiceberg.schema import Schema
from pyiceberg.types import (
    BinaryType,
    GeographyType,
    GeometryType,
    ListType,
    MapType,
    NestedField,
    StructType,
    TimestampNanoType,
    TimestamptzNanoType,
)

from interop_common import add_connection_args, emit, encode_table, load_catalog, main_guard, schema_field_types, schema_json, sort_table
from pyiceberg_scan import encode_bound


def _pairs(d: dict) -> list:
    return [[k, d[k]] for k in sorted(d)]


def _b64_pairs(d: dict) -> list:
    return [[k, base64.b64encode(d[k]).decode()] for k in sorted(d)]


def _binary_geometry(t):
    """The type with every geometry/geography (at any depth) replaced by binary."""
    if isinstance(t, (GeometryType, GeographyType)):
        return BinaryType()
    if isinstance(t, StructType):
        return StructType(*[_field(f) for f in t.fields])
    if isinstance(t, ListType):
        return ListType(t.element_id, _binary_geometry(t.element_type), t.element_required)
    if isinstance(t, MapType):
        return MapType(t.key_id, _binary_geometry(t.key_type), t.value_id, _binary_geometry(t.value_type), t.value_required)
    return t


def _field(f: NestedField) -> NestedField:
    return NestedField(f.field_id, f.name, _binary_geometry(f.field_type), f.required, f.doc)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("table", help="namespace.table")
    p.add_argument("--order-by", action="append", default=[])
    p.add_argument("--rows-binary-geometry", action="store_true")
    a = p.parse_args()

    table = load_catalog(a).load_table(a.table)
    schema = table.schema()
    spec = table.spec()
    # PyIceberg cannot aggregate nanosecond statistics (pyarrow's Statistics.min refuses to make a
    # datetime of them without pandas): those columns are put in `counts` mode and listed.
    properties = dict(table.metadata.properties)
    counts_only = []
    for fid, name in schema._lazy_id_to_name.items():
        if isinstance(schema.find_field(fid).field_type, (TimestampNanoType, TimestamptzNanoType)):
            properties[f"write.metadata.metrics.column.{name}"] = "counts"
            counts_only.append(fid)
    plan = compute_statistics_plan(schema, properties)
    mapping = parquet_path_to_id_mapping(schema)
    partition_type = spec.partition_type(schema)
    tasks = list(table.scan().plan_files())

    files = []
    for task in tasks:
        path = task.file.file_path
        with table.io.new_input(path).open() as f:
            metadata = pq.read_metadata(f)
        stats = data_file_statistics_from_parquet_metadata(metadata, plan, mapping)
        s = stats.to_serialized_dict()
        record = stats.partition(spec, schema)
        partition = {}
        for pos, pf in enumerate(spec.fields):
            value = record[pos]
            ptype = partition_type.fields[pos].field_type
            from pyiceberg.conversions import to_bytes

            partition[pf.name] = None if value is None else encode_bound(ptype, to_bytes(ptype, value))
        files.append(
            {
                "file_path": path,
                "record_count": s["record_count"],
                "column_sizes": _pairs(s["column_sizes"]),
                "value_counts": _pairs(s["value_counts"]),
                "null_value_counts": _pairs(s["null_value_counts"]),
                "nan_value_counts": _pairs(s["nan_value_counts"]),
                "lower_bounds": _b64_pairs(s["lower_bounds"]),
                "upper_bounds": _b64_pairs(s["upper_bounds"]),
                "split_offsets": s["split_offsets"],
                "partition": partition,
            }
        )
    files.sort(key=lambda x: x["file_path"])
    doc: dict = {"files": files, "counts_only": sorted(counts_only)}

    if a.rows_binary_geometry:
        projected = Schema(*[_field(f) for f in schema.fields], schema_id=schema.schema_id)
        arrow = ArrowScan(table.metadata, table.io, projected, AlwaysTrue()).to_table(tasks)
        arrow = sort_table(arrow, a.order_by)
        doc["row_count"] = arrow.num_rows
        # encoded with the table's own types as hints: geometry prints as WKB hex
        doc["rows"] = encode_table(arrow, schema_field_types(schema_json(schema)))

    emit(doc)


if __name__ == "__main__":
    main_guard(main)
