"""``riido-pg eval DIR...`` over history corpora, as a user runs it: one result for
several repositories, snapshots loaded once and reused, byte-identical output on a
second run, its notes on stderr, its errors, and an interrupt between loads."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest
from support.cli import Cli, spawn
from support.corpus import write_beir
from support.database import Database
from support.gitrepos import Repo
from support.histories import history_corpus, history_repo
from support.sessions import WAIT, table_locked
from test_cli_signals import LOCK_WAIT, interrupt, wait_gone

from riido_pg.corpora.history import read_history_corpus
from riido_pg.corpora.history.corpus import render_corpus
from riido_pg.ranking.policies import evaluated_policies


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Repo]:
    root = tmp_path_factory.mktemp("repos")
    return {"py": history_repo(root / "app"), "go": history_repo(root / "store", go=True)}


def assert_one_error(result: Any, code: int, *fragments: str) -> None:
    assert (result.code, result.stdout) == (code, ""), (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def loading_lines(*dirs: Path) -> list[str]:
    """The notes of a first run: every snapshot, oldest first per corpus."""
    sids = [s for d in dirs for s in reversed(read_history_corpus(d).snapshots)]
    return [f"loading snapshot {i}/{len(sids)} {s}" for i, s in enumerate(sids, 1)]


def test_two_repositories_one_result_then_reused_byte_for_byte(
    cli: Cli, repos: dict[str, Repo], tmp_path: Path
) -> None:
    a = history_corpus(repos["py"], tmp_path / "a", name="two-py")
    b = history_corpus(repos["go"], tmp_path / "b", name="two-go")
    args = ["eval", str(a), str(b)]
    first = cli([*args, "--output", str(tmp_path / "1.json"), "--run-dir", str(tmp_path / "r1")])
    assert first.code == 0 and "per repository" in first.stdout, first.stderr  # and the table
    assert first.stderr.splitlines() == [
        *loading_lines(a, b),
        "snapshots: 8 loaded, 0 reused as stored",
    ]
    second = cli([*args, "--output", str(tmp_path / "2.json"), "--run-dir", str(tmp_path / "r2")])
    assert (second.code, second.stdout) == (0, first.stdout)
    assert second.stderr == "snapshots: 0 loaded, 8 reused as stored\n"
    assert (tmp_path / "1.json").read_bytes() == (tmp_path / "2.json").read_bytes()
    runs = sorted(p.name for p in (tmp_path / "r1").iterdir())
    assert runs == sorted(f"{p}.trec" for p in evaluated_policies(model=False))
    for name in runs:
        assert (tmp_path / "r1" / name).read_bytes() == (tmp_path / "r2" / name).read_bytes()
    qids = {line.split()[0] for line in (tmp_path / "r1" / "bm25.trec").read_text().splitlines()}
    assert len(qids) == 8 and all(q.startswith(("q-two-py-", "q-two-go-")) for q in qids)
    data = json.loads((tmp_path / "1.json").read_text())
    assert set(data["per_repo"]) == {"two-py", "two-go"}
    assert data["corpus"]["questions"] == 8 and data["corpus"]["snapshots"] == 8
    assert set(data["verdicts"]) == {
        "identifier_bm25_fused",
        "identifier_bm25_rrf",
        "structure_bm25",
    }
    printed = cli([*args, "--output", "-"])
    assert json.loads(printed.stdout) == data
    table = cli(args)
    assert table.code == 0 and "history of two-py, two-go · 8 snapshots · 8 questions" in (
        table.stdout
    )
    assert "per repository" in table.stdout and "verdict: identifier_bm25_fused" in table.stdout


def test_policy_weight_and_depth(cli: Cli, repos: dict[str, Repo], tmp_path: Path) -> None:
    a = history_corpus(repos["go"], tmp_path / "a", name="pol-go")
    runs = tmp_path / "runs"
    options = "--policy identifier_bm25_fused --fused-weight 2 --run-depth 2 --output -"
    result = cli(["eval", str(a), "--run-dir", str(runs), *options.split()])
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert list(data["policies"]) == ["identifier_bm25_fused"]
    assert data["config"]["fused_weight"] == 2.0
    lines = (runs / "identifier_bm25_fused.trec").read_text().splitlines()
    assert len(lines) == 3 * 2


def test_a_snapshot_loaded_with_load_rev_is_reused_and_an_interrupt_keeps_it(
    cli: Cli, db: Database, repos: dict[str, Repo], tmp_path: Path
) -> None:
    repo = repos["py"]
    d = history_corpus(repo, tmp_path / "c", name="sig-py")
    snapshots = read_history_corpus(d).snapshots
    sid, commit = next(iter(snapshots.items()))  # the newest: loaded last
    assert cli(["load", sid, str(repo.path), "--rev", commit]).code == 0
    before = db.counts()
    with (
        table_locked(db, "postings") as release,
        spawn(["eval", str(d)], dsn=db.dsn, env=LOCK_WAIT) as proc,
    ):
        interrupt(db, lambda: proc.send_signal(signal.SIGINT), release)
        out, err = proc.communicate(timeout=WAIT)
    assert (proc.returncode, out) == (130, b"")
    oldest = next(reversed(snapshots))
    assert err.decode() == f"loading snapshot 1/4 {oldest}\nerror: interrupted\n"
    wait_gone(db)
    assert db.counts() == before  # the snapshot loaded by hand, and nothing half stored
    done = cli(["eval", str(d)])
    assert done.code == 0
    assert done.stderr.splitlines()[-1] == "snapshots: 4 loaded, 1 reused as stored"


def test_errors(cli: Cli, db: Database, repos: dict[str, Repo], tmp_path: Path) -> None:
    good = history_corpus(repos["go"], tmp_path / "good", name="err-go")
    beir = write_beir(
        tmp_path / "beir", [{"_id": "d1", "text": "read"}], [{"_id": "q1", "text": "x"}], []
    )
    neither = tmp_path / "neither"
    neither.mkdir()
    before = db.counts()
    assert_one_error(cli(["eval", str(good), str(beir)]), 2, "BEIR directory is evaluated alone")
    assert_one_error(cli(["eval", str(beir), str(beir)]), 2, "BEIR directory is evaluated alone")
    assert_one_error(cli(["eval", str(neither)]), 2, "neither a BEIR directory")
    assert_one_error(cli(["eval", str(good), "--snapshot", "x"]), 2, "not both")
    assert db.counts() == before
    moved = tmp_path / "moved"
    shutil.copytree(good, moved)
    clone = tmp_path / "clone"
    shutil.copytree(repos["go"].path, clone)
    gone = history_corpus(Repo(clone), tmp_path / "gone", name="gone-go")
    shutil.rmtree(clone)
    assert_one_error(
        cli(["eval", str(gone)]), 2, f"{gone}: its repository is needed to load 3 snapshots"
    )
    assert db.counts() == before
    queries = moved / "queries.jsonl"
    queries.write_text(queries.read_text().replace("Trim", "Strip"))
    assert_one_error(cli(["eval", str(moved)]), 2, "does not match history.json")
    empty = tmp_path / "empty"
    (empty / "qrels").mkdir(parents=True)
    manifest = json.loads((good / "history.json").read_text())
    for rel, data in render_corpus(manifest, []).items():
        (empty / rel).write_bytes(data)
    assert_one_error(cli(["eval", str(empty)]), 2, f"{empty}/queries.jsonl: no questions")
    sid = next(iter(read_history_corpus(good).snapshots))
    with db.connect() as conn:
        conn.execute(
            "INSERT INTO riido.snapshots (snapshot_id, text_config, state, document_count, "
            "content_digest, k1, b) VALUES (%s, 'english', 'loading', 0, '', 1.2, 0.75)",
            (sid,),
        )
    assert_one_error(
        cli(["eval", str(good)]), 1, f"snapshot {sid!r} was interrupted while loading", "drop"
    )
