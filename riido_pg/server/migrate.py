"""Schema migrations (alembic) behind ``riido-pg db upgrade|downgrade|current``.

A revision is ``base`` (no schema), ``head`` (the newest), one of the ids
:func:`revisions` lists, or ``-N``/``+N`` counted from the database's current one;
anything else is :class:`UnknownSchemaRevision`, naming the known ones. Moving towards a
revision the schema is already past does nothing (alembic's way for an upgrade,
riido-pg's for a downgrade too). :func:`data_loss` says what a downgrade would delete,
so the command line can ask before it does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from psycopg import sql
from sqlalchemy import Connection, create_engine
from sqlalchemy.pool import NullPool

from riido_pg.errors import SchemaMissing, UnknownSchemaRevision
from riido_pg.resources import migrations_dir
from riido_pg.server.conn import dial
from riido_pg.server.errors import translated
from riido_pg.server.schema import SCHEMA

__all__ = [
    "Loss",
    "current",
    "data_loss",
    "downgrade",
    "head",
    "resolve",
    "revisions",
    "target",
    "upgrade",
]


def _config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    return cfg


def revisions() -> list[str]:
    """Every revision the installed package knows, oldest first."""
    script = ScriptDirectory.from_config(_config())
    return [rev.revision for rev in reversed(list(script.walk_revisions()))]


def head() -> str:
    """The newest revision the installed package knows."""
    return revisions()[-1]


#: ``-1``: one revision below the current one; ``+2``: two above (alembic's relative ids).
_RELATIVE = re.compile(r"[+-][0-9]{1,4}")


def resolve(revision: str, current: str | None = None) -> str | None:
    """The revision id ``revision`` names (``None`` for ``base``; ``+N``/``-N`` count
    from ``current``), or :class:`UnknownSchemaRevision` naming the known ones."""
    known = revisions()
    if _RELATIVE.fullmatch(revision):
        position = _position(current) + int(revision)
        if 0 <= position <= len(known):
            return known[position - 1] if position else None
        raise _unknown(f"{revision} from {current or 'base'}", known)
    if revision == "base":
        return None
    if revision in ("head", "heads"):
        return known[-1]
    if revision in known:
        return revision
    raise _unknown(repr(revision), known)


def _unknown(what: str, known: list[str]) -> UnknownSchemaRevision:
    return UnknownSchemaRevision(
        f"no schema revision {what}; the known ones are base, {', '.join(known)} "
        f"and head (= {known[-1]})"
    )


def _position(revision: str | None) -> int:
    """How many revisions up ``revision`` is (base: 0)."""
    if revision is None:
        return 0
    known = revisions()
    if revision not in known:  # migrated by a newer riido-pg
        raise SchemaMissing(
            f"the database has schema revision {revision}, which this riido-pg does not know "
            f"(its newest is {known[-1]}); use the riido-pg that migrated it"
        )
    return known.index(revision) + 1


@contextmanager
def _connection(dsn: str, *, begin: bool) -> Iterator[Connection]:
    engine = create_engine("postgresql+psycopg://", creator=lambda: dial(dsn), poolclass=NullPool)
    try:
        with engine.begin() if begin else engine.connect() as conn:
            yield conn
    finally:
        engine.dispose()


def _current(conn: Connection) -> str | None:
    ctx = MigrationContext.configure(conn, opts={"version_table_schema": SCHEMA})
    return ctx.get_current_revision()


def _run(dsn: str, action: str, revision: str) -> None:
    if not _RELATIVE.fullmatch(revision):
        resolve(revision)  # an unknown revision is refused before any connection
    cfg = _config()
    with _connection(dsn, begin=True) as conn:
        # one migrator at a time, whoever else runs `db upgrade` or starts the server
        conn.exec_driver_sql("SELECT pg_advisory_xact_lock(1380534596, 0)")
        found = _current(conn)
        target = resolve(revision, found)
        if action == "downgrade" and _position(target) >= _position(found):
            return
        cfg.attributes["connection"] = conn
        if action == "upgrade":
            command.upgrade(cfg, target or "base")
        else:
            command.downgrade(cfg, target or "base")


@translated
def upgrade(dsn: str, revision: str = "head") -> None:
    _run(dsn, "upgrade", revision)


@translated
def downgrade(dsn: str, revision: str) -> None:
    _run(dsn, "downgrade", revision)


@translated
def current(dsn: str) -> str | None:
    with _connection(dsn, begin=False) as conn:
        return _current(conn)


@translated
def target(dsn: str, revision: str) -> str | None:
    """The revision id ``revision`` names for the database at ``dsn`` (see :func:`resolve`)."""
    if _RELATIVE.fullmatch(revision):
        return resolve(revision, current(dsn))
    return resolve(revision)


@dataclass(frozen=True)
class Loss:
    """What a downgrade would delete (all zero: nothing)."""

    snapshots: int = 0
    documents: int = 0
    corpora: int = 0
    embedded_snapshots: int = 0
    shards: int = 0

    def __bool__(self) -> bool:
        return any((self.snapshots, self.corpora, self.embedded_snapshots, self.shards))

    def describe(self) -> str:
        """``12 snapshots (1,234,567 documents) and the catalog of 2 shards``."""
        parts: list[str] = []
        if self.snapshots:
            parts.append(
                f"{_count(self.snapshots, 'snapshot')} ({_count(self.documents, 'document')})"
            )
        if self.corpora:
            parts.append(_count(self.corpora, "evaluation corpus", "evaluation corpora"))
        if self.embedded_snapshots:
            parts.append(f"the model embeddings of {_count(self.embedded_snapshots, 'snapshot')}")
        if self.shards:
            parts.append(f"the catalog of {_count(self.shards, 'shard')}")
        if len(parts) > 1:
            return f"{', '.join(parts[:-1])} and {parts[-1]}"
        return parts[0] if parts else "nothing"


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


#: What undoing a revision deletes: the rows counted here. (Undoing 0006 or 0008 drops
#: only what a running load holds; undoing 0003 or 0004 keeps every row.)
_LOST = {
    "0001": ("snapshots", "count(*), coalesce(sum(document_count), 0)"),
    "0002": ("eval_corpora", "count(*)"),
    "0005": ("snapshot_models", "count(DISTINCT snapshot_id)"),
    "0007": ("shards", "count(*)"),
}


@translated
def data_loss(dsn: str, revision: str) -> Loss:
    """What ``downgrade(dsn, revision)`` would delete, counted now."""
    if not _RELATIVE.fullmatch(revision):
        resolve(revision)
    counts: dict[str, tuple[int, ...]] = {}
    with dial(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT to_regclass('riido.alembic_version') IS NOT NULL").fetchone()
        version = None
        if row and row[0]:
            found = conn.execute("SELECT version_num FROM riido.alembic_version").fetchone()
            version = str(found[0]) if found else None
        undone = revisions()[_position(resolve(revision, version)) : _position(version)]
        for rev, (table, aggregate) in _LOST.items():
            if rev in undone:
                got = conn.execute(
                    sql.SQL("SELECT {} FROM {}").format(
                        sql.SQL(aggregate), sql.Identifier(SCHEMA, table)
                    )
                ).fetchone()
                counts[table] = tuple(int(v) for v in got or ())
    snapshots = counts.get("snapshots", (0, 0))
    return Loss(
        snapshots=snapshots[0],
        documents=snapshots[1],
        corpora=counts.get("eval_corpora", (0,))[0],
        embedded_snapshots=counts.get("snapshot_models", (0,))[0],
        shards=counts.get("shards", (0,))[0],
    )
