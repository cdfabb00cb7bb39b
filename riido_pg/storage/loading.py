"""Loading a snapshot: streamed, optionally parallel, on a base or alone, all or nothing.

A load takes the snapshot's writer lock (a second loader of the same id fails at once
with :class:`~riido_pg.errors.SnapshotBusy`) and runs in phases:

1. **staging** (:mod:`riido_pg.storage.staging`): the input is read once, in chunks;
   new texts are indexed, the ``(doc_id, key)`` pairs staged, the digest computed —
   identical content under the same id is the ``unchanged`` no-op;
2. **layout** (:mod:`riido_pg.storage.segments`): self-contained, or on which base,
   with which difference;
3. **the new segment** (:mod:`riido_pg.storage.segment_writing`): its documents
   numbered into a stage, then its row, documents and both columns' postings
   written from it;
4. **publishing**: one transaction points the snapshot at its path and flips it to
   ``ready``.

With ``jobs`` = 1 everything after the ``loading`` row is one transaction on one
connection. With ``jobs`` > 1, worker connections look the input's keys up and index
its new texts while the client reads (each batch committed as it is stored, its keys
recorded as pending under the load's token), the numbered documents are committed to
the unlogged riido.load_stage, the segment's documents and two columns' postings are
written on three connections at once, each committed, and the last transaction
publishes. A new segment is invisible
until a snapshot's path holds it, so readers see the old content or the new, never a
part; ``--replace`` needs no hidden row. An error (bad input late in the file, a
worker's backend terminated, an interrupt) removes what the load wrote; a killed
loader leaves at most a ``loading`` row, which the next load of that id and
``snapshots drop`` remove, and a segment and texts nothing holds, which the collector
removes (every load and every drop runs it as it ends).
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import Iterable
from contextlib import ExitStack, suppress
from dataclasses import dataclass

import psycopg
from psycopg import sql

from riido_pg.documents import Document, check_snapshot_id
from riido_pg.errors import ConflictingOptions, Hint, InvalidInput, SnapshotExists
from riido_pg.server.connect import Conn
from riido_pg.server.errors import parallel, translated
from riido_pg.server.settle import settle
from riido_pg.storage.history import reading_window, store_window
from riido_pg.storage.indexing import MAX_WORD_BYTES
from riido_pg.storage.segment_writing import (
    unstage,
    write_segment,
    write_segment_parallel,
)
from riido_pg.storage.segments import Layout, plan_layout, publish_content
from riido_pg.storage.snapshots import (
    DEFAULT_TEXT_CONFIG,
    check_text_config,
    find_snapshot,
    insert_snapshot_row,
    snapshot_lock,
)
from riido_pg.storage.staging import Progress, Request, Staged, request, stage
from riido_pg.storage.texts import collect_garbage, texts_shared
from riido_pg.storage.timeouts import load_session_timeout, load_timeout
from riido_pg.storage.workers import Workers, connections

__all__ = [
    "MAX_WORD_BYTES",
    "LoadResult",
    "Progress",
    "check_load_options",
    "default_jobs",
    "load_snapshot",
    "write_snapshot",
]


@dataclass(frozen=True, slots=True)
class LoadResult:
    snapshot_id: str
    documents: int
    #: "created", "replaced" or "unchanged"
    action: str
    #: The snapshot it was stored on (None: self-contained, or unchanged).
    base: str | None = None
    #: Documents in its own new segment, and documents of its path it does not hold.
    added: int = 0
    removed: int = 0
    #: Documents of the base it does not hold: with ``added``, its difference to the
    #: base (``removed`` also counts what the base itself had removed from the path).
    dropped: int = 0
    #: What the caller should know of a load that succeeded (an interrupt that cut the
    #: tidying after the snapshot was published short), else None.
    note: str | None = None


def default_jobs() -> int:
    """Worker connections a CLI load uses by default: this machine's cores, at most 4
    (the server does the indexing; a server elsewhere may have more, ``--jobs``)."""
    return max(1, min(4, os.cpu_count() or 1))


def check_load_options(jobs: int | None, base: str | None, fresh: bool) -> None:
    """A load's options that cannot be used as given, refused before any work (by
    :func:`load_snapshot`, and by the façade before it opens the source): ``jobs``
    (None: the default) below 1, a ``base`` that is no snapshot id, both a ``base``
    and ``fresh``."""
    if jobs is not None and jobs < 1:
        raise InvalidInput(f"jobs must be at least 1, not {jobs}")
    if base is not None and fresh:
        raise ConflictingOptions(
            "a load is either on a base or fresh, not both",
            Hint("drop --base or --fresh", "pass base= or fresh=True, not both"),
        )
    if base is not None:
        check_snapshot_id(base)


# --- the load --------------------------------------------------------------------


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
    base: str | None = None,
    fresh: bool = False,
) -> LoadResult:
    """Create (or, with ``replace``, swap) an immutable snapshot of ``documents``.

    ``documents`` is any iterable of :class:`~riido_pg.Document` (a list, a generator,
    :func:`~riido_pg.sources.open_source`'s stream), read once; each is checked here
    unless it comes from a checking reader. Loading identical content again is a
    no-op, whatever its order;
    different content under an existing id raises SnapshotExists unless ``replace``
    is true. ``jobs`` > 1 indexes on that many connections at once (see the module
    docstring); 1 loads in one transaction. ``base`` stores the snapshot on that
    snapshot, ``fresh`` self-contained; by default the load picks a base itself
    (README "Snapshots on a base").
    """
    check_snapshot_id(snapshot_id)
    check_load_options(jobs, base, fresh)
    with snapshot_lock(conn, snapshot_id):
        return write_snapshot(
            conn,
            snapshot_id,
            documents,
            text_config=text_config,
            replace=replace,
            progress=progress,
            jobs=jobs,
            base=base,
            fresh=fresh,
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
    base: str | None = None,
    fresh: bool = False,
) -> LoadResult:
    """:func:`load_snapshot` for a caller that already holds the snapshot's lock
    (:func:`~riido_pg.storage.snapshots.snapshot_lock`), e.g. to write more rows in the
    same transaction before the lock is released (then ``jobs`` is 1: the parallel
    path commits on its way)."""
    text_config = check_text_config(conn, text_config)
    in_transaction = conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
    if in_transaction:
        jobs = 1
    req = request(snapshot_id, documents, text_config, replace, progress, base=base, fresh=fresh)
    try:
        with texts_shared(conn):
            result = _load_one(conn, req) if jobs == 1 else _load_parallel(conn, req, jobs)
    except BaseException:
        if not in_transaction:
            _collect(conn)  # what a failed load stored is nobody's
        raise
    if in_transaction:
        return result
    try:  # the snapshot is published: an interrupt from here on only cuts the tidying
        if result.action != "unchanged":
            _refresh_statistics(conn, result.added, progress)
        _collect(conn)
    except KeyboardInterrupt:
        settle(conn)
        return dataclasses.replace(
            result,
            note="updating statistics and collecting unused rows were cut short "
            "(interrupted); the next load or drop finishes them",
        )
    return result


def _recent(req: Request) -> frozenset[str]:
    """The ids of the load's recently changed documents (its documents are read)."""
    return req.recent() if req.recent is not None else frozenset()


def _collect(conn: Conn) -> None:
    """The collector, after a load (when the connection is still usable)."""
    if not conn.closed and not conn.broken:
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
    """Remove the ``loading`` row an interrupted load of this id left (inside a
    transaction); what it wrote is a segment nothing holds, for the collector."""
    conn.execute(
        "DELETE FROM riido.snapshots WHERE snapshot_id = %s AND state = 'loading'",
        (snapshot_id,),
    )


def _mark_loading(conn: Conn, snapshot_id: str, cfg: str) -> bool:
    """Commit a ``loading`` row unless a ready snapshot holds the id (True if written)."""
    with conn.transaction():
        _clear_leftovers(conn, snapshot_id)
        if find_snapshot(conn, snapshot_id) is not None:
            return False
        insert_snapshot_row(conn, snapshot_id, cfg, "loading", 0, "")
        return True


def _result(req: Request, staged: Staged, layout: Layout, marked: bool) -> LoadResult:
    base = layout.base.snapshot_id if layout.base is not None else None
    added = layout.added if layout.base is not None else staged.documents
    return LoadResult(
        req.snapshot_id,
        staged.documents,
        "created" if marked else "replaced",
        base,
        added,
        layout.removed,
        len(layout.gone),
    )


def _load_one(conn: Conn, req: Request) -> LoadResult:
    """One connection: the ``loading`` row, then one transaction for everything."""
    snapshot_id, cfg, progress = req.snapshot_id, req.cfg, req.progress
    marked = _mark_loading(conn, snapshot_id, cfg)
    unchanged = False
    try:
        with (
            reading_window(conn, req.history) as window,
            conn.transaction() as tx,
            load_timeout(conn),
        ):
            staged = stage(conn, req, None)
            if not marked and _existing_ready(conn, snapshot_id, staged.digest, req.replace):
                unchanged = True
                raise psycopg.Rollback(tx)  # nothing it stored is needed
            layout = plan_layout(conn, req, staged)
            segment = write_segment(conn, layout, cfg, progress)
            publish_content(conn, snapshot_id, layout, segment, staged, cfg, _recent(req))
            store_window(conn, snapshot_id, window, cfg, progress)
    except BaseException:
        if marked:
            _undo_load(conn, snapshot_id, None)
        raise
    if unchanged:
        return LoadResult(snapshot_id, staged.documents, "unchanged")
    return _result(req, staged, layout, marked)


def _load_parallel(conn: Conn, req: Request, jobs: int) -> LoadResult:
    """Worker connections index while the client reads; several commits (see the
    module docstring). The workers' sessions are opened before anything is stored,
    so a server that refuses them leaves nothing behind."""
    snapshot_id, cfg, progress = req.snapshot_id, req.cfg, req.progress
    token = uuid.uuid4()
    with ExitStack() as stack:
        stack.enter_context(load_session_timeout(conn))
        conns = stack.enter_context(connections(conn, jobs))
        window = stack.enter_context(reading_window(conn, req.history))
        marked = _mark_loading(conn, snapshot_id, cfg)
        workers = Workers(conns, cfg, token, req.skips)
        try:
            staged = stage(conn, req, workers)
        except BaseException:
            workers.abort()
            _undo_load(conn, snapshot_id if marked else None, token)
            raise
        try:
            if not marked and _existing_ready(conn, snapshot_id, staged.digest, req.replace):
                _undo_load(conn, None, token)
                return LoadResult(snapshot_id, staged.documents, "unchanged")
            layout = plan_layout(conn, req, staged)
            segment = write_segment_parallel(conn, conns[:2], layout, token, cfg, progress)
            with conn.transaction(), load_timeout(conn):
                publish_content(conn, snapshot_id, layout, segment, staged, cfg, _recent(req))
                store_window(conn, snapshot_id, window, cfg, progress)
                conn.execute("DELETE FROM riido.text_pending WHERE token = %s", (token,))
                unstage(conn, token)
        except BaseException:
            _undo_load(conn, snapshot_id if marked else None, token)
            raise
        _reclaim(conns[0])
    return _result(req, staged, layout, marked)


def _reclaim(conn: Conn) -> None:
    """Make the space of the rows a finished parallel load deleted from the shared
    staging tables (its numbered documents, a row per document, and its pending keys)
    free again, and give the trailing empty pages back: without it a chain of loads
    kept the dead rows of each (48 MB of riido.load_stage and 12 MB of text_pending
    after a chain of 100 commits on 100,000 functions, a third of one snapshot).
    ``conn`` is an autocommit session (VACUUM runs outside a transaction); a table
    another session holds locked is skipped, and a role that does not own the tables
    gets a warning, not an error: the load is published already."""
    with suppress(psycopg.Error):
        conn.execute("VACUUM (SKIP_LOCKED) riido.load_stage, riido.text_pending")


def _undo_load(conn: Conn, snapshot_id: str | None, token: uuid.UUID | None) -> None:
    """After a failed (or, in parallel, a no-op) load: remove its ``loading`` row (when
    ``snapshot_id`` is given: the load wrote it) and its stage; what it wrote is a
    segment and texts nothing holds (its ``token``'s pending rows stay, for the
    collector)."""
    settle(conn)  # an interrupt may have left a statement in flight
    if conn.closed or conn.broken:
        return
    with suppress(psycopg.Error):
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.rollback()
        conn.execute("DROP TABLE IF EXISTS riido_stage")
        conn.execute("DROP TABLE IF EXISTS riido_added")
        with conn.transaction():
            if snapshot_id is not None:
                _clear_leftovers(conn, snapshot_id)
            if token is not None:  # no longer the load's: candidates for the collector
                conn.execute(
                    "UPDATE riido.text_pending SET token = NULL WHERE token = %s", (token,)
                )
                unstage(conn, token)
