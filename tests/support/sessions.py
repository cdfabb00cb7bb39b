"""What other sessions do while a test runs (a table locked, readers, a replace held
while readers read, a login role), and waiting for a state of the server.

Waits are generous (:data:`WAIT`): they bound a hang, they do not measure speed, and
the suite shares a small machine with other work.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, LiteralString, TypeVar

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from support.database import Database

__all__ = [
    "WAIT",
    "HeldReplace",
    "held_replace",
    "login_role",
    "readers",
    "table_locked",
    "wait_for",
    "wait_read",
    "wait_until",
]

#: Seconds to wait for a state before the test fails.
WAIT = 180.0

T = TypeVar("T")


def wait_until(
    probe: Callable[[], T], what: str, *, timeout: float = WAIT, every: float = 0.02
) -> T:
    """Call ``probe`` until it returns something true, and return that; fail with
    ``timed out waiting for: WHAT`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for: {what}")
        time.sleep(every)


def wait_for(
    db: Database, query: str, params: tuple[Any, ...] = (), *, timeout: float = WAIT
) -> Any:
    """Run ``query`` (one value) on ``db`` until its value is true; return the value."""
    with db.connect() as conn:

        def probe() -> Any:
            row = conn.execute(query, params).fetchone()
            return row[0] if row else None

        return wait_until(probe, f"{query} {params or ''}".strip(), timeout=timeout)


@contextmanager
def table_locked(
    db: Database, table: str, mode: LiteralString = "ACCESS EXCLUSIVE"
) -> Iterator[threading.Event]:
    """Another session holds ``mode`` (a lock mode of ``LOCK TABLE``) on riido.<table>
    until the block ends or the yielded event is set."""
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        with db.connect() as conn, conn.transaction():
            conn.execute(
                sql.SQL("LOCK TABLE riido.{} IN {} MODE").format(
                    sql.Identifier(table), sql.SQL(mode)
                )
            )
            locked.set()
            release.wait(WAIT)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(WAIT)
        yield release
    finally:
        release.set()
        holder.join()


@contextmanager
def readers(
    db: Database, read: Callable[[psycopg.Connection[Any]], None], n: int = 3
) -> Iterator[list[BaseException]]:
    """``n`` threads calling ``read(conn)`` over and over, each on a connection of its
    own, for the block; yields the list of what they raised (a thread stops at its
    first error), for the caller to assert on after the block."""
    errors: list[BaseException] = []
    stop = threading.Event()

    def loop() -> None:
        try:
            with db.connect() as conn:
                while not stop.is_set():
                    read(conn)
        except BaseException as exc:  # surfaced by the caller
            errors.append(exc)

    threads = [threading.Thread(target=loop) for _ in range(n)]
    for t in threads:
        t.start()
    try:
        yield errors
    finally:
        stop.set()
        for t in threads:
            t.join()


def wait_read(
    seen: Sequence[object], errors: Sequence[BaseException], value: object, *, times: int = 1
) -> None:
    """Until :func:`readers` have recorded ``value`` in ``seen`` ``times`` times, or one
    of them failed (for the caller to assert on ``errors``)."""
    wait_until(
        lambda: errors or seen.count(value) >= times, f"readers to see {value!r} {times} time(s)"
    )


@contextmanager
def login_role(db: Database, server_dsn: str, grant: Callable[[str], None]) -> Iterator[str]:
    """A new login role, given rights by ``grant(role)``; yields its DSN for ``db`` and
    drops the role afterwards."""
    role = f"riido_reader_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
    try:
        grant(role)
        yield make_conninfo(db.dsn, user=role)
    finally:
        with db.connect() as conn:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        with psycopg.connect(server_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


@dataclass
class HeldReplace:
    """What :func:`held_replace` saw."""

    #: One word per read: ``old``, ``new`` or ``mixed`` (the caller's ``classify``).
    seen: list[str] = field(default_factory=list)
    #: What the readers raised (a reader stops at its first error).
    reader_errors: list[BaseException] = field(default_factory=list)
    #: What the replace returned, once it has returned.
    results: list[Any] = field(default_factory=list)
    #: What the replace raised.
    replace_errors: list[BaseException] = field(default_factory=list)


@contextmanager
def held_replace(
    db: Database,
    snapshot: str,
    classify: Callable[[psycopg.Connection[Any]], str],
    replace: Callable[[psycopg.Connection[Any]], object],
    *,
    statement: str = "",
) -> Iterator[HeldReplace]:
    """A replace of ``snapshot`` caught before it commits, with readers reading all along.

    :func:`readers` call ``classify(conn)`` (``old``, ``new`` or ``mixed``) over and
    over; once one has seen ``old``, ``replace(conn)`` runs in a thread on a
    connection of its own while another session holds the snapshot's row. The block
    runs when the replace waits for that row (in a statement beginning with
    ``statement``): its writes are in, not committed. After the block the row is
    released, the replace awaited and, unless the block failed, the readers read the
    new content six times (a read begun before the swap has ended)."""
    held = HeldReplace()

    def read(conn: psycopg.Connection[Any]) -> None:
        held.seen.append(classify(conn))

    def run(conn: psycopg.Connection[Any]) -> None:
        try:
            held.results.append(replace(conn))
        except BaseException as exc:  # for the caller to assert on
            held.replace_errors.append(exc)

    with readers(db, read) as errors:
        held.reader_errors = errors
        wait_read(held.seen, errors, "old")
        with db.connect() as holder, db.connect() as loader:
            holder.execute("BEGIN")
            holder.execute(
                "SELECT 1 FROM riido.snapshots WHERE snapshot_id = %s FOR NO KEY UPDATE",
                (snapshot,),
            )
            writer = threading.Thread(target=run, args=(loader,))
            writer.start()
            try:
                wait_for(
                    db,
                    "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = %s "
                    "AND wait_event_type = 'Lock' AND query LIKE %s)",
                    (loader.info.backend_pid, statement + "%"),
                )
                yield held
            finally:
                # also when the block fails: closing `loader` while the writer waits
                # on it for the holder's lock would never return
                holder.execute("COMMIT")
                writer.join(timeout=WAIT)
        wait_read(held.seen, errors, "new", times=6)
