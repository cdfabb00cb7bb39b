"""The coordinator's shard catalog: adding, listing, removing and upgrading shards,
and opening a shard's connection from its foreign server and user mapping.

A shard is registered in one coordinator transaction: the ``postgres_fdw`` foreign
server (host, port, database), a user mapping for the current role holding the
credentials, and the ``riido.shards`` row, whose ``conninfo`` keeps every other
connection option (a multi-host list, ``target_session_attrs``,
``load_balance_hosts``) but never the user or the password.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from riido_pg.errors import (
    DatabaseUnavailable,
    Hint,
    InvalidDsn,
    InvalidInput,
    RiidoError,
    SchemaMissing,
    ShardExists,
    ShardInUse,
    ShardNotFound,
    ShardUnavailable,
)
from riido_pg.server.connect import SCHEMA_REVISION, Conn, connect
from riido_pg.server.errors import first_line, translated

__all__ = [
    "SERVER_PREFIX",
    "ShardInfo",
    "add_shard",
    "list_shards",
    "no_shard",
    "open_shard",
    "remove_shard",
    "require_writable",
    "shard_dsn",
    "shard_names",
    "upgrade_shards",
]

#: A shard's foreign server is ``riido_shard_<name>``.
SERVER_PREFIX = "riido_shard_"
_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
#: Connection options that also go on the foreign server (postgres_fdw of PostgreSQL
#: 15 accepts these; credentials go on the user mapping, the rest stays in conninfo).
_SERVER_OPTIONS = ("host", "hostaddr", "port", "dbname", "sslmode", "target_session_attrs")
_SECRET = ("user", "password")


@dataclass(frozen=True, slots=True)
class ShardInfo:
    """A shard as ``shards list`` shows it: where it is, and what it holds (None
    when it is unreachable). No credentials."""

    name: str
    host: str
    port: str
    dbname: str
    snapshots: int | None
    documents: int | None
    bytes: int | None


def require_writable(conn: Conn, where: str = "the server") -> None:
    """Raise ReadOnlyServer when ``conn`` is a hot standby (``pg_is_in_recovery()``)."""
    from riido_pg.errors import ReadOnlyServer

    row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
    if row and row[0]:
        raise ReadOnlyServer(
            f"{where} is a read-only hot standby; send writes to the primary (a DSN naming "
            "it, or with target_session_attrs=read-write)"
        )


def no_shard(name: str, names: list[str]) -> tuple[str, Hint | None]:
    """The message and hint of :class:`ShardNotFound` for ``name``, naming the shards."""
    if names:
        return f"no shard {name!r} (shards: {', '.join(names)})", None
    return f"no shard {name!r} (shards: none)", Hint(
        "add one with `riido-pg shards add NAME DSN`", "add one with add_shard()"
    )


def shard_names(conn: Conn) -> list[str]:
    return [str(r[0]) for r in conn.execute("SELECT name FROM riido.shards ORDER BY name")]


def _row(conn: Conn, name: str) -> tuple[str, str]:
    row = conn.execute(
        "SELECT server, conninfo FROM riido.shards WHERE name = %s", (name,)
    ).fetchone()
    if row is None:
        raise ShardNotFound(*no_shard(name, shard_names(conn)))
    return str(row[0]), str(row[1])


def shard_dsn(conn: Conn, name: str) -> str:
    """The shard's connection string: its conninfo plus the user mapping's credentials
    (the current role's, else PUBLIC's)."""
    server, conninfo = _row(conn, name)
    row = conn.execute(
        "SELECT umoptions FROM pg_user_mappings WHERE srvname = %s "
        "AND (usename = current_user OR usename = 'public') "
        "ORDER BY usename = 'public' LIMIT 1",
        (server,),
    ).fetchone()
    options = dict(o.split("=", 1) for o in (row[0] or [])) if row else {}
    return make_conninfo(conninfo, **{k: v for k, v in options.items() if k in _SECRET})


def open_shard(conn: Conn, name: str) -> Conn:
    """A connection to the shard, as :func:`riido_pg.db.connect` opens one; a shard that
    cannot be reached (or has another schema revision) is an error naming it."""
    dsn = shard_dsn(conn, name)
    try:
        return connect(dsn)
    except SchemaMissing as exc:
        raise SchemaMissing(f"shard {name!r}: {exc.message}", exc.hint) from exc
    except DatabaseUnavailable as exc:
        raise ShardUnavailable(f"shard {name!r} is unavailable: {exc.message}", exc.hint) from exc


@contextmanager
def _shard(conn: Conn, name: str) -> Iterator[Conn]:
    shard = open_shard(conn, name)
    try:
        yield shard
    finally:
        shard.close()


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


@translated(commits="adding a shard (it migrates the shard's schema)")
def add_shard(conn: Conn, name: str, dsn: str) -> None:
    """Register the database at ``dsn`` as shard ``name`` of the coordinator ``conn``.

    The DSN must connect to a primary; a database without a riido schema is migrated,
    one at another revision than this riido-pg's is refused. The foreign server, the
    user mapping and the catalog row are written in one transaction: on any error
    nothing is registered.
    """
    if not _NAME.fullmatch(name):
        raise InvalidInput(
            f"invalid shard name {name!r}: use 1-32 lowercase letters, digits and _, "
            "starting with a letter"
        )
    try:
        params = {k: str(v) for k, v in conninfo_to_dict(dsn).items() if v is not None}
    except psycopg.ProgrammingError as exc:
        raise InvalidDsn(f"invalid DSN for shard {name!r}: {first_line(exc)}") from exc
    if not params:
        raise InvalidDsn(f"an empty DSN for shard {name!r}: give the shard's PostgreSQL URL")
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
        found = _revision(shard)
        if found is None:
            from riido_pg.server import migrate

            migrate.upgrade(dsn)
        elif found != SCHEMA_REVISION:
            raise SchemaMissing(
                f"shard {name!r} has schema revision {found}, the coordinator {SCHEMA_REVISION}: "
                f"bring it to {SCHEMA_REVISION} first (`riido-pg --dsn SHARD_DSN db upgrade`)"
            )
    server = sql.Identifier(SERVER_PREFIX + name)

    def options(keys: list[str]) -> sql.Composable:
        pairs = [sql.SQL("{} {}").format(sql.Identifier(k), sql.Literal(params[k])) for k in keys]
        return sql.SQL("OPTIONS ({})").format(sql.SQL(", ").join(pairs)) if pairs else sql.SQL("")

    with conn.transaction():
        conn.execute("CREATE EXTENSION IF NOT EXISTS postgres_fdw")
        conn.execute(
            sql.SQL("CREATE SERVER {} FOREIGN DATA WRAPPER postgres_fdw {}").format(
                server, options([k for k in _SERVER_OPTIONS if k in params])
            )
        )
        conn.execute(
            sql.SQL("CREATE USER MAPPING FOR CURRENT_USER SERVER {} {}").format(
                server, options([k for k in _SECRET if k in params])
            )
        )
        public = {k: v for k, v in params.items() if k not in _SECRET}
        conn.execute(
            "INSERT INTO riido.shards (name, server, conninfo) VALUES (%s, %s, %s)",
            (name, SERVER_PREFIX + name, make_conninfo("", **public)),
        )


def _placed(conn: Conn, name: str) -> list[str]:
    rows = conn.execute(
        "SELECT snapshot_id FROM riido.placements WHERE shard = %s ORDER BY snapshot_id", (name,)
    )
    return [str(r[0]) for r in rows]


def _held(shard: Conn, placed: list[str]) -> list[tuple[str, int]]:
    """The placed snapshots the shard has ``ready``, with their document counts."""
    rows = shard.execute(
        "SELECT snapshot_id, document_count FROM riido.snapshots "
        "WHERE snapshot_id = ANY(%s) AND state = 'ready' ORDER BY snapshot_id",
        (placed,),
    )
    return [(str(r[0]), int(r[1])) for r in rows]


@translated
def remove_shard(conn: Conn, name: str) -> None:
    """Unregister a shard that holds no snapshot (placements whose snapshot is not on
    the shard, left by an interrupted load, go with it)."""
    server, _ = _row(conn, name)
    placed = _placed(conn, name)
    if placed:
        with _shard(conn, name) as shard:
            held = _held(shard, placed)
        if held:
            raise ShardInUse(
                f"shard {name!r} holds {len(held)} snapshot(s) ({held[0][0]!r}, ...)",
                Hint(
                    "move them (`riido-pg snapshots move ID SHARD`) or drop them first",
                    "move them (move_snapshot()) or drop them first",
                ),
            )
    with conn.transaction():
        conn.execute("DELETE FROM riido.placements WHERE shard = %s", (name,))
        conn.execute("DELETE FROM riido.shards WHERE name = %s", (name,))
        conn.execute(sql.SQL("DROP SERVER {} CASCADE").format(sql.Identifier(server)))


@translated
def list_shards(conn: Conn) -> list[ShardInfo]:
    """Every shard with its ready snapshots, documents and the bytes of its riido
    tables; the counts are None for a shard that does not answer."""
    out = []
    for name in shard_names(conn):
        where = conninfo_to_dict(_row(conn, name)[1])
        counts: tuple[int | None, int | None, int | None] = (None, None, None)
        try:
            with _shard(conn, name) as shard:
                held = _held(shard, _placed(conn, name))
                row = shard.execute(
                    "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = 'riido' AND c.relkind = 'r'"
                ).fetchone()
                counts = (len(held), sum(n for _, n in held), int(row[0]) if row else 0)
        except ShardUnavailable:
            pass
        out.append(
            ShardInfo(
                name,
                str(where.get("host") or where.get("hostaddr") or ""),
                str(where.get("port") or ""),
                str(where.get("dbname") or ""),
                *counts,
            )
        )
    return out


@translated
def upgrade_shards(conn: Conn, revision: str = "head") -> list[tuple[str, str | None]]:
    """Migrate every shard of the (already upgraded) coordinator to ``revision``;
    returns each shard's revision afterwards. A shard that fails is an error naming it."""
    from riido_pg.server import migrate

    done = []
    for name in shard_names(conn):
        dsn = shard_dsn(conn, name)
        try:
            migrate.upgrade(dsn, revision)
            done.append((name, migrate.current(dsn)))
        except RiidoError as exc:
            kind = ShardUnavailable if isinstance(exc, DatabaseUnavailable) else type(exc)
            raise kind(f"shard {name!r}: {exc}") from exc
    return done
