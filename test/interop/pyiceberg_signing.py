"""PyIceberg's RestCatalog with no S3 keys of its own: table files through the catalog's S3 signer.

  python pyiceberg_signing.py --rest-uri URI --warehouse NAME --s3-endpoint URL NS.T < steps

steps (stdin, JSON): [{"token": KEY, "op": "scan"}, {"token": KEY, "op": "append", "rows": [...]}, ...],
run in order in one process (PyIceberg's import is most of a run's time), each with a catalog of its own.

FsspecFileIO (s3fs) with PyIceberg's S3V4RestSigner, as the table's config asks (s3.signer, s3.signer.uri,
s3.signer.endpoint, token): the client asks for remote signing only (X-Iceberg-Access-Delegation:
remote-signing), so a write key receives no keys either. Runs in the venv of PyIceberg with s3fs
(test/support/python.ts, runPyicebergS3fs), not the main one. fsspec's S3 filesystems are not shared
(own_s3_filesystems: PyIceberg 0.12's signer races otherwise).

Prints a list, one per step: {"result": ...} or, when PyIceberg raised, {"error": {"type", "message"}}:
scan gives the rows (x ascending) and the s3.* keys of the table's FileIO; append the new snapshot id.
"""

from __future__ import annotations

import argparse
import json
import sys


def run(a: argparse.Namespace, token: str, op: str, rows: list | None):
    import pyarrow as pa
    from pyiceberg.catalog.rest import RestCatalog

    catalog = RestCatalog(
        "lhbox",
        uri=a.rest_uri,
        token=token,
        warehouse=a.warehouse,
        **{
            "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",
            "header.X-Iceberg-Access-Delegation": "remote-signing",
            # The store's address only: no key of its own.
            "s3.endpoint": a.s3_endpoint,
        },
    )
    table = catalog.load_table(a.table)
    io_keys = sorted(k for k in table.io.properties if k.startswith("s3."))
    if op == "scan":
        rows = table.scan().to_arrow().sort_by("x").to_pylist()
        return {"rows": rows, "io_keys": io_keys}
    if op == "append":
        table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
        return {"snapshot_id": str(table.metadata.current_snapshot_id)}
    raise SystemExit(f"unknown op {op}")


def own_s3_filesystems() -> None:
    """Every S3FileSystem PyIceberg asks for is its own, as a user of PyIceberg 0.12's signer must have it.

    fsspec hands all threads one S3FileSystem per set of arguments, and PyIceberg's _s3(), run once per
    FileIO and thread, swaps the signer on that shared client by unregister then register_last. Signing is
    the signer's alone (signature_version UNSIGNED), so a request another thread sends in between finds
    no before-sign handler and reaches the store unsigned: "Access Denied" (apache/iceberg-python#3896,
    open). An append's read of the parent manifest list beside its manifest write met that gap in about
    one run of ten. fsspec's own setting skip_instance_cache gives each _s3() call a filesystem with its
    signer, so none is swapped under a request (nor an earlier step's key kept).
    """
    import fsspec.config

    fsspec.config.conf.setdefault("s3", {})["skip_instance_cache"] = True


def main() -> None:
    own_s3_filesystems()
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rest-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--s3-endpoint", required=True)
    p.add_argument("table")
    a = p.parse_args()
    results = []
    for step in json.loads(sys.stdin.read()):
        try:
            results.append({"result": run(a, step["token"], step["op"], step.get("rows"))})
        except Exception as e:  # noqa: BLE001 - the test asserts what PyIceberg raised
            results.append({"error": {"type": type(e).__name__, "message": str(e)[:2000]}})
    print(json.dumps(results, default=str))


if __name__ == "__main__":
    main()
