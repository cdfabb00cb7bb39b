"""Loading a snapshot: streamed, optionally parallel, all or nothing.

A load takes the snapshot's writer lock (a second loader of the same id fails at once
with :class:`~riido_pg.errors.SnapshotBusy`) and reads its input once, in chunks, so
its memory does not grow with the number of documents. For each chunk the client
computes every text's key (:func:`~riido_pg.storage.texts.text_key`), asks the
database which texts are stored already, splits identifiers only for the others and
sends those to be indexed (``to_tsvector`` on both columns, ``sql/insert_texts.sql``);
the ``(doc_id, key)`` pairs go to a staging table. Duplicate ids, the document count
and the content digest are then computed in the database (``sql/content_digest.sql``),
so loading the same content again is the ``unchanged`` no-op whatever its order.

Once the input is read, the documents are numbered in id byte order into a stage
(``sql/stage_documents.sql``) that is then ANALYZEd, so the documents insert and both
columns' postings, which read it, are planned for its real size.

With ``jobs`` = 1 everything after the ``loading`` row is one transaction on one
connection, as loads always were; its stage is a temporary table. With ``jobs`` > 1,
worker connections index texts while the client reads (each chunk committed as it is
stored, with its keys recorded as pending under the load's token), the numbered
documents are committed to the unlogged riido.load_stage under the token, then the
documents insert and the two columns' postings run on three connections at once,
each committed under the snapshot's ``loading`` row (or, for ``--replace``, under a
hidden ``replacing`` row), and one last transaction flips the snapshot to ``ready``
(swapping the content in for a replace) and clears the token and the stage.
Readers only ever rank ``ready`` snapshots, so they see the old content or the new,
never a part. An error (bad input late in the file, a worker's backend terminated,
an interrupt) removes what the load wrote; a killed loader leaves at most a
``loading`` (or ``replacing``) row with its content, which the next load of that id
and ``snapshots drop`` remove, and pending texts and staged documents, which the text
collector removes (every load and every drop runs it as it ends).
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, suppress
from dataclasses import dataclass

import psycopg
from psycopg import sql

from riido_pg.documents import (
    Document,
    DocumentSet,
    DocumentStream,
    check_item,
    check_snapshot_id,
    describe,
)
from riido_pg.errors import Hint, InvalidInput, SnapshotExists
from riido_pg.resources import sql_text
from riido_pg.server.connect import Conn
from riido_pg.server.errors import parallel, translated
from riido_pg.server.settle import settle
from riido_pg.storage.indexing import MAX_WORD_BYTES, Skips, send_texts, store_texts
from riido_pg.storage.snapshots import (
    DEFAULT_TEXT_CONFIG,
    K1,
    B,
    check_text_config,
    delete_content,
    find_snapshot,
    insert_snapshot_row,
    load_session_timeout,
    load_timeout,
    shadow_id,
    snapshot_lock,
)
from riido_pg.storage.texts import (
    collect_garbage,
    key_of,
    text_keyer,
    texts_shared,
    texts_shared_xact,
)
from riido_pg.storage.workers import Workers, connections

__all__ = [
    "CHUNK",
    "MAX_WORD_BYTES",
    "LoadResult",
    "Progress",
    "default_jobs",
    "load_snapshot",
    "write_documents",
    "write_snapshot",
]

#: ``progress(phase, done, total)``, called when a phase starts and as it advances; a
#: total of 0 means the phase's size is not known. Load phases, in order: "documents"
#: (reading the input, counted; with workers, indexing its new texts meanwhile),
#: "tsvectors" (one connection: storing the new texts, one statement), "index" (the
#: postings of each column, 0..2), "statistics" (planner statistics, when a load
#: changed a lot).
Progress = Callable[[str, int, int], None]

_Statement = tuple[sql.Composed, dict[str, object]]

#: Documents per chunk: what the client holds per chunk in flight.
CHUNK = 2_000
_COLUMNS = (("raw", "tsv_raw", "len_raw"), ("ident", "tsv_ident", "len_ident"))
#: work_mem of the statement building a column's postings (its hash aggregate holds
#: every lexeme's arrays; under the 4 MB default it spills to disk, and at a million
#: documents the spills cost more than the aggregate); ``RIIDO_PG_LOAD_WORK_MEM``.
POSTINGS_WORK_MEM = "256MB"


def _postings_work_mem(conn: Conn) -> None:
    """Raise work_mem for the rest of the current transaction (a load's)."""
    value = os.environ.get("RIIDO_PG_LOAD_WORK_MEM", POSTINGS_WORK_MEM)
    conn.execute("SELECT set_config('work_mem', %s, true)", (value,))


@dataclass(frozen=True, slots=True)
class LoadResult:
    snapshot_id: str
    documents: int
    #: "created", "replaced" or "unchanged"
    action: str


def default_jobs() -> int:
    """Worker connections a CLI load uses by default: this machine's cores, at most 4
    (the server does the indexing; a server elsewhere may have more, ``--jobs``)."""
    return max(1, min(4, os.cpu_count() or 1))


# --- one chunk -------------------------------------------------------------------


@dataclass(slots=True)
class _Chunk:
    pairs: list[tuple[str, str]]  # (doc_id, key as uuid text) of every document
    texts: dict[bytes, tuple[str, str]]  # key -> (doc_id, body), each key once


def _chunks(docs: Iterable[Document], *, checked: bool, where: str, cfg: str) -> Iterator[_Chunk]:
    base = text_keyer(cfg)
    chunk = _Chunk([], {})
    for i, item in enumerate(docs):
        doc = item if checked else check_item(item, i, where)
        key = key_of(base, doc.text)
        chunk.pairs.append((doc.id, key.hex()))
        chunk.texts.setdefault(key, (doc.id, doc.text))
        if len(chunk.pairs) >= CHUNK:
            yield chunk
            chunk = _Chunk([], {})
    if chunk.pairs:
        yield chunk


def _new_texts(conn: Conn, texts: dict[bytes, tuple[str, str]]) -> dict[bytes, tuple[str, str]]:
    """The ``texts`` riido.texts does not hold yet (keys sent as one uuid[] literal,
    the stored ones returned as one bytea: no object per key on the way)."""
    row = conn.execute(
        "SELECT coalesce(string_agg(uuid_send(key), ''::bytea), ''::bytea) "
        "FROM riido.texts WHERE key = ANY(%s::uuid[])",
        ("{" + ",".join(k.hex() for k in texts) + "}",),
        binary=True,
    ).fetchone()
    blob = bytes(row[0]) if row else b""
    stored = {blob[i : i + 16] for i in range(0, len(blob), 16)}
    return {k: v for k, v in texts.items() if k not in stored}


@dataclass(frozen=True, slots=True)
class _Request:
    """What one load was asked to do (its text configuration checked)."""

    snapshot_id: str
    docs: Iterable[Document]
    cfg: str
    where: str
    checked: bool
    replace: bool
    progress: Progress | None
    skips: Skips


# --- staging ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Staged:
    documents: int
    digest: str


def _stage(conn: Conn, req: _Request, workers: Workers | None) -> _Staged:
    """Read the request's documents into the staging table riido_stage; their texts
    not yet stored are indexed on the workers (or on ``conn``, in its transaction,
    without workers)."""
    cfg, where, skips, progress = req.cfg, req.where, req.skips, req.progress
    conn.execute("DROP TABLE IF EXISTS riido_stage")
    conn.execute('CREATE TEMP TABLE riido_stage (doc_id text COLLATE "C", key uuid)')
    done = 0
    if progress:
        progress("documents", 0, 0)
    if workers is None:
        conn.execute("DROP TABLE IF EXISTS riido_texts_in")
    sent = False
    for chunk in _chunks(req.docs, checked=req.checked, where=where, cfg=cfg):
        new = _new_texts(conn, chunk.texts)
        if new:
            if workers is not None:
                workers.put(new)
            else:  # stored at the end, in one statement, in key order
                send_texts(conn, new, fresh=False)
                sent = True
        with conn.cursor().copy("COPY riido_stage (doc_id, key) FROM STDIN") as cp:
            for pair in chunk.pairs:
                cp.write_row(pair)
        done += len(chunk.pairs)
        if progress:
            progress("documents", done, 0)
    if workers is not None:
        workers.finish()
    elif done:
        if progress:
            progress("documents", done, done)
            progress("tsvectors", 0, 0)
        if sent:
            store_texts(conn, cfg, None, skips)
    if skips.keys:  # left out (a source tree's documents PostgreSQL cannot index)
        conn.execute("DELETE FROM riido_stage WHERE key = ANY(%s)", (list(skips.keys),))
    with conn.transaction(), load_timeout(conn):  # a sort of every id: a load's bound
        row = conn.execute(sql_text("content_digest")).fetchone()
    assert row is not None
    digest, count, duplicate = str(row[0]), int(row[1]), row[2]
    if duplicate is not None:
        raise InvalidInput(f"{where}: duplicate document id {describe(duplicate)}")
    if count == 0:
        raise InvalidInput(f"{where}: no documents")
    if progress and workers is not None:
        progress("documents", count, count)
    return _Staged(count, digest)


#: A load on one connection numbers its documents in this session's temporary table;
#: a parallel load in the unlogged riido.load_stage, which all its sessions can read.
_LOCAL_STAGE = sql.Identifier("riido_numbered")
_SHARED_STAGE = sql.Identifier("riido", "load_stage")


def _number(conn: Conn, load: uuid.UUID, stage: sql.Identifier) -> None:
    """Number the session's staged documents into ``stage`` under ``load``, drop the
    session's stage and ANALYZE ``stage``, so the statements joining it to the texts
    plan for its real size. The shared stage is committed (its ANALYZE takes a lock
    that waits for any other load's ANALYZE: held for the sampling and no longer)."""
    if stage == _LOCAL_STAGE:  # in the caller's transaction
        conn.execute("DROP TABLE IF EXISTS riido_numbered")
        conn.execute("CREATE TEMP TABLE riido_numbered (LIKE riido.load_stage)")
    # a transaction of its own for the shared stage, a savepoint in the caller's for
    # the local one
    with conn.transaction(), load_timeout(conn):
        conn.execute(sql.SQL(sql_text("stage_documents")).format(stage=stage), {"load": load})
        conn.execute("DROP TABLE riido_stage")
    conn.execute(sql.SQL("ANALYZE {}").format(stage))


def _unstage(conn: Conn, load: uuid.UUID) -> None:
    conn.execute("DELETE FROM riido.load_stage WHERE load = %s", (load,))


def _content(snapshot_id: str, load: uuid.UUID, stage: sql.Identifier) -> list[_Statement]:
    """The statements writing a snapshot's documents and its two columns' postings
    from the numbered ``stage`` of ``load``."""
    documents = (
        sql.SQL(sql_text("insert_documents")).format(stage=stage),
        {"snapshot_id": snapshot_id, "load": load},
    )
    return [documents] + [
        (
            sql.SQL(sql_text("finalize_column")).format(
                tsv=sql.Identifier(tsv), len=sql.Identifier(length), stage=stage
            ),
            {"snapshot_id": snapshot_id, "load": load, "col": col, "k1": K1, "b": B},
        )
        for col, tsv, length in _COLUMNS
    ]


def _write_content(conn: Conn, snapshot_id: str, progress: Progress | None) -> None:
    """The documents and both columns' postings of ``snapshot_id`` from the session's
    stage, in the caller's transaction, one after the other."""
    load = uuid.uuid4()
    _number(conn, load, _LOCAL_STAGE)
    documents, *postings = _content(snapshot_id, load, _LOCAL_STAGE)
    conn.execute(*documents)
    if progress:
        progress("index", 0, 2)
    _postings_work_mem(conn)
    for i, stmt in enumerate(postings, 1):
        conn.execute(*stmt)
        if progress:
            progress("index", i, 2)
    conn.execute("DROP TABLE riido_numbered")


def _write_content_parallel(
    conn: Conn, extra: list[Conn], snapshot_id: str, load: uuid.UUID, progress: Progress | None
) -> None:
    """The documents of ``snapshot_id`` on ``conn`` and one column's postings on each of
    two ``extra`` connections, all three at once, from the shared stage of ``load``,
    each committed."""
    if len(extra) < 2:
        raise ValueError("a parallel load writes its content on three connections")
    _number(conn, load, _SHARED_STAGE)
    if progress:
        progress("index", 0, 2)
    statements = _content(snapshot_id, load, _SHARED_STAGE)
    jobs = [(stmt, params, i > 0) for i, (stmt, params) in enumerate(statements)]
    errors: list[BaseException] = []

    def run(c: Conn, stmt: sql.Composed, params: dict[str, object], big: bool) -> None:
        try:
            with c.transaction(), load_timeout(c):
                if big:
                    _postings_work_mem(c)
                c.execute(stmt, params)
        except BaseException as exc:
            errors.append(exc)

    sessions = [conn, extra[0], extra[1]]
    threads = [
        threading.Thread(target=run, args=(c, *job), daemon=True)
        for c, job in zip(sessions, jobs, strict=True)
    ]
    for t in threads:
        t.start()
    finished = 0
    try:
        for i, t in enumerate(threads):
            while t.is_alive():
                t.join(timeout=0.2)
            if i and progress:  # a column's postings
                finished += 1
                progress("index", finished, 2)
    except BaseException:
        for c in sessions:
            with suppress(Exception):
                c.cancel_safe(timeout=5)
        for t in threads:
            t.join(timeout=10)
        raise
    if errors:
        raise errors[0]


# --- the load --------------------------------------------------------------------


def write_documents(
    conn: Conn,
    snapshot_id: str,
    docs: Iterable[Document],
    text_config: str,
    *,
    progress: Progress | None = None,
) -> int:
    """Write the documents and postings of a snapshot whose row exists, in the
    caller's transaction (a scratch snapshot); the number of documents.

    Raises InvalidInput naming a document that PostgreSQL cannot index (a tsvector
    over 1 MB, a word of more than 2,047 bytes), a duplicate id, or no documents.
    """
    texts_shared_xact(conn)
    staged = _stage(conn, _request(snapshot_id, docs, text_config, False, progress), None)
    _write_content(conn, snapshot_id, progress)
    return staged.documents


def _request(
    snapshot_id: str,
    docs: Iterable[Document],
    cfg: str,
    replace: bool,
    progress: Progress | None,
) -> _Request:
    """A load's request: where its documents come from (for messages), whether they
    are checked, and who hears of a document left out because PostgreSQL cannot index
    it (nobody: such a document fails the load)."""
    if isinstance(docs, DocumentStream):
        where, checked, skip = docs.where, docs.checked, docs.skip_unindexable
    else:
        where, checked, skip = f"snapshot {snapshot_id!r}", isinstance(docs, DocumentSet), None
    return _Request(snapshot_id, docs, cfg, where, checked, replace, progress, Skips(skip))


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
            for table in ("documents", "postings", "texts"):
                conn.execute(sql.SQL("ANALYZE riido.{}").format(sql.Identifier(table)))


@translated(commits=parallel)
def load_snapshot(
    conn: Conn,
    snapshot_id: str,
    documents: Iterable[Document],
    *,
    text_config: str = DEFAULT_TEXT_CONFIG,
    replace: bool = False,
    progress: Progress | None = None,
    jobs: int = 1,
) -> LoadResult:
    """Create (or, with ``replace``, swap) an immutable snapshot of ``documents``.

    ``documents`` is any iterable of :class:`~riido_pg.Document` (a list, a generator,
    :func:`~riido_pg.sources.open_source`'s stream), read once; each is checked here
    unless it comes from a checking reader. Loading identical content again is a
    no-op, whatever its order; different content under an existing id raises
    SnapshotExists unless ``replace`` is true. ``jobs`` > 1 indexes on that many
    connections at once (see the module docstring); 1 loads in one transaction.
    """
    check_snapshot_id(snapshot_id)
    if jobs < 1:
        raise InvalidInput(f"jobs must be at least 1, not {jobs}")
    with snapshot_lock(conn, snapshot_id):
        return write_snapshot(
            conn,
            snapshot_id,
            documents,
            text_config=text_config,
            replace=replace,
            progress=progress,
            jobs=jobs,
        )


def write_snapshot(
    conn: Conn,
    snapshot_id: str,
    documents: Iterable[Document],
    *,
    text_config: str = DEFAULT_TEXT_CONFIG,
    replace: bool = False,
    progress: Progress | None = None,
    jobs: int = 1,
) -> LoadResult:
    """:func:`load_snapshot` for a caller that already holds the snapshot's lock
    (:func:`~riido_pg.storage.snapshots.snapshot_lock`), e.g. to write more rows in the
    same transaction before the lock is released (then ``jobs`` is 1: the parallel
    path commits on its way)."""
    text_config = check_text_config(conn, text_config)
    in_transaction = conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
    if in_transaction:
        jobs = 1
    req = _request(snapshot_id, documents, text_config, replace, progress)
    try:
        with texts_shared(conn):
            return _load_one(conn, req) if jobs == 1 else _load_parallel(conn, req, jobs)
    finally:
        if not in_transaction and not conn.closed and not conn.broken:
            with suppress(psycopg.Error):
                collect_garbage(conn)


def _existing_ready(conn: Conn, snapshot_id: str, digest: str, replace: bool) -> bool:
    """True when a ready snapshot holds exactly this content already; SnapshotExists
    when it holds other content and ``replace`` is false."""
    existing = find_snapshot(conn, snapshot_id)
    if existing is None or existing.state != "ready":
        return False
    if existing.content_digest == digest:
        return True
    if not replace:
        raise SnapshotExists(
            f"snapshot {snapshot_id!r} exists with different content",
            Hint("pass --replace to replace it", "pass replace=True to replace it"),
        )
    return False


def _clear_leftovers(conn: Conn, snapshot_id: str) -> None:
    """Remove what an interrupted load of this id left: a ``loading`` row and its
    content, a hidden ``replacing`` row and its content (inside a transaction)."""
    existing = find_snapshot(conn, snapshot_id)
    if existing is not None and existing.state == "loading":
        delete_content(conn, snapshot_id)
        conn.execute("DELETE FROM riido.snapshots WHERE snapshot_id = %s", (snapshot_id,))
    shadow = shadow_id(snapshot_id)
    if find_snapshot(conn, shadow) is not None:
        delete_content(conn, shadow)
        conn.execute("DELETE FROM riido.snapshots WHERE snapshot_id = %s", (shadow,))


def _mark_loading(conn: Conn, snapshot_id: str, cfg: str) -> bool:
    """Commit a ``loading`` row unless a ready snapshot holds the id (True if written)."""
    with conn.transaction():
        _clear_leftovers(conn, snapshot_id)
        existing = find_snapshot(conn, snapshot_id)
        if existing is not None:
            return False
        insert_snapshot_row(conn, snapshot_id, cfg, "loading", 0, "")
        return True


def _publish(conn: Conn, snapshot_id: str, staged: _Staged, cfg: str, replacing: bool) -> None:
    """Flip the snapshot to ready with its digest and count (inside a transaction)."""
    if replacing:
        conn.execute(
            "UPDATE riido.snapshots SET text_config = %s, document_count = %s, "
            "content_digest = %s, k1 = %s, b = %s, created_at = now() "
            "WHERE snapshot_id = %s",
            (cfg, staged.documents, staged.digest, K1, B, snapshot_id),
        )
    else:
        conn.execute(
            "UPDATE riido.snapshots SET state = 'ready', document_count = %s, "
            "content_digest = %s, created_at = now() WHERE snapshot_id = %s",
            (staged.documents, staged.digest, snapshot_id),
        )


def _load_one(conn: Conn, req: _Request) -> LoadResult:
    """One connection: the ``loading`` row, then one transaction for everything."""
    snapshot_id, cfg, progress = req.snapshot_id, req.cfg, req.progress
    marked = _mark_loading(conn, snapshot_id, cfg)
    unchanged = False
    try:
        with conn.transaction() as tx, load_timeout(conn):
            staged = _stage(conn, req, None)
            if not marked and _existing_ready(conn, snapshot_id, staged.digest, req.replace):
                unchanged = True
                raise psycopg.Rollback(tx)  # nothing it stored is needed
            if not marked:
                delete_content(conn, snapshot_id)
            _write_content(conn, snapshot_id, progress)
            _publish(conn, snapshot_id, staged, cfg, replacing=not marked)
    except BaseException:
        if marked:
            _forget(conn, snapshot_id, None)
        raise
    if unchanged:
        return LoadResult(snapshot_id, staged.documents, "unchanged")
    _refresh_statistics(conn, staged.documents, progress)
    return LoadResult(snapshot_id, staged.documents, "created" if marked else "replaced")


def _load_parallel(conn: Conn, req: _Request, jobs: int) -> LoadResult:
    """Worker connections index while the client reads; several commits (see the
    module docstring)."""
    snapshot_id, cfg, progress = req.snapshot_id, req.cfg, req.progress
    token = uuid.uuid4()
    marked = _mark_loading(conn, snapshot_id, cfg)
    target = snapshot_id if marked else shadow_id(snapshot_id)
    with ExitStack() as stack:
        stack.enter_context(load_session_timeout(conn))
        conns = stack.enter_context(connections(conn, jobs))
        workers = Workers(conns, cfg, token, req.skips)
        try:
            staged = _stage(conn, req, workers)
        except BaseException:
            workers.abort()
            _forget(conn, snapshot_id, token)
            raise
        try:
            if not marked and _existing_ready(conn, snapshot_id, staged.digest, req.replace):
                _forget(conn, snapshot_id, token)
                return LoadResult(snapshot_id, staged.documents, "unchanged")
            if not marked:
                with conn.transaction():
                    insert_snapshot_row(conn, target, cfg, "replacing", staged.documents, "")
            _write_content_parallel(conn, conns[:2], target, token, progress)
            with conn.transaction(), load_timeout(conn):
                if not marked:
                    _swap_in(conn, snapshot_id, target)
                _publish(conn, snapshot_id, staged, cfg, replacing=not marked)
                conn.execute("DELETE FROM riido.text_pending WHERE token = %s", (token,))
                _unstage(conn, token)
        except BaseException:
            _forget(conn, snapshot_id, token)
            raise
    _refresh_statistics(conn, staged.documents, progress)
    return LoadResult(snapshot_id, staged.documents, "created" if marked else "replaced")


def _swap_in(conn: Conn, snapshot_id: str, shadow: str) -> None:
    """Replace a ready snapshot's content with its hidden ``replacing`` row's, in the
    caller's transaction (readers see the old content or the new)."""
    delete_content(conn, snapshot_id)
    for table in ("documents", "postings"):
        conn.execute(
            sql.SQL("UPDATE riido.{} SET snapshot_id = %s WHERE snapshot_id = %s").format(
                sql.Identifier(table)
            ),
            (snapshot_id, shadow),
        )
    conn.execute("DELETE FROM riido.snapshots WHERE snapshot_id = %s", (shadow,))


def _forget(conn: Conn, snapshot_id: str, token: uuid.UUID | None) -> None:
    """After a failed (or, in parallel, a no-op) load: remove what it wrote, its
    ``loading`` or hidden ``replacing`` row and their content; a parallel load's texts
    (its ``token``'s pending rows) stay pending, for the collector."""
    settle(conn)  # an interrupt may have left a statement in flight
    if conn.closed or conn.broken:
        return
    with suppress(psycopg.Error):
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.rollback()
        conn.execute("DROP TABLE IF EXISTS riido_stage")
        with conn.transaction():
            _clear_leftovers(conn, snapshot_id)
            if token is not None:  # no longer the load's: candidates for the collector
                conn.execute(
                    "UPDATE riido.text_pending SET token = NULL WHERE token = %s", (token,)
                )
                _unstage(conn, token)
