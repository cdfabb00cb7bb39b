"""Ranking over an asyncio connection (psycopg's :class:`~psycopg.AsyncConnection`).

The same plans as :func:`riido_pg.rank_snapshot` and :func:`riido_pg.rank_documents`
(:mod:`riido_pg.server.plans`), run by the asyncio driver: one core, two drivers, so
both APIs rank alike by construction. ::

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        ranking = await riido_pg.aio.rank_snapshot(conn, "repo@abc", "read the config")

A SQLAlchemy ``AsyncConnection`` or ``AsyncSession`` of an engine using psycopg
(``postgresql+psycopg://``; SQLAlchemy's asyncio needs ``greenlet``) is accepted too:
its psycopg connection is used, inside the transaction SQLAlchemy begins, for the
caller to commit or roll back.

The connection is taken as the sync API takes it, by the same decision
(:func:`riido_pg.server.errors.decide`, the table in :mod:`riido_pg.server.errors`):
a connection that is not in autocommit is used in autocommit for the call when it is
idle, and a call inside the caller's transaction runs in a savepoint of it (reads then
see that transaction's data); a failed transaction or a connection busy with a
statement (``TransactionFailed``) and a closed one (``DatabaseUnavailable``) are
refused before anything runs. Database errors arrive as :class:`~riido_pg.RiidoError`
subclasses, translated as the sync API translates them.

Calls on one connection at the same time (``asyncio.gather`` of several) are run one
after the other, each answered: a lock per connection (and per SQLAlchemy object
given) is held for the whole call, so no call's transaction or autocommit switch is
interleaved with another's. (The sync API refuses a call on a connection busy in
another thread instead: ``TransactionFailed``, "the connection is busy".) The lock
orders riido-pg's calls only: the caller's own statements on the connection meanwhile
run inside whatever transaction a call has open.
"""

from __future__ import annotations

import asyncio
import dataclasses
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import psycopg

from riido_pg.documents import HintsRequest
from riido_pg.ranking.policies import BM25, policy_params
from riido_pg.ranking.rank import (
    Composed,
    Ranking,
    RankOptions,
    documents_ranking_plan,
    in_sql,
    search_plan,
    setup_plan,
    snapshot_ranking_plan,
)
from riido_pg.server.errors import (
    async_one_statement,
    async_psycopg_connection,
    async_read_transaction,
    async_session,
)
from riido_pg.server.plans import run_async
from riido_pg.storage.scratch import scratch_plan
from riido_pg.storage.snapshots import DEFAULT_TEXT_CONFIG

__all__ = ["rank_documents", "rank_snapshot"]

AsyncConn = psycopg.AsyncConnection[Any]

#: The lock of each connection (or SQLAlchemy object) a call is running on.
_LOCKS: weakref.WeakKeyDictionary[object, asyncio.Lock] = weakref.WeakKeyDictionary()


def _lock(target: object) -> asyncio.Lock:
    """``target``'s lock (a new one for what is no connection: it is refused next)."""
    try:
        lock = _LOCKS.get(target)
        if lock is None:
            lock = _LOCKS[target] = asyncio.Lock()
    except TypeError:  # not weakly referenceable
        return asyncio.Lock()
    return lock


@asynccontextmanager
async def _session(target: object) -> AsyncIterator[AsyncConn]:
    """Use ``target``'s connection for one call, after every other call on it (the
    module docstring), through the boundary both drivers share
    (:func:`riido_pg.server.errors.decide`): yields the psycopg connection."""
    async with AsyncExitStack() as locks:
        await locks.enter_async_context(_lock(target))
        conn = await async_psycopg_connection(target)
        if conn is not target:
            await locks.enter_async_context(_lock(conn))
        sqlalchemy = conn is not target
        async with async_session(conn, sqlalchemy):
            yield conn


async def rank_snapshot(
    conn: AsyncConn | Any,
    snapshot_id: str,
    query: str,
    *,
    policy: str = BM25,
    limit: int | None = None,
    hints: Sequence[str] | None = None,
    fused_weight: float | None = None,
    model: str | None = None,
    params: Mapping[str, float] | None = None,
) -> Ranking:
    """:func:`riido_pg.rank_snapshot` on an asyncio connection: the same arguments,
    the same :class:`~riido_pg.Ranking`, by the same plans (one statement when it
    gives the same ranking, else the composed one)."""
    opts = RankOptions.check(
        query, policy, limit, hints, policy_params(fused_weight, params), model
    )
    async with _session(conn) as raw:
        if in_sql(opts):
            try:
                async with async_one_statement(raw):
                    return await run_async(raw, search_plan(snapshot_id, query, opts))
            except Composed:
                pass
        async with async_read_transaction(raw):
            await run_async(raw, setup_plan())
            return await run_async(raw, snapshot_ranking_plan(snapshot_id, query, opts))


async def rank_documents(
    conn: AsyncConn | Any,
    request: HintsRequest,
    *,
    policy: str = BM25,
    text_config: str = DEFAULT_TEXT_CONFIG,
    limit: int | None = None,
    hints: Sequence[str] | None = None,
    fused_weight: float | None = None,
    model: str | None = None,
    params: Mapping[str, float] | None = None,
) -> Ranking:
    """:func:`riido_pg.rank_documents` on an asyncio connection: the caller's
    documents are ranked in a scratch snapshot that is always rolled back."""
    opts = RankOptions.check(
        request.query, policy, limit, hints, policy_params(fused_weight, params), model
    )
    ranking: Ranking | None = None
    async with _session(conn) as raw, raw.transaction() as tx:
        snap = await run_async(raw, scratch_plan(request.documents, text_config))
        ranking = await run_async(raw, documents_ranking_plan(snap, request, opts))
        raise psycopg.Rollback(tx)
    assert ranking is not None
    return dataclasses.replace(ranking, snapshot_id=request.snapshot_id)
