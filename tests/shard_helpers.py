"""Helpers of the shard race and secret tests (not a test module): a coordinator with
shards that are databases of the test server, CLI processes held at a known point by
a lock another session holds, and waiting for them there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from conftest import Database, run_cli
from psycopg import sql

__all__ = [
    "Coordinator",
    "finish",
    "holding",
    "jsonl",
    "placements",
    "scalar",
    "spawned",
    "wait_cancelled",
    "wait_waiting",
]


@dataclass
class Coordinator:
    db: Database
    shards: dict[str, Database]

    def cli(self, *args: str, **kwargs: Any) -> Any:
        return run_cli(list(args), dsn=self.db.dsn, **kwargs)


def jsonl(path: Path, n: int, word: str = "f") -> Path:
    """``n`` small documents as a .jsonl file."""
    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"doc{i:06d}", "text": f"def {word}_{i}(x): {word} x"}))
            fh.write("\n")
    return path


@contextmanager
def spawned(dsn: str, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """``riido-pg ARGS`` in the background, waiting as long as it must for locks;
    killed if it still runs when the block ends."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIIDO_PG_")}
    env.update(RIIDO_PG_DSN=dsn, RIIDO_PG_LOCK_TIMEOUT_MS="120000")
    proc = subprocess.Popen(
        [sys.executable, "-m", "riido_pg", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def finish(proc: subprocess.Popen[bytes], timeout: float = 120) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out.decode(), err.decode()


def scalar(db: Database, query: str, params: tuple[Any, ...] = ()) -> Any:
    with db.connect() as conn:
        row = conn.execute(query, params).fetchone()
    return row[0] if row else None


def placements(db: Database) -> dict[str, str]:
    with db.connect() as conn:
        return dict(conn.execute("SELECT snapshot_id, shard FROM riido.placements").fetchall())


def _waiting(db: Database, like: str) -> tuple[int, Any] | None:
    with db.connect() as conn:
        row = conn.execute(
            "SELECT pid, query_start FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = 'riido-pg' AND wait_event_type = 'Lock' AND query LIKE %s",
            (like,),
        ).fetchone()
    return (int(row[0]), row[1]) if row else None


def wait_waiting(db: Database, like: str = "%", timeout: float = 60) -> tuple[int, Any]:
    """(pid, statement start) of a riido-pg backend of ``db`` waiting for a lock in a
    statement matching ``like``, once there is one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := _waiting(db, like):
            return found
        time.sleep(0.05)
    raise AssertionError(f"no riido-pg backend of {db.name} ever waited in {like!r}")


def wait_cancelled(db: Database, caught: tuple[int, Any], timeout: float = 60) -> None:
    """Until the statement ``caught`` waiting (see :func:`wait_waiting`) no longer
    waits: cancelled, so the interrupted command's clean-up may need the lock next."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _waiting(db, "%") != caught:
            return
        time.sleep(0.05)
    raise AssertionError("the interrupted statement was never cancelled")


@contextmanager
def holding(db: Database, table: str, mode: str = "ACCESS EXCLUSIVE") -> Iterator[threading.Event]:
    """Another session holds ``mode`` on riido.<table> of ``db`` until the block ends
    or the yielded event is set."""
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        with psycopg.connect(db.dsn, autocommit=True) as conn, conn.transaction():
            conn.execute(
                sql.SQL("LOCK TABLE riido.{} IN {} MODE").format(
                    sql.Identifier(table), sql.SQL(mode)
                )
            )
            locked.set()
            release.wait(180)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(20)
        yield release
    finally:
        release.set()
        holder.join()
