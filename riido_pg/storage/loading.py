"""Loading a snapshot: all or nothing.

A load takes the snapshot's writer lock (a second loader of the same id fails at once
with :class:`~riido_pg.errors.SnapshotBusy`), records the snapshot as ``loading`` in
its own short transaction (so readers can say so), then writes documents and postings
and flips the state to ``ready`` in one transaction. An error rolls that transaction
back and removes the ``loading`` row; a killed loader leaves only the ``loading`` row,
which the next load of that id replaces. ``replace=True`` swaps the content inside one
transaction, so readers see the old content or the new, never a mix.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql

from riido_pg.documents import Document, DocumentSet, check_snapshot_id, validate_documents
from riido_pg.errors import InvalidInput, SnapshotExists
from riido_pg.resources import sql_text
from riido_pg.server.connect import Conn
from riido_pg.server.errors import translated
from riido_pg.splitting import SPLITTER_VERSION, split_identifiers
from riido_pg.storage.snapshots import (
    DEFAULT_TEXT_CONFIG,
    K1,
    B,
    check_text_config,
    delete_content,
    find_snapshot,
    insert_snapshot_row,
    load_timeout,
    snapshot_lock,
)

__all__ = [
    "MAX_WORD_BYTES",
    "LoadResult",
    "Progress",
    "content_digest",
    "load_snapshot",
    "write_documents",
    "write_snapshot",
]

#: ``progress(phase, done, total)``, called when a phase starts and as it advances; a
#: total of 0 means the phase's size is not known. Load phases, in order: "documents"
#: (staging, counted), "tsvectors" (one statement), "index" (the postings of each
#: column, 0..2), "statistics" (planner statistics, when a load changed a lot).
Progress = Callable[[str, int, int], None]

#: PostgreSQL ignores words of this many bytes or more (MAXSTRLEN) with a notice.
MAX_WORD_BYTES = 2047


@dataclass(frozen=True, slots=True)
class LoadResult:
    snapshot_id: str
    documents: int
    #: "created", "replaced" or "unchanged"
    action: str


def content_digest(docs: DocumentSet, text_config: str) -> str:
    """sha256 over the splitter version, the text configuration and the documents in
    id order (a DocumentSet's order)."""
    h = hashlib.sha256()
    h.update(f"riido-pg/1\0splitter {SPLITTER_VERSION}\0{text_config}\0".encode())
    for doc in docs:
        i = doc.id.encode("utf-8")
        t = doc.text.encode("utf-8")
        h.update(len(i).to_bytes(8, "big") + i + len(t).to_bytes(8, "big") + t)
    return h.hexdigest()


def _stage(conn: Conn, docs: DocumentSet, progress: Progress | None) -> None:
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS riido_stage "
        "(doc_ord int, doc_id text, body text, ident text) ON COMMIT DROP"
    )
    total = len(docs)
    step = max(1, total // 100)
    with conn.cursor().copy("COPY riido_stage (doc_ord, doc_id, body, ident) FROM STDIN") as cp:
        for ord_, doc in enumerate(docs):
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
    docs: DocumentSet,
    text_config: str,
    *,
    progress: Progress | None = None,
) -> None:
    """Write the documents and postings of a snapshot whose row exists.

    Must run inside a transaction; raises InvalidInput naming a document that
    PostgreSQL cannot index (a tsvector over 1 MB, a word of 2,047 bytes or more).
    """
    _stage(conn, docs, progress)
    notices: list[str] = []

    def on_notice(diag: psycopg.errors.Diagnostic) -> None:
        if diag.message_primary:
            notices.append(diag.message_primary)

    conn.add_notice_handler(on_notice)
    if progress:
        progress("tsvectors", 0, 0)
    try:
        with conn.transaction():  # savepoint: keeps the stage for diagnosis
            conn.execute(
                sql_text("insert_documents"),
                {"snapshot_id": snapshot_id, "text_config": text_config},
            )
    except psycopg.errors.ProgramLimitExceeded as exc:
        culprit = _oversized_document(conn, text_config, len(docs))
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
    conn.execute("DROP TABLE riido_stage")


