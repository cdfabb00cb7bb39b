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
from riido_pg.storage.segments import segment_statements
from riido_pg.storage.snapshots import K1, B, Snapshot, find_plan, text_config_plan
from riido_pg.storage.texts import key_of, text_keyer

if TYPE_CHECKING:
    from riido_pg.embedding import CheckedModel

__all__ = ["embed_plan", "scratch_plan", "scratch_snapshot"]

_TEXTS_LOCK = (0x52494947, 0)  # riido_pg.storage.texts' lock, held shared by every load


def scratch_plan(docs: DocumentSet, text_config: str) -> Plan[Snapshot]:
    """Write ``docs`` as a ready snapshot of one segment, in the caller's transaction
    (which the caller rolls back). Writing them is part of ranking them: the session's
    query timeout (``RIIDO_PG_STATEMENT_TIMEOUT_MS``) bounds every statement, as it
    bounds the ranking's, not a load's timeout."""
    cfg = yield from text_config_plan(text_config)
    yield Query("SELECT pg_advisory_xact_lock_shared(%s, %s)", _TEXTS_LOCK)
    snapshot_id = f"scratch/{uuid.uuid4()}"
    keyer = text_keyer(cfg)
    keys = [key_of(keyer, d.text) for d in docs]
    texts = {k: (d.id, d.text) for k, d in zip(keys, docs, strict=True)}
    found = yield Query(
        "SELECT coalesce(string_agg(uuid_send(key), ''::bytea), ''::bytea) "
        "FROM riido.texts WHERE key = ANY(%s::uuid[])",
        ("{" + ",".join(k.hex() for k in texts) + "}",),
        binary=True,
    )
    blob = bytes(found.one()[0])
    stored = {blob[i : i + 16] for i in range(0, len(blob), 16)}
    new = {k: v for k, v in texts.items() if k not in stored}
    if new:
        yield from send_plan(new, fresh=True)
        yield from store_plan(cfg, None, Skips(None))
    yield Query(
        "INSERT INTO riido.snapshots (snapshot_id, text_config, state, document_count, "
        "content_digest, k1, b) VALUES (%s, %s, 'ready', %s, '', %s, %s)",
        (snapshot_id, cfg, len(docs), K1, B),
    )
    load, segment = uuid.uuid4(), uuid.uuid4()
    yield Query("CREATE TEMP TABLE IF NOT EXISTS riido_scratch (LIKE riido.load_stage)")
    yield Query("TRUNCATE riido_scratch")
    yield Copy(
        "COPY riido_scratch (load, doc_ord, doc_id, text_key) FROM STDIN",
        ((load, i, d.id, k.hex()) for i, (d, k) in enumerate(zip(docs, keys, strict=True))),
    )
    for statement, params in segment_statements(segment, load, 0, _SCRATCH, cfg):
        yield Query(statement, params)
    yield Query(
        "INSERT INTO riido.snapshot_segments (snapshot_id, position, segment_id) "
        "VALUES (%s, 0, %s)",
        (snapshot_id, segment),
    )
    yield Query(
        "UPDATE riido.snapshots AS s SET added = g.documents, len_raw = g.len_raw, "
        "len_ident = g.len_ident FROM riido.segments AS g "
        "WHERE g.segment_id = %s AND s.snapshot_id = %s",
        (segment, snapshot_id),
    )
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
