"""Metric correctness: our recall@1, recall@10 and MRR against ir_measures (Success@1,
Success@10, RR) on the same TREC run files and qrels; hand-computed cases with ties
and several targets; property tests."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ir_measures
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_measures import RR, Success
from support.corpus import tie_corpus

from riido_pg.evaluation import evaluate, store_corpus
from riido_pg.evaluation.inspection import INSPECTION_NAMES
from riido_pg.evaluation.metrics import (
    MEASURE_NAMES,
    Metric,
    aggregate,
    aggregate_ranks,
    first_target_rank,
    records,
    rounded,
)
from riido_pg.ranking import evaluated_policies
from riido_pg.ranking.interleave import iter_interleave

OURS_TO_IR = {"recall@1": Success @ 1, "recall@10": Success @ 10, "mrr": RR}


# --- hand-computed ---------------------------------------------------------------------


def test_records_of_a_rank() -> None:
    assert list(records("q", 1)) == [
        Metric("q", "recall@1", 1.0),
        Metric("q", "recall@10", 1.0),
        Metric("q", "mrr", 1.0),
        Metric("q", "mean_first_target_rank", 1.0),
    ]
    values = {m.measure: m.value for m in records("q", 10)}
    assert values == {"recall@1": 0.0, "recall@10": 1.0, "mrr": 0.1, "mean_first_target_rank": 10.0}
    values = {m.measure: m.value for m in records("q", 11)}
    assert values["recall@10"] == 0.0
    assert values["mrr"] == 1 / 11
    with pytest.raises(ValueError):
        list(records("q", 0))


def test_first_target_rank_with_several_targets() -> None:
    ranking = ["e", "b", "d", "a", "c"]
    assert first_target_rank(ranking, {"a", "d"}) == 3
    assert first_target_rank(ranking, {"c"}) == 5
    assert first_target_rank(iter(ranking), {"e", "c"}) == 1
    with pytest.raises(ValueError):
        first_target_rank(ranking, {"z"})


def test_aggregate_is_the_mean_per_measure() -> None:
    metrics = [m for q, r in (("q1", 1), ("q2", 4), ("q3", 20)) for m in records(q, r)]
    means = aggregate(metrics)
    assert means["recall@1"] == pytest.approx(1 / 3)
    assert means["recall@10"] == pytest.approx(2 / 3)
    assert means["mrr"] == pytest.approx((1 + 1 / 4 + 1 / 20) / 3)
    assert means["mean_first_target_rank"] == pytest.approx(25 / 3)
    assert rounded(1 / 3) == 0.333333
    assert rounded(-1e-9) == 0.0 and math.copysign(1, rounded(-1e-9)) == 1.0


# --- ir_measures on run files ----------------------------------------------------------


def write_run(path: Path, rankings: dict[str, Sequence[str]]) -> None:
    """A TREC run in the evaluation's format: score N - rank + 1."""
    with path.open("w") as fh:
        for qid, ranking in rankings.items():
            n = len(ranking)
            for rank, doc in enumerate(ranking, start=1):
                fh.write(f"{qid} Q0 {doc} {rank} {n - rank + 1} test\n")


def ir_per_query(run: Path, qrels: list[Any]) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    ours = {v: k for k, v in OURS_TO_IR.items()}
    for m in ir_measures.iter_calc(
        list(OURS_TO_IR.values()), qrels, list(ir_measures.read_trec_run(str(run)))
    ):
        out[m.query_id, ours[m.measure]] = m.value
    return out


rankings_and_targets = st.integers(min_value=1, max_value=30).flatmap(
    lambda n: st.tuples(
        st.permutations([f"d{i:02d}" for i in range(n)]),
        st.sets(st.integers(0, n - 1), min_size=1, max_size=n),
        st.sets(st.integers(0, n - 1), max_size=n),  # non-targets with qrel score 0
    )
)


