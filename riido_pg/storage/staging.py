"""A load's first phase: reading the input once into a staging table.

The input is read as a stream, in chunks of :data:`CHUNK` documents, so nothing in the
client grows with the number of documents. For each chunk the client computes every
text's key (:func:`~riido_pg.storage.texts.text_key`), and the ``(doc_id, key)``
pairs go by ``COPY`` into the session's temporary table ``riido_stage``; riido.texts
is asked which of the chunk's keys it holds already, and only the others are indexed.
On one connection the client asks, and sends the new texts, chunk by chunk, between
one chunk's ``COPY`` and the next. A parallel load hands each whole chunk to its
workers instead, which ask and index on their own sessions, while the client's one
``COPY`` of every pair stays open from the first chunk to the last: the reader never
waits for the database until the input ends. Duplicate ids, the
document count and the content digest are then computed in the database
(``sql/content_digest.sql``), so loading the same content again is the
``unchanged`` no-op whatever its order.

The first chunks also tell which stored snapshots share the most documents with the
input (:class:`Sharing`: counted on the connection that looks the chunk's keys up),
so a load can pick its base (README "Snapshots on a base") without reading anything
more.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from psycopg import sql

from riido_pg.documents import (
    Document,
    DocumentSet,
    DocumentStream,
    PastWindow,
    check_item_utf8,
    describe,
)
from riido_pg.errors import InvalidInput
from riido_pg.resources import sql_template, sql_text
from riido_pg.server.connect import Conn
from riido_pg.server.plans import run
from riido_pg.storage.indexing import Skips, send_texts, store_texts
from riido_pg.storage.texts import key_of_utf8, new_texts_plan, text_keyer
from riido_pg.storage.timeouts import load_timeout, load_work_mem
from riido_pg.storage.workers import Job, Workers

__all__ = ["CHUNK", "Progress", "Request", "Sharing", "Staged", "request", "stage"]

#: ``progress(phase, done, total)``, called when a phase starts and as it advances; a
#: total of 0 means the phase's size is not known. Load phases, in order: "documents"
#: (reading the input, counted; with workers, indexing its new texts meanwhile),
#: "tsvectors" (one connection: storing the new texts, one statement), "index" (the
#: new segment's postings, one column at a time, 0..2), "statistics" (planner
#: statistics, when a load changed a lot).
Progress = Callable[[str, int, int], None]

#: Documents per chunk: what the client holds per chunk in flight.
CHUNK = 2_000
#: Chunks whose keys are also counted by the snapshots holding them (:class:`Sharing`).
SAMPLED_CHUNKS = 3


@dataclass(frozen=True, slots=True)
class Request:
    """What one load was asked to do (its text configuration checked)."""

    snapshot_id: str
    docs: Iterable[Document]
    cfg: str
    where: str
    checked: bool
    replace: bool
    progress: Progress | None
    skips: Skips
    #: The base asked for (None: choose one), or no base at all (``fresh``).
    base: str | None = None
    fresh: bool = False
    #: The ids of the recently changed documents, once the documents are read (a git
    #: revision's stream: :attr:`~riido_pg.documents.DocumentStream.recent`).
    recent: Callable[[], frozenset[str]] | None = None
    #: The git revision's window of past commits (a git revision's stream:
    #: :attr:`~riido_pg.documents.DocumentStream.history`; None: no window).
    history: PastWindow | None = None


def request(
    snapshot_id: str,
    docs: Iterable[Document],
    cfg: str,
    replace: bool,
    progress: Progress | None,
    *,
    base: str | None = None,
    fresh: bool = False,
) -> Request:
    """A load's request: where its documents come from (for messages), whether they
    are checked, and who hears of a document left out because PostgreSQL cannot index
    it (nobody: such a document fails the load)."""
    recent = None
    history = None
    if isinstance(docs, DocumentStream):
        where, checked, skip = docs.where, docs.checked, docs.skip_unindexable
        recent, history = docs.recent, docs.history
    else:
        where, checked, skip = f"snapshot {snapshot_id!r}", False, None
    checked = checked or isinstance(docs, DocumentSet)
    return Request(
        snapshot_id,
        docs,
        cfg,
        where,
        checked,
        replace,
        progress,
        Skips(skip),
        base,
        fresh,
        recent,
        history,
    )


@dataclass(slots=True)
class Sharing:
    """How many documents of the first chunks each ready snapshot of the load's text
    configuration holds (same id, same text): the evidence for choosing a base."""

    counts: Counter[str] = field(default_factory=Counter)
    sampled: int = 0
    #: Parallel loads count on several worker sessions at once.
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, rows: list[tuple[object, ...]], documents: int) -> None:
        """Add one chunk's counts (``sql/sharing.sql``'s rows) of ``documents``."""
        with self.lock:
            for snapshot_id, count in rows:
                self.counts[str(snapshot_id)] += int(count)  # type: ignore[call-overload]
            self.sampled += documents

    def best(self) -> list[str]:
        """Snapshot ids, most shared first (ties: the most recently created first,
        which the query orders for us)."""
        return [sid for sid, _ in self.counts.most_common()]


@dataclass(frozen=True, slots=True)
class Staged:
    documents: int
    digest: str
    sharing: Sharing


@dataclass(slots=True)
class _Chunk:
    pairs: list[tuple[str, str]]  # (doc_id, key as uuid text) of every document
    texts: dict[bytes, tuple[str, str]]  # key -> (doc_id, body), each key once


def _chunks(docs: Iterable[Document], *, checked: bool, where: str, cfg: str) -> Iterator[_Chunk]:
    base = text_keyer(cfg)
    chunk = _Chunk([], {})
    for i, item in enumerate(docs):
        if checked:
            doc, data = item, item.text.encode("utf-8")
        else:
            doc, data = check_item_utf8(item, i, where)
        key = key_of_utf8(base, data)
        chunk.pairs.append((doc.id, key.hex()))
        chunk.texts.setdefault(key, (doc.id, doc.text))
        if len(chunk.pairs) >= CHUNK:
            yield chunk
            chunk = _Chunk([], {})
    if chunk.pairs:
        yield chunk


def _sample(conn: Conn, chunk: _Chunk, cfg: str, sharing: Sharing) -> None:
    """Count, per ready snapshot of ``cfg``, the chunk's documents its path holds."""
    rows = conn.execute(
        sql_text("sharing"),
        {
            "ids": [p[0] for p in chunk.pairs],
            "keys": "{" + ",".join(p[1] for p in chunk.pairs) + "}",
            "text_config": cfg,
        },
    ).fetchall()
    sharing.add(rows, len(chunk.pairs))


