"""Snapshots as stored: the row, its state, its lock; listing and dropping.

A snapshot is ``loading`` while a load writes it and ``ready`` once the load has
published it; only ``ready`` snapshots are ranked. Its content is a path of segments
(``riido.snapshot_segments``) less the documents it removed (README "Snapshots on a
base"). Writers of a snapshot id take a session advisory lock on it
(:func:`snapshot_lock`), so a second writer fails at once with
:class:`~riido_pg.errors.SnapshotBusy`, and readers can tell a load in progress from
one that was interrupted.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

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
from riido_pg.server.plans import Plan, Query, run
from riido_pg.server.settle import releasing
from riido_pg.storage.texts import collect_garbage

__all__ = [
    "DEFAULT_TEXT_CONFIG",
    "K1",
    "SNAPSHOT_COLUMNS",
    "B",
    "Snapshot",
    "Target",
    "check_text_config",
    "drop_snapshot",
    "find_snapshot",
    "get_snapshot",
    "insert_snapshot_plan",
    "insert_snapshot_row",
    "list_snapshots",
    "snapshot_from_row",
    "snapshot_lock",
    "snapshot_plan",
    "text_config_plan",
]

#: BM25 parameters (README "Ranking"), stored with every snapshot.
K1 = 1.2
B = 0.75
DEFAULT_TEXT_CONFIG = "english"
_LOCK_NAMESPACE = 0x52494944  # "RIID"


@dataclass(frozen=True, slots=True)
class Target:
    """What ranking statements need to know of a snapshot: its path of segments and
    the statistics BM25 takes from it."""

    snapshot_id: str
    segments: tuple[uuid.UUID, ...]
    documents: int
    len_raw: int
    len_ident: int
    #: How many documents of its path's segments the snapshot does not hold.
    removed: int
    k1: float
    b: float

    def length(self, col: str) -> int:
        return self.len_raw if col == "raw" else self.len_ident

    def params(self, **extra: Any) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "segments": list(self.segments),
            "n": self.documents,
            "k1": self.k1,
            "b": self.b,
            "len_raw": self.len_raw,
            "len_ident": self.len_ident,
            **extra,
        }


@dataclass(frozen=True, slots=True)
class Snapshot:
    snapshot_id: str
    documents: int
    text_config: str
    state: str
    created_at: datetime
    content_digest: str
    #: The snapshot it was loaded on (None: self-contained).
    base: str | None = None
    #: Documents in its own segment (all of them when self-contained).
    added: int = 0
    #: Documents of its path's segments it does not hold.
    removed: int = 0
    len_raw: int = 0
    len_ident: int = 0
    k1: float = K1
    b: float = B
    #: Its path of segments, base first.
    segments: tuple[uuid.UUID, ...] = ()

    @property
    def target(self) -> Target:
        """What the ranking statements need of this snapshot."""
        return Target(
            self.snapshot_id,
            self.segments,
            self.documents,
            self.len_raw,
            self.len_ident,
            self.removed,
            self.k1,
            self.b,
        )


#: The columns of riido.snapshots (as ``s``) that make a Snapshot, in its field order.
SNAPSHOT_COLUMNS = (
    "SELECT s.snapshot_id, s.document_count, s.text_config, s.state, s.created_at, "
    "s.content_digest, s.base, s.added, cardinality(s.removed), s.len_raw, s.len_ident, "
    "s.k1, s.b, coalesce((SELECT array_agg(p.segment_id ORDER BY p.position) "
    "FROM riido.snapshot_segments AS p WHERE p.snapshot_id = s.snapshot_id), '{}') "
    "FROM riido.snapshots AS s"
)


def snapshot_from_row(row: tuple[object, ...]) -> Snapshot:
    return Snapshot(*row[:-1], tuple(row[-1]))  # type: ignore[arg-type, call-arg]


def _lock_key(snapshot_id: str) -> int:
    """31-bit key of the snapshot's advisory lock (shown as pg_locks.objid)."""
    digest = hashlib.blake2b(snapshot_id.encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


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


def text_config_plan(text_config: str) -> Plan[str]:
    """The canonical name of a text search configuration, or InvalidTextConfig
    (inside the caller's transaction: a savepoint keeps it usable)."""
    if text_config and "\x00" not in text_config:
        yield Query("SAVEPOINT riido_config")
        try:
            result = yield Query("SELECT %s::regconfig::text", (text_config,))
        except (psycopg.errors.ProgrammingError, psycopg.errors.DataError):
            yield Query("ROLLBACK TO SAVEPOINT riido_config")
        else:
            yield Query("RELEASE SAVEPOINT riido_config")
            return str(result.one()[0])
    known = yield Query("SELECT cfgname FROM pg_ts_config ORDER BY 1")
    names = ", ".join(str(r[0]) for r in known.rows)
    raise InvalidTextConfig(
        f"unknown text search configuration {text_config!r}; choose among: {names}"
    )


@translated
def check_text_config(conn: Conn, text_config: str) -> str:
    """The canonical name of a text search configuration, or InvalidTextConfig."""
    with conn.transaction():  # a savepoint when called inside a transaction
        return run(conn, text_config_plan(text_config))


def find_plan(snapshot_id: str) -> Plan[Snapshot | None]:
    """The snapshot's row in any state, or None."""
    result = yield Query(SNAPSHOT_COLUMNS + " WHERE s.snapshot_id = %s", (snapshot_id,))
    return snapshot_from_row(result.rows[0]) if result.rows else None


@translated
def find_snapshot(conn: Conn, snapshot_id: str) -> Snapshot | None:
    """The snapshot's row in any state, or None."""
    return run(conn, find_plan(snapshot_id))


def snapshot_plan(snapshot_id: str) -> Plan[Snapshot]:
    """A ready snapshot, or SnapshotNotFound / SnapshotLoading."""
    check_snapshot_id(snapshot_id)
    snap = yield from find_plan(snapshot_id)
    if snap is None:
        raise SnapshotNotFound(
            f"no snapshot {snapshot_id!r}",
            Hint(
                f"load one with `{shell_command('riido-pg', 'load', snapshot_id, 'SOURCE')}`",
                "load one with load_snapshot()",
            ),
        )
    if snap.state == "ready":
        return snap
    result = yield Query(
        "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' "
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
        "AND classid = %s AND objid = %s AND objsubid = 2 AND granted), pg_is_in_recovery()",
        (_LOCK_NAMESPACE, _lock_key(snapshot_id)),
    )
    being_written, standby = result.one()
    if being_written:
        raise SnapshotLoading(
            f"snapshot {snapshot_id!r} is still loading; query it when the load finishes"
        )
    if standby:  # the loader's lock is on the primary, out of sight
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


@translated
def get_snapshot(conn: Conn, snapshot_id: str) -> Snapshot:
    """A ready snapshot, or SnapshotNotFound / SnapshotLoading."""
    return run(conn, snapshot_plan(snapshot_id))


@translated
def list_snapshots(conn: Conn) -> list[Snapshot]:
    """Every snapshot, ready or loading."""
    rows = conn.execute(SNAPSHOT_COLUMNS + " ORDER BY s.snapshot_id").fetchall()
    return [snapshot_from_row(r) for r in rows]


@translated
def drop_snapshot(conn: Conn, snapshot_id: str) -> None:
    """Remove a snapshot (ready, or left ``loading`` by an interrupted load). Segments
    another snapshot's path still holds stay; the others, and the texts only they
    referenced, go with the next collection (which runs now)."""
    check_snapshot_id(snapshot_id)
    with snapshot_lock(conn, snapshot_id):
        with conn.transaction():
            if find_snapshot(conn, snapshot_id) is None:
                raise SnapshotNotFound(f"no snapshot {snapshot_id!r}")
            conn.execute("DELETE FROM riido.snapshots WHERE snapshot_id = %s", (snapshot_id,))
        if conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            # not in the caller's transaction: there, the next collection; the drop is
            # done whatever the collection meets, what it freed waits for the next one
            with suppress(psycopg.Error):
                collect_garbage(conn)


def insert_snapshot_plan(
    snapshot_id: str, text_config: str, state: str, documents: int, digest: str
) -> Plan[None]:
    """The riido.snapshots row a load (or a scratch snapshot) publishes its content
    under."""
    yield Query(
        "INSERT INTO riido.snapshots "
        "(snapshot_id, text_config, state, document_count, content_digest, k1, b) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (snapshot_id, text_config, state, documents, digest, K1, B),
    )


def insert_snapshot_row(
    conn: Conn, snapshot_id: str, text_config: str, state: str, documents: int, digest: str
) -> None:
    """:func:`insert_snapshot_plan` on ``conn``."""
    run(conn, insert_snapshot_plan(snapshot_id, text_config, state, documents, digest))
