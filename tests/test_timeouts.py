"""Timeouts: a statement timeout for queries and a lock timeout, so the CLI never
hangs; both surface as one `error:` line with exit 1."""

from __future__ import annotations

import json
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


STATEMENT_TIMEOUT_ERROR = (
    "error: statement ran past the statement timeout; raise RIIDO_PG_STATEMENT_TIMEOUT_MS "
    "(milliseconds) or narrow the work\n"
)


def _request(n: int) -> str:
    """A ``hints`` request of ``n`` generated documents of many distinct words each."""
    docs = [
        {"id": f"d{i:05d}", "text": " ".join(f"w{(i * j) % 4999}_{j}" for j in range(80))}
        for i in range(n)
    ]
    return json.dumps({"snapshot_id": "s", "query": "w1_1 w2_2 w3_3", "documents": docs})


def test_hints_writes_its_documents_under_the_statement_timeout(db: Database) -> None:
    """Writing the scratch snapshot is part of ``hints``: a statement of it that runs
    past RIIDO_PG_STATEMENT_TIMEOUT_MS stops the command. A session holding the texts
    table makes the first write wait (for longer than the timeout, shorter than the lock
    timeout): it used to wait under the load timeout instead, until the lock timeout."""
    before = db.counts()
    env = {"RIIDO_PG_STATEMENT_TIMEOUT_MS": "300", "RIIDO_PG_LOCK_TIMEOUT_MS": "60000"}
    with table_locked(db, "texts"):
        result = run_cli(["hints", "--limit", "1"], input=_request(10), dsn=db.dsn, env=env)
    assert (result.code, result.stdout, result.stderr) == (1, "", STATEMENT_TIMEOUT_ERROR)
    assert db.counts() == before


def test_hints_of_many_documents_stop_at_a_small_statement_timeout(db: Database) -> None:
    before = db.counts()
    result = run_cli(
        ["hints"], input=_request(20_000), dsn=db.dsn, env={"RIIDO_PG_STATEMENT_TIMEOUT_MS": "5"}
    )
    assert (result.code, result.stdout, result.stderr) == (1, "", STATEMENT_TIMEOUT_ERROR)
    assert db.counts() == before
    ok = run_cli(["hints", "--limit", "1"], input=_request(20), dsn=db.dsn)
    assert ok.code == 0, ok.stderr