def _job(workers: Workers, chunk: _Chunk, cfg: str, sharing: Sharing | None) -> Job:
    """A worker's part of one chunk: count its sample (``sharing``, for the first
    chunks), look its keys up and index its texts not yet stored."""

    def job(conn: Conn) -> None:
        if sharing is not None:
            _sample(conn, chunk, cfg, sharing)
        new = run(conn, new_texts_plan(chunk.texts))
        if new:
            workers.index(conn, new)

    return job


def stage(conn: Conn, req: Request, workers: Workers | None) -> Staged:
    """Read the request's documents into the staging table riido_stage; their texts
    not yet stored are looked up and indexed on the workers (or on ``conn``, in its
    transaction, without workers)."""
    cfg, where, skips, progress = req.cfg, req.where, req.skips, req.progress
    conn.execute("DROP TABLE IF EXISTS riido_stage")
    conn.execute('CREATE TEMP TABLE riido_stage (doc_id text COLLATE "C", key uuid)')
    if progress:
        progress("documents", 0, 0)
    sharing = Sharing()
    sample = not req.fresh and req.base is None
    chunks = _chunks(req.docs, checked=req.checked, where=where, cfg=cfg)
    if workers is None:
        _stage_alone(conn, req, chunks, sharing if sample else None)
    else:
        _stage_parallel(conn, req, chunks, workers, sharing if sample else None)
    if skips.keys:  # left out (a source tree's documents PostgreSQL cannot index)
        conn.execute("DELETE FROM riido_stage WHERE key = ANY(%s)", (list(skips.keys),))
    with conn.transaction(), load_timeout(conn):  # a sort of every id: a load's bound
        load_work_mem(conn)  # the sort and the duplicate check in memory, not on disk
        row = conn.execute(
            sql.SQL(sql_template("content_digest")).format(digest=sql.SQL(sql_template("digest")))
        ).fetchone()
    assert row is not None
    digest, count, duplicate = str(row[0]), int(row[1]), row[2]
    if duplicate is not None:
        raise InvalidInput(f"{where}: duplicate document id {describe(duplicate)}")
    if count == 0:
        raise InvalidInput(f"{where}: no documents")
    if progress and workers is not None:
        progress("documents", count, count)
    return Staged(count, digest, sharing)


def _stage_alone(
    conn: Conn, req: Request, chunks: Iterator[_Chunk], sharing: Sharing | None
) -> None:
    """One connection, in its transaction: per chunk, the sample, the look-up, the new
    texts sent and the chunk's pairs copied; the new texts stored at the end, in one
    statement, in key order."""
    progress = req.progress
    conn.execute("DROP TABLE IF EXISTS riido_texts_in")
    done, sent = 0, False
    for n, chunk in enumerate(chunks):
        if sharing is not None and n < SAMPLED_CHUNKS:
            _sample(conn, chunk, req.cfg, sharing)
        new = run(conn, new_texts_plan(chunk.texts))
        if new:
            send_texts(conn, new, fresh=False)
            sent = True
        with conn.cursor().copy("COPY riido_stage (doc_id, key) FROM STDIN") as cp:
            for pair in chunk.pairs:
                cp.write_row(pair)
        done += len(chunk.pairs)
        if progress:
            progress("documents", done, 0)
    if done:
        if progress:
            progress("documents", done, done)
            progress("tsvectors", 0, 0)
        if sent:
            store_texts(conn, req.cfg, None, req.skips)


def _stage_parallel(
    conn: Conn,
    req: Request,
    chunks: Iterator[_Chunk],
    workers: Workers,
    sharing: Sharing | None,
) -> None:
    """The workers sample, look up and index each chunk (:func:`_job`) while the
    client's one ``COPY`` takes every pair; returns when the workers stored every
    chunk's new texts."""
    progress = req.progress
    done = 0
    with conn.cursor().copy("COPY riido_stage (doc_id, key) FROM STDIN") as cp:
        for n, chunk in enumerate(chunks):
            sampled = sharing if n < SAMPLED_CHUNKS else None
            workers.put(_job(workers, chunk, req.cfg, sampled))
            for pair in chunk.pairs:
                cp.write_row(pair)
            done += len(chunk.pairs)
            if progress:
                progress("documents", done, 0)
    workers.finish()