def _refresh_statistics(conn: Conn, added: int, progress: Progress | None) -> None:
    """ANALYZE the tables a query plans over when a load changed them a lot (or they
    were never analyzed), so the first queries after a load get index plans."""
    row = conn.execute(
        "SELECT coalesce(max(reltuples), -1) FROM pg_class WHERE oid = 'riido.documents'::regclass"
    ).fetchone()
    known = float(row[0]) if row else -1.0
    if known < 0 or added > 0.1 * known:
        if progress:
            progress("statistics", 0, 0)
        with conn.transaction(), load_timeout(conn):
            for table in ("documents", "postings"):
                conn.execute(sql.SQL("ANALYZE riido.{}").format(sql.Identifier(table)))


@translated
def load_snapshot(
    conn: Conn,
    snapshot_id: str,
    documents: Sequence[Document] | DocumentSet,
    *,
    text_config: str = DEFAULT_TEXT_CONFIG,
    replace: bool = False,
    progress: Progress | None = None,
) -> LoadResult:
    """Create (or, with ``replace``, swap) an immutable snapshot of ``documents``.

    Loading identical content again is a no-op; different content under an existing
    id raises SnapshotExists unless ``replace`` is true. ``documents`` is validated
    here unless it already is a :class:`~riido_pg.documents.DocumentSet`.
    """
    check_snapshot_id(snapshot_id)
    docs = validate_documents(documents, where=f"snapshot {snapshot_id!r}")
    with snapshot_lock(conn, snapshot_id):
        return write_snapshot(
            conn, snapshot_id, docs, text_config=text_config, replace=replace, progress=progress
        )


def write_snapshot(
    conn: Conn,
    snapshot_id: str,
    docs: DocumentSet,
    *,
    text_config: str = DEFAULT_TEXT_CONFIG,
    replace: bool = False,
    progress: Progress | None = None,
) -> LoadResult:
    """:func:`load_snapshot` for a caller that already holds the snapshot's lock
    (:func:`~riido_pg.storage.snapshots.snapshot_lock`), e.g. to write more rows in the
    same transaction before the lock is released."""
    text_config = check_text_config(conn, text_config)
    digest = content_digest(docs, text_config)
    existing = find_snapshot(conn, snapshot_id)
    if existing is not None and existing.state == "ready":
        if existing.content_digest == digest:
            return LoadResult(snapshot_id, existing.documents, "unchanged")
        if not replace:
            raise SnapshotExists(
                f"snapshot {snapshot_id!r} exists with different content; "
                "pass --replace (replace=True in Python) to replace it"
            )
        with conn.transaction(), load_timeout(conn):
            delete_content(conn, snapshot_id)
            write_documents(conn, snapshot_id, docs, text_config, progress=progress)
            conn.execute(
                "UPDATE riido.snapshots SET text_config = %s, document_count = %s, "
                "content_digest = %s, k1 = %s, b = %s, created_at = now() "
                "WHERE snapshot_id = %s",
                (text_config, len(docs), digest, K1, B, snapshot_id),
            )
        _refresh_statistics(conn, len(docs), progress)
        return LoadResult(snapshot_id, len(docs), "replaced")
    with conn.transaction():
        if existing is not None:  # left "loading" by an interrupted load
            delete_content(conn, snapshot_id)
            conn.execute("DELETE FROM riido.snapshots WHERE snapshot_id = %s", (snapshot_id,))
        insert_snapshot_row(conn, snapshot_id, text_config, "loading", len(docs), digest)
    try:
        with conn.transaction(), load_timeout(conn):
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
    _refresh_statistics(conn, len(docs), progress)
    return LoadResult(snapshot_id, len(docs), "created")
