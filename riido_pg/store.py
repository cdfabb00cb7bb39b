"""Snapshots: loading, listing, dropping.

A load is all-or-nothing. It takes a session advisory lock on the snapshot id (a
second loader of the same id fails at once with :class:`SnapshotBusy`), records the
snapshot as ``loading`` in its own short transaction (so readers can say so), then
writes documents, statistics and postings and flips the state to ``ready`` in one
transaction. An error rolls that transaction back and removes the ``loading`` row; a
killed loader leaves only the ``loading`` row, which the next load of that id
replaces. ``--replace`` swaps the content inside one transaction, so readers see the
old content or the new, never a mix.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from riido_pg.documents import Document, check_snapshot_id, validate_documents
from riido_pg.errors import (
    InvalidInput,
    InvalidTextConfig,
    SnapshotBusy,
    SnapshotExists,
    SnapshotLoading,
    SnapshotNotFound,
)
from riido_pg.resources import sql_text
from riido_pg.splitting import SPLITTER_VERSION, split_identifiers

__all__ = [
    "DEFAULT_TEXT_CONFIG",
    "K1",
    "B",
    "LoadResult",
    "Progress",
    "Snapshot",
    "content_digest",
    "drop_snapshot",
    "get_snapshot",
    "insert_snapshot_row",
    "list_snapshots",
    "load_snapshot",
    "set_load_timeout",
    "write_documents",
]

Conn = psycopg.Connection[Any]
#: ``progress(phase, done, total)``; phases: "documents", "index".
Progress = Callable[[str, int, int], None]

K1 = 1.2
B = 0.75
DEFAULT_TEXT_CONFIG = "english"
#: PostgreSQL ignores words of this many bytes or more (MAXSTRLEN) with a notice.
MAX_WORD_BYTES = 2047
_LOCK_NAMESPACE = 0x52494944  # "RIID"


@dataclass(frozen=True, slots=True)
class Snapshot:
    snapshot_id: str
    documents: int
    text_config: str
    state: str
    created_at: datetime
    content_digest: str


@dataclass(frozen=True, slots=True)
class LoadResult:
    snapshot_id: str
    documents: int
    #: "created", "replaced" or "unchanged"
    action: str


def content_digest(docs: Sequence[Document], text_config: str) -> str:
    """sha256 over the text configuration and the documents in id order."""
    h = hashlib.sha256()
    h.update(f"riido-pg/1\0splitter {SPLITTER_VERSION}\0{text_config}\0".encode())
    for doc in sorted(docs, key=lambda d: d.id):
        i = doc.id.encode("utf-8")
        t = doc.text.encode("utf-8")
        h.update(len(i).to_bytes(8, "big") + i + len(t).to_bytes(8, "big") + t)
    return h.hexdigest()


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
        raise InvalidTextConfig(
            f"unknown text search configuration {text_config!r}; "  # noqa: S608 - a message
            "see `SELECT cfgname FROM pg_ts_config`"
        )
    return str(row[0])


#: The columns of riido.snapshots that make a Snapshot, in its field order.
_SNAPSHOT_COLUMNS = (
    "SELECT snapshot_id, document_count, text_config, state, created_at, content_digest "
    "FROM riido.snapshots"
)


def _row(conn: Conn, snapshot_id: str) -> Snapshot | None:
    row = conn.execute(
        _SNAPSHOT_COLUMNS + " WHERE snapshot_id = %s",
        (snapshot_id,),
    ).fetchone()
    return Snapshot(*row) if row else None


def get_snapshot(conn: Conn, snapshot_id: str) -> Snapshot:
    """A ready snapshot, or SnapshotNotFound / SnapshotLoading."""
    check_snapshot_id(snapshot_id)
    snap = _row(conn, snapshot_id)
    if snap is None:
        raise SnapshotNotFound(
            f"no snapshot {snapshot_id!r}; load one with `riido-pg load {snapshot_id} SOURCE`"
        )
    if snap.state != "ready":
        if _being_written(conn, snapshot_id):
            raise SnapshotLoading(
                f"snapshot {snapshot_id!r} is still loading; query it when the load finishes"
            )
        raise SnapshotLoading(
            f"snapshot {snapshot_id!r} was interrupted while loading; run the load again "
            f"or drop it with `riido-pg snapshots drop {snapshot_id}`"
        )
    return snap


def list_snapshots(conn: Conn) -> list[Snapshot]:
    rows = conn.execute(_SNAPSHOT_COLUMNS + " ORDER BY snapshot_id").fetchall()
    return [Snapshot(*r) for r in rows]


def _delete_content(conn: Conn, snapshot_id: str) -> None:
    for table in ("postings", "column_stats", "documents"):
        conn.execute(
            sql.SQL("DELETE FROM riido.{} WHERE snapshot_id = %s").format(sql.Identifier(table)),
            (snapshot_id,),
        )


def drop_snapshot(conn: Conn, snapshot_id: str) -> None:
    """Remove a snapshot (ready, or left ``loading`` by an interrupted load)."""
    check_snapshot_id(snapshot_id)
    with _advisory_lock(conn, snapshot_id):
        with conn.transaction():
            if _row(conn, snapshot_id) is None:
                raise SnapshotNotFound(f"no snapshot {snapshot_id!r}")
            _delete_content(conn, snapshot_id)
            conn.execute("DELETE FROM riido.snapshots WHERE snapshot_id = %s", (snapshot_id,))


class _advisory_lock:
    def __init__(self, conn: Conn, snapshot_id: str) -> None:
        self.conn = conn
        self.snapshot_id = snapshot_id
        self.key = _lock_key(snapshot_id)

    def __enter__(self) -> None:
        row = self.conn.execute(
            "SELECT pg_try_advisory_lock(%s, %s)", (_LOCK_NAMESPACE, self.key)
        ).fetchone()
        if not (row and row[0]):
            raise SnapshotBusy(
                f"snapshot {self.snapshot_id!r} is being written by another process; "
                "try again when it finishes"
            )

    def __exit__(self, *exc: object) -> None:
        if not self.conn.closed and not self.conn.broken:
            self.conn.execute("SELECT pg_advisory_unlock(%s, %s)", (_LOCK_NAMESPACE, self.key))


def _stage(conn: Conn, ordered: Sequence[Document], progress: Progress | None) -> None:
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS riido_stage "
        "(doc_ord int, doc_id text, body text, ident text) ON COMMIT DROP"
    )
    total = len(ordered)
    step = max(1, total // 100)
    with conn.cursor().copy("COPY riido_stage (doc_ord, doc_id, body, ident) FROM STDIN") as cp:
        for ord_, doc in enumerate(ordered):
            cp.write_row((ord_, doc.id, doc.text, split_identifiers(doc.text)))
            if progress and (ord_ + 1) % step == 0:
                progress("documents", ord_ + 1, total)
    if progress:
        progress("documents", total, total)


def _long_word_document(conn: Conn, text_config: str) -> str | None:
    row = conn.execute(
        "SELECT s.doc_id FROM riido_stage AS s "
        "WHERE EXISTS (SELECT 1 FROM ts_parse("
        "  (SELECT cfgparser FROM pg_ts_config WHERE oid = %(cfg)s::regconfig), s.body || ' ' "
        "  || s.ident) AS t WHERE octet_length(t.token) >= %(max)s) "
        "ORDER BY s.doc_ord LIMIT 1",
        {"cfg": text_config, "max": MAX_WORD_BYTES},
    ).fetchone()
    return str(row[0]) if row else None


def _oversized_document(conn: Conn, text_config: str, n: int) -> str | None:
    """Bisect the staged documents for one whose tsvector exceeds PostgreSQL's limit."""
    lo, hi = 0, n
    probe = (
        "SELECT count(to_tsvector(%(cfg)s::regconfig, body)) "
        "+ count(to_tsvector(%(cfg)s::regconfig, ident)) "
        "FROM riido_stage WHERE doc_ord >= %(lo)s AND doc_ord < %(hi)s"
    )
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            with conn.transaction():
                conn.execute(probe, {"cfg": text_config, "lo": lo, "hi": mid})
            lo = mid
        except psycopg.errors.ProgramLimitExceeded:
            hi = mid
    row = conn.execute("SELECT doc_id FROM riido_stage WHERE doc_ord = %s", (lo,)).fetchone()
    return str(row[0]) if row else None


