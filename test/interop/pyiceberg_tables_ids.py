"""Reads many tables through PyIceberg in one process: each table's id column and its snapshots.

  python pyiceberg_tables_ids.py --sql-uri postgres://… --catalog-name <warehouse id> --s3-… \
      [--column id] [--threads 4] < tables.json

stdin: a JSON array of "namespace.table". Prints one document:
  {tables: {"<ns>.<table>": {row_count, ids: [sorted values of --column], snapshots: [{snapshot_id,
   parent, timestamp_ms, operation, summary}]}}}
For a test that checks hundreds of tables at once without starting hundreds of interpreters.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor

import pyarrow.compute as pc

from interop_common import add_connection_args, emit, load_catalog, main_guard, snapshot_json




def read_one(catalog, name: str, column: str) -> dict:
    table = catalog.load_table(name)
    arrow = table.scan(selected_fields=(column,)).to_arrow()
    ids = pc.sort_indices(arrow, sort_keys=[(column, "ascending")])
    values = arrow.column(column).take(ids).to_pylist()
    return {
        "row_count": arrow.num_rows,
        "ids": values,
        "snapshots": [snapshot_json(s) for s in table.metadata.snapshots],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("--column", default="id")
    p.add_argument("--threads", type=int, default=4)
    a = p.parse_args()
    names = json.load(sys.stdin)
    catalog = load_catalog(a)
    with ThreadPoolExecutor(max_workers=max(1, a.threads)) as pool:
        results = list(pool.map(lambda n: read_one(catalog, n, a.column), names))
    emit({"tables": dict(zip(names, results))})


if __name__ == "__main__":
    main_guard(main)
