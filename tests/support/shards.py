"""Shards that are databases of the test server, for the shard race tests: a
coordinator run in this process, CLI processes held at a known point by a lock another
session holds (:func:`support.sessions.table_locked`), and waiting for them there."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from support.cli import DEFAULT_TIMEOUT, CliResult, run_cli, spawn
from support.database import Database
from support.sessions import WAIT, wait_until

__all__ = [
    "Coordinator",
    "finish",
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

    def cli(self, *args: str, **kwargs: Any) -> CliResult:
        """``riido-pg ARGS`` against the coordinator, in this process
        (:func:`support.cli.run_cli`)."""
        return run_cli(list(args), dsn=self.db.dsn, **kwargs)


@contextmanager
def spawned(dsn: str, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """``riido-pg ARGS`` as a process in the background (to be signalled or raced),
    waiting as long as it must for locks; killed and reaped when the block ends."""
    env = {"RIIDO_PG_LOCK_TIMEOUT_MS": str(int(WAIT * 1000))}
    with spawn(args, dsn=dsn, env=env) as proc:
        yield proc


def finish(proc: subprocess.Popen[bytes], timeout: float = DEFAULT_TIMEOUT) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of a :func:`spawned` process, once it ends."""
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out.decode(), err.decode()


def scalar(db: Database, query: str, params: tuple[Any, ...] = ()) -> Any:
    """The one value of ``query`` on ``db`` (None without a row)."""
    with db.connect() as conn:
        row = conn.execute(query, params).fetchone()
    return row[0] if row else None


def placements(db: Database) -> dict[str, str]:
    """The coordinator's snapshot -> shard placements."""
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


def wait_waiting(db: Database, like: str = "%") -> tuple[int, Any]:
    """(pid, statement start) of a riido-pg backend of ``db`` waiting for a lock in a
    statement matching ``like``, once there is one."""
    return wait_until(
        lambda: _waiting(db, like),
        f"a riido-pg backend of {db.name} waiting in {like!r}",
        every=0.05,
    )


def wait_cancelled(db: Database, caught: tuple[int, Any]) -> None:
    """Until the statement ``caught`` waiting (see :func:`wait_waiting`) no longer
    waits: cancelled, so the interrupted command's clean-up may need the lock next."""
    wait_until(
        lambda: _waiting(db, "%") != caught, "the interrupted statement to be cancelled", every=0.05
    )
