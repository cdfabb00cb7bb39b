"""``shards add``: registering a database as a shard of the coordinator (README "More
than one server").

The DSN is checked (it parses, it reaches a writable primary that is neither the
coordinator nor another shard, at this riido-pg's schema revision or without a riido
schema, which is migrated), then the foreign server, the user mapping (every
credential, :mod:`riido_pg.shards.secrets`) and the catalog row (every other option)
are written in one coordinator transaction. No message shows a secret of the DSN.
"""

from __future__ import annotations

from collections.abc import Mapping

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from riido_pg.errors import (
    ConflictingOptions,
    DatabaseUnavailable,
    Hint,
    InvalidDsn,
    InvalidInput,
    RiidoError,
    SchemaMissing,
    ShardExists,
    ShardUnavailable,
)
from riido_pg.redact import dsn_params
from riido_pg.server.connect import SCHEMA_REVISION, Conn, connect
from riido_pg.server.errors import translated
from riido_pg.shards.catalog import (
    NAME,
    SERVER_PREFIX,
    require_writable,
    shard_names,
    shard_row,
    shard_session,
)
from riido_pg.shards.secrets import mask_dsn_secrets, split_credentials

__all__ = ["add_shard"]

#: Connection options that also go on the foreign server (postgres_fdw of PostgreSQL
#: 15 accepts these; credentials go on the user mapping, the rest stays in conninfo).
_SERVER_OPTIONS = ("host", "hostaddr", "port", "dbname", "sslmode", "target_session_attrs")


def _same_database(coordinator: Conn, shard: Conn) -> bool:
    """Whether ``shard`` sees the coordinator's own session (the same database)."""
    row = coordinator.execute(
        "SELECT pg_backend_pid(), backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()"
    ).fetchone()
    if row is None:
        return False
    seen = shard.execute(
        "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND backend_start = %s "
        "AND datname = current_database()",
        (row[0], row[1]),
    ).fetchone()
    return seen is not None


def _revision(conn: Conn) -> str | None:
    row = conn.execute("SELECT to_regclass('riido.alembic_version') IS NOT NULL").fetchone()
    if not (row and row[0]):
        return None
    version = conn.execute("SELECT version_num FROM riido.alembic_version").fetchone()
    return str(version[0]) if version else None


def add_shard(conn: Conn, name: str, dsn: str, *, password: str | None = None) -> None:
    """Register the database at ``dsn`` as shard ``name`` of the coordinator ``conn``.

    The DSN must connect to a primary; a database without a riido schema is migrated,
    one at another revision than this riido-pg's is refused, as is a database another
    shard (or the coordinator) already is. ``password`` (e.g. read from a file) goes
    with the DSN's other credentials into the user mapping; a password libpq finds on
    its own (``PGPASSWORD``, ``PGPASSFILE``, a service file) is not stored. The foreign
    server, the user mapping and the catalog row are written in one transaction: on any
    error nothing is registered. No message shows a secret of the DSN.
    """
    try:
        _add_shard(conn, name, dsn, password)
    except RiidoError as exc:
        message = mask_dsn_secrets(exc.message, dsn)
        if password:
            message = message.replace(password, "***")
        if message == exc.message:
            raise
        raise type(exc)(message, exc.hint) from None  # the original message holds the secret


def _where(params: Mapping[str, object]) -> tuple[str, str, str]:
    """A DSN's (host, port, database), as written (libpq's defaults for the missing)."""
    host = str(params.get("host") or params.get("hostaddr") or "localhost")
    dbname = str(params.get("dbname") or params.get("user") or "")
    return host.lower(), str(params.get("port") or "5432"), dbname


def _already_registered(conn: Conn, name: str, params: dict[str, str], shard: Conn) -> None:
    """Refuse a database some shard already is: the same host, port and database as
    written, or (for the shards that answer) one whose sessions the new one sees."""
    where = _where(params)
    for other in shard_names(conn):
        if _where(conninfo_to_dict(shard_row(conn, other)[1])) == where:
            same = True
        else:
            try:
                with shard_session(conn, other) as existing:
                    same = _same_database(existing, shard)
            except RiidoError:
                continue  # a shard that does not answer is compared by its address only
        if same:
            raise ShardExists(
                f"the DSN of shard {name!r} is the database of shard {other!r}; a database "
                "can be one shard only"
            )


