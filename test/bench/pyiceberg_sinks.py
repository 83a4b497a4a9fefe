"""The PyIceberg side of `npm run bench:sinks` (test/bench/sinks.ts): the same small batches the
sinks' rollers append, appended by PyIceberg table by table, as a competent user would write it.

  python pyiceberg_sinks.py <connection options> --jobs FILE --bucket B --seconds S

--jobs holds one job a line, "<namespace.table> <object key>...": the table to append to (it exists,
with the sink tables' schema and properties) and the NDJSON objects holding its rows (the same rows
as the sink's batches, x-amz-meta-received set). One table after the other: load the table, read its
objects from the bucket (pyarrow.fs.S3FileSystem), parse them with pyarrow.json (explicit schema
from the table), set __ingest_ts from x-amz-meta-received (or to now, where pyarrow does not show
it), and commit ONE table.append. No validation, no
rejects, no markers: the plain library path. The catalog's database and the bucket are reached
through the same delaying proxies as the roller's. No job starts after --seconds from the first.

Prints one JSON document: {started_ms, appended: [[table, committed_ms], ...], jobs, stamped_now, seconds:
{import, catalog, work}}; started_ms and committed_ms are epoch milliseconds (the clock the bench
reads the ledger's committed_at with); work = from the constructed catalog to the last commit.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import datetime, timezone

T0 = time.monotonic()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))

from interop_common import add_connection_args, emit, load_catalog, main_guard  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.fs as pafs  # noqa: E402
import pyarrow.json as pajson  # noqa: E402

INGEST = "__ingest_ts"
STAMP = pa.timestamp("us", tz="UTC")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("--jobs", required=True)
    p.add_argument("--bucket", required=True)
    p.add_argument("--seconds", type=float, required=True)
    a = p.parse_args()
    with open(a.jobs, encoding="utf-8") as f:
        jobs = [line.split() for line in f if line.strip()]
    t_import = time.monotonic()

    catalog = load_catalog(a)
    endpoint = a.s3_endpoint
    fs = pafs.S3FileSystem(
        access_key=a.s3_access_key_id,
        secret_key=a.s3_secret_access_key,
        endpoint_override=endpoint.split("://", 1)[-1],
        scheme="https" if endpoint.startswith("https://") else "http",
        region=a.s3_region,
        force_virtual_addressing=False,
    )
    t_catalog = time.monotonic()
    started_ms = time.time() * 1000
    deadline = t_catalog + a.seconds

    appended = []
    stamped_now = 0
    for name, *keys in jobs:
        if time.monotonic() >= deadline:
            break
        table = catalog.load_table(name)
        arrow_schema = table.schema().as_arrow()
        parse = pajson.ParseOptions(explicit_schema=pa.schema([f for f in arrow_schema if f.name != INGEST]), unexpected_field_behavior="ignore")
        parts = []
        for key in keys:
            with fs.open_input_stream(f"{a.bucket}/{key}") as stream:
                data = stream.read()
                meta = stream.metadata() or {}
            rows = pajson.read_json(pa.BufferReader(data), parse_options=parse)
            # The batch's arrival time when pyarrow shows the object's x-amz-meta-received (some versions
            # do not, and a HEAD for it would cost a request more): else now, the time of the append.
            received = next((v for k, v in meta.items() if k.lower() in ("x-amz-meta-received", "received")), None)
            if isinstance(received, bytes):
                received = received.decode()
            if received is None:
                stamped_now += 1
                received = datetime.now(timezone.utc).isoformat()
            stamp = pa.array([received] * rows.num_rows, type=pa.string()).cast(STAMP)
            parts.append(rows.append_column(pa.field(INGEST, STAMP), stamp))
        rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        table.append(rows.select([f.name for f in arrow_schema]).cast(arrow_schema))
        appended.append([name, time.time() * 1000])
    t_work = time.monotonic()

    emit(
        {
            "started_ms": started_ms,
            "appended": appended,
            "jobs": len(jobs),
            "stamped_now": stamped_now,
            "seconds": {"import": t_import - T0, "catalog": t_catalog - t_import, "work": t_work - t_catalog},
        }
    )


if __name__ == "__main__":
    main_guard(main)
