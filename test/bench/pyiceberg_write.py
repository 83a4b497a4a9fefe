"""The PyIceberg side of `npm run bench:write` (test/bench/write.ts): one NDJSON file appended to a
table the way a competent PyIceberg user would: pyarrow.json.read_json with the explicit schema,
one table.append (zstd, PyIceberg's default).

  python pyiceberg_write.py <connection options> ns.table rows.ndjson

Prints one JSON document: {rows, seconds (from the loaded catalog to the committed snapshot: imports
and the catalog's construction excluded), connect_seconds, file_bytes}.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))

from interop_common import add_connection_args, emit, load_catalog, main_guard  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.json as pj  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("table")
    p.add_argument("ndjson")
    a = p.parse_args()
    t_connect = time.perf_counter()
    catalog = load_catalog(a)  # SqlCatalog: an engine, and its tables checked (untimed: ours connects lazily)
    started = time.perf_counter()
    table = catalog.load_table(a.table)
    schema = pa.schema([("id", pa.int64(), False), ("name", pa.large_string()), ("ts", pa.timestamp("us", tz="UTC"), False)])
    data = pj.read_json(a.ndjson, parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error"))
    data = data.cast(schema)  # read_json leaves every field nullable; the table has required ones
    table.append(data)
    seconds = time.perf_counter() - started
    files = list(table.refresh().scan().plan_files())
    emit({"rows": data.num_rows, "seconds": seconds, "connect_seconds": started - t_connect, "file_bytes": sum(f.file.file_size_in_bytes for f in files)})


if __name__ == "__main__":
    main_guard(main)
