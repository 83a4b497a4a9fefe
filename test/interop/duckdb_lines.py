"""Runs SQL text as a person pastes it into DuckDB: the statements on stdin, one per line (each ends
with ;), in one session with the iceberg, avro and httpfs extensions loaded offline from their PyPI
wheels (duckdb_scan.py's way) and nothing else set up — the lines bring their own secrets and ATTACH.

  python duckdb_lines.py < recipe.sql

Prints {duckdb_version, row_count, rows}: the last statement's result in interop_common.py's encoding.
"""

from __future__ import annotations

import argparse
import sys

import duckdb

from duckdb_scan import connect, fetch
from interop_common import emit, encode_table, main_guard


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    statements = [line.strip() for line in sys.stdin.read().splitlines() if line.strip()]
    con = connect(argparse.Namespace(s3_endpoint=None))
    for sql in statements[:-1]:
        con.execute(sql)
    table = fetch(con, statements[-1].rstrip(";"))
    emit({"duckdb_version": duckdb.__version__, "row_count": table.num_rows, "rows": encode_table(table)})


if __name__ == "__main__":
    main_guard(main)
