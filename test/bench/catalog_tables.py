"""bench:catalog's tables, through PyIceberg's RestCatalog (the same calls on both catalogs).

  python catalog_tables.py <connection options (interop_common)> setup NS.T --snapshots N
      creates NS (if missing) and NS.T {id long, name string}, then N appends of 10 rows each:
      the same history on both sides. Prints {"result": {"snapshots", "metadata_location"}}.
  python catalog_tables.py <connection options> check NS.T KEY VALUE
      loads NS.T: its property KEY must be VALUE (what the bench's last commit set), and its
      snapshots as many as set up. Prints {"result": {"property", "snapshots"}}.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))

from interop_common import add_connection_args, emit, load_catalog, main_guard  # noqa: E402


def run(a: argparse.Namespace):
    import pyarrow as pa
    from pyiceberg.exceptions import NamespaceAlreadyExistsError
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    catalog = load_catalog(a)
    ns, _, name = a.table.partition(".")
    if a.op == "setup":
        try:
            catalog.create_namespace(ns)
        except NamespaceAlreadyExistsError:
            pass
        schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType(), required=False))
        table = catalog.create_table(a.table, schema)
        arrow = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
        for i in range(a.snapshots):
            table.append(pa.table({"id": list(range(i * 10, i * 10 + 10)), "name": [f"n{j}" for j in range(10)]}, schema=arrow))
        table = catalog.load_table(a.table)
        return {"snapshots": len(table.metadata.snapshots), "metadata_location": table.metadata_location}
    table = catalog.load_table(a.table)
    return {"property": table.properties.get(a.key), "snapshots": len(table.metadata.snapshots)}


def main() -> None:
    p = argparse.ArgumentParser()
    add_connection_args(p)
    p.add_argument("op", choices=["setup", "check"])
    p.add_argument("table")
    p.add_argument("key", nargs="?")
    p.add_argument("value", nargs="?")
    p.add_argument("--snapshots", type=int, default=20)
    emit({"result": run(p.parse_args())})


if __name__ == "__main__":
    main_guard(main)
