"""``Database.evaluate`` over history corpora: each question ranked in its own
snapshot, snapshots loaded once (oldest first) and reused, one result for several
repositories, and the errors.

The repositories are small and built once per module (``support.histories``); each
test names its corpora apart (``name=``), so its snapshots are its own.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.database import Database as ModuleDatabase
from support.gitrepos import Repo
from support.histories import history_corpus, history_repo

from riido_pg import Database, rank_snapshot
from riido_pg.corpora.history import HistoryOptions, build, read_history_corpus
from riido_pg.errors import ConflictingOptions, InvalidCorpus, SnapshotLoading
from riido_pg.evaluation.inspection import INSPECTION_NAMES
from riido_pg.evaluation.metrics import MEASURE_NAMES, rounded
from riido_pg.ranking.policies import evaluated_policies
from riido_pg.sources import TreeOptions
from riido_pg.storage.snapshots import insert_snapshot_row


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Repo]:
    root = tmp_path_factory.mktemp("repos")
    return {"py": history_repo(root / "app"), "go": history_repo(root / "store", go=True)}


def corpus(repos: dict[str, Repo], kind: str, tmp_path: Path, name: str, **options: Any) -> Path:
    return history_corpus(repos[kind], tmp_path / name, name=name, **options)


def first_rank(conn: Any, snapshot_id: str, text: str, policy: str, targets: set[str]) -> int:
    ranking = rank_snapshot(conn, snapshot_id, text, policy=policy)
    ids = [c.id for c in ranking.candidates]
    assert len(ids) == ranking.total
    return min(ids.index(t) for t in targets) + 1


def by_hand(ranks: list[int]) -> dict[str, float]:
    n = len(ranks)
    return {
        "recall@1": rounded(sum(r <= 1 for r in ranks) / n),
        "recall@10": rounded(sum(r <= 10 for r in ranks) / n),
        "mrr": rounded(sum(1 / r for r in ranks) / n),
        "mean_first_target_rank": rounded(sum(ranks) / n),
    }


def ranked(figures: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The rank measures of each policy's figures (without the inspection cost)."""
    return {p: {k: v for k, v in f.items() if k in MEASURE_NAMES} for p, f in figures.items()}


def test_metrics_are_the_ranks_of_each_question_in_its_snapshot(
    conn: Any, repos: dict[str, Repo], tmp_path: Path
) -> None:
    dirs = [corpus(repos, "py", tmp_path, "mx-py"), corpus(repos, "go", tmp_path, "mx-go")]
    done = Database(conn).evaluate(dirs)
    data = done.evaluation.to_dict()
    policies = evaluated_policies(model=False)
    assert tuple(data["policies"]) == policies
    ranks: dict[str, dict[str, list[int]]] = {}  # repo -> policy -> ranks
    snapshots = []
    for d in dirs:
        hc = read_history_corpus(d)
        for q in hc.questions:
            assert q.snapshot_id == f"{hc.name}@{q.parent[:12]}"
            snapshots.append(q.snapshot_id)
            for p in policies:
                rank = first_rank(conn, q.snapshot_id, q.text, p, set(q.targets))
                ranks.setdefault(hc.name, {}).setdefault(p, []).append(rank)
    everything = {p: [r for repo in ranks.values() for r in repo[p]] for p in policies}
    assert ranked(data["policies"]) == {p: by_hand(everything[p]) for p in policies}
    assert {repo: ranked(figures) for repo, figures in data["per_repo"].items()} == {
        repo: {p: by_hand(rs[p]) for p in policies} for repo, rs in ranks.items()
    }
    for figures in [data["policies"], *data["per_repo"].values()]:  # and what is read
        assert all(set(INSPECTION_NAMES) <= set(f) for f in figures.values())
    assert set(everything["bm25"]) != {1}  # the questions are not all easy
    for p in policies[1:]:
        pairs = list(zip(everything[p], everything["bm25"], strict=True))
        assert data["versus_baseline"][p] == {
            "improved": sum(a < b for a, b in pairs),
            "worsened": sum(a > b for a, b in pairs),
            "unchanged": sum(a == b for a, b in pairs),
        }
    assert set(data["verdicts"]) == {
        "identifier_bm25_fused",
        "identifier_bm25_rrf",
        "structure_bm25",
    }
    assert data["corpus"]["kind"] == "history"
    assert data["corpus"]["questions"] == len(snapshots) == data["corpus"]["snapshots"]
    assert [c["repository"] for c in data["corpus"]["corpora"]] == ["mx-py", "mx-go"]
    assert sorted(done.loaded) == sorted(snapshots) and done.reused == ()
    assert done.snapshot_id is None and done.evaluation.snapshot_id is None


