"""Choosing and opening the database (README "Database").

``--dsn``/``RIIDO_PG_DSN`` name a server; otherwise the embedded default is started
and migrated automatically. A named server must already have the current schema.
No message about a connection string shows its password (:func:`redact_dsn`).

The imports go one way: this module uses :mod:`.embedded` and :mod:`.migrate` (when
it needs them: alembic is slow to import), and both open connections with
:func:`riido_pg.server.conn.dial`, below it.
"""

from __future__ import annotations

from riido_pg import config
from riido_pg.config import DEFAULT_LOCK_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS
from riido_pg.errors import Hint, SchemaMissing
from riido_pg.redact import redact_dsn
from riido_pg.server.conn import Conn, dial
from riido_pg.server.errors import translated

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

#: The schema revision this version of riido-pg needs (tests check it is alembic's head).
SCHEMA_REVISION = "0026"


def resolve_dsn(dsn: str | None) -> tuple[str, bool]:
    """The DSN to use and whether it is the embedded default."""
    if dsn:
        return dsn, False
    env = config.dsn()
    if env:
        return env, False
    from riido_pg.server.embedded import embedded_dsn

    return embedded_dsn(), True


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
    if not migrate:
        return conn
    try:
        try:
            check_schema(conn)
        except SchemaMissing as exc:
            if not embedded:
                if exc.hint is None:  # newer than this riido-pg: no upgrade helps
                    raise
                named = dsn if dsn and dsn != config.DSN.raw() else None  # else the variable
                raise SchemaMissing(exc.message, upgrade_hint(named)) from None
            from riido_pg.server import migrate as migrations

            migrations.upgrade(url)
            check_schema(conn)
    except BaseException:  # the check itself may fail (a statement timeout of 1 ms)
        conn.close()
        raise
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
