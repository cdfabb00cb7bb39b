"""The library's public boundary: connections taken as given, errors translated once.

Every public function that takes a connection is decorated with :func:`translated`
(the :class:`riido_pg.Database` façade's methods enter :func:`boundary` themselves).
At that boundary, and nowhere else:

1. **Conversion.** A SQLAlchemy ``Connection`` or ``Session`` (psycopg 3 dialect)
   becomes its psycopg connection; a shard ``Router`` is checked through its
   coordinator's connection.
2. **Connection state** (README "Python API"):

   ==========================================  ====================================
   the caller's connection                     the call
   ==========================================  ====================================
   autocommit, idle                            runs as is (its own transactions)
   not autocommit, idle                        runs in autocommit, which is then
                                               turned off again: its work is
                                               committed when it returns
   inside a transaction, or a SQLAlchemy       runs inside that transaction, in a
   connection or session                       savepoint: its work commits with
                                               the caller's, and an error undoes
                                               it and leaves the transaction usable
   ... and the operation commits on its own    :class:`TransactionInProgress`,
   (a parallel load, a move)                   before anything is done
   in a failed transaction, or busy            :class:`TransactionFailed`
   closed                                      :class:`DatabaseUnavailable`
   ==========================================  ====================================

   The decision is :func:`decide`, one function without I/O that both drivers run:
   the sync boundary and the asyncio one (:func:`async_session`, under
   :mod:`riido_pg.aio`) read the connection's state, call it, and do what it says,
   as httpx's ``BaseClient`` and pgvector-python's ``register`` share one core
   between their sync and async shells. A read (a ranking, an evaluation) then runs
   in :func:`read_transaction` (:func:`async_read_transaction`): one statement,
   :data:`READ_ONLY`, sets it up on both; a read that is one statement (a ranking
   by ``riido.search_ranked``) runs in :func:`one_statement`
   (:func:`async_one_statement`): as it is on an idle autocommit connection, in a
   savepoint inside the caller's transaction.

3. **Translation.** Every database error (psycopg's, or SQLAlchemy's wrapping one,
   under alembic) leaves as a :class:`~riido_pg.errors.RiidoError`:

   =====================================  ==============================
   psycopg error                          riido-pg error
   =====================================  ==============================
   ``QueryCanceled`` (statement timeout)  :class:`QueryTimeout`
   ``LockNotAvailable`` (lock timeout)    :class:`QueryTimeout`
   ``InsufficientPrivilege``              :class:`PermissionDenied`
   ``UndefinedTable``/``InvalidSchemaName``
   on a ``riido`` object                  :class:`SchemaMissing`
   ``ReadOnlySqlTransaction`` (standby)   :class:`ReadOnlyServer`
   ``OperationalError`` (connection)      :class:`DatabaseUnavailable`
   any other                              :class:`DatabaseError`
   =====================================  ==============================

A public function called by another on the same connection (``get_snapshot`` inside
``rank_snapshot``) passes through: the outermost call alone converts, checks and
translates, so code between them still sees the driver's exceptions it handles.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    ParamSpec,
    Protocol,
    TypeAlias,
    TypeVar,
    overload,
)

import psycopg
from psycopg.pq import TransactionStatus

from riido_pg.errors import (
    DatabaseError,
    DatabaseUnavailable,
    Hint,
    InvalidInput,
    PermissionDenied,
    QueryTimeout,
    ReadOnlyServer,
    RiidoError,
    SchemaMissing,
    TransactionFailed,
    TransactionInProgress,
)
from riido_pg.redact import redact_dsn
from riido_pg.server.plans import Plan, Query, run, run_async

__all__ = [
    "READ_ONLY",
    "Commits",
    "Connectable",
    "Decision",
    "Use",
    "async_one_statement",
    "async_psycopg_connection",
    "async_read_transaction",
    "async_session",
    "boundary",
    "database_errors",
    "decide",
    "first_line",
    "one_statement",
    "parallel",
    "psycopg_connection",
    "read_plan",
    "read_transaction",
    "restores",
    "translate",
    "translated",
]

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection as SAConnection
    from sqlalchemy.orm import Session

P = ParamSpec("P")
R = TypeVar("R")
Conn: TypeAlias = psycopg.Connection[Any]
AsyncConn: TypeAlias = psycopg.AsyncConnection[Any]
#: What a public function accepts where it needs a connection.
Connectable: TypeAlias = "psycopg.Connection[Any] | SAConnection | Session"

#: What makes an operation commit on its own (so it cannot run inside the caller's
#: transaction): a description ("moving a snapshot"), or a function of the call's
#: arguments giving one or None (a load with ``jobs`` > 1).
Commits = str | Callable[[inspect.BoundArguments], str | None] | None

#: The connections a public call is running on in this thread (by id).
_ACTIVE: ContextVar[tuple[int, ...]] = ContextVar("riido_pg_active", default=())


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its class name when it has none)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def translate(exc: psycopg.Error) -> RiidoError:
    """The RiidoError a database error means for the user."""
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return QueryTimeout(
            "statement ran past the statement timeout",
            Hint(
                "raise RIIDO_PG_STATEMENT_TIMEOUT_MS (milliseconds) or narrow the work",
                "raise the session's statement_timeout or narrow the work",
            ),
        )
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return QueryTimeout(
            "waited too long for a lock held by another session",
            Hint(
                "try again, or raise RIIDO_PG_LOCK_TIMEOUT_MS",
                "try again, or raise the session's lock_timeout",
            ),
        )
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        message = exc.diag.message_primary or ""
        if "advisory" in message:  # `db grant-reader` keeps them for the roles that write
            return PermissionDenied(
                f"permission denied: {message}: only the roles that write riido may take "
                "advisory locks here",
                Hint.same(
                    "connect as one (a role made a writer after `riido-pg db grant-reader` "
                    "ran gets them when a superuser runs it again)"
                ),
            )
        return PermissionDenied(f"permission denied: {message}; connect as a role that may do this")
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return ReadOnlyServer(
            f"{exc.diag.message_primary}: the server is a read-only hot standby (or the "
            "transaction is read-only); send writes to the primary"
        )
    if isinstance(exc, psycopg.errors.UndefinedTable | psycopg.errors.InvalidSchemaName):
        message = exc.diag.message_primary or ""
        if "riido" in message:
            return SchemaMissing(
                f"the database has no riido schema ({message})",
                Hint("run `riido-pg db upgrade`", "create it with `riido-pg --dsn URL db upgrade`"),
            )
    if isinstance(exc, psycopg.OperationalError):
        return DatabaseUnavailable(f"lost the database connection: {redact_dsn(first_line(exc))}")
    return DatabaseError(
        f"database error: {first_line(exc)}", Hint(cli="rerun with --debug for details")
    )


@contextmanager
def database_errors() -> Iterator[None]:
    """Raise the translated RiidoError for a database error inside the block (also
    when SQLAlchemy, under alembic, wrapped it: its ``orig`` is translated)."""
    try:
        yield
    except RiidoError:
        raise
    except psycopg.Error as exc:
        raise translate(exc) from exc
    except Exception as exc:
        orig = getattr(exc, "orig", None)  # sqlalchemy.exc.DBAPIError, without importing it
        if isinstance(orig, psycopg.Error):
            raise translate(orig) from exc
        raise


def psycopg_connection(target: object) -> Conn | None:
    """The psycopg connection behind ``target``: itself, a SQLAlchemy ``Connection``'s
    or ``Session``'s (whose transaction is begun, for the caller to commit), a
    ``Router``'s coordinator; None for anything else."""
    if isinstance(target, psycopg.Connection):
        return target
    if _is_sqlalchemy(target):
        return _from_sqlalchemy(target)
    coordinator = getattr(target, "coordinator", None)  # riido_pg.shards.Router
    return coordinator if isinstance(coordinator, psycopg.Connection) else None


