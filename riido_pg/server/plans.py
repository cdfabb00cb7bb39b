"""I/O-free plans and the two drivers that run them (sync and asyncio).

A *plan* is a generator that yields what it wants the database to do — a
:class:`Query` (a statement whose rows it reads) or a :class:`Copy` (rows sent with
``COPY … FROM STDIN``) — and receives a :class:`Result`, or the database error the
operation raised (``plan.throw``), at its ``yield``. Everything else a plan does is
plain Python, so ranking and writing a scratch snapshot are written once and run
over a psycopg :class:`~psycopg.Connection` (:func:`run`) or an
:class:`~psycopg.AsyncConnection` (:func:`run_async`), as pgvector-python shares one
core between its sync and async registrations. A plan that wants a transaction
boundary asks for it in SQL (``SAVEPOINT``/``ROLLBACK TO SAVEPOINT``); the driver's
caller owns the transaction the plan runs in.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

import psycopg
from psycopg import sql

__all__ = [
    "Copy",
    "Operation",
    "Plan",
    "Query",
    "Result",
    "run",
    "run_async",
]

T = TypeVar("T")

Params: TypeAlias = Mapping[str, Any] | Sequence[Any] | None


@dataclass(frozen=True, slots=True)
class Query:
    """Run ``statement`` with ``params`` and fetch every row it returns."""

    statement: str | sql.SQL | sql.Composed
    params: Params = None
    #: Ask for binary results (bytea without hex decoding, arrays parsed natively).
    binary: bool = False


@dataclass(frozen=True, slots=True)
class Copy:
    """``COPY … FROM STDIN`` (``statement``) with ``rows``, one tuple per row."""

    statement: str | sql.SQL | sql.Composed
    rows: Iterable[Sequence[Any]]


Operation: TypeAlias = Query | Copy


@dataclass(frozen=True, slots=True)
class Result:
    """What an operation returned: its rows, and the notices the server sent."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def one(self) -> tuple[Any, ...]:
        """The single row (a statement that always returns one)."""
        if len(self.rows) != 1:
            raise RuntimeError(f"expected one row, got {len(self.rows)}")
        return self.rows[0]


#: A plan returning ``T``.
Plan: TypeAlias = Generator[Operation, Result, T]


def _step(plan: Plan[T], reply: Result | BaseException | None) -> tuple[Operation | None, T | None]:
    """The plan's next operation, or (None, its value) when it is done."""
    try:
        if isinstance(reply, BaseException):
            return plan.throw(reply), None
        return plan.send(reply), None  # type: ignore[arg-type]  # None starts it
    except StopIteration as done:
        return None, done.value


def run(conn: psycopg.Connection[Any], plan: Plan[T]) -> T:
    """Run ``plan`` on a sync connection (inside whatever transaction it is in)."""
    notices: list[str] = []

    def heard(diag: psycopg.errors.Diagnostic) -> None:
        if diag.message_primary:
            notices.append(diag.message_primary)

    conn.add_notice_handler(heard)
    try:
        reply: Result | BaseException | None = None
        while True:
            op, value = _step(plan, reply)
            if op is None:
                return value  # type: ignore[return-value]
            notices.clear()
            try:
                if isinstance(op, Copy):
                    with conn.cursor().copy(op.statement) as cp:
                        for row in op.rows:
                            cp.write_row(row)
                    reply = Result([], list(notices))
                else:
                    cur = conn.execute(op.statement, op.params, binary=op.binary)
                    rows = cur.fetchall() if cur.description is not None else []
                    reply = Result(rows, list(notices))
            except psycopg.Error as exc:
                reply = exc
    finally:
        conn.remove_notice_handler(heard)


async def run_async(conn: psycopg.AsyncConnection[Any], plan: Plan[T]) -> T:
    """Run ``plan`` on an asyncio connection (inside whatever transaction it is in)."""
    notices: list[str] = []

    def heard(diag: psycopg.errors.Diagnostic) -> None:
        if diag.message_primary:
            notices.append(diag.message_primary)

    conn.add_notice_handler(heard)
    try:
        reply: Result | BaseException | None = None
        while True:
            op, value = _step(plan, reply)
            if op is None:
                return value  # type: ignore[return-value]
            notices.clear()
            try:
                if isinstance(op, Copy):
                    async with conn.cursor().copy(op.statement) as cp:
                        for row in op.rows:
                            await cp.write_row(row)
                    reply = Result([], list(notices))
                else:
                    cur = await conn.execute(op.statement, op.params, binary=op.binary)
                    rows = await cur.fetchall() if cur.description is not None else []
                    reply = Result(rows, list(notices))
            except psycopg.Error as exc:
                reply = exc
    finally:
        conn.remove_notice_handler(heard)
