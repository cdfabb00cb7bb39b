"""Run files never carry a forged field or line: a question or document id that holds
whitespace or a control character is refused, exit 2, and no run file is written
(issue 27, item 8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ir_measures
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.cli import Cli
from support.corpus import write_beir
from support.database import Database

from riido_pg.errors import ConflictingOptions
from riido_pg.evaluation.runfiles import check_run_ids, unsafe_run_id

FORGED = "evil\nq2 Q0 target 1 999999 bm25"


def _control(c: str) -> bool:
    return ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F


@given(st.text(min_size=1))
def test_an_id_is_safe_exactly_when_it_is_one_field_without_controls(value: str) -> None:
    one_field = value.split() == [value] and f"q Q0 {value} 1 1 t".split(" ")[2] == value
    safe = one_field and not any(_control(c) for c in value)
    assert unsafe_run_id(value) is not safe


@given(st.lists(st.text(min_size=1), min_size=1))
def test_a_safe_line_parses_back_to_its_six_fields(ids: list[str]) -> None:
    for doc_id in ids:
        if unsafe_run_id(doc_id):
            with pytest.raises(ConflictingOptions, match="cannot hold it"):
                check_run_ids("document", [doc_id])
        else:
            fields = f"q1 Q0 {doc_id} 1 9 bm25\n".split()
            assert fields == ["q1", "Q0", doc_id, "1", "9", "bm25"]


def _corpus(directory: Path, doc_id: str, query_id: str = "q1") -> Path:
    return write_beir(
        directory,
        [
            {"_id": doc_id, "text": "read the config file"},
            {"_id": "target", "text": "write the config"},
            {"_id": "other", "text": "parse"},
        ],
        [{"_id": query_id, "text": "read config"}, {"_id": "q2", "text": "write config"}],
        [(query_id, "target", 1), ("q2", "target", 1)],
    )


@pytest.mark.parametrize(
    ("doc_id", "query_id", "kind"),
    [
        (FORGED, "q1", "document"),
        ("with space", "q1", "document"),
        ("with\ttab", "q1", "document"),
        ("no-break\u00a0space", "q1", "document"),
        ("esc\x1b[31m", "q1", "document"),
        ("fine", "q 1", "question"),
    ],
)
def test_eval_refuses_ids_a_run_file_cannot_hold(
    cli: Cli, db: Database, tmp_path: Path, doc_id: str, query_id: str, kind: str
) -> None:
    beir = _corpus(tmp_path / "beir", doc_id, query_id)
    runs = tmp_path / "runs"
    result = cli(["eval", str(beir), "--run-dir", str(runs), "--output", "-"])
    assert (result.code, result.stdout) == (2, ""), result
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: {kind} id "), result.stderr
    assert "a TREC run file cannot hold it; evaluate without --run-dir" in result.stderr
    assert not runs.exists()  # nothing written, not even the directory
    plain = cli(["eval", str(beir), "--output", "-"])  # the same corpus without run files
    assert plain.code == 0, plain.stderr
    assert json.loads(plain.stdout)["corpus"]["questions"] == 2


def test_run_files_of_safe_ids_read_back_whole(cli: Cli, tmp_path: Path) -> None:
    beir = _corpus(tmp_path / "beir", "näive:ünïcode/id.py:1")
    runs = tmp_path / "runs"
    result = cli(["eval", str(beir), "--run-dir", str(runs), "--policy", "bm25"])
    assert result.code == 0, result.stderr
    run: Any = list(ir_measures.read_trec_run(str(runs / "bm25.trec")))
    assert {r.doc_id for r in run} == {"näive:ünïcode/id.py:1", "target", "other"}
    assert {r.query_id for r in run} == {"q1", "q2"}
    assert len(run) == 6