def parallel(call: inspect.BoundArguments) -> str | None:
    """``commits`` of a load: a parallel one (``jobs`` > 1) commits on its own."""
    jobs = call.arguments.get("jobs", 1)
    return f"a parallel load (jobs={jobs})" if isinstance(jobs, int) and jobs > 1 else None


def _is_sqlalchemy(target: object) -> bool:
    return type(target).__module__.startswith("sqlalchemy.")


def _other_driver() -> InvalidInput:
    return InvalidInput(
        "riido-pg needs a psycopg 3 connection; this SQLAlchemy connection has another driver",
        Hint(python="create its engine with a postgresql+psycopg:// URL"),
    )


def _is_async_sqlalchemy(target: object) -> bool:
    return type(target).__module__.startswith("sqlalchemy.ext.asyncio")


def _from_sqlalchemy(target: object) -> Conn:
    if _is_async_sqlalchemy(target):
        raise InvalidInput(
            "an asyncio SQLAlchemy connection cannot run riido-pg's synchronous functions",
            Hint(python="rank with riido_pg.aio, or pass a synchronous Connection or Session"),
        )
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Session

    sa = target.connection() if isinstance(target, Session) else target
    raw = sa.connection.dbapi_connection if isinstance(sa, Connection) else None
    if not isinstance(raw, psycopg.Connection):
        raise _other_driver()
    assert isinstance(sa, Connection)
    if not sa.in_transaction():
        sa.begin()  # so the caller's commit() commits what riido-pg writes
    return raw


