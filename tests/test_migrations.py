"""Alembic migrations on a real server: up from empty, down to empty, up again; no
drift between the SQLAlchemy models and the migrations; a clear error when the schema
is missing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool
from support.cli import run_cli
from support.database import RIIDO_TABLES, Database, create_database, drop_database

from riido_pg.db import SCHEMA_REVISION
from riido_pg.server import migrate
from riido_pg.server.schema import SCHEMA, metadata


@pytest.fixture
def empty_db(server_dsn: str) -> Iterator[Database]:
    database = create_database(server_dsn, "riido_t_migr", migrated=False)
    yield database
    drop_database(server_dsn, database.name)


def _tables(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'riido'").fetchall()
    return {r[0] for r in rows}


def test_head_is_the_revision_the_code_needs() -> None:
    assert migrate.head() == SCHEMA_REVISION


def test_upgrade_downgrade_upgrade(empty_db: Database) -> None:
    assert migrate.current(empty_db.dsn) is None
    migrate.upgrade(empty_db.dsn)
    assert migrate.current(empty_db.dsn) == SCHEMA_REVISION
    assert {"snapshots", "documents", "postings"} <= _tables(empty_db.dsn)
    migrate.downgrade(empty_db.dsn, "base")
    assert migrate.current(empty_db.dsn) is None
    assert _tables(empty_db.dsn) <= {"alembic_version"}
    migrate.upgrade(empty_db.dsn)
    assert migrate.current(empty_db.dsn) == SCHEMA_REVISION


def test_the_stored_nothing_checks_count_every_table(db: Database) -> None:
    """Database.counts() (the tests' "stored nothing") covers every table there is."""
    assert set(RIIDO_TABLES) == _tables(db.dsn) - {"alembic_version"}
    assert set(db.counts()) == set(RIIDO_TABLES)


def test_models_and_migrations_do_not_drift(db: Database) -> None:
    engine = create_engine(
        "postgresql+psycopg://", creator=lambda: psycopg.connect(db.dsn), poolclass=NullPool
    )
    with engine.connect() as conn:
        ctx = MigrationContext.configure(
            conn,
            opts={
                "include_schemas": True,
                "version_table_schema": SCHEMA,
                "include_name": lambda name, type_, parent: (
                    name == SCHEMA if type_ == "schema" else True
                ),
                "compare_server_default": True,
            },
        )
        diff: list[Any] = compare_metadata(ctx, metadata)
    engine.dispose()
    assert diff == []


def test_cli_on_a_database_without_schema_names_db_upgrade(empty_db: Database, cli: Any) -> None:
    result = run_cli(["query", "s", "x"], dsn=empty_db.dsn)
    assert result.code == 1
    assert result.stderr == (
        "error: the database has no riido schema; riido-pg needs "
        f"{SCHEMA_REVISION}: run `riido-pg db upgrade`\n"
    )
    up = run_cli(["db", "upgrade"], dsn=empty_db.dsn)
    assert (up.code, up.stdout) == (0, f"schema at {SCHEMA_REVISION}\n")
    assert run_cli(["db", "current"], dsn=empty_db.dsn).stdout == f"{SCHEMA_REVISION}\n"
    down = run_cli(["db", "downgrade", "base"], dsn=empty_db.dsn)
    assert (down.code, down.stdout) == (0, "schema at base\n")


def test_unreachable_server_is_an_environment_error() -> None:
    result = run_cli(["query", "s", "x"], dsn="postgresql://nobody@127.0.0.1:1/none")
    assert result.code == 1
    assert result.stderr.startswith("error: cannot connect to PostgreSQL: ")
    assert result.stderr.count("\n") == 1
