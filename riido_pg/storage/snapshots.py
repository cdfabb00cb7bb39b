"""Snapshots as stored: the row, its state, its lock; listing and dropping.

A snapshot is ``loading`` while a load writes it and ``ready`` once the load's single
transaction committed; only ``ready`` snapshots are ranked. Writers of a snapshot id
take a session advisory lock on it (:func:`snapshot_lock`), so a second writer fails
at once with :class:`~riido_pg.errors.SnapshotBusy`, and readers can tell a load in
progress from one that was interrupted.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg import sql

from riido_pg.documents import check_snapshot_id
from riido_pg.errors import (
    Hint,
    InvalidTextConfig,
    SnapshotBusy,
    SnapshotLoading,
    SnapshotNotFound,
)
from riido_pg.quoting import shell_command
from riido_pg.server.connect import Conn
from riido_pg.server.errors import translated
from riido_pg.server.settle import releasing
from riido_pg.storage.texts import collect_garbage

__all__ = [
    "CONTENT_TABLES",
    "DEFAULT_TEXT_CONFIG",
    "K1",
    "SNAPSHOT_COLUMNS",
    "B",
    "Snapshot",
    "check_text_config",
    "delete_content",
    "drop_snapshot",
    "find_snapshot",
    "get_snapshot",
    "insert_snapshot_row",
    "list_snapshots",
    "load_session_timeout",
    "load_timeout",
    "load_timeout_ms",
    "shadow_id",
    "snapshot_lock",
]

#: BM25 parameters (README "Ranking"), stored with every snapshot.
K1 = 1.2
B = 0.75
DEFAULT_TEXT_CONFIG = "english"
#: Tables holding a snapshot's content (everything but its riido.snapshots row).
CONTENT_TABLES = ("snapshot_models", "postings", "documents")
_LOCK_NAMESPACE = 0x52494944  # "RIID"


@dataclass(frozen=True, slots=True)
class Snapshot:
    snapshot_id: str
    documents: int
    text_config: str
    state: str
    created_at: datetime
    content_digest: str


def _lock_key(snapshot_id: str) -> int:
    """31-bit key of the snapshot's advisory lock (shown as pg_locks.objid)."""
    digest = hashlib.blake2b(snapshot_id.encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


def _being_written(conn: Conn, snapshot_id: str) -> bool:
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' "
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
        "AND classid = %s AND objid = %s AND objsubid = 2 AND granted)",
        (_LOCK_NAMESPACE, _lock_key(snapshot_id)),
    ).fetchone()
    return bool(row and row[0])


@contextmanager
def snapshot_lock(conn: Conn, snapshot_id: str) -> Iterator[None]:
    """Hold the snapshot's writer lock for the block, or raise SnapshotBusy at once.

    A session lock: it outlives the transactions inside the block (a load commits its
    ``loading`` row before writing) and is released when the block ends or the
    session dies. Inside the caller's transaction it is that transaction's lock,
    held until the caller commits what the block wrote. Re-entrant within one
    session, as PostgreSQL's advisory locks are.
    """
    key = _lock_key(snapshot_id)
    in_caller = conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
    take = (
        "SELECT pg_try_advisory_xact_lock(%s, %s)"
        if in_caller
        else "SELECT pg_try_advisory_lock(%s, %s)"
    )
    row = conn.execute(take, (_LOCK_NAMESPACE, key)).fetchone()
    if not (row and row[0]):
        raise SnapshotBusy(
            f"snapshot {snapshot_id!r} is being written by another process; "
            "try again when it finishes"
        )
    if in_caller:
        yield
        return
    with releasing(conn, "SELECT pg_advisory_unlock(%s, %s)", (_LOCK_NAMESPACE, key)):
        yield


@translated
def check_text_config(conn: Conn, text_config: str) -> str:
    """The canonical name of a text search configuration, or InvalidTextConfig."""
    row = None
    if text_config and "\x00" not in text_config:
        try:
            with conn.transaction():  # a savepoint when called inside a transaction
                row = conn.execute("SELECT %s::regconfig::text", (text_config,)).fetchone()
        except (psycopg.errors.ProgrammingError, psycopg.errors.DataError):
            row = None
    if row is None:
        known = [str(r[0]) for r in conn.execute("SELECT cfgname FROM pg_ts_config ORDER BY 1")]
        raise InvalidTextConfig(
            f"unknown text search configuration {text_config!r}; choose among: " + ", ".join(known)
        )
    return str(row[0])


#: The columns of riido.snapshots that make a Snapshot, in its field order.
SNAPSHOT_COLUMNS = (
    "SELECT snapshot_id, document_count, text_config, state, created_at, content_digest "
    "FROM riido.snapshots"
)


@translated
def find_snapshot(conn: Conn, snapshot_id: str) -> Snapshot | None:
    """The snapshot's row in any state, or None."""
    row = conn.execute(SNAPSHOT_COLUMNS + " WHERE snapshot_id = %s", (snapshot_id,)).fetchone()
    return Snapshot(*row) if row else None


