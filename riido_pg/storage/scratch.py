"""Scratch snapshots: documents ranked once and never kept (``riido-pg hints``).

:func:`scratch_plan` writes the caller's documents as a ``ready`` snapshot of one
segment; :func:`scratch_snapshot` runs it inside a transaction that is always rolled
back when the block ends, whatever happens in it: nothing is ever visible to another
session, nothing is left behind. The plan is I/O-free (:mod:`riido_pg.server.plans`),
so :mod:`riido_pg.aio` writes the same scratch snapshot on an asyncio connection.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import psycopg
from psycopg import sql

from riido_pg.documents import DocumentSet
from riido_pg.server.connect import Conn
from riido_pg.server.plans import Copy, Plan, Query, run
from riido_pg.storage.indexing import Skips, send_plan, store_plan
from riido_pg.storage.segments import fresh_layout, publish_plan, segment_statements
from riido_pg.storage.snapshots import (
    Snapshot,
    find_plan,
    insert_snapshot_plan,
    text_config_plan,
)
from riido_pg.storage.texts import key_of, new_texts_plan, text_keyer, texts_shared_xact_plan

if TYPE_CHECKING:
    from riido_pg.embedding import CheckedModel

__all__ = ["embed_plan", "scratch_plan", "scratch_snapshot"]


def scratch_plan(docs: DocumentSet, text_config: str) -> Plan[Snapshot]:
    """Write ``docs`` as a ready snapshot of one segment, in the caller's transaction
    (which the caller rolls back), with the plans a load writes with: the texts lock,
    the texts not stored yet, the snapshot's row, its segment, its publishing.
    Writing them is part of ranking them: the session's query timeout
    (``RIIDO_PG_STATEMENT_TIMEOUT_MS``) bounds every statement, as it bounds the
    ranking's, not a load's timeout."""
    cfg = yield from text_config_plan(text_config)
    yield from texts_shared_xact_plan()
    snapshot_id = f"scratch/{uuid.uuid4()}"
    keyer = text_keyer(cfg)
    keys = [key_of(keyer, d.text) for d in docs]
    texts = {k: (d.id, d.text) for k, d in zip(keys, docs, strict=True)}
    new = yield from new_texts_plan(texts)
    if new:
        yield from send_plan(new, fresh=True)
        yield from store_plan(cfg, None, Skips(None))
    yield from insert_snapshot_plan(snapshot_id, cfg, "loading", 0, "")
    load, segment = uuid.uuid4(), uuid.uuid4()
    yield Query("CREATE TEMP TABLE IF NOT EXISTS riido_scratch (LIKE riido.load_stage)")
    yield Query("TRUNCATE riido_scratch")
    yield Copy(
        "COPY riido_scratch (load, doc_ord, doc_id, text_key) FROM STDIN",
        ((load, i, d.id, k.hex()) for i, (d, k) in enumerate(zip(docs, keys, strict=True))),
    )
    for statement, params in segment_statements(segment, load, fresh_layout(), _SCRATCH, cfg):
        yield Query(statement, params)
    yield from publish_plan(snapshot_id, fresh_layout(), segment, len(docs), "", cfg)
    snap = yield from find_plan(snapshot_id)
    assert snap is not None
    return snap


def embed_plan(snap: Snapshot, docs: DocumentSet, model: CheckedModel) -> Plan[None]:
    """Store the vector of every text of a scratch snapshot of ``docs`` that has none
    under ``model`` yet (:func:`~riido_pg.storage.embeddings.embed_missing_plan`), and
    mark the snapshot embedded."""
    from riido_pg.storage.embeddings import embed_missing_plan, snapshot_texts

    embedded = yield from embed_missing_plan(model, snapshot_texts(), (snap.snapshot_id,))
    yield Query(
        "INSERT INTO riido.snapshot_models (snapshot_id, model, dim, embed_seconds, "
        "texts_embedded) VALUES (%s, %s, %s, 0, %s)",
        (snap.snapshot_id, model.name, model.dim, embedded),
    )


_SCRATCH = sql.Identifier("riido_scratch")


@contextmanager
def scratch_snapshot(conn: Conn, docs: DocumentSet, text_config: str) -> Iterator[Snapshot]:
    """A snapshot of ``docs`` that exists only inside the block (rolled back after)."""
    with conn.transaction() as tx:
        yield run(conn, scratch_plan(docs, text_config))
        raise psycopg.Rollback(tx)
