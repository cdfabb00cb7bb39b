"""The in-process CLI runner (support.cli.run_cli) gives what a real ``riido-pg``
process gives, and leaves this process as it found it: environment, logging, the
SIGTERM and SIGALRM handlers, the model cache. A run past its timeout fails the test
and leaves no session behind; the runner refuses to run outside the main thread."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from support.cli import EXAMPLE, run_cli, run_cli_process
from support.corpus import write_jsonl
from support.database import Database
from support.extract_golden import FIXTURES
from support.sessions import table_locked, wait_for

from riido_pg import Document, load_snapshot


@pytest.fixture(scope="module", autouse=True)
def snapshot(db: Database) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "q", [Document("a", "read config"), Document("b", "parse json")])


UNREACHABLE = "postgresql://nobody@127.0.0.1:1/nothing"

#: (arguments, stdin, environment): every kind of output the CLI has
CASES: dict[str, tuple[list[str], bytes | None, dict[str, str]]] = {
    "version": (["--version"], None, {}),
    "no arguments: help on stderr": ([], None, {}),
    "help": (["query", "--help"], None, {}),
    "help, narrow terminal": (["load", "--help"], None, {"COLUMNS": "60"}),
    "usage error": (["query", "q", "x", "--limit", "0"], None, {}),
    "unknown option": (["query", "q", "-read"], None, {}),
    "json": (["query", "q", "read config"], None, {}),
    "table": (["query", "q", "read config", "--format", "table"], None, {}),
    "note on stderr": (["query", "q", "the of and"], None, {}),
    "not utf-8 on the command line": (["query", "q", "read \udcff config"], None, {}),
    "stdin": (["hints", "--identifier-hints"], EXAMPLE.encode(), {}),
    "stdin not utf-8": (["hints"], b"\xff\xfe{}", {}),
    "user error": (["query", "nope", "x"], None, {}),
    "environment error": (["snapshots", "list", "--dsn", UNREACHABLE], None, {}),
    "bad environment variable": (
        ["query", "q", "read"],
        None,
        {"RIIDO_PG_STATEMENT_TIMEOUT_MS": "soon"},
    ),
    "listing": (["snapshots", "list"], None, {}),
    "schema": (["db", "current"], None, {}),
    "extract to stdout": (["extract", str(FIXTURES / "go")], None, {}),
}


@pytest.mark.parametrize("case", CASES)
def test_in_process_equals_a_real_process(db: Database, case: str) -> None:
    args, stdin, env = CASES[case]
    real = run_cli_process(args, dsn=db.dsn, input=stdin, env=env)
    assert run_cli(args, dsn=db.dsn, input=stdin, env=env) == real
    assert real.stdout or real.stderr  # the case does say something


def test_debug_traceback_as_the_interpreter_prints_it(db: Database) -> None:
    args = ["query", "nope", "x", "--debug"]
    real, here = run_cli_process(args, dsn=db.dsn), run_cli(args, dsn=db.dsn)
    assert (here.code, here.stdout) == (real.code, real.stdout) == (1, "")
    for result in (real, here):
        assert result.stderr.startswith("Traceback (most recent call last):\n")
    last = real.stderr.splitlines()[-1]
    assert last.startswith("riido_pg.errors.SnapshotNotFound: no snapshot 'nope'")
    assert here.stderr.splitlines()[-1] == last


def _state() -> dict[str, Any]:
    root = logging.getLogger()
    return {
        "environ": dict(os.environ),
        "root handlers": list(root.handlers),
        "root level": root.level,
        "logging disabled": logging.root.manager.disable,
        "sigterm": signal.getsignal(signal.SIGTERM),
        "sigalrm": signal.getsignal(signal.SIGALRM),
    }


def test_a_run_leaves_this_process_as_it_was(db: Database, tmp_path: Path) -> None:
    before = _state()
    src = write_jsonl(tmp_path / "d.jsonl", [{"id": "x", "text": "read"}])
    for args in (
        ["query", "q", "read", "--debug"],  # --debug configures logging
        ["load", "state", str(src)],
        ["query", "nope", "x"],
    ):
        run_cli(args, dsn=db.dsn, env={"RIIDO_PG_EXTRA": "1"})
        assert _state() == before, args


def test_the_run_sees_only_its_own_environment(db: Database) -> None:
    """The runner's RIIDO_PG_* variables are not the run's: RIIDO_PG_DSN is the one
    given (here none, so the --dsn option decides)."""
    os.environ["RIIDO_PG_STATEMENT_TIMEOUT_MS"] = "not a number"
    try:
        result = run_cli(["snapshots", "list", "--dsn", db.dsn, "--format", "json"], dsn=None)
    finally:
        del os.environ["RIIDO_PG_STATEMENT_TIMEOUT_MS"]
    assert (result.code, result.stderr) == (0, "")


def test_the_model_cache_starts_empty_and_is_emptied(db: Database) -> None:
    pytest.importorskip("tokenizers", reason="needs the model extra")
    from riido_pg.ranking.model_hints import model_named

    model_named("wordllama-256")  # warm in this process
    result = run_cli(["query", "q", "read", "--model", "wordllama-256"], dsn=db.dsn)
    assert result.code == 2 and "has no embeddings" in result.stderr
    assert model_named.cache_info().currsize == 0


def test_a_run_past_its_timeout_fails_and_leaves_no_session(db: Database) -> None:
    before = _state()
    with table_locked(db, "postings"), pytest.raises(subprocess.TimeoutExpired):
        run_cli(
            ["query", "q", "read"],
            dsn=db.dsn,
            env={"RIIDO_PG_LOCK_TIMEOUT_MS": "600000"},
            timeout=1,
        )
    assert _state() == before
    wait_for(
        db,
        "SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = 'riido-pg')",
    )


def test_only_in_the_main_thread(db: Database) -> None:
    raised: list[BaseException] = []

    def run() -> None:
        try:
            run_cli(["--version"], dsn=db.dsn)
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert [type(e) for e in raised] == [RuntimeError]
