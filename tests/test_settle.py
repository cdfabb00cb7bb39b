"""A session an interrupt left with a statement in flight comes back to idle
(riido_pg.server.settle): the statement is cancelled and its results read away, a
COPY is ended, and a load's locks are released while the interrupt keeps going up,
so a Ctrl-C at any moment of a load cleans up instead of failing with "another
command is already in progress". The in-flight statement is sent through libpq
directly, as psycopg leaves it when the interrupt lands between sending and
waiting."""

from __future__ import annotations

import time

import psycopg
import pytest
from support.database import Database

from riido_pg.server.settle import settle
from riido_pg.storage.snapshots import snapshot_lock
from riido_pg.storage.texts import texts_shared

IDLE = psycopg.pq.TransactionStatus.IDLE


def _in_flight(conn: psycopg.Connection[object], query: bytes) -> None:
    conn.pgconn.send_query(query)
    with pytest.raises(psycopg.OperationalError, match="another command is already in progress"):
        conn.execute("SELECT 1")


def test_a_running_statement_is_cancelled_and_the_session_is_usable(db: Database) -> None:
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        _in_flight(conn, b"SELECT pg_sleep(60)")
        started = time.monotonic()
        settle(conn)
        assert time.monotonic() - started < 10  # cancelled, not waited for
        assert not conn.closed
        assert conn.info.transaction_status == IDLE
        assert conn.execute("SELECT 41 + 1").fetchone() == (42,)


def test_a_finished_statement_s_results_are_read_away(db: Database) -> None:
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        _in_flight(conn, b"SELECT g FROM generate_series(1, 100000) AS g")
        settle(conn)
        assert conn.execute("SELECT 'next'").fetchone() == ("next",)


def test_a_copy_in_flight_is_ended_and_stores_nothing(db: Database) -> None:
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        before = db.count("text_pending")
        _in_flight(conn, b"COPY riido.text_pending FROM STDIN")
        settle(conn)
        assert conn.info.transaction_status == IDLE
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert db.count("text_pending") == before


def test_an_idle_session_is_left_alone(db: Database) -> None:
    with psycopg.connect(db.dsn) as conn:
        conn.execute("SELECT 1")  # a transaction open, nothing in flight
        settle(conn)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        conn.rollback()


@pytest.mark.parametrize("lock", ["snapshot", "texts"])
def test_an_interrupt_with_a_statement_in_flight_releases_the_lock(db: Database, lock: str) -> None:
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        block = snapshot_lock(conn, "interrupted") if lock == "snapshot" else texts_shared(conn)
        with pytest.raises(KeyboardInterrupt), block:
            conn.pgconn.send_query(b"SELECT pg_sleep(60)")
            raise KeyboardInterrupt  # the interrupt goes on up, nothing replaces it
        assert not conn.closed
        held = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
        ).fetchone()
        assert held == (0,)