def test_snapshots_are_loaded_oldest_first_once_and_reused(
    conn: Any, db: ModuleDatabase, repos: dict[str, Repo], tmp_path: Path
) -> None:
    d = corpus(repos, "py", tmp_path, "re-py")
    hc = read_history_corpus(d)
    facade = Database(conn)
    seen: list[tuple[str, int, int]] = []
    notes: list[str] = []
    first = facade.evaluate(
        d,
        run_dir=tmp_path / "runs1",
        progress=lambda phase, done, total: seen.append((phase, done, total)),
        note=notes.append,
    )
    oldest_first = list(reversed(hc.snapshots))
    assert list(first.loaded) == oldest_first
    assert notes == [f"loading snapshot {i}/5 {sid}" for i, sid in enumerate(oldest_first, 1)]
    assert [s for s in seen if s[0] == "snapshots"] == [("snapshots", i, 5) for i in range(6)]
    assert seen[-1] == ("evaluating questions", 5, 5)
    bases = {p.snapshot.snapshot_id: p.snapshot.base for p in facade.snapshots().snapshots}
    assert any(bases[s] is not None for s in oldest_first[1:])  # storage is shared
    created = {s: facade.get(s).created_at for s in oldest_first}
    newest = oldest_first[-1]  # read last, its files mostly from the shared cache
    facade.load("re-check", repos["py"].path, tree=TreeOptions(rev=hc.snapshots[newest]))
    assert facade.get("re-check").content_digest == facade.get(newest).content_digest
    facade.drop("re-check")
    before = db.counts()
    second = facade.evaluate(d, run_dir=tmp_path / "runs2", note=notes.append)
    assert second.loaded == () and list(second.reused) == oldest_first
    assert len(notes) == 5 and db.counts() == before
    assert {s: facade.get(s).created_at for s in oldest_first} == created
    assert second.evaluation.to_json() == first.evaluation.to_json()
    names = sorted(p.name for p in (tmp_path / "runs1").iterdir())
    assert names == sorted(f"{p}.trec" for p in evaluated_policies(model=False))
    for name in names:
        assert (tmp_path / "runs1" / name).read_bytes() == (tmp_path / "runs2" / name).read_bytes()


def test_run_files_name_questions_and_functions(
    conn: Any, repos: dict[str, Repo], tmp_path: Path
) -> None:
    d = corpus(repos, "go", tmp_path, "run-go")
    hc = read_history_corpus(d)
    Database(conn).evaluate(d, policies=["bm25"], run_dir=tmp_path / "runs", run_depth=3)
    lines = (tmp_path / "runs" / "bm25.trec").read_text().splitlines()
    expected = []
    for sid in reversed(hc.snapshots):  # the snapshots in load order
        for q in sorted(hc.questions_of(sid), key=lambda q: q.id):
            ranking = rank_snapshot(conn, sid, q.text, limit=3)
            n = ranking.total
            expected += [
                f"{q.id} Q0 {c.id} {r} {n - r + 1} bm25"
                for r, c in enumerate(ranking.candidates, 1)
            ]
    assert lines == expected
    assert any(":ReadKey:" in line for line in lines)


def test_a_snapshot_loaded_by_hand_is_reused(
    conn: Any, repos: dict[str, Repo], tmp_path: Path
) -> None:
    d = corpus(repos, "py", tmp_path, "hand-py", langs=["python"])
    hc = read_history_corpus(d)
    sid, commit = next(iter(hc.snapshots.items()))
    assert sid == f"hand-py@{commit[:12]}-{hc.extraction.digest}"  # not the default options
    facade = Database(conn)
    facade.load(sid, repos["py"].path, tree=TreeOptions(rev=commit, langs=["python"]))
    created = facade.get(sid).created_at
    done = facade.evaluate(d)
    assert done.reused == (sid,) and sid not in done.loaded and len(done.loaded) == 4
    assert facade.get(sid).created_at == created


def test_stored_snapshots_need_no_repository(
    conn: Any, repos: dict[str, Repo], tmp_path: Path
) -> None:
    clone = tmp_path / "clone"
    shutil.copytree(repos["go"].path, clone)
    d = tmp_path / "c"
    build(clone, d, HistoryOptions(name="gone-go"))
    facade = Database(conn)
    first = facade.evaluate(d).evaluation.to_json()
    shutil.rmtree(clone)
    assert facade.evaluate(d).evaluation.to_json() == first
    dropped = next(iter(read_history_corpus(d).snapshots))
    facade.drop(dropped)
    with pytest.raises(InvalidCorpus) as caught:
        facade.evaluate(d)
    message = str(caught.value)
    assert message.startswith(f"{d}: its repository is needed to load 1 snapshot not stored")
    assert repr(dropped) in message and str(clone) in message


