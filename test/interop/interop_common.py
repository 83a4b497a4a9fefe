"""Shared by the interop scripts: catalog/S3 options, and ONE JSON value encoding for every reader.

Every script prints exactly one JSON document on stdout (diagnostics go to stderr). Values of
Iceberg types are encoded as follows — the same for PyIceberg and DuckDB, and the same encoding
pyiceberg_append.py accepts as input:

  null                 null (every type; `unknown` is always null)
  boolean              true / false
  int, long            JSON integer, exact at any size (9223372036854775807)
  float, double        JSON number, Python's shortest round-trip repr of the double (a float is
                       widened to double exactly first: 0.1f -> 0.10000000149011612);
                       NaN / infinities as the strings "NaN", "Infinity", "-Infinity"
  decimal(P,S)         string, plain notation with exactly S fractional digits ("-1.5000000000")
  date                 "YYYY-MM-DD"
  time                 "HH:MM:SS.ffffff" (always 6 digits)
  timestamp            "YYYY-MM-DDTHH:MM:SS.ffffff" (no offset)
  timestamptz          "YYYY-MM-DDTHH:MM:SS.ffffff+00:00" (always UTC)
  timestamp_ns         "YYYY-MM-DDTHH:MM:SS.fffffffff" (9 digits)
  timestamptz_ns       "YYYY-MM-DDTHH:MM:SS.fffffffff+00:00"
  string               string
  uuid                 canonical lowercase "8-4-4-4-12"
  fixed(L), binary     base64 (standard alphabet, padded)
  geometry, geography  WKB as lowercase hex
  struct               object {field name: value} in schema order
  list                 array
  map                  array of [key, value] pairs, in stored order
  variant              not supported (raises)

Values are encoded from Arrow arrays (PyIceberg's scan and DuckDB's fetch both give Arrow), guided
by the Iceberg type when one is known (so uuid/fixed/binary/geometry are told apart), otherwise by
the Arrow type alone (metadata tables, read_json).
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import decimal
import json
import math
import os
import re
import sys
import uuid
from typing import Any

# pyarrow's AWS SDK otherwise sends flexible checksums on every upload (x-amz-content-sha256:
# STREAMING-UNSIGNED-PAYLOAD-TRAILER), which s3rver rejects with 400 InvalidArgument. Set before
# pyarrow creates its first S3 client.
os.environ.setdefault("AWS_REQUEST_CHECKSUM_CALCULATION", "when_required")
os.environ.setdefault("AWS_RESPONSE_CHECKSUM_VALIDATION", "when_required")

import pyarrow as pa  # noqa: E402

# ---------------------------------------------------------------------------------------------
# JSON output


class RawJSON:
    """Text inserted verbatim into the output (already-valid JSON, e.g. DuckDB JSON columns)."""

    def __init__(self, text: str):
        self.text = text


def dumps(value: Any) -> str:
    out: list[str] = []
    _dump(value, out)
    return "".join(out)


def _dump(v: Any, out: list[str]) -> None:
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, int):
        out.append(str(v))
    elif isinstance(v, float):
        out.append(json.dumps(encode_float(v)))
    elif isinstance(v, decimal.Decimal):
        out.append(json.dumps(format(v, "f")))
    elif isinstance(v, str):
        out.append(json.dumps(v, ensure_ascii=False))
    elif isinstance(v, RawJSON):
        out.append(v.text)
    elif isinstance(v, dict):
        out.append("{")
        for i, (k, x) in enumerate(v.items()):
            if i:
                out.append(",")
            out.append(json.dumps(str(k), ensure_ascii=False))
            out.append(":")
            _dump(x, out)
        out.append("}")
    elif isinstance(v, (list, tuple)):
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(",")
            _dump(x, out)
        out.append("]")
    elif isinstance(v, (bytes, bytearray, memoryview)):
        out.append(json.dumps(base64.b64encode(bytes(v)).decode()))
    elif isinstance(v, uuid.UUID):
        out.append(json.dumps(str(v)))
    elif isinstance(v, (dt.datetime, dt.date, dt.time)):
        out.append(json.dumps(v.isoformat()))
    else:
        out.append(json.dumps(str(v)))


def emit(doc: Any) -> None:
    sys.stdout.write(dumps(doc))
    sys.stdout.write("\n")
    sys.stdout.flush()


def encode_float(f: float) -> Any:
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return f


# ---------------------------------------------------------------------------------------------
# Iceberg type JSON (spec form) helpers

_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_FIXED = re.compile(r"^fixed\[\s*(\d+)\s*\]$")


def type_name(itype: Any) -> str | None:
    """'long', 'decimal', 'fixed', 'geometry', 'struct', ... or None when unknown."""
    if itype is None:
        return None
    if isinstance(itype, dict):
        return itype.get("type")
    s = str(itype).strip()
    if _DECIMAL.match(s):
        return "decimal"
    if _FIXED.match(s):
        return "fixed"
    return s.split("(")[0]


def decimal_scale(itype: Any) -> int | None:
    m = _DECIMAL.match(str(itype).strip()) if isinstance(itype, str) else None
    return int(m.group(2)) if m else None


def schema_field_types(schema: dict) -> dict[str, Any]:
    return {f["name"]: f["type"] for f in schema["fields"]}


# ---------------------------------------------------------------------------------------------
# Arrow -> JSON values

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


def _fmt_timestamp(value: int, unit: str, with_zone: bool) -> str:
    per_second = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    seconds, frac = divmod(value, per_second)
    base = (_EPOCH + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")
    # microseconds unless the column is nanoseconds
    if unit == "ns":
        digits = f"{frac:09d}"
    else:
        digits = f"{frac * (1_000_000 // per_second):06d}"
    return f"{base}.{digits}" + ("+00:00" if with_zone else "")


def _fmt_time(value: int, unit: str) -> str:
    per_second = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    seconds, frac = divmod(value, per_second)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    digits = f"{frac:09d}" if unit == "ns" else f"{frac * (1_000_000 // per_second):06d}"
    return f"{h:02d}:{m:02d}:{s:02d}.{digits}"


def _fmt_decimal(d: decimal.Decimal, scale: int | None) -> str:
    if scale is not None and d.is_finite():
        d = d.quantize(decimal.Decimal(1).scaleb(-scale), context=decimal.Context(prec=200))
    return format(d, "f")


def _storage(t: pa.DataType) -> pa.DataType:
    return t.storage_type if isinstance(t, pa.BaseExtensionType) else t


def _is_uuid_ext(t: pa.DataType) -> bool:
    return isinstance(t, pa.BaseExtensionType) and getattr(t, "extension_name", "") in ("arrow.uuid", "uuid")


def _is_json_ext(t: pa.DataType) -> bool:
    return isinstance(t, pa.BaseExtensionType) and getattr(t, "extension_name", "") in ("arrow.json",)


def encode_scalar(s: pa.Scalar, itype: Any = None) -> Any:
    """One Arrow value as JSON per the module docstring, guided by the Iceberg type if given."""
    if not s.is_valid:
        return None
    t = s.type
    name = type_name(itype)
    if name == "unknown":
        return None
    if name == "variant":
        raise ValueError("variant values are not supported by the interop encoding")
    if isinstance(t, pa.BaseExtensionType):
        if _is_json_ext(t):
            return RawJSON(s.value.as_py())
        if _is_uuid_ext(t) or name == "uuid":
            return str(uuid.UUID(bytes=s.value.as_py()))
        return encode_scalar(s.value, itype)
    if name == "uuid":
        v = s.as_py()
        return str(uuid.UUID(bytes=v) if isinstance(v, (bytes, bytearray)) else uuid.UUID(str(v)))
    if name in ("geometry", "geography"):
        return bytes(s.as_py()).hex()
    if pa.types.is_boolean(t):
        return s.as_py()
    if pa.types.is_integer(t):
        return s.as_py()
    if pa.types.is_floating(t):
        return encode_float(float(s.as_py()))
    if pa.types.is_decimal(t):
        return _fmt_decimal(s.as_py(), decimal_scale(itype) if itype is not None else t.scale)
    if pa.types.is_date32(t):
        return (_EPOCH_DATE + dt.timedelta(days=s.value)).isoformat()
    if pa.types.is_date64(t):
        return (_EPOCH_DATE + dt.timedelta(milliseconds=s.value)).isoformat()
    if pa.types.is_timestamp(t):
        with_zone = t.tz is not None
        if name in ("timestamp", "timestamp_ns"):
            with_zone = False
        elif name in ("timestamptz", "timestamptz_ns"):
            with_zone = True
        return _fmt_timestamp(s.value, t.unit, with_zone)
    if pa.types.is_time(t):
        return _fmt_time(s.value, t.unit)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return s.as_py()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_binary_view(t):
        return base64.b64encode(s.as_py()).decode()
    if pa.types.is_struct(t):
        fields = {}
        hints = {}
        if isinstance(itype, dict) and itype.get("type") == "struct":
            hints = {f["name"]: f["type"] for f in itype["fields"]}
        for i in range(t.num_fields):
            f = t.field(i)
            fields[f.name] = encode_scalar(s[i], hints.get(f.name))
        return fields
    if pa.types.is_map(t):
        kt = itype.get("key") if isinstance(itype, dict) else None
        vt = itype.get("value") if isinstance(itype, dict) else None
        entries = s.values  # StructArray of key/value
        if entries is None:
            return []
        keys = entries.field(0)
        values = entries.field(1)
        return [[encode_scalar(keys[i], kt), encode_scalar(values[i], vt)] for i in range(len(entries))]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t):
        et = itype.get("element") if isinstance(itype, dict) else None
        values = s.values
        return [] if values is None else [encode_scalar(values[i], et) for i in range(len(values))]
    if pa.types.is_null(t):
        return None
    if pa.types.is_dictionary(t):
        return encode_scalar(s.value, itype)
    raise ValueError(f"no JSON encoding for Arrow type {t}")


def encode_table(table: pa.Table, field_types: dict[str, Any] | None = None) -> list[dict]:
    """Rows of an Arrow table as JSON objects (column order kept)."""
    field_types = field_types or {}
    columns = [(name, table.column(i), field_types.get(name)) for i, name in enumerate(table.column_names)]
    rows = []
    for r in range(table.num_rows):
        rows.append({name: encode_scalar(col[r], it) for name, col, it in columns})
    return rows


def sort_table(table: pa.Table, order_by: list[str] | None) -> pa.Table:
    """Rows sorted by the given columns (ascending, nulls last), ties broken by every other
    primitive column so that two readers print rows with equal keys in the same order."""
    if not order_by:
        return table
    keys = list(order_by)
    for f in table.schema:
        t = f.type
        if f.name in keys or isinstance(t, pa.BaseExtensionType) or pa.types.is_nested(t) or pa.types.is_null(t):
            continue
        keys.append(f.name)
    try:
        return table.sort_by([(c, "ascending") for c in keys])
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return table.sort_by([(c, "ascending") for c in order_by])


# ---------------------------------------------------------------------------------------------
# JSON -> Python values for pyarrow (the inverse of the encoding; used to write rows)


def _parse_ts(text: str, unit: str) -> int:
    """ISO 8601 -> integer epoch units, exact (nanoseconds kept)."""
    m = re.match(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$", text)
    if not m:
        raise ValueError(f"not a timestamp: {text!r}")
    date = dt.date.fromisoformat(m.group(1))
    seconds = (date - _EPOCH_DATE).days * 86400 + int(m.group(2)) * 3600 + int(m.group(3)) * 60 + int(m.group(4))
    frac_ns = int((m.group(5) or "").ljust(9, "0"))
    zone = m.group(6)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        z = zone[1:].replace(":", "")
        seconds -= sign * (int(z[:2]) * 3600 + int(z[2:]) * 60)
    total_ns = seconds * 1_000_000_000 + frac_ns
    div = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1000, "ns": 1}[unit]
    if total_ns % div:
        raise ValueError(f"{text!r} has more precision than {unit}")
    return total_ns // div


def _parse_time(text: str, unit: str) -> int:
    m = re.match(r"^(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$", text)
    if not m:
        raise ValueError(f"not a time: {text!r}")
    ns = ((int(m.group(1)) * 60 + int(m.group(2))) * 60 + int(m.group(3))) * 1_000_000_000 + int((m.group(4) or "").ljust(9, "0"))
    return ns // {"s": 1_000_000_000, "ms": 1_000_000, "us": 1000, "ns": 1}[unit]


def decode_value(v: Any, t: pa.DataType, itype: Any = None) -> Any:
    """A JSON value (parsed with parse_float=Decimal) -> a Python value pyarrow accepts for type t."""
    if v is None:
        return None
    name = type_name(itype)
    if isinstance(t, pa.BaseExtensionType):
        if _is_uuid_ext(t) or name == "uuid":
            return uuid.UUID(v).bytes
        return decode_value(v, t.storage_type, itype)
    if name == "uuid":
        return uuid.UUID(v).bytes if pa.types.is_fixed_size_binary(t) else str(uuid.UUID(v))
    if name in ("geometry", "geography"):
        return bytes.fromhex(v)
    if pa.types.is_boolean(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return v
    if pa.types.is_integer(t):
        if isinstance(v, decimal.Decimal):
            if v != v.to_integral_value():
                raise ValueError(f"{v} is not an integer")
            return int(v)
        return int(v)
    if pa.types.is_floating(t):
        if isinstance(v, str):
            return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]
        return float(v)
    if pa.types.is_decimal(t):
        return decimal.Decimal(v) if isinstance(v, str) else decimal.Decimal(v)
    if pa.types.is_date32(t):
        return (dt.date.fromisoformat(v) - _EPOCH_DATE).days
    if pa.types.is_timestamp(t):
        return _parse_ts(v, t.unit)
    if pa.types.is_time(t):
        return _parse_time(v, t.unit)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return base64.b64decode(v, validate=True)
    if pa.types.is_struct(t):
        hints = {f["name"]: f["type"] for f in itype["fields"]} if isinstance(itype, dict) else {}
        return {t.field(i).name: decode_value(v.get(t.field(i).name), t.field(i).type, hints.get(t.field(i).name)) for i in range(t.num_fields)}
    if pa.types.is_map(t):
        kt = itype.get("key") if isinstance(itype, dict) else None
        vt = itype.get("value") if isinstance(itype, dict) else None
        pairs = v.items() if isinstance(v, dict) else v
        return [(decode_value(k, t.key_type, kt), decode_value(x, t.item_type, vt)) for k, x in pairs]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        et = itype.get("element") if isinstance(itype, dict) else None
        return [decode_value(x, t.value_type, et) for x in v]
    if pa.types.is_null(t):
        return None
    raise ValueError(f"cannot decode {v!r} for Arrow type {t}")


def rows_to_arrow(rows: list[dict], arrow_schema: pa.Schema, iceberg_schema: dict) -> pa.Table:
    hints = schema_field_types(iceberg_schema)
    arrays = []
    for f in arrow_schema:
        values = [decode_value(r.get(f.name), f.type, hints.get(f.name)) for r in rows]
        if isinstance(f.type, pa.BaseExtensionType):
            storage = pa.array(values, type=f.type.storage_type)
            arrays.append(pa.ExtensionArray.from_storage(f.type, storage))
        else:
            arrays.append(pa.array(values, type=f.type))
    return pa.Table.from_arrays(arrays, schema=arrow_schema)


# ---------------------------------------------------------------------------------------------
# Catalog and S3 options


def add_connection_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("catalog")
    g.add_argument("--sql-uri", help="SqlCatalog: postgres://, postgresql:// or postgresql+psycopg2:// URL")
    g.add_argument("--rest-uri", help="RestCatalog base URI")
    g.add_argument("--rest-token", help="RestCatalog bearer token")
    g.add_argument("--rest-credential", help="RestCatalog OAuth2 client credential id:secret")
    g.add_argument("--catalog-name", default="lhbox", help="SqlCatalog: the warehouse name (catalog_name rows)")
    g.add_argument("--warehouse", help="location prefix for created tables (SqlCatalog) or REST warehouse")
    s = p.add_argument_group("s3")
    s.add_argument("--s3-endpoint", help="http://127.0.0.1:PORT")
    s.add_argument("--s3-access-key-id")
    s.add_argument("--s3-secret-access-key")
    s.add_argument("--s3-session-token")
    s.add_argument("--s3-region", default="us-east-1")


def sqlalchemy_uri(uri: str) -> str:
    """postgres:// and postgresql:// -> postgresql+psycopg2:// (the driver pyiceberg[sql-postgres] brings)."""
    for prefix in ("postgres://", "postgresql://"):
        if uri.startswith(prefix):
            return "postgresql+psycopg2://" + uri[len(prefix):]
    return uri


