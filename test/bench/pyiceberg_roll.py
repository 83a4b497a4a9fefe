"""The PyIceberg side of `npm run bench:roll` (test/bench/roll.ts): the same intake batches appended
by PyIceberg, in its own process, for a side-by-side rows/s and peak RSS.

  python pyiceberg_roll.py <connection options> --source-table ns.t --table ns.t2 --bucket B --prefix P [--threads 8] [--upsert-key COL]...

Creates --table with --source-table's schema (the sink's table after its first roll: the producer's
columns plus __ingest_ts) and format version; lists the NDJSON objects under --prefix (copies of the
batches the roller rolls, x-amz-meta-* kept), reads them from the bucket with pyarrow.fs.S3FileSystem
on --threads threads, parses each with pyarrow.json (explicit schema from the table; dates, times
and uuids read as text and converted, maps parsed with json: what pyarrow's reader cannot take), sets
__ingest_ts to the object's x-amz-meta-received when pyarrow exposes it (else its Last-Modified),
concatenates them in (Last-Modified, key) order, and commits ONE table.append. No row-by-row
validation, no rejects, no markers: the plain library path.

Geometry (bench:roll --schema geometry): PyIceberg 0.12 writes no format-version 3 metadata ("Writing V3
is not yet supported") and reads no Parquet geometry column, so its table is a v2 one with each
geometry column as binary holding the WKB; the GeoJSON Points are read by pyarrow as
struct<type, coordinates> and made ISO WKB by Arrow compute, 21 bytes a point, with no per-row Python
(no shapely, geoarrow or numpy in this venv; only Points are taken, anything else stops the script).

--upsert-key (bench:roll --schema keyed): --table exists, seeded (pyiceberg_upsert.py seed), and the
rows go into it with ONE table.upsert(df, join_cols=[…]) instead of the append, as bench:upsert's
baseline does.

Prints one JSON document: {rows, batches, bytes, seconds: {import, catalog, create_table, setup, list,
read, append, total, work}, snapshot_id, added_records, received_from[, rows_updated, rows_inserted]}; work = from the constructed
catalog to the committed snapshot, less the table's creation (the roller's table exists before its
roll, and the roller's catalog is made before the roll's clock starts).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

T0 = time.monotonic()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))

from interop_common import add_connection_args, emit, load_catalog, main_guard  # noqa: E402

import datetime  # noqa: E402
import json  # noqa: E402
import uuid  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.fs as pafs  # noqa: E402
import pyarrow.json as pajson  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import BinaryType, GeometryType, NestedField  # noqa: E402

# A GeoJSON geometry as pyarrow's JSON reader reads it (a Point's coordinates: [x, y]).
GEOJSON_POINT = pa.struct([pa.field("type", pa.string()), pa.field("coordinates", pa.list_(pa.float64()))])
# ISO WKB of a 2D point, little-endian: byte order 1, type 1 (Point), then x and y as doubles.
WKB_POINT_HEADER = pa.scalar(b"\x01\x01\x00\x00\x00", pa.binary())


def doubles_as_bytes(values: pa.Array) -> pa.Array:
    """Each double's 8 bytes (little-endian, as Arrow stores them) as a binary value, without a copy per value."""
    data = values.buffers()[1]
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(8), len(values), [None, data], offset=values.offset).cast(pa.binary())