@translated(commits="adding a shard (it migrates the shard's schema)")
def _add_shard(conn: Conn, name: str, dsn: str, password: str | None) -> None:
    if not NAME.fullmatch(name):
        raise InvalidInput(
            f"invalid shard name {name!r}: use 1-32 lowercase letters, digits and _, "
            "starting with a letter"
        )
    try:
        params = dsn_params(dsn)
    except ValueError as exc:
        raise InvalidDsn(f"invalid DSN for shard {name!r}: {exc}") from None
    if not params:
        raise InvalidDsn(f"an empty DSN for shard {name!r}: give the shard's PostgreSQL URL")
    if password is not None:
        if "password" in params:
            raise ConflictingOptions(
                f"the DSN of shard {name!r} has a password; give it there or from a file, not both"
            )
        params["password"] = password
        dsn = make_conninfo(dsn, password=password)
    if conn.execute("SELECT 1 FROM riido.shards WHERE name = %s", (name,)).fetchone():
        raise ShardExists(f"shard {name!r} exists; remove it first or choose another name")
    try:
        shard = connect(dsn, migrate=False)
    except DatabaseUnavailable as exc:
        raise ShardUnavailable(f"cannot add shard {name!r}: {exc.message}", exc.hint) from exc
    with shard:
        require_writable(shard, f"shard {name!r}")
        if _same_database(conn, shard):
            raise InvalidInput(f"the DSN of shard {name!r} is the coordinator's own database")
        _already_registered(conn, name, params, shard)
        found = _revision(shard)
        if found is None:
            from riido_pg.server import migrate

            migrate.upgrade(dsn)
        elif found != SCHEMA_REVISION:
            from riido_pg.server import migrate

            age = "an older" if found in migrate.revisions() else "a newer"
            raise SchemaMissing(
                f"shard {name!r} has {age} riido schema than the coordinator",
                Hint(
                    "bring it to the coordinator's first (`riido-pg --dsn SHARD_DSN db upgrade`)",
                    "bring it to the coordinator's first "
                    "(`riido-pg --dsn SHARD_DSN db upgrade`, or alembic)",
                    sep=": ",
                ),
            )
    _register(conn, name, params)


def _register(conn: Conn, name: str, params: dict[str, str]) -> None:
    """The foreign server, the user mapping (every credential) and the catalog row
    (every other option), in one transaction."""
    server = sql.Identifier(SERVER_PREFIX + name)
    credentials, public = split_credentials(params)

    def options(given: dict[str, str]) -> sql.Composable:
        pairs = [
            sql.SQL("{} {}").format(sql.Identifier(k), sql.Literal(v)) for k, v in given.items()
        ]
        return sql.SQL("OPTIONS ({})").format(sql.SQL(", ").join(pairs)) if pairs else sql.SQL("")

    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS postgres_fdw")
            conn.execute(
                sql.SQL("CREATE SERVER {} FOREIGN DATA WRAPPER postgres_fdw {}").format(
                    server, options({k: params[k] for k in _SERVER_OPTIONS if k in params})
                )
            )
            conn.execute(
                sql.SQL("CREATE USER MAPPING FOR CURRENT_USER SERVER {} {}").format(
                    server, options(credentials)
                )
            )
            conn.execute(
                "INSERT INTO riido.shards (name, server, conninfo) VALUES (%s, %s, %s)",
                (name, SERVER_PREFIX + name, make_conninfo("", **public)),
            )
    except psycopg.errors.FdwInvalidOptionName as exc:
        raise InvalidDsn(
            f"shard {name!r}: the coordinator's postgres_fdw cannot keep this DSN: "
            f"{exc.diag.message_primary}"
        ) from exc
