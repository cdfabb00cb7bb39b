"""Timeouts: a statement timeout for queries and a lock timeout, so the CLI never
hangs; both surface as one `error:` line with exit 1."""

from __future__ import annotations

import time
from typing import Any

import pytest
from support.cli import run_cli
from support.database import Database
from support.sessions import table_locked

from riido_pg import Document, load_snapshot


@pytest.fixture(scope="module", autouse=True)
def snapshot(db: Database) -> None:
    docs = [
        Document(f"d{i:05d}", f"def read_config_{i}(path): return parse(path) {i}")
        for i in range(20_000)
    ]
    with db.connect() as conn:
        load_snapshot(conn, "t", docs)


def test_statement_timeout(db: Database) -> None:
    result = run_cli(
        ["query", "t", "read config path parse return def"],
        dsn=db.dsn,
        env={"RIIDO_PG_STATEMENT_TIMEOUT_MS": "1"},
    )
    assert result.code == 1
    assert result.stderr == (
        "error: statement ran past the statement timeout; raise RIIDO_PG_STATEMENT_TIMEOUT_MS "
        "(milliseconds) or narrow the work\n"
    )
    ok = run_cli(["query", "t", "read config", "--limit", "1"], dsn=db.dsn)
    assert ok.code == 0, ok.stderr


def test_lock_timeout_instead_of_hanging(db: Database) -> None:
    with table_locked(db, "postings"):
        started = time.monotonic()
        result = run_cli(
            ["query", "t", "read config"], dsn=db.dsn, env={"RIIDO_PG_LOCK_TIMEOUT_MS": "500"}
        )
        elapsed = time.monotonic() - started
    assert result.code == 1
    assert result.stderr == (
        "error: waited too long for a lock held by another session; try again, or raise "
        "RIIDO_PG_LOCK_TIMEOUT_MS\n"
    )
    assert elapsed < 10


def test_loads_are_not_cut_by_the_query_timeout(db: Database, tmp_path: Any) -> None:
    src = tmp_path / "d.jsonl"
    src.write_text("".join(f'{{"id": "x{i}", "text": "alpha beta {i}"}}\n' for i in range(5000)))
    result = run_cli(
        ["load", "slow", str(src)], dsn=db.dsn, env={"RIIDO_PG_STATEMENT_TIMEOUT_MS": "50"}
    )
    assert result.code == 0, result.stderr
