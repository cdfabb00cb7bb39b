"""Alembic migrations on a real server: up from empty, down to empty, up again; no
drift between the SQLAlchemy models and the migrations; a clear error when the schema
is missing."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from psycopg.conninfo import make_conninfo
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool
from support.cli import DEFAULT_TIMEOUT, SCRATCH_HOME, run_cli, spawn
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


def test_cli_on_a_database_without_schema_names_db_upgrade(empty_db: Database) -> None:
    """RIIDO_PG_DSN named the server: the hint says the upgrade goes where it points."""
    result = run_cli(["query", "s", "x"], dsn=empty_db.dsn)
    assert result.code == 1
    assert result.stderr == (
        "error: the database has no riido schema: "
        "run `riido-pg db upgrade` with RIIDO_PG_DSN set as now\n"
    )
    up = run_cli(["db", "upgrade"], dsn=empty_db.dsn)
    assert (up.code, up.stdout) == (0, f"schema at {SCHEMA_REVISION}\n")
    assert run_cli(["db", "current"], dsn=empty_db.dsn).stdout == f"{SCHEMA_REVISION}\n"
    down = run_cli(["db", "downgrade", "base"], dsn=empty_db.dsn)
    assert (down.code, down.stdout) == (0, "schema at base\n")


def test_the_hint_after_dsn_names_the_same_dsn_and_runs(empty_db: Database, tmp_path: Path) -> None:
    """``--dsn URL load ...`` on a database without the schema names ``db upgrade``
    with the same ``--dsn`` (the bare command would migrate the embedded server), its
    password masked; the command it names, run as printed, creates the schema there."""
    source = tmp_path / "docs.jsonl"
    source.write_text('{"id": "a", "text": "read config"}\n', encoding="utf-8")
    home = {"RIIDO_PG_HOME": str(SCRATCH_HOME)}
    secret = make_conninfo(empty_db.dsn, password="pw-Secret-9")  # trust ignores it
    failed = run_cli(["--dsn", secret, "load", "s", str(source)], dsn=None, env=home)
    masked = shlex.quote(secret.replace("pw-Secret-9", "***"))
    assert (failed.code, failed.stdout) == (1, "")
    assert failed.stderr == (
        f"error: the database has no riido schema: run `riido-pg --dsn {masked} db upgrade`\n"
    )
    assert "Secret" not in failed.stderr
    failed = run_cli(["load", "s", str(source), "--dsn", empty_db.dsn], dsn=None, env=home)
    command = failed.stderr.split("`")[1]
    assert command == f"riido-pg --dsn {shlex.quote(empty_db.dsn)} db upgrade"
    up = run_cli(shlex.split(command)[1:], dsn=None, env=home)
    assert (up.code, up.stdout) == (0, f"schema at {SCHEMA_REVISION}\n")
    assert migrate.current(empty_db.dsn) == SCHEMA_REVISION
    loaded = run_cli(["--dsn", secret, "load", "s", str(source)], dsn=None, env=home)
    assert loaded.code == 0, loaded.stderr
    migrate.downgrade(empty_db.dsn, "base")


def test_unreachable_server_is_an_environment_error() -> None:
    result = run_cli(["query", "s", "x"], dsn="postgresql://nobody@127.0.0.1:1/none")
    assert result.code == 1
    assert result.stderr.startswith("error: cannot connect to PostgreSQL: ")
    assert result.stderr.count("\n") == 1


# --- revisions that do not exist, downgrades that delete data -------------------------------

KNOWN = "base, " + ", ".join(migrate.revisions()) + f" and head (= {SCHEMA_REVISION})"


@pytest.mark.parametrize(
    ("command", "rev"), [("downgrade", "x'; drop"), ("upgrade", "0099"), ("downgrade", "head-1")]
)
def test_a_revision_that_does_not_exist_is_named_with_the_known_ones(
    db: Database, command: str, rev: str
) -> None:
    result = run_cli(["db", command, "--", rev], dsn=db.dsn)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == f"error: no schema revision {rev!r}; the known ones are {KNOWN}\n"
    assert migrate.current(db.dsn) == SCHEMA_REVISION


def _with_snapshots(database: Database) -> None:
    from riido_pg import Document, load_snapshot

    migrate.upgrade(database.dsn)
    with database.connect() as conn:
        load_snapshot(conn, "one", [Document("a", "read config"), Document("b", "x")])
        load_snapshot(conn, "two", [Document("c", "parse")])


def test_downgrade_that_deletes_snapshots_needs_yes(empty_db: Database) -> None:
    _with_snapshots(empty_db)
    refused = run_cli(["db", "downgrade", "base"], dsn=empty_db.dsn)
    assert (refused.code, refused.stdout) == (2, "")
    assert refused.stderr == (
        "error: downgrading to base would delete 2 snapshots (3 documents); "
        "pass --yes to go ahead\n"
    )
    assert migrate.current(empty_db.dsn) == SCHEMA_REVISION
    assert empty_db.count("documents") == 3

    # down to 0005 keeps every snapshot: nothing to confirm
    kept = run_cli(["db", "downgrade", "0005"], dsn=empty_db.dsn)
    assert (kept.code, kept.stdout) == (0, "schema at 0005\n")
    assert empty_db.count("documents") == 3

    done = run_cli(["db", "downgrade", "base", "--yes"], dsn=empty_db.dsn)
    assert (done.code, done.stdout, done.stderr) == (0, "schema at base\n", "")
    assert _tables(empty_db.dsn) <= {"alembic_version"}


@pytest.mark.parametrize(("answer", "confirmed"), [("n", False), ("y", True)])
def test_downgrade_asks_on_a_terminal(empty_db: Database, answer: str, confirmed: bool) -> None:
    """A terminal on stdin: a real process (:func:`support.cli.spawn`)."""
    _with_snapshots(empty_db)
    leader, follower = os.openpty()
    try:
        os.write(leader, f"{answer}\n".encode())
        with spawn(["db", "downgrade", "base"], dsn=empty_db.dsn, stdin=follower) as proc:
            stdout, stderr = proc.communicate(timeout=DEFAULT_TIMEOUT)
    finally:
        os.close(follower)
        os.close(leader)
    out = stdout.decode()
    assert out.startswith(
        "downgrading to base would delete 2 snapshots (3 documents). Go ahead? [y/N]: "
    )
    if confirmed:
        assert (proc.returncode, out.endswith("[y/N]: schema at base\n")) == (0, True), stderr
        assert migrate.current(empty_db.dsn) is None
    else:
        assert (proc.returncode, stderr.decode()) == (1, "error: aborted\n")
        assert migrate.current(empty_db.dsn) == SCHEMA_REVISION
        assert empty_db.count("documents") == 3


def test_moving_towards_a_revision_already_passed_changes_nothing(empty_db: Database) -> None:
    migrate.upgrade(empty_db.dsn, "0005")
    up = run_cli(["db", "upgrade", "0003"], dsn=empty_db.dsn)
    assert (up.code, up.stdout) == (
        0,
        "schema at 0005 (already past 0003; `riido-pg db downgrade` goes down)\n",
    )
    down = run_cli(["db", "downgrade", "0007"], dsn=empty_db.dsn)
    assert (down.code, down.stdout) == (
        0,
        "schema at 0005 (already below 0007; `riido-pg db upgrade` goes up)\n",
    )
    assert migrate.current(empty_db.dsn) == "0005"


def test_a_schema_newer_than_this_riido_pg_is_named(empty_db: Database) -> None:
    migrate.upgrade(empty_db.dsn)
    with psycopg.connect(empty_db.dsn, autocommit=True) as conn:
        conn.execute("UPDATE riido.alembic_version SET version_num = '0099'")
    newer = (
        "the database's riido schema is newer than this riido-pg knows; "
        "use the riido-pg that migrated it"
    )
    assert run_cli(["snapshots", "list"], dsn=empty_db.dsn).stderr == f"error: {newer}\n"
    result = run_cli(["db", "downgrade", "base", "--yes"], dsn=empty_db.dsn)
    assert result.code == 1  # `db` names revisions: it is what the command is about
    assert result.stderr.startswith("error: the database has schema revision 0099, ")


@pytest.mark.parametrize(
    ("loss", "text"),
    [
        (migrate.Loss(), "nothing"),
        (migrate.Loss(snapshots=1, documents=1), "1 snapshot (1 document)"),
        (
            migrate.Loss(snapshots=12, documents=1_234_567, shards=2),
            "12 snapshots (1,234,567 documents) and the catalog of 2 shards",
        ),
        (
            migrate.Loss(snapshots=2, documents=5, corpora=1, embedded_snapshots=1, shards=1),
            "2 snapshots (5 documents), 1 evaluation corpus, the model embeddings of "
            "1 snapshot and the catalog of 1 shard",
        ),
        (migrate.Loss(corpora=3), "3 evaluation corpora"),
    ],
)
def test_loss_says_what_is_deleted(loss: migrate.Loss, text: str) -> None:
    assert loss.describe() == text
    assert bool(loss) == (text != "nothing")
