"""A load's first phase: reading the input once into a staging table.

The input is read as a stream, in chunks of :data:`CHUNK` documents, so nothing in the
client grows with the number of documents. For each chunk the client computes every
text's key (:func:`~riido_pg.storage.texts.text_key`), asks the database which of
them riido.texts already holds, and hands only the others to be indexed (on the
caller's connection, or on a parallel load's workers); the ``(doc_id, key)`` pairs
go by ``COPY`` into the session's temporary table ``riido_stage``. Duplicate ids, the
document count and the content digest are then computed in the database
(``sql/content_digest.sql``), so loading the same content again is the
``unchanged`` no-op whatever its order.

The first chunks also tell which stored snapshots share the most documents with the
input (:class:`Sharing`), from the keys the chunk already looks up, so a load can
pick its base (README "Snapshots on a base") without reading anything more.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from psycopg import sql

from riido_pg.documents import (
    Document,
    DocumentSet,
    DocumentStream,
    PastWindow,
    check_item,
    describe,
)
from riido_pg.errors import InvalidInput
from riido_pg.resources import sql_template, sql_text
from riido_pg.server.connect import Conn
from riido_pg.server.plans import run
from riido_pg.storage.indexing import Skips, send_texts, store_texts
from riido_pg.storage.texts import key_of, new_texts_plan, text_keyer
from riido_pg.storage.timeouts import load_timeout
from riido_pg.storage.workers import Workers

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
        doc = item if checked else check_item(item, i, where)
        key = key_of(base, doc.text)
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
    for snapshot_id, count in rows:
        sharing.counts[str(snapshot_id)] += int(count)
    sharing.sampled += len(chunk.pairs)


def stage(conn: Conn, req: Request, workers: Workers | None) -> Staged:
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
    sharing = Sharing()
    sample = not req.fresh and req.base is None
    for n, chunk in enumerate(_chunks(req.docs, checked=req.checked, where=where, cfg=cfg)):
        if sample and n < SAMPLED_CHUNKS:
            _sample(conn, chunk, cfg, sharing)
        new = run(conn, new_texts_plan(chunk.texts))
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