async def async_psycopg_connection(target: object) -> AsyncConn:
    """The psycopg connection behind ``target`` for :mod:`riido_pg.aio`: itself, or a
    SQLAlchemy ``AsyncConnection``'s or ``AsyncSession``'s (its transaction begun, for
    the caller to commit); InvalidInput for anything else."""
    if isinstance(target, psycopg.AsyncConnection):
        return target
    if _is_async_sqlalchemy(target):
        from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

        sa = await target.connection() if isinstance(target, AsyncSession) else target
        if isinstance(sa, AsyncConnection):
            if not sa.in_transaction():
                await sa.begin()
            raw = (await sa.get_raw_connection()).driver_connection
            if isinstance(raw, psycopg.AsyncConnection):
                return raw
        raise _other_driver()
    raise InvalidInput(
        f"expected a psycopg AsyncConnection or a SQLAlchemy AsyncConnection or AsyncSession, "
        f"not {type(target).__name__}"
    )


class Use(Enum):
    """How a call uses the caller's connection (the table in the module docstring)."""

    #: Autocommit and idle: the call runs as is, in transactions of its own.
    AS_IS = "as is"
    #: Idle, not autocommit: the call runs in autocommit, turned off again after.
    AUTOCOMMIT = "autocommit"
    #: Inside the caller's transaction (or a SQLAlchemy one): in a savepoint of it.
    SAVEPOINT = "savepoint"


@dataclass(frozen=True, slots=True)
class Decision:
    """What the boundary does with a connection before a call (:func:`decide`)."""

    use: Use
    #: The transaction SQLAlchemy began is not started on the server yet (psycopg
    #: starts it with the first statement): start it, so the savepoint is inside it.
    begin: bool = False


def decide(
    *,
    closed: bool,
    status: TransactionStatus,
    autocommit: bool,
    sqlalchemy: bool,
    commits: str | None,
) -> Decision:
    """The connection-state decision both drivers take (no I/O: the sync and the
    asyncio boundary read the state, call this, then do what it says), or the
    RiidoError the connection is unusable with. ``commits`` says what commits on its
    own (None: nothing)."""
    if closed:
        raise DatabaseUnavailable("the connection is closed")
    if status == TransactionStatus.INERROR:
        raise TransactionFailed(
            "the connection's transaction has failed; nothing was done",
            Hint(python="roll it back first (conn.rollback())"),
        )
    if status == TransactionStatus.ACTIVE:
        raise TransactionFailed(
            "the connection is busy with another statement; nothing was done",
            Hint(python="wait for it, or use another connection"),
        )
    if status == TransactionStatus.UNKNOWN:
        raise DatabaseUnavailable("lost the database connection")
    if status == TransactionStatus.INTRANS or (sqlalchemy and not autocommit):
        if commits:
            raise TransactionInProgress(
                f"{commits} commits on its own, so it cannot run inside the caller's "
                "transaction; nothing was done",
                Hint(python="call it on an autocommit connection, outside a transaction"),
            )
        return Decision(Use.SAVEPOINT, begin=status == TransactionStatus.IDLE)
    return Decision(Use.AS_IS if autocommit else Use.AUTOCOMMIT)


def restores(*, closed: bool, status: TransactionStatus) -> bool:
    """After a call the boundary ran in autocommit (:attr:`Use.AUTOCOMMIT`): whether
    it can turn autocommit off again (the connection is open and idle)."""
    return not closed and status == TransactionStatus.IDLE


def _decide(conn: Conn | AsyncConn, sqlalchemy: bool, commits: str | None) -> Decision:
    return decide(
        closed=conn.closed,
        status=conn.info.transaction_status,
        autocommit=conn.autocommit,
        sqlalchemy=sqlalchemy,
        commits=commits,
    )


#: The statement that starts the call's own transaction when it begins one.
BEGIN = "SELECT 1"


@contextmanager
def _session(conn: Conn, sqlalchemy: bool, commits: str | None) -> Iterator[None]:
    """Run the block on ``conn`` as :func:`decide` says (the sync shell)."""
    decision = _decide(conn, sqlalchemy, commits)
    if decision.begin:
        conn.execute(BEGIN)
    if decision.use is Use.SAVEPOINT:
        with conn.transaction():
            yield
        return
    if decision.use is Use.AS_IS:
        yield
        return
    conn.autocommit = True
    try:
        yield
    finally:
        if restores(closed=conn.closed, status=conn.info.transaction_status):
            with suppress(psycopg.Error):
                conn.autocommit = False


