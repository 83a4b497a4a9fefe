"""Runs SQL with DuckDB on an Iceberg REST catalog attached as `cat` (DuckDB writes through it).

  python duckdb_iceberg_sql.py <s3 options> --rest-uri http://127.0.0.1:PORT \
      --exec "DELETE FROM cat.ns.t WHERE x IN (2, 5)" [--exec ...] [--query "SELECT ..."]

The catalog is attached with ATTACH '' AS cat (TYPE ICEBERG, ENDPOINT ..., AUTHORIZATION_TYPE 'none',
ACCESS_DELEGATION_MODE 'none'): no token, and the tables' files go through the S3 secret made from the
s3 options (not the catalog's vended keys, which carry no endpoint). With --warehouse and
--rest-token (a bearer token) or --rest-client-id/--rest-client-secret (OAuth2 client credentials at
<rest-uri>/v1/oauth/tokens), it is ATTACH '<warehouse>' AS cat with an ICEBERG secret instead; with
--vended too, ACCESS_DELEGATION_MODE 'vended_credentials' and no S3 secret (the catalog's keys only). Extensions load offline from
their PyPI wheels exactly as duckdb_scan.py does. Each --exec runs in order (DuckDB commits each
statement to the catalog: a DELETE writes merge-on-read delete files, positional deletes on a v2
table and deletion vectors on v3); then --query, if given.

Prints {duckdb_version, executed: [rows changed per --exec], row_count, rows} (rows: --query's result in
the encoding of interop_common.py).
"""

from __future__ import annotations

import argparse
import os

import duckdb

from duckdb_scan import connect, fetch, quote
from interop_common import emit, encode_table, main_guard


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    s = p.add_argument_group("s3")
    s.add_argument("--s3-endpoint", required=True)
    s.add_argument("--s3-access-key-id")
    s.add_argument("--s3-secret-access-key")
    s.add_argument("--s3-session-token")
    s.add_argument("--s3-region", default="us-east-1")
    p.add_argument("--rest-uri", required=True)
    p.add_argument("--warehouse", default="")
    p.add_argument("--rest-token")
    p.add_argument("--rest-client-id")
    p.add_argument("--rest-client-secret")
    p.add_argument("--vended", action="store_true", help="ACCESS_DELEGATION_MODE 'vended_credentials', and no S3 secret of its own")
    p.add_argument("--exec", action="append", default=[], dest="statements")
    p.add_argument("--query")
    a = p.parse_args()

    # The iceberg extension asks the environment for a region when the catalog vends none.
    os.environ.setdefault("AWS_REGION", a.s3_region)
    if a.vended:
        a.s3_endpoint = None  # connect() makes no S3 secret: the table's files go with the keys the catalog vends
    con = connect(a)
    mode = "vended_credentials" if a.vended else "none"
    if a.rest_token or a.rest_client_secret:
        if a.rest_token:
            auth = f"TOKEN {quote(a.rest_token)}"
        else:
            token_uri = a.rest_uri.rstrip("/") + "/v1/oauth/tokens"
            auth = f"CLIENT_ID {quote(a.rest_client_id or '')}, CLIENT_SECRET {quote(a.rest_client_secret)}, OAUTH2_SERVER_URI {quote(token_uri)}"
        con.execute(f"CREATE SECRET lhbox_catalog (TYPE ICEBERG, {auth})")
        con.execute(
            f"ATTACH {quote(a.warehouse)} AS cat (TYPE ICEBERG, ENDPOINT {quote(a.rest_uri)}, SECRET lhbox_catalog, ACCESS_DELEGATION_MODE {quote(mode)})"
        )
    else:
        con.execute(
            f"ATTACH '' AS cat (TYPE ICEBERG, ENDPOINT {quote(a.rest_uri)}, AUTHORIZATION_TYPE 'none', ACCESS_DELEGATION_MODE 'none')"
        )
    executed = []
    for sql in a.statements:
        row = con.execute(sql).fetchone()
        executed.append(row[0] if row else None)
    doc: dict = {"duckdb_version": duckdb.__version__, "executed": executed}
    if a.query:
        table = fetch(con, a.query)
        doc["row_count"] = table.num_rows
        doc["rows"] = encode_table(table)
    emit(doc)


if __name__ == "__main__":
    main_guard(main)
