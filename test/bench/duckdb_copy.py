"""DuckDB's side of `npm run bench:roll` (test/bench/roll.ts): the same intake objects turned into one
Parquet file by DuckDB's COPY, as a user with DuckDB would write them — no Iceberg commit (DuckDB
1.5.5's iceberg extension does not append to this catalog), so it is a floor, not a like-for-like roll.

  python duckdb_copy.py <connection options> --source-table ns.t --bucket B --prefix P --out KEY [--sum COL]...

The columns are the source table's (the sink's table: its Iceberg schema as DuckDB types); the objects
are listed with pyarrow (DuckDB's S3 glob is not signed as every store wants) and read with
read_json(format 'newline_delimited', columns = …); __ingest_ts is now(). Written with zstd, as the
roller writes. Then pyarrow (not DuckDB) reads the file back: its row count and the exact sum of each
--sum column (readback.py's forms, "pos.x" of WKB points too), so what DuckDB wrote is checked by
another reader before any figure is printed.

A geometry column (GeoJSON Points): DuckDB 1.5.5's core GEOMETRY type has no GeoJSON reader (that is
the spatial extension's ST_GeomFromGeoJSON, not installable offline), so the point is read as
STRUCT(type, coordinates), written as WKT and cast to GEOMETRY, which COPY stores as WKB (binary).
Anything but a Point stops the COPY.

Prints one JSON document: {rows, batches, seconds: {connect, list, copy, work}, file_bytes, sums}.
work = list + copy (the connection and extension loading are set-up, as the catalog is for the others).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

T0 = time.monotonic()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from duckdb_scan import connect, quote  # noqa: E402
from interop_common import add_connection_args, emit, load_catalog, main_guard  # noqa: E402
from readback import exact_sum, point_part, point_sum  # noqa: E402

import pyarrow.fs as pafs  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from pyiceberg import types as it  # noqa: E402


def duck_type(t: it.IcebergType) -> str:
    """An Iceberg type as DuckDB spells it."""
    simple = {
        it.BooleanType: "BOOLEAN",
        it.IntegerType: "INTEGER",
        it.LongType: "BIGINT",
        it.FloatType: "FLOAT",
        it.DoubleType: "DOUBLE",
        it.StringType: "VARCHAR",
        it.DateType: "DATE",
        it.TimeType: "TIME",
        it.TimestampType: "TIMESTAMP",
        it.TimestamptzType: "TIMESTAMPTZ",
        it.UUIDType: "UUID",
        it.BinaryType: "BLOB",
    }
    for cls, name in simple.items():
        if isinstance(t, cls):
            return name
    if isinstance(t, it.DecimalType):
        return f"DECIMAL({t.precision}, {t.scale})"
    if isinstance(t, it.StructType):
        return "STRUCT(" + ", ".join(f'"{f.name}" {duck_type(f.field_type)}' for f in t.fields) + ")"
    if isinstance(t, it.ListType):
        return f"{duck_type(t.element_type)}[]"
    if isinstance(t, it.MapType):
        return f"MAP({duck_type(t.key_type)}, {duck_type(t.value_type)})"
    raise SystemExit(f"no DuckDB type for {t}")


GEOJSON_POINT = "STRUCT(type VARCHAR, coordinates DOUBLE[])"


def ident(name: str) -> str:
    """A column name as a DuckDB identifier."""
    return '"' + name.replace('"', '""') + '"'


def point_geometry(col: str) -> str:
    """A GeoJSON Point read as GEOJSON_POINT, as DuckDB's GEOMETRY (by WKT: a double prints as its shortest exact text)."""
    return (
        f"CASE WHEN {col} IS NULL THEN NULL "
        f"WHEN {col}.type <> 'Point' OR len({col}.coordinates) <> 2 THEN error('only 2D GeoJSON Points are taken') "
        f"ELSE ('POINT(' || {col}.coordinates[1] || ' ' || {col}.coordinates[2] || ')')::GEOMETRY END AS {col}"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("--source-table", required=True)
    p.add_argument("--bucket", required=True)
    p.add_argument("--prefix", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--sum", action="append", default=[])
    a = p.parse_args()

    schema = load_catalog(a).load_table(a.source_table).schema()
    geometry = {f.name for f in schema.fields if isinstance(f.field_type, it.GeometryType)}
    columns = {f.name: GEOJSON_POINT if f.name in geometry else duck_type(f.field_type) for f in schema.fields if f.name != "__ingest_ts"}
    endpoint = a.s3_endpoint
    fs = pafs.S3FileSystem(
        access_key=a.s3_access_key_id,
        secret_key=a.s3_secret_access_key,
        endpoint_override=endpoint.split("://", 1)[-1],
        scheme="https" if endpoint.startswith("https://") else "http",
        region=a.s3_region,
        force_virtual_addressing=False,
    )
    t_connect = time.monotonic()
    con = connect(a)
    t_start = time.monotonic()

    infos = [
        i
        for i in fs.get_file_info(pafs.FileSelector(f"{a.bucket}/{a.prefix.strip('/')}", recursive=False))
        if i.type == pafs.FileType.File and i.path.endswith(".ndjson")
    ]
    urls = sorted(f"s3://{i.path}" for i in infos)
    t_list = time.monotonic()

    cols = "{" + ", ".join(f"{quote(n)}: {quote(t)}" for n, t in columns.items()) + "}"
    files = "[" + ", ".join(quote(u) for u in urls) + "]"
    out = f"s3://{a.bucket}/{a.out}"
    select = ", ".join(point_geometry(ident(n)) if n in geometry else ident(n) for n in columns)
    con.execute(
        f"COPY (SELECT {select}, now() AS __ingest_ts FROM read_json({files}, format = 'newline_delimited', columns = {cols})) "
        f"TO {quote(out)} (FORMAT parquet, COMPRESSION zstd)"
    )
    t_copy = time.monotonic()

    # The read-back, by pyarrow: every row, and the exact sums.
    path = f"{a.bucket}/{a.out}"
    parts = {c: point_part(c, columns) for c in a.sum}
    read = list(dict.fromkeys(p[0] if p else c for c, p in parts.items() if p or c in columns))
    table = pq.read_table(path, filesystem=fs, columns=read or None)
    meta = pq.ParquetFile(fs.open_input_file(path)).metadata
    emit(
        {
            "rows": meta.num_rows,
            "batches": len(urls),
            "file_bytes": fs.get_file_info(path).size,
            "sums": {c: point_sum(table.column(p[0]).chunks, p[1]) if p else exact_sum(table.column(c).chunks) for c, p in parts.items() if p or c in columns},
            "seconds": {
                "connect": t_start - t_connect,
                "list": t_list - t_start,
                "copy": t_copy - t_list,
                "work": t_copy - t_start,
                "total": t_copy - T0,
            },
        }
    )


if __name__ == "__main__":
    main_guard(main)
