"""The PyIceberg side of `npm run bench:roll` (test/bench/roll.ts): the same intake batches appended
by PyIceberg, in its own process, for a side-by-side rows/s and peak RSS.

  python pyiceberg_roll.py <connection options> --source-table ns.t --table ns.t2 --bucket B --prefix _sink/<id>/

Creates --table with --source-table's schema (the sink's table after its first roll: the producer's
columns plus __ingest_ts) and format version; lists the intake objects under --prefix (the same
NDJSON batches the roller rolls), reads each one from the bucket with pyarrow.fs.S3FileSystem,
parses it with pyarrow.json (explicit schema from the table), sets __ingest_ts to the object's
x-amz-meta-received when pyarrow exposes it (else its Last-Modified), concatenates, and commits ONE
table.append. No row-by-row validation, no rejects, no markers: the plain library path.

Prints one JSON document: {rows, batches, bytes, seconds: {import, setup, read, append, total},
max_rss_kib, snapshot_id, added_records, received_from}.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

T0 = time.monotonic()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))

from interop_common import add_connection_args, emit, load_catalog, main_guard  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.fs as pafs  # noqa: E402
import pyarrow.json as pajson  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("--source-table", required=True)
    p.add_argument("--table", required=True)
    p.add_argument("--bucket", required=True)
    p.add_argument("--prefix", required=True)
    a = p.parse_args()
    t_import = time.monotonic()

    catalog = load_catalog(a)
    src = catalog.load_table(a.source_table)
    schema = src.schema()
    namespace = tuple(a.table.split(".")[:-1])
    catalog.create_namespace_if_not_exists(namespace)
    # Next to the source table (the SQL catalog here has no default warehouse path).
    location = src.metadata.location.rstrip("/").rsplit("/", 1)[0] + "/" + a.table.split(".")[-1]
    table = catalog.create_table(a.table, schema=schema, location=location, properties={"format-version": str(src.format_version)})
    arrow_schema = schema.as_arrow()
    ingest = "__ingest_ts"
    producer_schema = pa.schema([f for f in arrow_schema if f.name != ingest])
    parse = pajson.ParseOptions(explicit_schema=producer_schema, unexpected_field_behavior="ignore")
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
    tables = []
    total_bytes = 0
    received_from = "x-amz-meta-received"
    for info in infos:
        with fs.open_input_stream(info.path) as f:
            data = f.read()
            meta = f.metadata() or {}
        total_bytes += len(data)
        t = pajson.read_json(pa.BufferReader(data), parse_options=parse)
        received = next((v for k, v in meta.items() if k.lower() in ("x-amz-meta-received", "received")), None)
        if received is None:
            received_from = "last-modified"
            received = info.mtime
        stamp = pa.array([received] * t.num_rows, type=pa.string() if isinstance(received, (str, bytes)) else pa.timestamp("us", tz="UTC"))
        if stamp.type != pa.timestamp("us", tz="UTC"):
            stamp = stamp.cast(pa.string()).cast(pa.timestamp("us", tz="UTC"))
        tables.append(t.append_column(pa.field(ingest, pa.timestamp("us", tz="UTC")), stamp))
    data = pa.concat_tables(tables).select([f.name for f in arrow_schema]).cast(arrow_schema)
    del tables
    t_read = time.monotonic()

    table.append(data)
    t_append = time.monotonic()
    snapshot = table.refresh().current_snapshot()
    emit(
        {
            "rows": data.num_rows,
            "batches": len(infos),
            "bytes": total_bytes,
            "seconds": {
                "import": t_import - T0,
                "setup": t_setup - t_import,
                "read": t_read - t_setup,
                "append": t_append - t_read,
                "total": t_append - T0,
            },
            "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "snapshot_id": snapshot.snapshot_id if snapshot else None,
            "added_records": int(snapshot.summary["added-records"]) if snapshot and snapshot.summary else None,
            "received_from": received_from,
        }
    )


if __name__ == "__main__":
    main_guard(main)
