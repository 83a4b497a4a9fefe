"""The PyIceberg side of `npm run bench:upsert` (test/bench/upsert.ts), and the tables' seed.

  python pyiceberg_upsert.py seed <connection options> --table ns.a [--table ns.b]... --ndjson base.ndjson --ingest-ts ISO
  python pyiceberg_upsert.py upsert <connection options> --table ns.b --ndjson changes.ndjson

seed (untimed set-up, the same for both sides): gives each table what a sink's first roll gives it
(an optional __ingest_ts timestamptz column and the roller's metadata-retention properties, one
commit), then appends the rows of base.ndjson (pyarrow read_json with the table's schema;
__ingest_ts = --ingest-ts) in one table.append. Every table gets the same rows in the same layout.
Prints {tables: {name: snapshot_id}, rows}.

upsert (the baseline): what a competent PyIceberg user writes for "these rows changed, key id":
read the NDJSON with pyarrow.json (explicit schema), stamp __ingest_ts (now), and
table.upsert(df, join_cols=["id"]). Prints {rows_updated, rows_inserted, rows, seconds: {import,
catalog, read, upsert, work}, snapshot_id}; work = from the constructed catalog (SqlCatalog checks its
tables when made; the roller's catalog is made before the roll's clock starts) to the commit.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time

T0 = time.monotonic()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))

from interop_common import add_connection_args, emit, load_catalog, main_guard  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.json as pajson  # noqa: E402
from pyiceberg.types import TimestamptzType  # noqa: E402

INGEST = "__ingest_ts"
# What roller/roll.ts's first roll sets on a sink's table (with the column above).
RETENTION = {"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "5"}


def read_rows(path: str, arrow_schema: pa.Schema, ingest_ts: dt.datetime) -> pa.Table:
    producer = pa.schema([f for f in arrow_schema if f.name != INGEST])
    t = pajson.read_json(path, parse_options=pajson.ParseOptions(explicit_schema=producer, unexpected_field_behavior="error"))
    stamp = pa.array([ingest_ts] * t.num_rows, type=pa.timestamp("us", tz="UTC"))
    t = t.append_column(pa.field(INGEST, pa.timestamp("us", tz="UTC")), stamp)
    return t.select([f.name for f in arrow_schema]).cast(arrow_schema)  # read_json's fields are all nullable


def seed(a: argparse.Namespace) -> None:
    catalog = load_catalog(a)
    ingest_ts = dt.datetime.fromisoformat(a.ingest_ts.replace("Z", "+00:00"))
    data = None
    out = {}
    for name in a.table:
        table = catalog.load_table(name)
        with table.transaction() as tx:
            if INGEST not in {f.name for f in table.schema().fields}:
                with tx.update_schema() as u:
                    u.add_column(INGEST, TimestamptzType(), doc="When lhbox received the row (the batch's arrival time).")
            tx.set_properties(RETENTION)
        table = catalog.load_table(name)
        if data is None:
            data = read_rows(a.ndjson, table.schema().as_arrow(), ingest_ts)
        table.append(data)
        out[name] = table.refresh().current_snapshot().snapshot_id
    emit({"tables": out, "rows": data.num_rows if data is not None else 0})


def upsert(a: argparse.Namespace) -> None:
    t_import = time.monotonic()
    catalog = load_catalog(a)
    t_catalog = time.monotonic()
    table = catalog.load_table(a.table[0])
    df = read_rows(a.ndjson, table.schema().as_arrow(), dt.datetime.now(dt.timezone.utc))
    t_read = time.monotonic()
    result = table.upsert(df, join_cols=["id"])
    t_upsert = time.monotonic()
    emit(
        {
            "rows": df.num_rows,
            "rows_updated": result.rows_updated,
            "rows_inserted": result.rows_inserted,
            "seconds": {"import": t_import - T0, "catalog": t_catalog - t_import, "read": t_read - t_catalog, "upsert": t_upsert - t_read, "work": t_upsert - t_catalog},
            "snapshot_id": table.refresh().current_snapshot().snapshot_id,
        }
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("command", choices=["seed", "upsert"])
    add_connection_args(p)
    p.add_argument("--table", action="append", required=True)
    p.add_argument("--ndjson", required=True)
    p.add_argument("--ingest-ts", default="2026-05-01T00:00:00Z")
    a = p.parse_args()
    seed(a) if a.command == "seed" else upsert(a)


if __name__ == "__main__":
    main_guard(main)
