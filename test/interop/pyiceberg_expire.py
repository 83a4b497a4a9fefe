"""Expires snapshots of a table through PyIceberg (what the maintenance sweep does past 20 snapshots).

  python pyiceberg_expire.py <connection options> <namespace.table> [--keep-current] [--snapshot-id N]...

With --keep-current, every snapshot but the current one is expired; --snapshot-id expires the given
ones. Prints {expired: [ids], snapshots: [remaining ids], current_snapshot_id}.
"""

from __future__ import annotations

import argparse

from interop_common import add_connection_args, emit, load_catalog, main_guard


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("table")
    p.add_argument("--keep-current", action="store_true")
    p.add_argument("--snapshot-id", action="append", type=int, default=[])
    a = p.parse_args()

    table = load_catalog(a).load_table(a.table)
    current = table.metadata.current_snapshot_id
    ids = list(a.snapshot_id)
    if a.keep_current:
        ids += [s.snapshot_id for s in table.metadata.snapshots if s.snapshot_id != current]
    if ids:
        table.maintenance.expire_snapshots().by_ids(ids).commit()
    table = table.refresh()
    emit({"expired": ids, "snapshots": [s.snapshot_id for s in table.metadata.snapshots], "current_snapshot_id": table.metadata.current_snapshot_id})


if __name__ == "__main__":
    main_guard(main)
