"""The asyncio API (``riido_pg.aio``) runs the sync API's plans: every policy ranks
alike on both, for stored snapshots (self-contained or on a base) and for given
documents, and the connection rules and errors are the same."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest
from support.database import Database

import riido_pg
import riido_pg.aio
from riido_pg import Document, DocumentSet, HintsRequest
from riido_pg.errors import InvalidInput, InvalidTextConfig, SnapshotNotFound, TransactionFailed

DOCS = [
    Document("a", "def read_config(path): return open(path).read()"),
    Document("b", "class HTTPServer: def serve(self): pass"),
    Document("c", "func ReadConfig() {}"),
    Document("d", "write the config file"),
]
POLICIES = [p for p in riido_pg.policies() if not p.needs_model]


def _hints(policy: Any) -> list[str] | None:
    return ["c", "a"] if policy.needs_hints else None


async def _ranked(dsn: str, snapshot: str, policy: Any, limit: int | None) -> Any:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        ranking = await riido_pg.aio.rank_snapshot(
            conn, snapshot, "read config", policy=policy.name, limit=limit, hints=_hints(policy)
        )
    return ranking


@pytest.fixture(scope="module")
def loaded(db: Database) -> Database:
    with db.connect() as conn:
        riido_pg.load_snapshot(conn, "aio", DOCS, fresh=True)
        riido_pg.load_snapshot(conn, "aio2", [*DOCS[:3], Document("e", "read it")], base="aio")
    return db


@pytest.mark.parametrize("snapshot", ["aio", "aio2"])
@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
def test_async_ranking_is_the_sync_ranking(loaded: Database, snapshot: str, policy: Any) -> None:
    with loaded.connect() as conn:
        for limit in (None, 2):
            sync = riido_pg.rank_snapshot(
                conn, snapshot, "read config", policy=policy.name, limit=limit, hints=_hints(policy)
            )
            assert asyncio.run(_ranked(loaded.dsn, snapshot, policy, limit)) == sync


def test_async_hints_is_the_sync_hints(loaded: Database) -> None:
    request = HintsRequest("mine", "read config", DocumentSet(DOCS))

    async def ranked() -> Any:
        async with await psycopg.AsyncConnection.connect(loaded.dsn, autocommit=True) as conn:
            out = await riido_pg.aio.rank_documents(
                conn, request, policy="identifier_bm25_baseline_first"
            )
            stored = await (await conn.execute("SELECT count(*) FROM riido.snapshots")).fetchone()
            return out, stored

    with loaded.connect() as conn:
        sync = riido_pg.rank_documents(conn, request, policy="identifier_bm25_baseline_first")
        before = conn.execute("SELECT count(*) FROM riido.snapshots").fetchone()
    got, after = asyncio.run(ranked())
    assert got == sync and got.snapshot_id == "mine"
    assert [c.id for c in got.candidates][:2] == ["a", "c"]
    assert after == before  # nothing kept


def test_async_connections_and_errors(loaded: Database) -> None:
    async def scenario() -> list[str]:
        seen: list[str] = []
        # not autocommit, idle: used in autocommit for the call, left as it was
        async with await psycopg.AsyncConnection.connect(loaded.dsn) as conn:
            r = await riido_pg.aio.rank_snapshot(conn, "aio", "read config")
            seen.append(r.candidates[0].id)
            assert not conn.autocommit
            # inside the caller's transaction: ranked in it
            await conn.execute("SELECT 1")
            r = await riido_pg.aio.rank_snapshot(conn, "aio", "read config", limit=1)
            seen.append(r.candidates[0].id)
            with pytest.raises(SnapshotNotFound):
                await riido_pg.aio.rank_snapshot(conn, "no-such", "read config")
            with pytest.raises(InvalidTextConfig):
                await riido_pg.aio.rank_documents(
                    conn, HintsRequest("x", "q", DocumentSet(DOCS)), text_config="klingon"
                )
            await conn.rollback()
            with pytest.raises(psycopg.errors.DivisionByZero):
                await conn.execute("SELECT 1/0")
            with pytest.raises(TransactionFailed):
                await riido_pg.aio.rank_snapshot(conn, "aio", "read config")
        return seen

    assert asyncio.run(scenario()) == ["a", "a"]


def test_sqlalchemy_async_connections_and_sessions(loaded: Database) -> None:
    """A SQLAlchemy AsyncConnection or AsyncSession over psycopg ranks as the psycopg
    connection does; the synchronous API refuses them with one clear error."""
    from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

    async def connect() -> Any:
        return await psycopg.AsyncConnection.connect(loaded.dsn)

    async def scenario() -> list[Any]:
        engine = create_async_engine("postgresql+psycopg://", async_creator=connect)
        try:
            async with engine.connect() as conn:
                by_conn = await riido_pg.aio.rank_snapshot(conn, "aio2", "read config")
                with pytest.raises(InvalidInput, match="synchronous"):
                    riido_pg.rank_snapshot(conn, "aio2", "read config")  # type: ignore[arg-type]
            async with AsyncSession(engine) as session:
                by_session = await riido_pg.aio.rank_documents(
                    session, HintsRequest("x", "read config", DocumentSet(DOCS))
                )
        finally:
            await engine.dispose()
        return [by_conn, by_session]

    with loaded.connect() as conn:
        expected = [
            riido_pg.rank_snapshot(conn, "aio2", "read config"),
            riido_pg.rank_documents(conn, HintsRequest("x", "read config", DocumentSet(DOCS))),
        ]
    assert asyncio.run(scenario()) == expected
    with pytest.raises(InvalidInput, match="not str"):
        asyncio.run(riido_pg.aio.rank_snapshot("dsn", "aio", "q"))
