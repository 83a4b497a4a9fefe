"""The benchmarks' read-back (test/bench/harness.ts): what each side wrote, as PyIceberg reads it.

  python readback.py <connection options> --table ns.t [--table ns.t2]... [--tables-from FILE] [--sum COL]... [--distinct COL]...

For each table: a full scan of the current snapshot (only the named columns), the row count, the
exact sum of each --sum column present in the table (integers as their digits; decimals as plain
text with their scale, "1234.50"; timestamps as the sum of their epoch microseconds), the number of
distinct non-null values of each --distinct column, and the live data file count. --tables-from
names more tables, one a line (thousands of them: bench:sinks).

Prints one JSON document: {"tables": {"ns.t": {"rows", "sums": {col: "text"}, "distinct": {col: n},
"snapshot_id", "data_files"}}}.
"""

from __future__ import annotations

import argparse
import decimal
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))

from interop_common import add_connection_args, emit, load_catalog, main_guard  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402


def exact_sum(chunks: list[pa.Array]) -> str:
    """The exact sum of a column's non-null values, as text (no float ever involved)."""
    if not chunks:
        return "0"
    t = chunks[0].type
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t):
        chunks = [c.cast(pa.int64()) for c in chunks]
        t = pa.int64()
    if pa.types.is_integer(t):
        total = 0
        for c in chunks:
            total += sum(v for v in c.to_pylist() if v is not None)
        return str(total)
    if pa.types.is_decimal(t):
        with decimal.localcontext() as ctx:
            ctx.prec = 200
            total = decimal.Decimal(0).scaleb(-t.scale)
            for c in chunks:
                for v in c.to_pylist():
                    if v is not None:
                        total += v
            return format(total, "f")
    raise SystemExit(f"--sum: no exact sum for a column of type {t}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("--table", action="append", default=[])
    p.add_argument("--tables-from")
    p.add_argument("--sum", action="append", default=[])
    p.add_argument("--distinct", action="append", default=[])
    a = p.parse_args()
    names = list(a.table)
    if a.tables_from:
        with open(a.tables_from, encoding="utf-8") as f:
            names += [line.strip() for line in f if line.strip()]
    if not names:
        raise SystemExit("give --table or --tables-from")
    catalog = load_catalog(a)
    out = {}
    for name in names:
        table = catalog.load_table(name)
        present = {f.name for f in table.schema().fields}
        sums = [c for c in a.sum if c in present]
        distinct = [c for c in a.distinct if c in present]
        cols = list(dict.fromkeys(sums + distinct)) or [table.schema().fields[0].name]
        scan = table.scan(selected_fields=tuple(cols))
        rows = 0
        chunks: dict[str, list[pa.Array]] = {c: [] for c in cols}
        for batch in scan.to_arrow_batch_reader():
            rows += batch.num_rows
            for c in cols:
                chunks[c].append(batch.column(c))
        snapshot = table.current_snapshot()
        out[name] = {
            "rows": rows,
            "sums": {c: exact_sum(chunks[c]) for c in sums},
            "distinct": {c: pc.count_distinct(pa.chunked_array(chunks[c], type=chunks[c][0].type) if chunks[c] else pa.array([]), mode="only_valid").as_py() for c in distinct},
            "snapshot_id": snapshot.snapshot_id if snapshot else None,
            "data_files": len(list(scan.plan_files())),
        }
    emit({"tables": out})


if __name__ == "__main__":
    main_guard(main)
