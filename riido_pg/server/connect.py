"""Choosing and opening the database (README "Database").

``--dsn``/``RIIDO_PG_DSN`` name a server; otherwise the embedded default is started
and migrated automatically. A named server must already have the current schema.
No message about a connection string shows its password (:func:`redact_dsn`).
"""

from __future__ import annotations

from typing import Any, TypeAlias

import psycopg

from riido_pg import config
from riido_pg.config import DEFAULT_LOCK_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS
from riido_pg.errors import DatabaseUnavailable, Hint, InvalidDsn, SchemaMissing
from riido_pg.redact import redact_dsn, unparsed_reason
from riido_pg.server.errors import first_line, translated

__all__ = [
    "DEFAULT_LOCK_TIMEOUT_MS",
    "DEFAULT_STATEMENT_TIMEOUT_MS",
    "SCHEMA_REVISION",
    "Conn",
    "check_schema",
    "connect",
    "dial",
    "redact_dsn",
    "resolve_dsn",
]

#: A connection as riido-pg uses it (the row type is whatever the caller's factory gives).
Conn: TypeAlias = psycopg.Connection[Any]

#: The schema revision this version of riido-pg needs (tests check it is alembic's head).
SCHEMA_REVISION = "0013"


def resolve_dsn(dsn: str | None) -> tuple[str, bool]:
    """The DSN to use and whether it is the embedded default."""
    if dsn:
        return dsn, False
    env = config.dsn()
    if env:
        return env, False
    from riido_pg.server.embedded import embedded_dsn

    return embedded_dsn(), True


def dial(url: str, **kwargs: Any) -> Conn:
    """``psycopg.connect(url, **kwargs)``, its failures as :class:`InvalidDsn` (the
    string does not parse: nothing of it is shown; or it has a malformed value) or
    :class:`DatabaseUnavailable`, each with the password masked."""
    try:
        return psycopg.connect(url, **kwargs)
    except psycopg.ProgrammingError as exc:  # the DSN does not parse
        raise InvalidDsn(f"invalid DSN: {unparsed_reason(first_line(exc))}") from exc
    except psycopg.OperationalError as exc:
        message = redact_dsn(first_line(exc), url)
        # libpq refuses a malformed option value before any network work
        if message.startswith("connection is bad: invalid"):
            reason = message.removeprefix("connection is bad: ")
            raise InvalidDsn(f"invalid DSN: {reason}") from exc
        raise DatabaseUnavailable(f"cannot connect to PostgreSQL: {message}") from exc


def connect(dsn: str | None = None, *, migrate: bool = True) -> Conn:
    """Open an autocommit connection to the chosen server and check its schema.

    The embedded server is migrated automatically when ``migrate`` is true; a named
    server with a missing or old schema raises :class:`SchemaMissing`. Every
    environment variable it may use is validated first (:func:`riido_pg.config.check`).
    """
    config.check(ignore=(config.DSN,) if dsn else ())
    url, embedded = resolve_dsn(dsn)
    statement_ms = config.statement_timeout_ms()
    lock_ms = config.lock_timeout_ms()
    conn = dial(
        url,
        autocommit=True,
        connect_timeout=10,
        application_name="riido-pg",
        options=f"-c statement_timeout={statement_ms} -c lock_timeout={lock_ms}",
    )
    if migrate:
        try:
            check_schema(conn)
        except SchemaMissing as exc:
            if not embedded:
                conn.close()
                if exc.hint is None:  # newer than this riido-pg: no upgrade helps
                    raise
                named = dsn if dsn and dsn != config.DSN.raw() else None  # else the variable
                raise SchemaMissing(exc.message, upgrade_hint(named)) from None
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
        from riido_pg.server.migrate import revisions

        if found is not None and found not in revisions():
            raise SchemaMissing(
                "the database's riido schema is newer than this riido-pg knows; "
                "use the riido-pg that migrated it"
            )
        state = "has no riido schema" if found is None else "has an older riido schema"
        raise SchemaMissing(
            f"the database {state}",
            Hint(
                "run `riido-pg db upgrade`",
                "create it with `riido-pg --dsn URL db upgrade`",
                sep=": ",
            ),
        )


def upgrade_hint(dsn: str | None) -> Hint:
    """What to run when the server named by ``dsn`` (else by ``RIIDO_PG_DSN``) lacks the
    current schema: ``db upgrade`` with the same ``--dsn`` (its password masked), or
    saying that it upgrades the server ``RIIDO_PG_DSN`` names; never the embedded one's
    bare ``riido-pg db upgrade``, which would migrate another server."""
    from riido_pg.quoting import shell_command

    if dsn:
        command = shell_command("riido-pg", "--dsn", redact_dsn(dsn, dsn), "db", "upgrade")
        return Hint(f"run `{command}`", f"create it with `{command}`", sep=": ")
    return Hint(
        f"run `riido-pg db upgrade` with {config.DSN.name} set as now",
        f"create it with `riido-pg db upgrade` with {config.DSN.name} set as now",
        sep=": ",
    )