@translated
def get_snapshot(conn: Conn, snapshot_id: str) -> Snapshot:
    """A ready snapshot, or SnapshotNotFound / SnapshotLoading."""
    check_snapshot_id(snapshot_id)
    snap = find_snapshot(conn, snapshot_id)
    if snap is None:
        raise SnapshotNotFound(
            f"no snapshot {snapshot_id!r}",
            Hint(
                f"load one with `{shell_command('riido-pg', 'load', snapshot_id, 'SOURCE')}`",
                "load one with load_snapshot()",
            ),
        )
    if snap.state != "ready":
        if _being_written(conn, snapshot_id):
            raise SnapshotLoading(
                f"snapshot {snapshot_id!r} is still loading; query it when the load finishes"
            )
        standby = conn.execute("SELECT pg_is_in_recovery()").fetchone()
        if standby and standby[0]:  # the loader's lock is on the primary, out of sight
            raise SnapshotLoading(
                f"snapshot {snapshot_id!r} is not ready on this standby: it is loading on the "
                "primary (query it when the load finishes), or its load was interrupted"
            )
        drop = shell_command("riido-pg", "snapshots", "drop", snapshot_id)
        raise SnapshotLoading(
            f"snapshot {snapshot_id!r} was interrupted while loading",
            Hint(
                f"run the load again or drop it with `{drop}`",
                "run the load again or drop it with drop_snapshot()",
            ),
        )
    return snap


@translated
def list_snapshots(conn: Conn) -> list[Snapshot]:
    """Every snapshot, ready or loading (not the hidden rows of a replace)."""
    rows = conn.execute(
        SNAPSHOT_COLUMNS + " WHERE state <> 'replacing' ORDER BY snapshot_id"
    ).fetchall()
    return [Snapshot(*r) for r in rows]


def shadow_id(snapshot_id: str) -> str:
    """The id of the hidden ``replacing`` row a parallel ``--replace`` of
    ``snapshot_id`` writes its new content under until the swap."""
    return f"{snapshot_id}\x1freplacing"


def delete_content(conn: Conn, snapshot_id: str) -> None:
    """Delete a snapshot's documents and postings (not its row); inside a transaction.
    Its texts become candidates for the collector (riido_pg.storage.texts)."""
    conn.execute(
        "INSERT INTO riido.text_pending (token, key) SELECT DISTINCT NULL::uuid, text_key "
        "FROM riido.documents WHERE snapshot_id = %s",
        (snapshot_id,),
    )
    for table in CONTENT_TABLES:
        conn.execute(
            sql.SQL("DELETE FROM riido.{} WHERE snapshot_id = %s").format(sql.Identifier(table)),
            (snapshot_id,),
        )


@translated
def drop_snapshot(conn: Conn, snapshot_id: str) -> None:
    """Remove a snapshot (ready, or left ``loading`` by an interrupted load)."""
    check_snapshot_id(snapshot_id)
    with snapshot_lock(conn, snapshot_id):
        with conn.transaction():
            if find_snapshot(conn, snapshot_id) is None:
                raise SnapshotNotFound(f"no snapshot {snapshot_id!r}")
            for sid in (snapshot_id, shadow_id(snapshot_id)):
                delete_content(conn, sid)
                conn.execute("DELETE FROM riido.snapshots WHERE snapshot_id = %s", (sid,))
        if conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            collect_garbage(conn)  # not in the caller's transaction: the next collection


def insert_snapshot_row(
    conn: Conn, snapshot_id: str, text_config: str, state: str, documents: int, digest: str
) -> None:
    """The riido.snapshots row a load (or a scratch snapshot) writes its documents under."""
    conn.execute(
        "INSERT INTO riido.snapshots "
        "(snapshot_id, text_config, state, document_count, content_digest, k1, b) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (snapshot_id, text_config, state, documents, digest, K1, B),
    )


def load_timeout_ms() -> int:
    """A load's statement timeout: ``RIIDO_PG_LOAD_TIMEOUT_MS``, default 0 (none)."""
    value = os.environ.get("RIIDO_PG_LOAD_TIMEOUT_MS", "0")
    return int(value) if value.isdigit() else 0


@contextmanager
def _load_statement_timeout(conn: Conn, *, local: bool) -> Iterator[None]:
    """The load timeout for the block: for the current transaction (``local``) or for
    the session; the statement timeout before it is back after the block, when the
    connection is still where the block began (in that transaction, or idle)."""
    row = conn.execute("SHOW statement_timeout").fetchone()
    before = str(row[0]) if row else "0"
    set_to = "SELECT set_config('statement_timeout', %s, %s)"
    conn.execute(set_to, (str(load_timeout_ms()), local))
    try:
        yield
    finally:
        status = psycopg.pq.TransactionStatus
        if conn.info.transaction_status == (status.INTRANS if local else status.IDLE):
            with nullcontext() if local else suppress(psycopg.Error):
                conn.execute(set_to, (before, local))


def load_session_timeout(conn: Conn) -> AbstractContextManager[None]:
    """Outside a transaction: :func:`load_timeout` for every statement of the block,
    on a session a load commits several transactions in (a parallel load); the
    session's statement timeout is back after the block."""
    return _load_statement_timeout(conn, local=False)


def load_timeout(conn: Conn) -> AbstractContextManager[None]:
    """Inside a transaction: for the block, loads are bounded by their input, not by
    the query statement timeout; ``RIIDO_PG_LOAD_TIMEOUT_MS`` (default 0, no limit)
    applies instead. The session's statement timeout is back after the block."""
    return _load_statement_timeout(conn, local=True)
