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
from riido_pg.ranking.rank import RankOptions, rank_composed

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
            # both ran riido.search's one statement where it ranks: the reference too
            opts = RankOptions.check("read config", policy.name, limit, _hints(policy), None, None)
            assert rank_composed(conn, snapshot, "read config", opts) == sync


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
                # calls at the same time on one session are answered one after another
                gathered = await asyncio.gather(
                    *(riido_pg.aio.rank_snapshot(session, "aio2", "read config") for _ in range(5))
                )
                assert gathered == [by_conn] * 5
                await session.rollback()
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


@pytest.mark.parametrize("autocommit", [True, False])
@pytest.mark.parametrize("calls", [2, 40])
def test_concurrent_calls_on_one_connection_are_all_answered(
    loaded: Database, autocommit: bool, calls: int
) -> None:
    """``asyncio.gather`` of calls on one connection: each is answered (they run one
    after the other), a failing one fails alone, and the connection is left idle, in
    its autocommit mode, and usable. On main two calls broke the connection
    (``rollback at the wrong nesting level``, then a failed transaction, or a raw
    ProgrammingError and autocommit left on), and 40 got no answer."""
    request = HintsRequest("mine", "read config", DocumentSet(DOCS))
    with loaded.connect() as conn:
        expected = riido_pg.rank_snapshot(conn, "aio2", "read config")
        expected_docs = riido_pg.rank_documents(conn, request)

    async def scenario() -> None:
        async with await psycopg.AsyncConnection.connect(loaded.dsn, autocommit=autocommit) as c:
            got = await asyncio.gather(
                *(riido_pg.aio.rank_snapshot(c, "aio2", "read config") for _ in range(calls))
            )
            assert got == [expected] * calls
            mixed = await asyncio.gather(
                *(
                    riido_pg.aio.rank_snapshot(c, "aio2", "read config")
                    if n % 3 == 0
                    else riido_pg.aio.rank_documents(c, request)
                    if n % 3 == 1
                    else riido_pg.aio.rank_snapshot(c, "no-such", "read config")
                    for n in range(calls + 1)
                ),
                return_exceptions=True,
            )
            for n, answer in enumerate(mixed):
                if n % 3 == 0:
                    assert answer == expected
                elif n % 3 == 1:
                    assert answer == expected_docs
                else:
                    assert isinstance(answer, SnapshotNotFound), answer
            assert c.autocommit is autocommit
            assert c.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            assert await (await c.execute("SELECT 7")).fetchone() == (7,)
            if not autocommit:
                await c.rollback()
            # inside the caller's transaction: each call answered in it, the
            # transaction still open and usable afterwards
            await c.set_autocommit(False)
            await c.execute("SELECT 1")
            got = await asyncio.gather(
                *(riido_pg.aio.rank_snapshot(c, "aio2", "read config") for _ in range(calls))
            )
            assert got == [expected] * calls
            assert c.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
            assert await (await c.execute("SELECT 8")).fetchone() == (8,)
            await c.rollback()

    asyncio.run(scenario())


def test_a_call_cancelled_while_waiting_for_the_connection(loaded: Database) -> None:
    """Cancelling calls queued behind another leaves the others answered and the
    connection idle and usable."""
    with loaded.connect() as conn:
        expected = riido_pg.rank_snapshot(conn, "aio", "read config")

    async def scenario() -> None:
        async with await psycopg.AsyncConnection.connect(loaded.dsn) as c:
            tasks = [
                asyncio.create_task(riido_pg.aio.rank_snapshot(c, "aio", "read config"))
                for _ in range(6)
            ]
            await asyncio.sleep(0)
            for task in tasks[1::2]:
                task.cancel()
            done = await asyncio.gather(*tasks, return_exceptions=True)
            for n, answer in enumerate(done):
                if n % 2:
                    assert isinstance(answer, asyncio.CancelledError), answer
                else:
                    assert answer == expected
            assert not c.autocommit
            assert c.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            assert await riido_pg.aio.rank_snapshot(c, "aio", "read config") == expected

    asyncio.run(scenario())
