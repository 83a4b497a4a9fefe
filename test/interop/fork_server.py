"""Runs the interop scripts without paying their imports each time: a fork server.

  python fork_server.py <socket path>

Imports PyIceberg, PyArrow and DuckDB once (about 2 CPU-seconds on the CI machines), then listens on
a Unix socket. Each connection sends one JSON line {script, args, env, input}; the server forks, and
the child runs the script as `python <script> <args>` would (runpy, `__main__`, sys.path[0] its
folder, PYTHONPATH entries added, env overrides applied, `input` on stdin), then answers on the same
connection: {"pid": N} first (so the caller can kill it on a timeout), then {code, stdout, stderr}.
Every request starts from the same freshly imported parent, so no state passes from one to the next.

The parent is single-threaded (no lock can be held across a fork) and never writes to stdout.
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import socket
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# What the scripts import, loaded once here; each fork inherits it.
import duckdb  # noqa: E402,F401
import pyarrow  # noqa: E402,F401
import pyarrow.parquet  # noqa: E402,F401
import pyiceberg.catalog.rest  # noqa: E402,F401
import pyiceberg.catalog.sql  # noqa: E402,F401
import pyiceberg.io.pyarrow  # noqa: E402,F401
import pyiceberg.table  # noqa: E402,F401

import interop_common  # noqa: E402,F401

BASE_PATH = list(sys.path)


def read_request(conn: socket.socket) -> dict:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(1 << 16)
        if not chunk:
            raise EOFError("the request ended before its newline")
        data += chunk
    return json.loads(data)


def run_child(conn: socket.socket, req: dict) -> None:
    """In the forked child: the script's run, its answer, and the end of this process."""
    code = 1
    stdin = tempfile.TemporaryFile()
    stdout = tempfile.TemporaryFile()
    stderr = tempfile.TemporaryFile()
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # a script's own subprocesses are its to wait for
        conn.sendall((json.dumps({"pid": os.getpid()}) + "\n").encode())
        stdin.write(req.get("input", "").encode())
        stdin.seek(0)
        os.dup2(stdin.fileno(), 0)
        os.dup2(stdout.fileno(), 1)
        os.dup2(stderr.fileno(), 2)
        sys.stdin = open(0, "r", closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        env = req.get("env") or {}
        os.environ.update(env)
        script = req["script"]
        extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:] = [os.path.dirname(os.path.abspath(script)), *extra, *BASE_PATH]
        sys.argv = [script, *req.get("args", [])]
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, (int, type(None))):
                sys.stderr.write(f"{e.code}\n")
        except BaseException:  # noqa: BLE001 - as python itself would: the traceback, exit 1
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        stdout.seek(0)
        stderr.seek(0)
        answer = {"code": code, "stdout": stdout.read().decode("utf-8", "replace"), "stderr": stderr.read().decode("utf-8", "replace")}
        conn.sendall((json.dumps(answer) + "\n").encode())
    finally:
        os._exit(0)


def main() -> None:
    path = sys.argv[1]
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    sys.stderr.write("ready\n")
    sys.stderr.flush()
    while True:
        conn, _ = server.accept()
        try:
            req = read_request(conn)
        except (EOFError, ValueError, OSError):
            conn.close()
            continue
        if os.fork() == 0:
            server.close()
            run_child(conn, req)
        conn.close()


if __name__ == "__main__":
    main()