def points_wkb(col: pa.Array) -> pa.Array:
    """GeoJSON Points (GEOJSON_POINT) as ISO WKB, vectorised in Arrow: header, x and y bytes joined value by value."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    kinds = pc.unique(col.field("type").filter(col.is_valid())).to_pylist()
    if any(k != "Point" for k in kinds if k is not None):
        raise SystemExit(f"points_wkb: only GeoJSON Points are taken, got {kinds}")
    coords = col.field("coordinates")
    if pc.any(pc.not_equal(pc.list_value_length(coords.filter(col.is_valid())), 2)).as_py():
        raise SystemExit("points_wkb: a Point without exactly 2 coordinates")
    valid = col.is_valid()
    x = doubles_as_bytes(pc.list_element(pc.if_else(valid, coords, pa.scalar([0.0, 0.0], coords.type)), 0))
    y = doubles_as_bytes(pc.list_element(pc.if_else(valid, coords, pa.scalar([0.0, 0.0], coords.type)), 1))
    wkb = pc.binary_join_element_wise(WKB_POINT_HEADER, x, y, b"")
    return pc.if_else(valid, wkb, pa.scalar(None, pa.binary())).cast(pa.large_binary())


def writable(schema: Schema) -> Schema:
    """The schema with every top-level geometry column as binary (the WKB): what PyIceberg 0.12 can write."""
    fields = [NestedField(f.field_id, f.name, BinaryType(), f.required, f.doc) if isinstance(f.field_type, GeometryType) else f for f in schema.fields]
    return Schema(*fields, schema_id=schema.schema_id)


def as_read(t: pa.DataType) -> pa.DataType:
    """The type pyarrow's JSON reader reads a column of type t as (the large types PyIceberg uses it has not)."""
    if pa.types.is_date(t) or pa.types.is_time(t) or isinstance(t, pa.BaseExtensionType) or pa.types.is_fixed_size_binary(t):
        return pa.string()
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        return pa.list_(as_read(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, as_read(f.type)) for f in t])
    return t