@asynccontextmanager
async def async_session(conn: AsyncConn, sqlalchemy: bool) -> AsyncIterator[None]:
    """Run the block on an asyncio connection as :func:`decide` says (the asyncio
    shell of :func:`_session`; nothing asynchronous commits on its own), database
    errors translated."""
    with database_errors():
        decision = _decide(conn, sqlalchemy, None)
        if decision.begin:
            await conn.execute(BEGIN)
        if decision.use is Use.SAVEPOINT:
            async with conn.transaction():
                yield
            return
        if decision.use is Use.AS_IS:
            yield
            return
        await conn.set_autocommit(True)
        try:
            yield
        finally:
            if restores(closed=conn.closed, status=conn.info.transaction_status):
                with suppress(psycopg.Error):
                    await conn.set_autocommit(False)


@contextmanager
def boundary(target: object, *, commits: str | None = None) -> Iterator[Conn | None]:
    """The public boundary around a call on ``target`` (a connection, a SQLAlchemy
    connection or session, a router; anything else is only translated): yields the
    psycopg connection to work on (None when ``target`` is none of those)."""
    conn = psycopg_connection(target)
    if conn is not None and id(conn) in _ACTIVE.get():
        yield conn  # a nested call: the outermost one converts, checks and translates
        return
    with database_errors():
        if conn is None:
            yield None
            return
        sqlalchemy = _is_sqlalchemy(target)
        token = _ACTIVE.set((*_ACTIVE.get(), id(conn)))
        try:
            with _session(conn, sqlalchemy, commits):
                yield conn
        finally:
            _ACTIVE.reset(token)


class _Decorator(Protocol):
    @overload
    def __call__(
        self, func: Callable[Concatenate[Conn, P], R], /
    ) -> Callable[Concatenate[Connectable, P], R]: ...
    @overload
    def __call__(self, func: Callable[P, R], /) -> Callable[P, R]: ...


@overload
def translated(
    func: Callable[Concatenate[Conn, P], R], /
) -> Callable[Concatenate[Connectable, P], R]: ...
@overload
def translated(func: Callable[P, R], /) -> Callable[P, R]: ...
@overload
def translated(*, commits: Commits = None) -> _Decorator: ...
def translated(func: Callable[..., Any] | None = None, /, *, commits: Commits = None) -> Any:
    """Decorate a public function whose first argument is a connection (or a router):
    it runs inside :func:`boundary`, a SQLAlchemy connection or session replaced by its
    psycopg connection. ``commits`` says when the operation commits on its own."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(f) if callable(commits) else None

        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            why = commits
            if callable(why):
                assert signature is not None
                why = why(signature.bind(*args, **kwargs))
            target = args[0] if args else None
            with boundary(target, commits=why) as conn:
                if conn is not None and _is_sqlalchemy(target):
                    args = (conn, *args[1:])
                return f(*args, **kwargs)

        return wrapper

    return decorate if func is None else decorate(func)


#: Every read of a ranking or an evaluation sees one snapshot of the database.
READ_ONLY = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"


def read_plan(outermost: bool) -> Plan[None]:
    """The start of a read transaction: read-only repeatable read when it is the
    outermost one (inside the caller's, it is a savepoint reading what that sees)."""
    if outermost:
        yield Query(READ_ONLY)


@contextmanager
def read_transaction(conn: Conn) -> Iterator[None]:
    """One read-only repeatable-read transaction for the block, so every statement
    sees the same data; inside the caller's transaction, the block is a savepoint of
    it (and reads what that transaction sees)."""
    outermost = conn.info.transaction_status == TransactionStatus.IDLE
    with conn.transaction():
        run(conn, read_plan(outermost))
        yield


@asynccontextmanager
async def async_read_transaction(conn: AsyncConn) -> AsyncIterator[None]:
    """:func:`read_transaction` on an asyncio connection."""
    outermost = conn.info.transaction_status == TransactionStatus.IDLE
    async with conn.transaction():
        await run_async(conn, read_plan(outermost))
        yield


def _bare(conn: Conn | AsyncConn) -> bool:
    """Whether a statement on ``conn`` is a transaction of its own (autocommit, idle)."""
    return conn.autocommit and conn.info.transaction_status == TransactionStatus.IDLE


@contextmanager
def one_statement(conn: Conn) -> Iterator[None]:
    """Where a read of ONE statement runs: on an idle autocommit connection, as it is
    (the statement is its own transaction and sees one snapshot of the data, as
    :func:`read_transaction`'s statements together do); inside the caller's
    transaction, in a savepoint of it, so an error leaves that transaction usable."""
    if _bare(conn):
        yield
        return
    with conn.transaction():
        yield


@asynccontextmanager
async def async_one_statement(conn: AsyncConn) -> AsyncIterator[None]:
    """:func:`one_statement` on an asyncio connection."""
    if _bare(conn):
        yield
        return
    async with conn.transaction():
        yield
