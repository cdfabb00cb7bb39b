"""Global options (--dsn, --debug) work before or after the subcommand."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from conftest import Database, run_cli

from riido_pg.cli import hoist_global_options


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["query", "s", "q", "--dsn", "X"], ["--dsn", "X", "query", "s", "q"]),
        (["query", "--dsn=X", "s", "q"], ["--dsn=X", "query", "s", "q"]),
        (["--dsn", "X", "hints"], ["--dsn", "X", "hints"]),
        (["hints", "--debug"], ["--debug", "hints"]),
        (["query", "s", "--", "--dsn", "X"], ["query", "s", "--", "--dsn", "X"]),
        (["query", "s", "--dsn"], ["query", "s", "--dsn"]),
    ],
)
def test_hoist(args: list[str], expected: list[str]) -> None:
    assert hoist_global_options(args) == expected


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


def test_debug_shows_the_traceback(cli: Any) -> None:
    result = cli(["query", "nope", "x", "--debug"])
    assert result.code == 1
    assert "Traceback" in result.stderr and "SnapshotNotFound" in result.stderr