def write_documents(
    conn: Conn,
    snapshot_id: str,
    docs: Sequence[Document],
    text_config: str,
    *,
    progress: Progress | None = None,
) -> None:
    """Write documents, statistics and postings of a snapshot whose row exists.

    Must run inside a transaction; raises InvalidInput naming a document that
    PostgreSQL cannot index (a tsvector over 1 MB, a word of 2,047 bytes or more).
    """
    ordered = sorted(docs, key=lambda d: d.id)  # code point order == UTF-8 byte order
    _stage(conn, ordered, progress)
    notices: list[str] = []

    def on_notice(diag: psycopg.errors.Diagnostic) -> None:
        if diag.message_primary:
            notices.append(diag.message_primary)

    conn.add_notice_handler(on_notice)
    try:
        with conn.transaction():  # savepoint: keeps the stage for diagnosis
            conn.execute(
                sql_text("insert_documents"),
                {"snapshot_id": snapshot_id, "text_config": text_config},
            )
    except psycopg.errors.ProgramLimitExceeded as exc:
        culprit = _oversized_document(conn, text_config, len(ordered))
        raise InvalidInput(
            f"document {culprit!r} is too large to index (PostgreSQL: {exc.diag.message_primary})"
        ) from exc
    finally:
        conn.remove_notice_handler(on_notice)
    if any("too long to be indexed" in n for n in notices):
        culprit = _long_word_document(conn, text_config)
        raise InvalidInput(
            f"document {culprit!r} has a word of {MAX_WORD_BYTES} bytes or more, "
            "which PostgreSQL cannot index"
        )
    if progress:
        progress("index", 0, 2)
    for i, (col, tsv, length) in enumerate(
        (("raw", "tsv_raw", "len_raw"), ("ident", "tsv_ident", "len_ident")), start=1
    ):
        stmt = sql.SQL(sql_text("finalize_column")).format(
            tsv=sql.Identifier(tsv), len=sql.Identifier(length)
        )
        conn.execute(stmt, {"snapshot_id": snapshot_id, "col": col, "k1": K1, "b": B})
        if progress:
            progress("index", i, 2)
    conn.execute(sql_text("count_terms"), {"snapshot_id": snapshot_id})
    conn.execute("DROP TABLE riido_stage")


