"""The coordinator's shard catalog: listing, removing and upgrading shards, and
opening a shard's connection from its foreign server and user mapping (adding one:
:mod:`riido_pg.shards.adding`).

A shard is registered in one coordinator transaction: the ``postgres_fdw`` foreign
server (host, port, database), a user mapping for the current role holding the
credentials (:mod:`riido_pg.shards.secrets`), and the ``riido.shards`` row, whose
``conninfo`` keeps every other connection option (a multi-host list,
``target_session_attrs``, ``load_balance_hosts``) but never a credential.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from riido_pg.errors import (
    DatabaseUnavailable,
    Hint,
    RiidoError,
    SchemaMissing,
    ShardInUse,
    ShardNotFound,
    ShardUnavailable,
)
from riido_pg.server.connect import Conn, connect
from riido_pg.server.errors import translated
from riido_pg.shards.locks import shard_exclusive
from riido_pg.shards.secrets import split_credentials

__all__ = [
    "NAME",
    "SERVER_PREFIX",
    "ShardInfo",
    "list_shards",
    "no_shard",
    "open_shard",
    "remove_shard",
    "require_writable",
    "shard_dsn",
    "shard_names",
    "shard_row",
    "shard_session",
    "upgrade_shards",
]

#: A shard's foreign server is ``riido_shard_<name>``.
SERVER_PREFIX = "riido_shard_"
NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")


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


def shard_row(conn: Conn, name: str) -> tuple[str, str]:
    row = conn.execute(
        "SELECT server, conninfo FROM riido.shards WHERE name = %s", (name,)
    ).fetchone()
    if row is None:
        raise ShardNotFound(*no_shard(name, shard_names(conn)))
    return str(row[0]), str(row[1])


def shard_dsn(conn: Conn, name: str) -> str:
    """The shard's connection string: its conninfo plus the user mapping's credentials
    (the current role's, else PUBLIC's)."""
    server, conninfo = shard_row(conn, name)
    row = conn.execute(
        "SELECT umoptions FROM pg_user_mappings WHERE srvname = %s "
        "AND (usename = current_user OR usename = 'public') "
        "ORDER BY usename = 'public' LIMIT 1",
        (server,),
    ).fetchone()
    options = dict(o.split("=", 1) for o in (row[0] or [])) if row else {}
    credentials, _ = split_credentials(options)
    return make_conninfo(conninfo, **credentials)


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
def shard_session(conn: Conn, name: str) -> Iterator[Conn]:
    shard = open_shard(conn, name)
    try:
        yield shard
    finally:
        shard.close()


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


def _holding(shard: Conn, placed: list[str]) -> list[str]:
    """The placed snapshots the shard has in any state (a non-ready one annotated)."""
    rows = shard.execute(
        "SELECT snapshot_id, state FROM riido.snapshots WHERE snapshot_id = ANY(%s) "
        "ORDER BY snapshot_id",
        (placed,),
    )
    return [repr(str(r[0])) + ("" if r[1] == "ready" else f" ({r[1]})") for r in rows]


def _listed(items: list[str]) -> str:
    return ", ".join(items[:3]) + (", ..." if len(items) > 3 else "")


@translated
def remove_shard(conn: Conn, name: str) -> None:
    """Unregister a shard that holds no snapshot in any state, while no load or move
    through this coordinator runs on it (ShardInUse at once otherwise). Placements
    whose snapshot the shard never got go with it."""
    shard_row(conn, name)
    with shard_exclusive(conn, name) as free:
        placed = _placed(conn, name)
        if not free:
            what = f" (placed there: {_listed([repr(p) for p in placed])})" if placed else ""
            raise ShardInUse(
                f"shard {name!r} is in use: a load or move is running on it{what}; try again "
                "when it finishes"
            )
        server, _ = shard_row(conn, name)
        if placed:
            with shard_session(conn, name) as shard:
                held = _holding(shard, placed)
            if held:
                raise ShardInUse(
                    f"shard {name!r} holds {len(held)} snapshot(s) ({_listed(held)})",
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
        where = conninfo_to_dict(shard_row(conn, name)[1])
        counts: tuple[int | None, int | None, int | None] = (None, None, None)
        try:
            with shard_session(conn, name) as shard:
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
            raise kind(f"shard {name!r}: {exc.message}", exc.hint) from exc
    return done
