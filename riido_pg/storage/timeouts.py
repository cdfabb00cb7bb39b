"""A load's statement timeout, apart from the query timeout (README "Limits and
guarantees": loads are bounded by their input, queries by ``statement_timeout``), and
its ``work_mem`` for the statements that sort or hash every document."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress

import psycopg

from riido_pg import config
from riido_pg.server.connect import Conn

__all__ = ["load_session_timeout", "load_timeout", "load_timeout_ms", "load_work_mem"]


def load_timeout_ms() -> int:
    """A load's statement timeout: ``RIIDO_PG_LOAD_TIMEOUT_MS``, default 0 (none)."""
    return config.load_timeout_ms()


@contextmanager
def _load_statement_timeout(conn: Conn, *, local: bool) -> Iterator[None]:
    """The load timeout for the block: for the current transaction (``local``) or for
    the session; the statement timeout before it is back after the block, when the
    connection is still where the block began (in that transaction, or idle)."""
    row = conn.execute("SHOW statement_timeout").fetchone()
    before = str(row[0]) if row else "0"
    set_to = "SELECT set_config('statement_timeout', %s, %s)"
    conn.execute(set_to, (str(load_timeout_ms()), local))
    try:
        yield
    finally:
        status = psycopg.pq.TransactionStatus
        if conn.info.transaction_status == (status.INTRANS if local else status.IDLE):
            with nullcontext() if local else suppress(psycopg.Error):
                conn.execute(set_to, (before, local))


def load_session_timeout(conn: Conn) -> AbstractContextManager[None]:
    """Outside a transaction: :func:`load_timeout` for every statement of the block,
    on a session a load commits several transactions in (a parallel load); the
    session's statement timeout is back after the block."""
    return _load_statement_timeout(conn, local=False)


def load_timeout(conn: Conn) -> AbstractContextManager[None]:
    """Inside a transaction: for the block, loads are bounded by their input, not by
    the query statement timeout; ``RIIDO_PG_LOAD_TIMEOUT_MS`` (default 0, no limit)
    applies instead. The session's statement timeout is back after the block."""
    return _load_statement_timeout(conn, local=True)


def load_work_mem(conn: Conn) -> None:
    """Raise work_mem for the rest of the current transaction (a load's): a column's
    postings hold every lexeme's arrays in a hash aggregate, and the content digest
    sorts and groups every staged id; under the 4 MB default both spill to disk
    (``RIIDO_PG_LOAD_WORK_MEM``, default :data:`riido_pg.config.DEFAULT_LOAD_WORK_MEM`)."""
    conn.execute("SELECT set_config('work_mem', %s, true)", (config.load_work_mem(),))
