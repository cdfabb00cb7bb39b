"""Test database plumbing, in one place.

The server: ``RIIDO_PG_TEST_DSN`` when set (CI points it at the machine's
PostgreSQL), otherwise an embedded server under a temporary ``RIIDO_PG_HOME``.
Each test module gets a fresh database, migrated to head, dropped afterwards.
If the server cannot be reached the run stops with one clear message.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import databases
import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

REPO = Path(__file__).resolve().parent.parent

#: Every table of the riido schema (but alembic's).
ALL_TABLES = (
    "snapshots",
    "documents",
    "postings",
    "questions",
    "targets",
    "eval_corpora",
    "snapshot_models",
    "embeddings",
    "load_stage",
)

#: The README main-job example request.
EXAMPLE_REQUEST: dict[str, Any] = {
    "snapshot_id": "demo",
    "query": "read config",
    "documents": [
        {"id": "a", "text": "read"},
        {"id": "b", "text": "config"},
        {"id": "c", "text": "func ReadConfig() {}"},
    ],
}
#: ... as the JSON text piped into `riido-pg hints`.
EXAMPLE = json.dumps(EXAMPLE_REQUEST)


def _server_dsn() -> str:
    dsn = os.environ.get("RIIDO_PG_TEST_DSN")
    if dsn:
        return dsn
    # Not under pytest's tmp dir: as root every new pytest session resets that to 0700,
    # which would lock the server (running as embedded_postgres) out of its data.
    home = Path(tempfile.mkdtemp(prefix="riido-pg-test-")) / "embedded-home"
    os.environ["RIIDO_PG_HOME"] = str(home)
    from riido_pg.server.embedded import embedded_dsn

    return embedded_dsn()


@pytest.fixture(scope="session")
def server_dsn() -> Iterator[str]:
    try:
        dsn = _server_dsn()
        with psycopg.connect(dsn, connect_timeout=10, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:
        pytest.exit(
            f"cannot reach the test PostgreSQL ({exc}); set RIIDO_PG_TEST_DSN to a server "
            "or let the tests start the embedded one",
            returncode=3,
        )
    yield dsn
    if not os.environ.get("RIIDO_PG_TEST_DSN"):
        from riido_pg.server.embedded import stop_embedded

        stop_embedded()
        shutil.rmtree(Path(os.environ["RIIDO_PG_HOME"]).parent, ignore_errors=True)


@dataclass(frozen=True)
class Database:
    dsn: str
    name: str

    def connect(self, **kwargs: Any) -> psycopg.Connection[Any]:
        return psycopg.connect(self.dsn, autocommit=True, **kwargs)

    def counts(self) -> dict[str, int]:
        """Row counts of every riido table, to show that a failure stored nothing."""
        return {t: self.count(t) for t in ALL_TABLES}

    def count(self, table: str) -> int:
        with self.connect() as conn:
            row = conn.execute(
                sql.SQL("SELECT count(*) FROM riido.{}").format(sql.Identifier(table))
            ).fetchone()
            assert row is not None
            return int(row[0])


def create_database(server_dsn: str, prefix: str, *, migrated: bool = True) -> Database:
    name, dsn = databases.create_database(server_dsn, prefix, migrated=migrated)
    return Database(dsn, name)


drop_database = databases.drop_database


@pytest.fixture(scope="module")
def db(server_dsn: str, request: pytest.FixtureRequest) -> Iterator[Database]:
    """A fresh, migrated database for this test module."""
    prefix = "riido_t_" + request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")[:30]
    database = create_database(server_dsn, prefix.lower())
    yield database
    drop_database(server_dsn, database.name)


@pytest.fixture
def conn(db: Database) -> Iterator[psycopg.Connection[Any]]:
    with db.connect() as connection:
        yield connection


@dataclass(frozen=True)
class CliResult:
    code: int
    stdout: str
    stderr: str


def run_cli(
    args: list[str],
    *,
    dsn: str | None,
    input: bytes | str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> CliResult:
    """Run ``python -m riido_pg ARGS`` as a user would, with RIIDO_PG_DSN set to ``dsn``."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("RIIDO_PG_")}
    if dsn is not None:
        full_env["RIIDO_PG_DSN"] = dsn
    full_env.update(env or {})
    data = input.encode() if isinstance(input, str) else input
    proc = subprocess.run(
        [sys.executable, "-m", "riido_pg", *args],
        input=data if data is not None else b"",
        capture_output=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )
    return CliResult(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


@pytest.fixture
def cli(db: Database) -> Any:
    """``cli(args, input=...)`` runs the CLI against this module's database."""

    def _run(args: list[str], **kwargs: Any) -> CliResult:
        return run_cli(args, dsn=db.dsn, **kwargs)

    return _run


@contextmanager
def table_locked(db: Database, table: str) -> Iterator[threading.Event]:
    """Another session holds ACCESS EXCLUSIVE on riido.<table> until the block ends or
    the yielded event is set."""
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        with db.connect() as conn, conn.transaction():
            conn.execute(
                sql.SQL("LOCK TABLE riido.{} IN ACCESS EXCLUSIVE MODE").format(
                    sql.Identifier(table)
                )
            )
            locked.set()
            release.wait(120)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(10)
        yield release
    finally:
        release.set()
        holder.join()


@contextmanager
def readers(
    db: Database, read: Callable[[psycopg.Connection[Any]], None], n: int = 3
) -> Iterator[list[BaseException]]:
    """``n`` threads calling ``read(conn)`` over and over, each on a connection of its
    own, for the block; yields the list of what they raised (a thread stops at its
    first error), for the caller to assert on after the block."""
    errors: list[BaseException] = []
    stop = threading.Event()

    def loop() -> None:
        try:
            with db.connect() as conn:
                while not stop.is_set():
                    read(conn)
        except BaseException as exc:  # surfaced by the caller
            errors.append(exc)

    threads = [threading.Thread(target=loop) for _ in range(n)]
    for t in threads:
        t.start()
    try:
        yield errors
    finally:
        stop.set()
        for t in threads:
            t.join()


@contextmanager
def login_role(db: Database, server_dsn: str, grant: Callable[[str], None]) -> Iterator[str]:
    """A new login role, given rights by ``grant(role)``; yields its DSN for ``db`` and
    drops the role afterwards."""
    role = f"riido_reader_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
    try:
        grant(role)
        yield make_conninfo(db.dsn, user=role)
    finally:
        with db.connect() as conn:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        with psycopg.connect(server_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
