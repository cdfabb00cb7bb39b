"""The new segment of a load (phase 3 of :mod:`riido_pg.storage.loading`): its
documents numbered into a stage, then its row, documents and both columns' postings
written from it — in the caller's transaction on one connection, or on three
connections at once, each committed, for a parallel load.
"""

from __future__ import annotations

import threading
import uuid
from contextlib import suppress

from psycopg import sql

from riido_pg.server.connect import Conn
from riido_pg.storage.segments import Layout, number
from riido_pg.storage.segments import segment_statements as _segment_statements
from riido_pg.storage.staging import Progress
from riido_pg.storage.timeouts import load_timeout, load_work_mem

__all__ = ["unstage", "write_segment", "write_segment_parallel"]


#: A load on one connection numbers its documents in this session's temporary table;
#: a parallel load in the unlogged riido.load_stage, which all its sessions can read.
_LOCAL_STAGE = sql.Identifier("riido_numbered")
_SHARED_STAGE = sql.Identifier("riido", "load_stage")


def _number(conn: Conn, layout: Layout, load: uuid.UUID, stage: sql.Identifier) -> None:
    """Number the new segment's documents into ``stage`` under ``load`` and ANALYZE
    ``stage``, so the statements joining it to the texts plan for its real size. The
    shared stage is committed (its ANALYZE takes a lock that waits for any other
    load's ANALYZE: held for the sampling and no longer)."""
    if stage == _LOCAL_STAGE:  # in the caller's transaction
        conn.execute("DROP TABLE IF EXISTS riido_numbered")
        conn.execute("CREATE TEMP TABLE riido_numbered (LIKE riido.load_stage)")
    with conn.transaction(), load_timeout(conn):
        number(conn, layout, load, stage)
        conn.execute("DROP TABLE IF EXISTS riido_stage")
        conn.execute("DROP TABLE IF EXISTS riido_added")
    conn.execute(sql.SQL("ANALYZE {}").format(stage))


def unstage(conn: Conn, load: uuid.UUID) -> None:
    conn.execute("DELETE FROM riido.load_stage WHERE load = %s", (load,))


def write_segment(
    conn: Conn, layout: Layout, cfg: str, progress: Progress | None
) -> uuid.UUID | None:
    """The new segment of ``layout`` on ``conn``, in the caller's transaction, one
    statement after the other (None when the layout adds nothing)."""
    if not layout.writes:
        return None
    load, segment = uuid.uuid4(), uuid.uuid4()
    _number(conn, layout, load, _LOCAL_STAGE)
    row, documents, *postings, fields = _segment_statements(
        segment, load, layout, _LOCAL_STAGE, cfg
    )
    conn.execute(*row)
    conn.execute(*documents)
    conn.execute(*fields)
    if progress:
        progress("index", 0, 2)
    load_work_mem(conn)
    for i, stmt in enumerate(postings, 1):
        conn.execute(*stmt)
        if progress:
            progress("index", i, 2)
    conn.execute("DROP TABLE riido_numbered")
    return segment


def write_segment_parallel(
    conn: Conn,
    extra: list[Conn],
    layout: Layout,
    load: uuid.UUID,
    cfg: str,
    progress: Progress | None,
) -> uuid.UUID | None:
    """The new segment of ``layout``: its row on ``conn``, then its documents on
    ``conn`` and one column's postings on each of two ``extra`` connections, all three
    at once, from the shared stage of ``load``, each committed; then its fields'
    postings on ``conn`` (under text configuration ``cfg``)."""
    if not layout.writes:
        return None
    if len(extra) < 2:
        raise ValueError("a parallel load writes its content on three connections")
    segment = uuid.uuid4()
    _number(conn, layout, load, _SHARED_STAGE)
    row, *statements, fields = _segment_statements(segment, load, layout, _SHARED_STAGE, cfg)
    with conn.transaction(), load_timeout(conn):
        conn.execute(*row)
    if progress:
        progress("index", 0, 2)
    jobs = [(stmt, params, i > 0) for i, (stmt, params) in enumerate(statements)]
    errors: list[BaseException] = []

    def work(c: Conn, stmt: sql.Composed, params: dict[str, object], big: bool) -> None:
        try:
            with c.transaction(), load_timeout(c):
                if big:
                    load_work_mem(c)
                c.execute(stmt, params)
        except BaseException as exc:
            errors.append(exc)

    sessions = [conn, extra[0], extra[1]]
    threads = [
        threading.Thread(target=work, args=(c, *job), daemon=True)
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
    with conn.transaction(), load_timeout(conn):
        load_work_mem(conn)
        conn.execute(*fields)  # the fields' postings: small, from the ids alone
    return segment
