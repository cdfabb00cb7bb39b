"""One boundary for both drivers: the connection-state decision
(:func:`riido_pg.server.errors.decide`) is one function without I/O, checked here on
every state against the table in :mod:`riido_pg.server.errors`; the sync API and
:mod:`riido_pg.aio` run it, so a connection in any state meets the same answer (the
same error, worded the same, or the same ranking, the connection left alike) on
both."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from psycopg.pq import TransactionStatus
from support.database import Database

import riido_pg
import riido_pg.aio
from riido_pg import Document
from riido_pg.errors import (
    DatabaseUnavailable,
    RiidoError,
    TransactionFailed,
    TransactionInProgress,
)
from riido_pg.server.errors import Decision, Use, decide, restores

STATES = list(
    itertools.product(
        [False, True],  # closed
        list(TransactionStatus),
        [False, True],  # autocommit
        [False, True],  # sqlalchemy
        [None, "a parallel load (jobs=2)"],  # commits
    )
)


@pytest.mark.parametrize(("closed", "status", "autocommit", "sqlalchemy", "commits"), STATES)
def test_the_decision_on_every_connection_state(
    closed: bool,
    status: TransactionStatus,
    autocommit: bool,
    sqlalchemy: bool,
    commits: str | None,
) -> None:
    def decided() -> Decision:
        return decide(
            closed=closed,
            status=status,
            autocommit=autocommit,
            sqlalchemy=sqlalchemy,
            commits=commits,
        )

    if closed:
        with pytest.raises(DatabaseUnavailable, match="closed"):
            decided()
    elif status == TransactionStatus.INERROR:
        with pytest.raises(TransactionFailed, match="has failed; nothing was done"):
            decided()
    elif status == TransactionStatus.ACTIVE:
        with pytest.raises(TransactionFailed, match="busy"):
            decided()
    elif status == TransactionStatus.UNKNOWN:
        with pytest.raises(DatabaseUnavailable, match="lost"):
            decided()
    elif status == TransactionStatus.INTRANS or (sqlalchemy and not autocommit):
        if commits:
            with pytest.raises(TransactionInProgress, match=r"^a parallel load \(jobs=2\) commits"):
                decided()
        else:
            # SQLAlchemy's begun transaction is started on the server first
            assert decided() == Decision(Use.SAVEPOINT, begin=status == TransactionStatus.IDLE)
    else:
        assert status == TransactionStatus.IDLE
        assert decided() == Decision(Use.AS_IS if autocommit else Use.AUTOCOMMIT)


@pytest.mark.parametrize("status", list(TransactionStatus))
@pytest.mark.parametrize("closed", [False, True])
def test_autocommit_is_turned_off_again_only_on_an_open_idle_connection(
    closed: bool, status: TransactionStatus
) -> None:
    assert restores(closed=closed, status=status) == (
        not closed and status == TransactionStatus.IDLE
    )


DOCS = [Document("a", "read the config"), Document("b", "func ReadConfig() {}")]

#: A connection state a caller can leave a connection in, made the same way on a sync
#: and an asyncio connection (``SELECT 1``: in a transaction; ``SELECT 1/0``: failed).
KINDS = ["autocommit", "idle", "transaction", "failed", "closed"]


def _outcome(call: Callable[[], Any]) -> tuple[str, str]:
    try:
        ranking = call()
    except RiidoError as exc:
        return type(exc).__name__, str(exc)
    return "ranked", ",".join(c.id for c in ranking.candidates)


def _sync(dsn: str, kind: str) -> tuple[tuple[str, str], tuple[bool, TransactionStatus]]:
    conn = psycopg.connect(dsn, autocommit=kind == "autocommit")
    try:
        if kind == "transaction":
            conn.execute("SELECT 1")
        elif kind == "failed":
            with pytest.raises(psycopg.errors.DivisionByZero):
                conn.execute("SELECT 1/0")
        elif kind == "closed":
            conn.close()
        got = _outcome(lambda: riido_pg.rank_snapshot(conn, "boundary", "read config"))
        return got, (conn.autocommit, conn.info.transaction_status)
    finally:
        conn.close()


def _async(dsn: str, kind: str) -> tuple[tuple[str, str], tuple[bool, TransactionStatus]]:
    async def scenario() -> tuple[tuple[str, str], tuple[bool, TransactionStatus]]:
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=kind == "autocommit")
        try:
            if kind == "transaction":
                await conn.execute("SELECT 1")
            elif kind == "failed":
                with pytest.raises(psycopg.errors.DivisionByZero):
                    await conn.execute("SELECT 1/0")
            elif kind == "closed":
                await conn.close()
            try:
                ranking = await riido_pg.aio.rank_snapshot(conn, "boundary", "read config")
                got = ("ranked", ",".join(c.id for c in ranking.candidates))
            except RiidoError as exc:
                got = (type(exc).__name__, str(exc))
            return got, (conn.autocommit, conn.info.transaction_status)
        finally:
            await conn.close()

    return asyncio.run(scenario())


@pytest.fixture(scope="module")
def loaded(db: Database) -> Database:
    with db.connect() as conn:
        riido_pg.load_snapshot(conn, "boundary", DOCS, fresh=True)
    return db


@pytest.mark.parametrize("kind", KINDS)
def test_both_drivers_meet_a_connection_alike(loaded: Database, kind: str) -> None:
    sync = _sync(loaded.dsn, kind)
    assert _async(loaded.dsn, kind) == sync
    outcome, left = sync
    expected = {
        "autocommit": ("ranked", (True, TransactionStatus.IDLE)),
        "idle": ("ranked", (False, TransactionStatus.IDLE)),
        "transaction": ("ranked", (False, TransactionStatus.INTRANS)),
        "failed": ("TransactionFailed", (False, TransactionStatus.INERROR)),
        "closed": ("DatabaseUnavailable", None),
    }[kind]
    assert outcome[0] == expected[0]
    if expected[1] is not None:
        assert left == expected[1]


def test_an_asyncio_call_on_a_connection_busy_with_a_statement_is_refused(
    loaded: Database,
) -> None:
    """The caller's own statement in flight on the connection (not one of riido-pg's
    calls, which wait for each other): refused as the sync API refuses it."""

    async def scenario() -> str:
        async with await psycopg.AsyncConnection.connect(loaded.dsn, autocommit=True) as conn:
            await conn.execute("SELECT 1")
            conn.pgconn.send_query(b"SELECT pg_sleep(0.2)")  # in flight, not awaited
            try:
                await riido_pg.aio.rank_snapshot(conn, "boundary", "read config")
            except TransactionFailed as exc:
                return str(exc)
            finally:
                while conn.pgconn.get_result() is not None:
                    pass
            return "ranked"

    assert "busy with another statement" in asyncio.run(scenario())