def _refresh_statistics(conn: Conn, added: int) -> None:
    """ANALYZE the tables a query plans over when a load changed them a lot (or they
    were never analyzed), so the first queries after a load get index plans."""
    row = conn.execute(
        "SELECT coalesce(max(reltuples), -1) FROM pg_class WHERE oid = 'riido.documents'::regclass"
    ).fetchone()
    known = float(row[0]) if row else -1.0
    if known < 0 or added > 0.1 * known:
        with conn.transaction():
            set_load_timeout(conn)
            for table in ("documents", "postings", "column_stats"):
                conn.execute(sql.SQL("ANALYZE riido.{}").format(sql.Identifier(table)))


def insert_snapshot_row(
    conn: Conn, snapshot_id: str, text_config: str, state: str, documents: int, digest: str
) -> None:
    """The riido.snapshots row a load (or a hints request) writes its documents under."""
    conn.execute(
        "INSERT INTO riido.snapshots "
        "(snapshot_id, text_config, state, document_count, content_digest, k1, b) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (snapshot_id, text_config, state, documents, digest, K1, B),
    )


def set_load_timeout(conn: Conn) -> None:
    """Loads are bounded by their input, not by the query statement timeout:
    ``RIIDO_PG_LOAD_TIMEOUT_MS`` (default 0, no limit) applies instead."""
    value = os.environ.get("RIIDO_PG_LOAD_TIMEOUT_MS", "0")
    ms = int(value) if value.isdigit() else 0
    conn.execute(sql.SQL("SET LOCAL statement_timeout = {}").format(sql.Literal(ms)))


def load_snapshot(
    conn: Conn,
    snapshot_id: str,
    documents: Sequence[Document],
    *,
    text_config: str = DEFAULT_TEXT_CONFIG,
    replace: bool = False,
    progress: Progress | None = None,
) -> LoadResult:
    """Create (or, with ``replace``, swap) an immutable snapshot of ``documents``.

    Loading identical content again is a no-op; different content under an existing
    id raises SnapshotExists unless ``replace`` is true.
    """
    check_snapshot_id(snapshot_id)
    docs = validate_documents(documents, where=f"snapshot {snapshot_id!r}")
    text_config = check_text_config(conn, text_config)
    digest = content_digest(docs, text_config)
    with _advisory_lock(conn, snapshot_id):
        existing = _row(conn, snapshot_id)
        if existing is not None and existing.state == "ready":
            if existing.content_digest == digest:
                return LoadResult(snapshot_id, existing.documents, "unchanged")
            if not replace:
                raise SnapshotExists(
                    f"snapshot {snapshot_id!r} exists with different content; "
                    "pass --replace to replace it"
                )
            with conn.transaction():
                set_load_timeout(conn)
                _delete_content(conn, snapshot_id)
                write_documents(conn, snapshot_id, docs, text_config, progress=progress)
                conn.execute(
                    "UPDATE riido.snapshots SET text_config = %s, document_count = %s, "
                    "content_digest = %s, k1 = %s, b = %s, created_at = now() "
                    "WHERE snapshot_id = %s",
                    (text_config, len(docs), digest, K1, B, snapshot_id),
                )
            _refresh_statistics(conn, len(docs))
            return LoadResult(snapshot_id, len(docs), "replaced")
        with conn.transaction():
            if existing is not None:  # left "loading" by an interrupted load
                _delete_content(conn, snapshot_id)
                conn.execute("DELETE FROM riido.snapshots WHERE snapshot_id = %s", (snapshot_id,))
            insert_snapshot_row(conn, snapshot_id, text_config, "loading", len(docs), digest)
        try:
            with conn.transaction():
                set_load_timeout(conn)
                write_documents(conn, snapshot_id, docs, text_config, progress=progress)
                conn.execute(
                    "UPDATE riido.snapshots SET state = 'ready', created_at = now() "
                    "WHERE snapshot_id = %s",
                    (snapshot_id,),
                )
        except BaseException:
            if not conn.closed and not conn.broken:
                with conn.transaction():
                    conn.execute(
                        "DELETE FROM riido.snapshots WHERE snapshot_id = %s AND state = 'loading'",
                        (snapshot_id,),
                    )
            raise
        _refresh_statistics(conn, len(docs))
        return LoadResult(snapshot_id, len(docs), "created")
