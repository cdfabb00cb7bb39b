"""`riido-pg hints`: the README main-job example and its variants, exact output."""

from __future__ import annotations

import json
from typing import Any

from support.cli import EXAMPLE
from support.database import Database


def _ids(out: str) -> list[str]:
    return [c["id"] for c in json.loads(out)["candidates"]]


def test_identifier_hints_order_is_a_c_b(cli: Any) -> None:
    result = cli(["hints", "--identifier-hints"], input=EXAMPLE)
    assert result.code == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["snapshot_id"] == "demo"
    assert body["policy"] == "identifier_bm25_baseline_first"
    assert body["status"] == "unverified"
    assert _ids(result.stdout) == ["a", "c", "b"]
    assert [c["rank"] for c in body["candidates"]] == [1, 2, 3]
    scores = {c["id"]: c["bm25_score"] for c in body["candidates"]}
    # raw-column scores whatever the policy: "c" has no raw match
    assert scores["c"] == 0.0
    assert scores["a"] == scores["b"] > 0
    assert "text" not in result.stdout


def test_default_policy_is_bm25_in_id_order_on_ties(cli: Any) -> None:
    result = cli(["hints"], input=EXAMPLE)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["policy"] == "bm25"
    assert _ids(result.stdout) == ["a", "b", "c"]


def test_hints_persist_nothing(cli: Any, db: Database) -> None:
    before = db.counts()
    assert cli(["hints", "--identifier-hints"], input=EXAMPLE).code == 0
    assert db.counts() == before


def test_identifier_hints_and_hints_file_conflict(cli: Any, tmp_path: Any) -> None:
    hints = tmp_path / "h.json"
    hints.write_text('["a"]')
    result = cli(["hints", "--identifier-hints", "--hints-file", str(hints)], input=EXAMPLE)
    assert result.code == 2
    assert result.stdout == ""
    assert result.stderr == ("error: --identifier-hints and --hints-file cannot be used together\n")
