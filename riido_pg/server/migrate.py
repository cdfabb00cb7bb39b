"""Schema migrations (alembic) behind ``riido-pg db upgrade|downgrade|current``."""

from __future__ import annotations

import psycopg
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from riido_pg.resources import migrations_dir
from riido_pg.server.errors import translated
from riido_pg.server.schema import SCHEMA

__all__ = ["current", "downgrade", "head", "upgrade"]


def _config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    return cfg


def head() -> str:
    """The newest revision the installed package knows."""
    rev = ScriptDirectory.from_config(_config()).get_current_head()
    assert rev is not None
    return rev


def _run(dsn: str, action: str, revision: str) -> None:
    engine = create_engine(
        "postgresql+psycopg://", creator=lambda: psycopg.connect(dsn), poolclass=NullPool
    )
    cfg = _config()
    with engine.begin() as conn:
        # one migrator at a time, whoever else runs `db upgrade` or starts the server
        conn.exec_driver_sql("SELECT pg_advisory_xact_lock(1380534596, 0)")
        cfg.attributes["connection"] = conn
        if action == "upgrade":
            command.upgrade(cfg, revision)
        else:
            command.downgrade(cfg, revision)
    engine.dispose()


@translated
def upgrade(dsn: str, revision: str = "head") -> None:
    _run(dsn, "upgrade", revision)


@translated
def downgrade(dsn: str, revision: str) -> None:
    _run(dsn, "downgrade", revision)


@translated
def current(dsn: str) -> str | None:
    engine = create_engine(
        "postgresql+psycopg://", creator=lambda: psycopg.connect(dsn), poolclass=NullPool
    )
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"version_table_schema": SCHEMA})
        rev = ctx.get_current_revision()
    engine.dispose()
    return rev
