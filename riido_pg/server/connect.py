"""Choosing and opening the database (README "Database selection").

``--dsn``/``RIIDO_PG_DSN`` name a server; otherwise the embedded default is started
and migrated automatically. A named server must already have the current schema.
"""

from __future__ import annotations

import os
from typing import Any, TypeAlias

import psycopg

from riido_pg.errors import DatabaseUnavailable, InvalidDsn, SchemaMissing
from riido_pg.server.errors import first_line, translated

__all__ = [
    "DEFAULT_LOCK_TIMEOUT_MS",
    "DEFAULT_STATEMENT_TIMEOUT_MS",
    "SCHEMA_REVISION",
    "Conn",
    "check_schema",
    "connect",
    "resolve_dsn",
]

#: A connection as riido-pg uses it (the row type is whatever the caller's factory gives).
Conn: TypeAlias = psycopg.Connection[Any]

#: The schema revision this version of riido-pg needs (tests check it is alembic's head).
SCHEMA_REVISION = "0008"
#: Default statement timeout for queries (``RIIDO_PG_STATEMENT_TIMEOUT_MS`` overrides).
DEFAULT_STATEMENT_TIMEOUT_MS = 60_000
#: Default lock timeout, so no command waits long behind another's lock.
DEFAULT_LOCK_TIMEOUT_MS = 5_000


def resolve_dsn(dsn: str | None) -> tuple[str, bool]:
    """The DSN to use and whether it is the embedded default."""
    if dsn:
        return dsn, False
    env = os.environ.get("RIIDO_PG_DSN")
    if env:
        return env, False
    from riido_pg.server.embedded import embedded_dsn

    return embedded_dsn(), True


def _timeout(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        return max(0, int(value))
    except ValueError as exc:
        raise DatabaseUnavailable(f"{name} must be a whole number of milliseconds") from exc


def connect(dsn: str | None = None, *, migrate: bool = True) -> Conn:
    """Open an autocommit connection to the chosen server and check its schema.

    The embedded server is migrated automatically when ``migrate`` is true; a named
    server with a missing or old schema raises :class:`SchemaMissing`.
    """
    url, embedded = resolve_dsn(dsn)
    statement_ms = _timeout("RIIDO_PG_STATEMENT_TIMEOUT_MS", DEFAULT_STATEMENT_TIMEOUT_MS)
    lock_ms = _timeout("RIIDO_PG_LOCK_TIMEOUT_MS", DEFAULT_LOCK_TIMEOUT_MS)
    try:
        conn = psycopg.connect(
            url,
            autocommit=True,
            connect_timeout=10,
            application_name="riido-pg",
            options=f"-c statement_timeout={statement_ms} -c lock_timeout={lock_ms}",
        )
    except psycopg.ProgrammingError as exc:  # the DSN does not parse
        raise InvalidDsn(f"invalid DSN: {first_line(exc)}") from exc
    except psycopg.OperationalError as exc:
        message = first_line(exc)
        # libpq refuses a malformed option value before any network work
        if message.startswith("connection is bad: invalid"):
            reason = message.removeprefix("connection is bad: ")
            raise InvalidDsn(f"invalid DSN: {reason}") from exc
        raise DatabaseUnavailable(f"cannot connect to PostgreSQL: {message}") from exc
    if migrate:
        try:
            check_schema(conn)
        except SchemaMissing:
            if not embedded:
                conn.close()
                raise
            from riido_pg.server import migrate as migrations

            migrations.upgrade(url)
            check_schema(conn)
    return conn


@translated
def check_schema(conn: Conn) -> None:
    """Raise :class:`SchemaMissing` unless the riido schema is at ``SCHEMA_REVISION``."""
    row = conn.execute("SELECT to_regclass('riido.alembic_version') IS NOT NULL").fetchone()
    found: str | None = None
    if row and row[0]:
        version = conn.execute("SELECT version_num FROM riido.alembic_version").fetchone()
        found = str(version[0]) if version else None
    if found != SCHEMA_REVISION:
        state = "has no riido schema" if found is None else f"has schema revision {found}"
        raise SchemaMissing(
            f"the database {state}; riido-pg needs {SCHEMA_REVISION}: run `riido-pg db upgrade`"
        )
