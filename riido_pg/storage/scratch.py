"""Scratch snapshots: documents ranked once and never kept (``riido-pg hints``).

:func:`scratch_snapshot` writes the caller's documents as a ``ready`` snapshot inside
a transaction that is always rolled back when the block ends, whatever happens in it:
nothing is ever visible to another session, nothing is left behind.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from riido_pg.documents import DocumentSet
from riido_pg.server.connect import Conn
from riido_pg.storage.loading import write_documents
from riido_pg.storage.snapshots import (
    Snapshot,
    check_text_config,
    find_snapshot,
    insert_snapshot_row,
)
from riido_pg.storage.timeouts import load_timeout

__all__ = ["scratch_snapshot"]


@contextmanager
def scratch_snapshot(conn: Conn, docs: DocumentSet, text_config: str) -> Iterator[Snapshot]:
    """A snapshot of ``docs`` that exists only inside the block (rolled back after).

    Writing the documents is a load (the load timeout applies); inside the block the
    session's query statement timeout is back in force.
    """
    with conn.transaction() as tx:
        cfg = check_text_config(conn, text_config)
        snapshot_id = f"scratch/{uuid.uuid4()}"
        insert_snapshot_row(conn, snapshot_id, cfg, "ready", len(docs), "")
        with load_timeout(conn):
            write_documents(conn, snapshot_id, docs, cfg)
        snap = find_snapshot(conn, snapshot_id)
        assert snap is not None
        yield snap
        raise psycopg.Rollback(tx)
