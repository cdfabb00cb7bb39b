"""Bringing a session back to idle after an interrupt.

psycopg cancels the statement a KeyboardInterrupt (Ctrl-C, or SIGTERM in the CLI)
lands in while it waits for the server. An interrupt can also land in the few Python
steps between sending a statement and waiting for it; then the statement stays in
flight and every later command on the session fails with "another command is
already in progress", so a load could neither remove what it wrote nor release its
locks. :func:`settle` cancels such a statement and reads its results away; when it
cannot (the server does not answer), it closes the session, which ends the
statement, the transaction and the session's locks on the server.
"""

from __future__ import annotations

import select
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import psycopg
from psycopg.pq import ExecStatus, TransactionStatus

from riido_pg.server.connect import Conn

__all__ = ["releasing", "settle"]


def settle(conn: Conn, *, timeout: float = 10.0) -> None:
    """Leave no statement in flight on ``conn``: idle (or in a failed transaction,
    for the caller to roll back), or closed."""
    if conn.closed or conn.broken:
        return
    if conn.pgconn.transaction_status != TransactionStatus.ACTIVE:
        return
    with suppress(Exception):  # whatever fails here, closing is the answer
        if _drain(conn, time.monotonic() + timeout):
            return
    conn.close()


def _cancel(conn: Conn) -> None:
    with suppress(psycopg.Error):
        conn.cancel_safe(timeout=2.0)


def _drain(conn: Conn, deadline: float) -> bool:
    """Cancel the in-flight statement and read its results away (ending a COPY); True
    once idle. The cancel is sent again each second the statement still runs: one
    that reaches the server before the statement does is lost."""
    pg = conn.pgconn
    _cancel(conn)
    cancelled = time.monotonic()
    while time.monotonic() < deadline:
        pg.consume_input()
        if pg.is_busy():
            if time.monotonic() - cancelled > 1.0:
                _cancel(conn)
                cancelled = time.monotonic()
            select.select([pg.socket], [], [], 0.1)
            continue
        result = pg.get_result()
        if result is None:
            return True
        if result.status == ExecStatus.COPY_IN:
            pg.put_copy_end(b"interrupted")
            while pg.flush() > 0:
                select.select([], [pg.socket], [], 0.1)
        elif result.status == ExecStatus.COPY_OUT:
            while pg.get_copy_data(0)[0] > 0:
                pass
    return False


@contextmanager
def releasing(conn: Conn, query: str, params: tuple[object, ...]) -> Iterator[None]:
    """Run ``query`` (a session lock's release) when the block ends. When the block
    fails (an exception on its way out, an interrupt perhaps with a statement still in
    flight), settle the session first and let nothing raised by the release replace
    that exception."""
    try:
        yield
    except BaseException:
        settle(conn)
        if not conn.closed and not conn.broken:
            with suppress(psycopg.Error):
                conn.execute(query, params)
        raise
    if not conn.closed and not conn.broken:
        conn.execute(query, params)
