"""Global options (--dsn, --debug) work before or after the subcommand."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_cli
from support.database import Database


def test_dsn_after_the_subcommand(db: Database) -> None:
    req = {"snapshot_id": "g", "query": "read", "documents": [{"id": "a", "text": "read"}]}
    result = run_cli(
        ["hints", "--dsn", db.dsn],
        dsn=None,
        input=json.dumps(req),
        env={"RIIDO_PG_HOME": "/nonexistent/never-used"},
    )
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["candidates"] == [
        {"id": "a", "rank": 1, "bm25_score": pytest.approx(math.log(1 + 0.5 / 1.5) / (1 + 1.2))}
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["--dsn", "{dsn}", "snapshots", "list", "--format", "json"],
        ["snapshots", "list", "--dsn", "{dsn}", "--format", "json"],
        ["snapshots", "list", "--format", "json", "--dsn={dsn}"],
    ],
)
def test_dsn_before_or_after_the_subcommand(db: Database, args: list[str]) -> None:
    result = run_cli(
        [a.replace("{dsn}", db.dsn) for a in args],
        dsn=None,
        env={"RIIDO_PG_HOME": "/nonexistent/never-used"},
    )
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_a_dsn_on_the_command_line_wins_over_the_environment(db: Database) -> None:
    result = run_cli(
        ["snapshots", "list", "--dsn", db.dsn, "--format", "json"],
        dsn="postgresql://nobody@127.0.0.1:1/nothing",
    )
    assert result.code == 0, result.stderr


def test_debug_shows_the_traceback(cli: Any) -> None:
    result = cli(["query", "nope", "x", "--debug"])
    assert result.code == 1
    assert "Traceback" in result.stderr and "SnapshotNotFound" in result.stderr


def test_debug_traceback_shows_control_characters_as_escapes(cli: Any, tmp_path: Path) -> None:
    """A name from the user or an untrusted tree never drives the terminal, even in a
    traceback."""
    missing = tmp_path / "no\x1b]0;PWNED\x07\x1b[31m.jsonl"
    result = cli(["load", "x", str(missing), "--debug"])
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr.startswith("Traceback (most recent call last):\n")
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith("riido_pg.errors.InvalidInput: ")
    assert "no\\x1b]0;PWNED\\x07\\x1b[31m.jsonl: no such file or directory" in last
