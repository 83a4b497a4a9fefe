"""The benchmarks' read-back (test/bench/harness.ts): what each side wrote, as PyIceberg reads it.

  python readback.py <connection options> --table ns.t [--table ns.t2]... [--tables-from FILE] [--sum COL]... [--distinct COL]...

For each table: a full scan of the current snapshot (only the named columns), the row count, the
exact sum of each --sum column present in the table (integers as their digits; decimals as plain
text with their scale, "1234.50"; timestamps as the sum of their epoch microseconds; "COL.x" and
"COL.y" of a geometry or binary column of WKB points: the sum of the points' x or y at 10 decimal
places, which must be exact — bench:roll's points lie on a 1/1024 grid), the number of
distinct non-null values of each --distinct column, and the live data file count. --tables-from
names more tables, one a line (thousands of them: bench:sinks).

Prints one JSON document: {"tables": {"ns.t": {"rows", "sums": {col: "text"}, "distinct": {col: n},
"snapshot_id", "data_files"}}}.
"""

from __future__ import annotations

import argparse
import decimal
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))

from interop_common import add_connection_args, emit, load_catalog, main_guard  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
from pyiceberg.expressions import AlwaysTrue  # noqa: E402
from pyiceberg.io.pyarrow import ArrowScan  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import BinaryType, GeometryType, NestedField  # noqa: E402

POINT_AXES = {"x": 0, "y": 1}
POINT_PLACES = decimal.Decimal(1).scaleb(-10)


def point_part(name: str, columns) -> tuple[str, int] | None:
    """("pos", 0) for "pos.x" when pos is one of `columns` (and "pos.x" itself is not)."""
    base, _, axis = name.rpartition(".")
    return (base, POINT_AXES[axis]) if name not in columns and base in columns and axis in POINT_AXES else None


def point_sum(chunks: list[pa.Array], axis: int) -> str:
    """The exact sum of the x (0) or y (1) of WKB points (ISO, 2D, either byte order), at 10 places."""
    with decimal.localcontext() as ctx:
        ctx.prec = 200
        total = decimal.Decimal(0)
        for c in chunks:
            for b in c.to_pylist():
                if b is None:
                    continue
                order = "<" if b[0] == 1 else ">"
                kind, x, y = struct.unpack_from(order + "Idd", b, 1)
                if kind != 1 or len(b) != 21:
                    raise SystemExit(f"--sum: not a 2D WKB point (type {kind}, {len(b)} bytes)")
                total += decimal.Decimal((x, y)[axis])
        exact = total.quantize(POINT_PLACES)
        if exact != total:
            raise SystemExit(f"--sum: the points' sum {total} is not exact at 10 places")
        return format(exact, "f")


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
        schema = table.schema()
        present = {f.name for f in schema.fields}
        sums = [c for c in a.sum if c in present or point_part(c, present)]
        distinct = [c for c in a.distinct if c in present]
        cols = list(dict.fromkeys([(point_part(c, present) or (c,))[0] for c in sums] + distinct)) or [schema.fields[0].name]
        scan = table.scan(selected_fields=tuple(cols))
        geometry = [f for f in schema.fields if f.name in cols and isinstance(f.field_type, GeometryType)]
        if geometry:
            # PyIceberg 0.12 reads no Parquet geometry column as its type; it reads the WKB as binary.
            projected = Schema(
                *[NestedField(f.field_id, f.name, BinaryType(), f.required) if f in geometry else f for f in schema.fields if f.name in cols],
                schema_id=schema.schema_id,
            )
            batches = ArrowScan(table.metadata, table.io, projected, AlwaysTrue()).to_record_batches(scan.plan_files())
        else:
            batches = scan.to_arrow_batch_reader()
        rows = 0
        chunks: dict[str, list[pa.Array]] = {c: [] for c in cols}
        for batch in batches:
            rows += batch.num_rows
            for c in cols:
                chunks[c].append(batch.column(c))
        snapshot = table.current_snapshot()
        out[name] = {
            "rows": rows,
            "sums": {c: point_sum(chunks[p[0]], p[1]) if (p := point_part(c, present)) else exact_sum(chunks[c]) for c in sums},
            "distinct": {c: pc.count_distinct(pa.chunked_array(chunks[c], type=chunks[c][0].type) if chunks[c] else pa.array([]), mode="only_valid").as_py() for c in distinct},
            "snapshot_id": snapshot.snapshot_id if snapshot else None,
            "data_files": len(list(scan.plan_files())),
        }
    emit({"tables": out})


if __name__ == "__main__":
    main_guard(main)