def test_a_snapshot_not_ready_or_holding_other_documents(
    conn: Any, repos: dict[str, Repo], tmp_path: Path
) -> None:
    from riido_pg import Document

    d = corpus(repos, "go", tmp_path, "odd-go")
    sids = list(read_history_corpus(d).snapshots)
    with conn.transaction():
        insert_snapshot_row(conn, sids[0], "english", "loading", 0, "")
    facade = Database(conn)
    with pytest.raises(SnapshotLoading, match="interrupted while loading"):
        facade.evaluate(d)
    facade.drop(sids[0])
    facade.load(sids[1], [Document("elsewhere.go:Other:1", "func Other() {}")])
    with pytest.raises(InvalidCorpus, match=f"snapshot '{sids[1]}' has no document"):
        facade.evaluate(d)
    facade.drop(sids[1])  # the other two were loaded by then: replace one
    facade.load(sids[2], [Document("a", "b")], text_config="simple", replace=True)
    with pytest.raises(ConflictingOptions, match="uses text config 'simple', not 'english'"):
        facade.evaluate(d)


def test_bad_directories(conn: Any, repos: dict[str, Repo], tmp_path: Path) -> None:
    from support.corpus import write_beir

    facade = Database(conn)
    good = corpus(repos, "go", tmp_path, "bad-go")
    beir = tmp_path / "beir"
    write_beir(
        beir, [{"_id": "d1", "text": "read"}], [{"_id": "q1", "text": "read"}], [("q1", "d1", 1)]
    )
    neither = tmp_path / "neither"
    neither.mkdir()
    cases: list[tuple[Any, str]] = [
        ([good, beir], f"{beir}: a BEIR directory is evaluated alone"),
        ([beir, beir], f"{beir}: a BEIR directory is evaluated alone"),
        ([good, good], f"{good}: given twice"),
        ([good, neither], f"{neither}: neither a BEIR directory (no corpus.jsonl) nor a history"),
        (neither, f"{neither}: neither a BEIR directory"),
        (
            [good, tmp_path / "nowhere"],
            f"{tmp_path}/nowhere: no such directory (expected a history",
        ),
    ]
    for dirs, message in cases:
        with pytest.raises(InvalidCorpus) as caught:
            facade.evaluate(dirs)
        assert str(caught.value).startswith(message), str(caught.value)
    twin = history_corpus(repos["go"], tmp_path / "twin", name="bad-go", max_questions=1)
    with pytest.raises(InvalidCorpus, match=r"is in .* too"):
        facade.evaluate([good, twin])
    with pytest.raises(ConflictingOptions, match="cannot be evaluated at once"):
        facade.evaluate(good, snapshot="x")
    queries = good / "queries.jsonl"
    queries.write_text(queries.read_text().replace("Trim", "Strip"))
    with pytest.raises(InvalidCorpus, match=r"does not match history\.json"):
        facade.evaluate(good)
    assert not any(
        p.snapshot.snapshot_id.startswith("bad-go@") for p in facade.snapshots().snapshots
    )


def test_model_embeds_each_snapshot(conn: Any, repos: dict[str, Repo], tmp_path: Path) -> None:
    pytest.importorskip("wordllama")
    d = corpus(repos, "go", tmp_path, "model-go")
    notes: list[str] = []
    done = Database(conn).evaluate(d, model="wordllama-256", note=notes.append)
    data = done.evaluation.to_dict()
    # one line per snapshot embedded now, saying what it cost; a text is embedded once
    embedded = [n for n in notes if n.startswith("embedded ")]
    snapshots = {q.snapshot_id for q in read_history_corpus(d).questions}
    assert sorted(n.split(":")[0].removeprefix("embedded ") for n in embedded) == sorted(snapshots)
    for line in embedded:
        assert re.fullmatch(
            r"embedded \S+: [\d,]+ new texts? for [\d,]+ documents? in [\d.]+ s", line
        )
    cost = data["cost"]["model_hints_baseline_first"]
    assert cost["embedded_snapshots"] == len(snapshots)
    assert cost["embedded_texts"] < cost["embedded_documents"]  # snapshots share texts
    assert data["model"] == "wordllama-256"
    policy = "model_hints_baseline_first"
    hc = read_history_corpus(d)
    ranks = []
    for q in hc.questions:
        ranking = rank_snapshot(conn, q.snapshot_id, q.text, policy=policy, model="wordllama-256")
        ids = [c.id for c in ranking.candidates]
        ranks.append(min(ids.index(t) for t in q.targets) + 1)
    assert ranked(data["policies"])[policy] == by_hand(ranks)
    assert data["cost"][policy]["stored_bytes"] > 0
    assert json.loads(done.evaluation.to_json())["corpus"]["questions"] == 3
