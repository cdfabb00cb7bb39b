"""Database errors, translated once into the errors a user can act on.

Every public library function that talks to the server is wrapped with
:func:`translated` (or runs inside :func:`database_errors`), so a Python caller and the
CLI see the same :class:`~riido_pg.errors.RiidoError` subclasses:

=====================================  ==============================  ====
psycopg error                          riido-pg error                  exit
=====================================  ==============================  ====
``QueryCanceled`` (statement timeout)  :class:`QueryTimeout`           1
``LockNotAvailable`` (lock timeout)    :class:`QueryTimeout`           1
``InsufficientPrivilege``              :class:`PermissionDenied`       1
``UndefinedTable``/``InvalidSchemaName``
on a ``riido`` object                  :class:`SchemaMissing`          1
``ReadOnlySqlTransaction`` (standby)   :class:`ReadOnlyServer`         1
``OperationalError`` (connection)      :class:`DatabaseUnavailable`    1
=====================================  ==============================  ====

Other database errors are bugs, not user errors, and pass through unchanged.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

import psycopg

from riido_pg.errors import (
    DatabaseUnavailable,
    PermissionDenied,
    QueryTimeout,
    ReadOnlyServer,
    RiidoError,
    SchemaMissing,
)
from riido_pg.redact import redact_dsn

__all__ = ["database_errors", "first_line", "translate", "translated"]

P = ParamSpec("P")
R = TypeVar("R")


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its class name when it has none)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def translate(exc: psycopg.Error) -> RiidoError | None:
    """The RiidoError a database error means for the user, or None for a bug."""
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return QueryTimeout(
            "statement ran past the statement timeout; raise RIIDO_PG_STATEMENT_TIMEOUT_MS "
            "(milliseconds) or narrow the work"
        )
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return QueryTimeout(
            "waited too long for a lock held by another session; try again, or raise "
            "RIIDO_PG_LOCK_TIMEOUT_MS"
        )
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return PermissionDenied(
            f"permission denied: {exc.diag.message_primary}; connect as a role that may do this"
        )
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return ReadOnlyServer(
            f"{exc.diag.message_primary}: the server is a read-only hot standby (or the "
            "transaction is read-only); send writes to the primary"
        )
    if isinstance(exc, psycopg.errors.UndefinedTable | psycopg.errors.InvalidSchemaName):
        message = exc.diag.message_primary or ""
        if "riido" in message:
            return SchemaMissing(
                f"the database has no riido schema ({message}): run `riido-pg db upgrade`"
            )
        return None
    if isinstance(exc, psycopg.OperationalError):
        return DatabaseUnavailable(f"lost the database connection: {redact_dsn(first_line(exc))}")
    return None


@contextmanager
def database_errors() -> Iterator[None]:
    """Raise the translated RiidoError for a database error inside the block (also
    when SQLAlchemy, under alembic, wrapped it: its ``orig`` is translated)."""
    try:
        yield
    except psycopg.Error as exc:
        mapped = translate(exc)
        if mapped is None:
            raise
        raise mapped from exc
    except Exception as exc:
        orig = getattr(exc, "orig", None)  # sqlalchemy.exc.DBAPIError, without importing it
        mapped = translate(orig) if isinstance(orig, psycopg.Error) else None
        if mapped is None:
            raise
        raise mapped from exc


def translated(func: Callable[P, R]) -> Callable[P, R]:
    """Decorate a public function so database errors leave it as RiidoErrors."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with database_errors():
            return func(*args, **kwargs)

    return wrapper
