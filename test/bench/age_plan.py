"""The PyIceberg side of `npm run bench:age` (test/bench/age.ts): how long PyIceberg takes to plan a
full scan of the table, and (with --read) what it reads back.

  python age_plan.py <connection options> <namespace.table> [--samples 5] [--read COLUMN]

Loads the table once, then times `table.scan().plan_files()` --samples times, clearing PyIceberg's
process-wide manifest cache before each (every sample reads the manifest list and the manifests).
With --read, scans the table and sums COLUMN.

Prints one JSON document: {plan_ms: [...], median_ms, files, manifests, snapshots, row_count?, sum?}.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))

from interop_common import add_connection_args, emit, load_catalog, main_guard  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("table", help="namespace.table")
    p.add_argument("--samples", type=int, default=5)
    p.add_argument("--read", help="column to sum after a full scan")
    a = p.parse_args()

    from pyiceberg.manifest import clear_manifest_cache

    table = load_catalog(a).load_table(a.table)
    times = []
    files = 0
    for _ in range(a.samples):
        clear_manifest_cache()
        t0 = time.perf_counter()
        files = len(list(table.scan().plan_files()))
        times.append((time.perf_counter() - t0) * 1000)
    out = {
        "plan_ms": times,
        "median_ms": statistics.median(times),
        "files": files,
        "manifests": len(table.current_snapshot().manifests(table.io)),
        "snapshots": len(table.metadata.snapshots),
    }
    if a.read:
        import pyarrow.compute as pc

        data = table.scan(selected_fields=(a.read,)).to_arrow()
        out["row_count"] = data.num_rows
        out["sum"] = pc.sum(data[a.read]).as_py() if data.num_rows else 0
    emit(out)


if __name__ == "__main__":
    main_guard(main)
