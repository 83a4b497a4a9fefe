"""Changes a table's schema with PyIceberg (table.update_schema()), as another engine would.

  python pyiceberg_evolve.py <connection options> <namespace.table> --ops '[{"op": ...}, ...]'

Each op, applied in order in one schema update (one commit):
  {"op": "add", "name": "c", "type": "long", "required": false, "default": null, "doc": null}
  {"op": "rename", "from": "a", "to": "b"}
  {"op": "drop", "name": "c"}
  {"op": "promote", "name": "c", "type": "long"}      int -> long, float -> double, decimal(P,S) -> decimal(P',S)
  {"op": "optional", "name": "c"}                      required -> optional

Types are the spec's primitive names (boolean int long float double date time timestamp timestamptz
string uuid binary decimal(P, S) fixed[L]). A required column without a default needs
"allow_incompatible": true on the op list's object form: {"allow_incompatible": true, "ops": [...]}.

Prints {schema_id, schema (the spec's JSON form), metadata_location}.
"""

from __future__ import annotations

import argparse
import json
import re

from interop_common import add_connection_args, emit, load_catalog, main_guard, schema_json


def parse_type(text: str):
    from pyiceberg import types as t

    simple = {
        "boolean": t.BooleanType(),
        "int": t.IntegerType(),
        "long": t.LongType(),
        "float": t.FloatType(),
        "double": t.DoubleType(),
        "date": t.DateType(),
        "time": t.TimeType(),
        "timestamp": t.TimestampType(),
        "timestamptz": t.TimestamptzType(),
        "string": t.StringType(),
        "uuid": t.UUIDType(),
        "binary": t.BinaryType(),
    }
    if text in simple:
        return simple[text]
    m = re.fullmatch(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)", text)
    if m:
        return t.DecimalType(int(m.group(1)), int(m.group(2)))
    m = re.fullmatch(r"fixed\[(\d+)\]", text)
    if m:
        return t.FixedType(int(m.group(1)))
    raise SystemExit(f"unknown type {text!r}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    add_connection_args(p)
    p.add_argument("table", help="namespace.table")
    p.add_argument("--ops", required=True, help="JSON: a list of ops, or {allow_incompatible, ops}")
    a = p.parse_args()

    spec = json.loads(a.ops)
    allow = False
    if isinstance(spec, dict):
        allow = bool(spec.get("allow_incompatible"))
        spec = spec["ops"]

    catalog = load_catalog(a)
    table = catalog.load_table(a.table)
    with table.update_schema(allow_incompatible_changes=allow) as u:
        for op in spec:
            kind = op["op"]
            if kind == "add":
                kwargs = {"required": bool(op.get("required", False))}
                if op.get("doc") is not None:
                    kwargs["doc"] = op["doc"]
                if op.get("default") is not None:
                    kwargs["default_value"] = op["default"]
                u.add_column(op["name"], parse_type(op["type"]), **kwargs)
            elif kind == "rename":
                u.rename_column(op["from"], op["to"])
            elif kind == "drop":
                u.delete_column(op["name"])
            elif kind == "promote":
                u.update_column(op["name"], field_type=parse_type(op["type"]))
            elif kind == "optional":
                u.make_column_optional(op["name"])
            else:
                raise SystemExit(f"unknown op {kind!r}")

    table = catalog.load_table(a.table)
    emit({"schema_id": table.schema().schema_id, "schema": schema_json(table.schema()), "metadata_location": table.metadata_location})


if __name__ == "__main__":
    main_guard(main)