def convert(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """The columns read as text converted to their types: dates by pyarrow's cast, times and uuids value by value."""
    for i, name in enumerate(t.column_names):
        want = schema.field(name).type
        col = t.column(i)
        if col.type == want or not pa.types.is_string(col.type) or pa.types.is_string(want) or pa.types.is_large_string(want):
            continue
        values = col.to_pylist() if not pa.types.is_date(want) else None
        if pa.types.is_date(want):
            new = pc.cast(col, want)
        elif pa.types.is_time(want):
            new = pa.array([None if v is None else datetime.time.fromisoformat(v) for v in values], type=want)
        else:  # uuid: 16 bytes, as the table's extension type
            storage = pa.array([None if v is None else uuid.UUID(v).bytes for v in values], type=pa.binary(16))
            new = pa.ExtensionArray.from_storage(want, storage) if isinstance(want, pa.BaseExtensionType) else storage
        t = t.set_column(i, pa.field(name, want), new)
    return t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("--source-table", required=True)
    p.add_argument("--table", required=True)
    p.add_argument("--bucket", required=True)
    p.add_argument("--prefix", required=True)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--upsert-key", action="append", default=[])
    a = p.parse_args()
    t_import = time.monotonic()

    catalog = load_catalog(a)
    t_catalog = time.monotonic()
    src = catalog.load_table(a.source_table)
    geometry = [f.name for f in src.schema().fields if isinstance(f.field_type, GeometryType)]
    t_create = time.monotonic()
    if a.upsert_key:
        table = catalog.load_table(a.table)  # seeded before, untimed
    else:
        namespace = tuple(a.table.split(".")[:-1])
        catalog.create_namespace_if_not_exists(namespace)
        # Next to the source table (the SQL catalog here has no default warehouse path).
        location = src.metadata.location.rstrip("/").rsplit("/", 1)[0] + "/" + a.table.split(".")[-1]
        version = min(src.format_version, 2)  # PyIceberg 0.12 writes no v3 metadata
        table = catalog.create_table(a.table, schema=writable(src.schema()), location=location, properties={"format-version": str(version)})
    create_seconds = time.monotonic() - t_create
    schema = table.schema()
    arrow_schema = schema.as_arrow()
    ingest = "__ingest_ts"
    producer_schema = pa.schema([f for f in arrow_schema if f.name != ingest])
    # pyarrow's JSON reader takes most types as they are; dates, times and uuids it reads as text (then
    # converted), maps not at all (those columns are parsed from the lines with json, as a user would).
    maps = [f for f in producer_schema if pa.types.is_map(f.type)]
    parse_schema = pa.schema(
        [pa.field(f.name, GEOJSON_POINT if f.name in geometry else as_read(f.type)) for f in producer_schema if not pa.types.is_map(f.type)]
    )
    parse = pajson.ParseOptions(explicit_schema=parse_schema, unexpected_field_behavior="ignore")
    endpoint = a.s3_endpoint
    scheme = "https" if endpoint.startswith("https://") else "http"
    fs = pafs.S3FileSystem(
        access_key=a.s3_access_key_id,
        secret_key=a.s3_secret_access_key,
        endpoint_override=endpoint.split("://", 1)[-1],
        scheme=scheme,
        region=a.s3_region,
        force_virtual_addressing=False,
    )
    t_setup = time.monotonic()

    infos = [
        i
        for i in fs.get_file_info(pafs.FileSelector(f"{a.bucket}/{a.prefix.strip('/')}", recursive=False))
        if i.type == pafs.FileType.File and i.path.endswith(".ndjson")
    ]
    infos.sort(key=lambda i: (i.mtime, i.path))
    t_list = time.monotonic()

    def read_one(info):
        with fs.open_input_stream(info.path) as f:
            data = f.read()
            meta = f.metadata() or {}
        t = pajson.read_json(pa.BufferReader(data), parse_options=parse)
        for name in geometry:
            i = t.column_names.index(name)
            t = t.set_column(i, pa.field(name, pa.large_binary()), points_wkb(t.column(i)))
        t = convert(t, producer_schema)
        if maps:
            objects = [json.loads(line) for line in data.splitlines() if line.strip()]
            for f in maps:
                t = t.append_column(f, pa.array([None if o.get(f.name) is None else list(o[f.name].items()) for o in objects], type=f.type))
        received = next((v for k, v in meta.items() if k.lower() in ("x-amz-meta-received", "received")), None)
        source = "x-amz-meta-received"
        if received is None:
            source = "last-modified"
            received = info.mtime
        stamp = pa.array([received] * t.num_rows, type=pa.string() if isinstance(received, (str, bytes)) else pa.timestamp("us", tz="UTC"))
        if stamp.type != pa.timestamp("us", tz="UTC"):
            stamp = stamp.cast(pa.string()).cast(pa.timestamp("us", tz="UTC"))
        return len(data), source, t.append_column(pa.field(ingest, pa.timestamp("us", tz="UTC")), stamp)

    with ThreadPoolExecutor(max_workers=a.threads) as pool:
        read = list(pool.map(read_one, infos))  # map keeps the listing's order
    total_bytes = sum(r[0] for r in read)
    received_from = "last-modified" if any(r[1] == "last-modified" for r in read) else "x-amz-meta-received"
    tables = [r[2] for r in read]
    del read
    data = pa.concat_tables(tables).select([f.name for f in arrow_schema]).cast(arrow_schema)
    del tables
    t_read = time.monotonic()

    upserted = table.upsert(data, join_cols=a.upsert_key) if a.upsert_key else table.append(data)
    t_append = time.monotonic()
    snapshot = table.refresh().current_snapshot()
    emit(
        {
            **({"rows_updated": upserted.rows_updated, "rows_inserted": upserted.rows_inserted} if a.upsert_key else {}),
            "rows": data.num_rows,
            "batches": len(infos),
            "bytes": total_bytes,
            "seconds": {
                "import": t_import - T0,
                "create_table": create_seconds,
                "catalog": t_catalog - t_import,
                "setup": t_setup - t_catalog - create_seconds,
                "list": t_list - t_setup,
                "read": t_read - t_list,
                "append": t_append - t_read,
                "total": t_append - T0,
                "work": t_append - t_catalog - create_seconds,
            },
            "snapshot_id": snapshot.snapshot_id if snapshot else None,
            "added_records": int(snapshot.summary["added-records"]) if snapshot and snapshot.summary else None,
            "received_from": received_from,
        }
    )


if __name__ == "__main__":
    main_guard(main)