@settings(max_examples=60, deadline=None)
@given(st.lists(rankings_and_targets, min_size=1, max_size=6))
def test_matches_ir_measures_on_random_rankings(tmp_path_factory: Any, cases: list[Any]) -> None:
    run = tmp_path_factory.mktemp("run") / "run.trec"
    rankings: dict[str, Sequence[str]] = {}
    qrels: list[Any] = []
    expected: dict[tuple[str, str], float] = {}
    for i, (ranking, target_ix, zero_ix) in enumerate(cases):
        qid = f"q{i}"
        ids = sorted(ranking)
        targets = {ids[t] for t in target_ix}
        rankings[qid] = ranking
        qrels += [ir_measures.Qrel(qid, d, 1) for d in sorted(targets)]
        zeros = sorted(ids[z] for z in zero_ix if ids[z] not in targets)
        qrels += [ir_measures.Qrel(qid, d, 0) for d in zeros]
        rank = first_target_rank(ranking, targets)
        for m in records(qid, rank):
            if m.measure in OURS_TO_IR:
                expected[qid, m.measure] = m.value
    write_run(run, rankings)
    got = ir_per_query(run, qrels)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key


def test_real_scores_with_ties_would_mislead_trec_tools(tmp_path: Path) -> None:
    """Why run files carry N - rank + 1: with BM25 scores, tied documents are re-ordered
    by document id *descending* by trec_eval-style tools, against our id-ascending rule."""
    run = tmp_path / "tied.trec"
    run.write_text("q Q0 a 1 2.5 t\nq Q0 b 2 2.5 t\n")  # our order: a before b (tie)
    qrels = [ir_measures.Qrel("q", "a", 1)]
    (value,) = [
        m.value
        for m in ir_measures.iter_calc(
            [Success @ 1], qrels, list(ir_measures.read_trec_run(str(run)))
        )
    ]
    assert value == 0.0  # the tool put b first
    write_run(run, {"q": ["a", "b"]})
    (value,) = [
        m.value
        for m in ir_measures.iter_calc(
            [Success @ 1], qrels, list(ir_measures.read_trec_run(str(run)))
        )
    ]
    assert value == 1.0


# --- the evaluation's own run files ----------------------------------------------------


def test_eval_run_files_agree_with_ir_measures(conn: Any, tmp_path: Path) -> None:
    directory = tie_corpus(tmp_path / "beir")
    stored = store_corpus(conn, directory)
    run_dir = tmp_path / "runs"
    result = evaluate(conn, stored.snapshot_id, run_dir=run_dir, run_depth=10_000)
    qrels = list(ir_measures.read_trec_qrels(_trec_qrels(directory, tmp_path / "qrels.txt")))
    by_q = {r.question_id: r for r in result.results}
    data = result.to_dict()
    for policy in evaluated_policies():
        run = run_dir / f"{policy}.trec"
        assert run.is_file()
        got = ir_per_query(run, qrels)
        for qid, r in by_q.items():
            for m in records(qid, r.ranks[policy]):
                if m.measure in OURS_TO_IR:
                    assert got[qid, m.measure] == pytest.approx(m.value, abs=1e-12), (policy, qid)
        means = ir_measures.calc_aggregate(
            list(OURS_TO_IR.values()), qrels, list(ir_measures.read_trec_run(str(run)))
        )
        for ours, theirs in OURS_TO_IR.items():
            assert data["policies"][policy][ours] == round(means[theirs], 6)
        assert set(data["policies"][policy]) == {*MEASURE_NAMES, *INSPECTION_NAMES}


def _trec_qrels(directory: Path, out: Path) -> str:
    lines = (directory / "qrels" / "test.tsv").read_text().splitlines()[1:]
    out.write_text("".join(f"{q} 0 {d} {s}\n" for q, d, s in (x.split("\t") for x in lines)))
    return str(out)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_baseline_first_keeps_the_baseline_top_document(data: st.DataObject) -> None:
    """The invariant behind "baseline-first has exactly the Recall@1 of bm25"."""
    n = data.draw(st.integers(1, 20))
    baseline = data.draw(st.permutations(range(n)))
    hints = data.draw(st.lists(st.sampled_from(range(n)), unique=True))
    targets = data.draw(st.sets(st.sampled_from(range(n)), min_size=1))
    merged = iter_interleave(baseline, hints)
    assert (first_target_rank(merged, targets) == 1) == (baseline[0] in targets)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 10**6), max_size=60))
def test_aggregate_ranks_is_aggregate_of_the_records(ranks: list[int]) -> None:
    """The evaluation's means from ranks alone equal the records' aggregate, bit for
    bit (the same values, the same fsum)."""
    want = aggregate(m for i, r in enumerate(ranks) for m in records(str(i), r))
    assert aggregate_ranks(ranks) == want


def test_aggregate_ranks_refuses_a_rank_below_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        aggregate_ranks([3, 0])
