"""A snapshot's window of past commits (``riido.commits``, ``riido.window_commits``):
the history-similarity prior's input, stored by a load of a git revision
(:mod:`riido_pg.extract.similar`; docs/evaluation.md "History similarity").

The window's commit ids are listed with git first (one command), as the load begins;
only the commits the database does not hold yet are read from git (their subject and
changed functions), on :data:`READ_THREADS` threads in chunks of :data:`READ_CHUNK`,
while the load reads and stores its documents (:class:`WindowReading`), and each is
stored once, shared by every snapshot. Then, inside the load's transaction, the
snapshot's window rows: per past commit, its subject's lexemes as the identifier
column analyses a question (riido's identifier splitting, then the snapshot's text
search configuration) and the sorted doc_ords of the snapshot's documents with one of
its keys, resolved here so that a query never matches keys.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

from riido_pg.documents import PastCommitRow, PastWindow
from riido_pg.server.connect import Conn
from riido_pg.splitting import split_identifiers

__all__ = ["READ_CHUNK", "READ_THREADS", "WindowReading", "reading_window", "store_window"]

#: Commits read from git in one go (between two progress reports).
READ_CHUNK = 25
#: Threads reading a window's chunks: each waits on git's processes for much of its
#: time, so two overlap well even beside the load's own work.
READ_THREADS = 2

#: The window's rows, every key resolved to the snapshot's documents: a document's
#: key is its id without the trailing ``:`` and line number
#: (:func:`riido_pg.extract.similar.function_key`), prefixed with where the loaded
#: directory sits in the repository (a commit's keys are relative to its top). The
#: documents the snapshot removed from its path are left out by an anti-join (a test of
#: each document against the whole removed array took 8 s at 100,000 documents with
#: 20,000 removed; the bounds allow a quarter).
_INSERT = """
WITH w AS (
    SELECT (w.n - 1)::integer AS position, w.commit, w.ident
    FROM unnest(%(commits)s::text[], %(idents)s::text[]) WITH ORDINALITY AS w(commit, ident, n)
),
wanted AS (
    SELECT w.position, k.key
    FROM w JOIN riido.commits AS c ON c.commit = w.commit
    CROSS JOIN LATERAL unnest(c.keys) AS k(key)
),
gone AS MATERIALIZED (
    SELECT DISTINCT r.doc_ord FROM riido.snapshots AS s
    CROSS JOIN LATERAL unnest(s.removed) AS r(doc_ord)
    WHERE s.snapshot_id = %(snapshot_id)s
),
docs AS MATERIALIZED (
    SELECT d.doc_ord,
           %(prefix)s::text || coalesce(substring(d.doc_id FROM '^(.+):[0-9]+$'), d.doc_id)
           AS key
    FROM riido.snapshot_segments AS p
    JOIN riido.documents AS d ON d.segment_id = p.segment_id
    LEFT JOIN gone AS g ON g.doc_ord = d.doc_ord
    WHERE p.snapshot_id = %(snapshot_id)s AND g.doc_ord IS NULL
),
found AS (
    SELECT x.position, array_agg(DISTINCT d.doc_ord ORDER BY d.doc_ord) AS doc_ords
    FROM wanted AS x JOIN docs AS d ON d.key = x.key
    GROUP BY x.position
)
INSERT INTO riido.window_commits (snapshot_id, position, commit, lexemes, doc_ords)
SELECT %(snapshot_id)s, w.position, w.commit,
       tsvector_to_array(to_tsvector(%(text_config)s::regconfig, w.ident)),
       coalesce(f.doc_ords, '{}')
FROM w LEFT JOIN found AS f ON f.position = w.position
"""


class WindowReading:
    """A window's commits the database does not hold, being read from git on
    :data:`READ_THREADS` threads from the moment it is made (the start of a load, so
    the reading overlaps the load's own); :meth:`chunks` gives what they read, in
    order, raising what a reader raised. :meth:`close` stops what has not begun and
    waits for what has."""

    def __init__(self, conn: Conn, window: PastWindow) -> None:
        self.window = window
        self.shas = window.shas()
        self.subjects: dict[str, str] = {
            str(c): str(s)
            for c, s in conn.execute(
                "SELECT c.commit, c.subject FROM riido.commits AS c WHERE c.commit = ANY(%s)",
                (self.shas,),
            ).fetchall()
        }
        missing = [s for s in self.shas if s not in self.subjects]
        self.missing = len(missing)
        self._pool: ThreadPoolExecutor | None = None
        self._chunks: list[Future[Sequence[PastCommitRow]]] = []
        if missing:
            self._pool = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="riido-window")
            self._chunks = [
                self._pool.submit(window.read, missing[start : start + READ_CHUNK])
                for start in range(0, len(missing), READ_CHUNK)
            ]

    def chunks(self) -> Iterator[Sequence[PastCommitRow]]:
        for chunk in self._chunks:
            yield chunk.result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


@contextmanager
def reading_window(conn: Conn, window: PastWindow | None) -> Iterator[WindowReading | None]:
    """A :class:`WindowReading` of ``window`` for the block (None for none), closed
    when the block ends, however it ends."""
    if window is None:
        yield None
        return
    reading = WindowReading(conn, window)
    try:
        yield reading
    finally:
        reading.close()


def store_window(
    conn: Conn,
    snapshot_id: str,
    reading: WindowReading | None,
    cfg: str,
    progress: Callable[[str, int, int], None] | None,
) -> None:
    """Replace the snapshot's window (inside the caller's transaction, after the
    snapshot's documents are published): none for ``reading`` None (a work tree, JSON,
    a table, a load without its window), else the revision's past commits, storing
    those the database did not hold as the reading gives them (progress
    ``past_commits``: stored, of how many)."""
    conn.execute("DELETE FROM riido.window_commits WHERE snapshot_id = %s", (snapshot_id,))
    if reading is None or not reading.shas:
        return
    shas, subjects, done = reading.shas, reading.subjects, 0
    if progress is not None and reading.missing:
        progress("past_commits", done, reading.missing)
    for read in reading.chunks():
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO riido.commits (commit, subject, keys) VALUES (%s, %s, %s) "
                "ON CONFLICT (commit) DO NOTHING",
                [(p.commit, p.subject, sorted(p.keys)) for p in read],
            )
        subjects.update((p.commit, p.subject) for p in read)
        done += len(read)
        if progress is not None:
            progress("past_commits", done, reading.missing)
    conn.execute(
        _INSERT,
        {
            "snapshot_id": snapshot_id,
            "commits": shas,
            "idents": [split_identifiers(subjects[s]) for s in shas],
            "prefix": reading.window.prefix,
            "text_config": cfg,
        },
    )