def s3_properties(a: argparse.Namespace) -> dict[str, str]:
    props: dict[str, str] = {}
    if a.s3_endpoint:
        props["s3.endpoint"] = a.s3_endpoint
    if a.s3_access_key_id:
        props["s3.access-key-id"] = a.s3_access_key_id
    if a.s3_secret_access_key:
        props["s3.secret-access-key"] = a.s3_secret_access_key
    if a.s3_session_token:
        props["s3.session-token"] = a.s3_session_token
    if a.s3_region:
        props["s3.region"] = a.s3_region
    props["s3.force-virtual-addressing"] = "false"  # path-style requests
    props["py-io-impl"] = "pyiceberg.io.pyarrow.PyArrowFileIO"
    return props


def load_catalog(a: argparse.Namespace):
    props = s3_properties(a)
    if a.sql_uri:
        from pyiceberg.catalog.sql import SqlCatalog

        props["uri"] = sqlalchemy_uri(a.sql_uri)
        if a.warehouse:
            props["warehouse"] = a.warehouse
        return SqlCatalog(a.catalog_name, **props)
    if a.rest_uri:
        from pyiceberg.catalog.rest import RestCatalog

        props["uri"] = a.rest_uri
        if a.rest_token:
            props["token"] = a.rest_token
        if a.rest_credential:
            props["credential"] = a.rest_credential
        if a.warehouse:
            props["warehouse"] = a.warehouse
        return RestCatalog(a.catalog_name, **props)
    raise SystemExit("one of --sql-uri or --rest-uri is required")


def schema_json(schema) -> dict:
    """A PyIceberg Schema as the spec's JSON form."""
    return json.loads(schema.model_dump_json(by_alias=True, exclude_none=True))


def main_guard(fn) -> None:
    try:
        fn()
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - report and exit non-zero
        import traceback

        traceback.print_exc(file=sys.stderr)
        sys.stderr.write(f"\n{type(e).__name__}: {e}\n")
        sys.exit(1)


def snapshot_json(s) -> dict:
    """A snapshot as the scripts answer it: ids, times, operation, summary, manifest list, row ids."""
    summary = {}
    operation = None
    if s.summary is not None:
        operation = s.summary.operation.value
        summary = {"operation": operation, **s.summary.additional_properties}
    return {
        "snapshot_id": s.snapshot_id,
        "parent": s.parent_snapshot_id,
        "sequence_number": s.sequence_number,
        "timestamp_ms": s.timestamp_ms,
        "operation": operation,
        "summary": summary,
        "manifest_list": s.manifest_list,
        "schema_id": s.schema_id,
        "first_row_id": getattr(s, "first_row_id", None),
        "added_rows": getattr(s, "added_rows", None),
    }
