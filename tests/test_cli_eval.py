"""`riido-pg eval` and `riido-pg corpus docproxy` as a user runs them: output files,
the printed table, reuse of stored corpora, and bad input (one `error:` line, exit 2,
nothing stored)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.corpus import replace_line, tie_corpus, write_beir
from support.database import Database

from riido_pg.ranking import evaluated_policies

#: The policies that need nothing but the query (no hints file), from the registry.
POLICIES = evaluated_policies()


def test_eval_directory_then_stored_snapshot(cli: Any, tmp_path: Path) -> None:
    directory = tie_corpus(tmp_path / "beir")
    out1, out2, out3 = (tmp_path / f"out{i}.json" for i in (1, 2, 3))
    first = cli(["eval", str(directory), "--output", str(out1)])
    assert first.code == 0, first.stderr
    assert "stored corpus as snapshot 'beir-" in first.stderr
    for policy in POLICIES:
        assert policy in first.stdout
    assert "recall@1" in first.stdout and "mean rank" in first.stdout
    data = json.loads(out1.read_text())
    snapshot_id = data["corpus"]["snapshot_id"]
    assert snapshot_id.startswith("beir-") and snapshot_id.endswith("-english")
    assert sorted(data["policies"]) == sorted(POLICIES)

    again = cli(["eval", str(directory), "--output", str(out2)])
    assert again.code == 0, again.stderr
    assert f"reusing stored corpus as snapshot '{snapshot_id}'" in again.stderr
    assert out2.read_bytes() == out1.read_bytes()

    by_id = cli(["eval", "--snapshot", snapshot_id, "--output", str(out3)])
    assert by_id.code == 0, by_id.stderr
    assert out3.read_bytes() == out1.read_bytes()

    as_json = cli(["eval", "--snapshot", snapshot_id, "--output", "-"])
    assert as_json.code == 0
    assert as_json.stdout.encode() == out1.read_bytes()


def test_policy_option_and_run_dir(cli: Any, tmp_path: Path) -> None:
    directory = tie_corpus(tmp_path / "beir")
    runs = tmp_path / "runs"
    result = cli(
        [
            "eval",
            str(directory),
            "--policy",
            "identifier_bm25",
            "--policy",
            "bm25",
            "--run-dir",
            str(runs),
            "--run-depth",
            "2",
            "--output",
            "-",
        ]
    )
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert sorted(data["policies"]) == ["bm25", "identifier_bm25"]
    assert list(data["versus_baseline"]) == ["identifier_bm25"]
    assert sorted(p.name for p in runs.iterdir()) == ["bm25.trec", "identifier_bm25.trec"]
    assert len((runs / "bm25.trec").read_text().splitlines()) == 6 * 2


def test_text_config_simple(cli: Any, tmp_path: Path) -> None:
    directory = tie_corpus(tmp_path / "beir")
    result = cli(["eval", str(directory), "--text-config", "simple", "--output", "-"])
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["config"]["text_config"] == "simple"
    assert data["corpus"]["snapshot_id"].endswith("-simple")
    mismatch = cli(
        ["eval", "--snapshot", data["corpus"]["snapshot_id"], "--text-config", "english"]
    )
    assert mismatch.code == 2
    assert mismatch.stderr.startswith("error: ") and "uses text config 'simple'" in mismatch.stderr


def test_question_without_targets_is_skipped_and_counted(cli: Any, tmp_path: Path) -> None:
    directory = write_beir(
        tmp_path / "beir",
        [{"_id": "d1", "text": "open a file"}, {"_id": "d2", "text": "close a file"}],
        [
            {"_id": "q1", "text": "open file"},
            {"_id": "q2", "text": "nothing"},
            {"_id": "q3", "text": "also nothing"},
        ],
        [("q1", "d1", 1), ("q2", "d2", 0)],
    )
    result = cli(["eval", str(directory), "--output", "-"])
    assert result.code == 0, result.stderr
    corpus = json.loads(result.stdout)["corpus"]
    assert corpus["questions"] == 1
    assert corpus["skipped_questions"] == 2
    table = cli(["eval", str(directory)])
    assert "2 without targets skipped" in table.stdout


def assert_one_error(result: Any, *fragments: str) -> None:
    assert result.code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert "Traceback" not in result.stderr


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Path]:
    yield write_beir(
        tmp_path / "bad",
        [{"_id": f"d{i}", "text": f"document number {i}"} for i in range(5)],
        [{"_id": f"q{i}", "text": f"number {i}"} for i in range(3)],
        [("q0", "d0", 1), ("q1", "d1", 1), ("q2", "d2", 1)],
    )


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        (lambda d: (d / "queries.jsonl").unlink(), ["queries.jsonl", "missing"]),
        (lambda d: (d / "qrels" / "test.tsv").unlink(), ["test.tsv", "missing"]),
        (
            lambda d: replace_line(d / "corpus.jsonl", 4, "{broken\n"),
            ["corpus.jsonl: line 4", "malformed JSON"],
        ),
        (
            lambda d: replace_line(d / "queries.jsonl", 2, "[1]\n"),
            ["queries.jsonl: line 2", "JSON object"],
        ),
        (
            lambda d: replace_line(d / "qrels" / "test.tsv", 3, "q1\tnope\t1\n"),
            ["test.tsv: line 3", "unknown document 'nope'"],
        ),
        (
            lambda d: replace_line(d / "qrels" / "test.tsv", 4, "qX\td2\t1\n"),
            ["test.tsv: line 4", "unknown question 'qX'"],
        ),
        (lambda d: (d / "corpus.jsonl").write_text(""), ["corpus.jsonl", "no documents"]),
    ],
)
def test_bad_input_one_error_line_nothing_stored(
    cli: Any, db: Database, fresh: Path, change: Any, fragments: list[str]
) -> None:
    before = db.counts()
    change(fresh)
    assert_one_error(cli(["eval", str(fresh)]), *fragments)
    assert db.counts() == before


def test_usage_errors(cli: Any, db: Database, fresh: Path, tmp_path: Path) -> None:
    before = db.counts()
    assert_one_error(cli(["eval"]), "give a DIR", "history corpora", "--snapshot")
    assert_one_error(cli(["eval", str(fresh), "--snapshot", "x"]), "not both")
    assert_one_error(cli(["eval", str(tmp_path / "nowhere")]), "no such directory", "--snapshot")
    assert_one_error(cli(["eval", str(fresh / "corpus.jsonl")]), "not a directory")
    assert_one_error(
        cli(["eval", str(fresh), "--policy", "external_hints_baseline_first"]),
        "external_hints_baseline_first",
    )
    assert_one_error(cli(["eval", str(fresh), "--policy", "nope"]), "unknown policy")
    assert_one_error(
        cli(["eval", str(fresh), "--text-config", "klingon"]), "text search configuration"
    )
    assert_one_error(cli(["eval", "--snapshot", "missing"]), "no snapshot 'missing'")
    assert db.counts() == before
    assert cli(["load", "plain", str(fresh)]).code == 0
    assert_one_error(cli(["eval", "--snapshot", "plain"]), "no stored questions")


def test_cli_import_stays_light() -> None:
    code = (
        "import sys, riido_pg.cli; "
        "print(sorted(m for m in ('numpy', 'scipy', 'riido_pg.evaluation') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the documentation-proxy corpus --------------------------------------------------

HAVE_DOCPROXY = importlib.util.find_spec("riido_pg.corpora.docproxy") is not None


@pytest.fixture(scope="module")
def docproxy_dir(docproxy: Any) -> Path:
    if not HAVE_DOCPROXY:
        pytest.skip("riido_pg.corpora.docproxy is not available")
    out: Path = docproxy.out
    return out


@pytest.mark.network
@pytest.mark.slow
def test_corpus_docproxy_command(
    cli: Any, docproxy_dir: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    if cache is None:
        pytest.skip("needs the pytest cache for the downloaded sdists")
    out = tmp_path / "dp"
    result = cli(
        ["corpus", "docproxy", str(out), "--cache-dir", str(cache.mkdir("riido-pg-docproxy"))]
    )
    assert result.code == 0, result.stderr
    assert result.stdout.startswith(f"wrote {out}: ")
    assert result.stdout.count("\n") == 1 and "wrote" not in result.stderr  # said once
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        assert (out / name).read_bytes() == (docproxy_dir / name).read_bytes()


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("text_config", ["english", "simple"])
def test_docproxy_baseline_first_keeps_bm25_recall_at_1(
    cli: Any, docproxy_dir: Path, text_config: str
) -> None:
    result = cli(
        ["eval", str(docproxy_dir), "--text-config", text_config, "--output", "-"], timeout=600
    )
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["corpus"]["documents"] > 1000 and data["corpus"]["questions"] > 1000
    assert sorted(data["per_repo"]) == ["click", "rich", "sqlalchemy"]
    policies = data["policies"]
    assert policies["identifier_bm25_baseline_first"]["recall@1"] == policies["bm25"]["recall@1"]
    for repo in data["per_repo"].values():
        assert repo["identifier_bm25_baseline_first"]["recall@1"] == repo["bm25"]["recall@1"]
