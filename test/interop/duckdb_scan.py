"""Reads an Iceberg table (or NDJSON files) with DuckDB and prints it as JSON.

  python duckdb_scan.py <s3 options> --metadata s3://bucket/.../metadata/00001-....metadata.json
      [--order-by COL]... [--where "SQL predicate"] [--select COL]... [--no-snapshots]
  python duckdb_scan.py <s3 options> --read-json 's3://bucket/prefix/*.ndjson' [--order-by COL]...
  python duckdb_scan.py <s3 options> --sql "SELECT ..."

DuckDB runs offline: extension autoload/autoinstall are off, and httpfs, avro and iceberg are LOADed
from the files their PyPI wheels (duckdb-extension-*) ship, which must equal DuckDB's version.
S3 goes through a CREATE SECRET (TYPE S3) with path-style URLs.

Prints:
  --metadata:  {engine: "duckdb", duckdb_version, schema (the current Iceberg schema, read from the
                metadata file), row_count, rows, snapshots: [{snapshot_id, sequence_number, timestamp_ms,
                manifest_list}]}
  --read-json: {row_count, rows}   (read_json with auto-detected columns; numbers whose digits do
                not fit DuckDB's types are read as JSON, printed verbatim)
  --sql:       {row_count, rows}
Values follow the encoding of interop_common.py, guided by the Iceberg schema for --metadata.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
from urllib.parse import urlsplit

import duckdb

from interop_common import emit, encode_table, main_guard, schema_field_types, sort_table

EXTENSIONS = ("httpfs", "avro", "iceberg")


def quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def extension_path(name: str) -> str:
    module = importlib.import_module(f"duckdb_extension_{name}")
    version = duckdb.__version__
    path = os.path.join(os.path.dirname(module.__file__), "extensions", f"v{version}", f"{name}.duckdb_extension")
    if not os.path.exists(path):
        shipped = os.listdir(os.path.join(os.path.dirname(module.__file__), "extensions"))
        raise SystemExit(f"duckdb-extension-{name} has no build for DuckDB {version} (it ships {shipped})")
    return path


def connect(a: argparse.Namespace) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for name in EXTENSIONS:
        con.execute(f"LOAD {quote(extension_path(name))}")
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET arrow_lossless_conversion = true")  # uuid as arrow.uuid, not text
    if a.s3_endpoint:
        url = urlsplit(a.s3_endpoint)
        parts = [
            "TYPE S3",
            f"KEY_ID {quote(a.s3_access_key_id or '')}",
            f"SECRET {quote(a.s3_secret_access_key or '')}",
            f"ENDPOINT {quote(url.netloc)}",
            "URL_STYLE 'path'",
            f"USE_SSL {'true' if url.scheme == 'https' else 'false'}",
            f"REGION {quote(a.s3_region or 'us-east-1')}",
        ]
        if a.s3_session_token:
            parts.append(f"SESSION_TOKEN {quote(a.s3_session_token)}")
        con.execute(f"CREATE SECRET lhbox_s3 ({', '.join(parts)})")
    return con


def expand_glob(a: argparse.Namespace, pattern: str) -> list[str]:
    """The s3:// objects (or local files) a glob names, sorted.

    Listed with pyarrow rather than DuckDB: DuckDB signs ListObjectsV2 as GET /bucket/?..., and s3rver
    checks the signature against /bucket (no slash): 403 SignatureDoesNotMatch on every glob.
    """
    if not any(c in pattern for c in "*?["):
        return [pattern]
    if not pattern.startswith("s3://"):
        import glob

        return sorted(glob.glob(pattern, recursive=True))
    import pyarrow.fs as pafs

    path = pattern[len("s3://") :]
    first = min(i for i, c in enumerate(path) if c in "*?[")
    base = path[: path.rfind("/", 0, first) + 1]
    url = urlsplit(a.s3_endpoint) if a.s3_endpoint else None
    fs = pafs.S3FileSystem(
        access_key=a.s3_access_key_id,
        secret_key=a.s3_secret_access_key,
        session_token=a.s3_session_token,
        region=a.s3_region,
        endpoint_override=url.netloc if url else None,
        scheme=url.scheme if url else "https",
        force_virtual_addressing=False,
    )
    infos = fs.get_file_info(pafs.FileSelector(base.rstrip("/"), recursive=True, allow_not_found=True))
    matcher = glob_regex(path)
    return sorted("s3://" + i.path for i in infos if i.type == pafs.FileType.File and matcher.fullmatch(i.path))


def glob_regex(pattern: str) -> re.Pattern:
    """DuckDB's glob: * and ? stay within one path segment, ** crosses segments, [...] a class."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                out.append("[" + pattern[i + 1 : j].replace("!", "^", 1) + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out))


def fetch(con: duckdb.DuckDBPyConnection, sql: str, params=None):
    rel = con.execute(sql, params or [])
    return rel.to_arrow_table()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    s = p.add_argument_group("s3")
    s.add_argument("--s3-endpoint", help="http://127.0.0.1:PORT")
    s.add_argument("--s3-access-key-id")
    s.add_argument("--s3-secret-access-key")
    s.add_argument("--s3-session-token")
    s.add_argument("--s3-region", default="us-east-1")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--metadata", help="location of a table's metadata.json (s3://... or a local path)")
    mode.add_argument("--read-json", help="NDJSON files to read with read_json (a glob)")
    mode.add_argument("--sql", help="any query (extensions and the S3 secret are set up)")
    p.add_argument("--order-by", action="append", default=[])
    p.add_argument("--where", help="SQL predicate for iceberg_scan")
    p.add_argument("--select", action="append", default=[])
    p.add_argument("--no-snapshots", action="store_true")
    a = p.parse_args()

    con = connect(a)
    doc: dict = {"engine": "duckdb", "duckdb_version": duckdb.__version__}
    cols = ", ".join('"' + c.replace('"', '""') + '"' for c in a.select) if a.select else "*"

    if a.metadata:
        text = con.execute("SELECT content FROM read_text(?)", [a.metadata]).fetchone()[0]
        metadata = json.loads(text)
        current = metadata.get("current-schema-id", 0)
        schema = next((x for x in metadata.get("schemas", []) if x.get("schema-id", 0) == current), metadata.get("schema"))
        doc["format_version"] = metadata.get("format-version")
        doc["schema"] = schema
        sql = f"SELECT {cols} FROM iceberg_scan({quote(a.metadata)})"
        if a.where:
            sql += f" WHERE {a.where}"
        table = sort_table(fetch(con, sql), a.order_by)
        doc["row_count"] = table.num_rows
        doc["rows"] = encode_table(table, schema_field_types(schema))
        if not a.no_snapshots:
            snaps = fetch(con, f"SELECT * FROM iceberg_snapshots({quote(a.metadata)}) ORDER BY sequence_number")
            doc["snapshots"] = encode_table(snaps)
    elif a.read_json:
        files = expand_glob(a, a.read_json)
        doc["files"] = files
        if not files:
            doc["row_count"] = 0
            doc["rows"] = []
        else:
            listing = "[" + ", ".join(quote(f) for f in files) + "]"
            sql = f"SELECT {cols} FROM read_json({listing}, format = 'newline_delimited', union_by_name = true)"
            if a.where:
                sql += f" WHERE {a.where}"
            table = sort_table(fetch(con, sql), a.order_by)
            doc["row_count"] = table.num_rows
            doc["rows"] = encode_table(table)
    else:
        table = sort_table(fetch(con, a.sql), a.order_by)
        doc["row_count"] = table.num_rows
        doc["rows"] = encode_table(table)

    emit(doc)


if __name__ == "__main__":
    main_guard(main)
