"""Verdicts with their uncertainty (issue 29, item 6; issue 28, item 8) and the
inspection cost (issue 29, item 5): a paired bootstrap over questions decides
"beats the control"; what a reader reads before the first target is counted."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.cli import Cli
from support.corpus import generated_corpus

from riido_pg.evaluation import evaluate, store_corpus
from riido_pg.evaluation.inspection import INSPECTION_NAMES, summarize, tokens_of
from riido_pg.evaluation.result import CONTROL, Evaluation, QuestionResult
from riido_pg.evaluation.significance import LEVEL, SEED, paired_interval, paired_intervals
from riido_pg.ranking.policies import BM25, IDENTIFIER_BM25_FUSED

values = st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_interval_holds_the_mean_is_deterministic_and_antisymmetric(data: Any) -> None:
    a = data.draw(values)
    b = data.draw(st.lists(st.floats(min_value=0, max_value=1), min_size=len(a), max_size=len(a)))
    one = paired_interval(a, b)
    assert one == paired_interval(a, b)  # the fixed seed: the same interval every time
    assert one.low - 1e-12 <= one.mean <= one.high + 1e-12 or one.low > one.mean
    swapped = paired_interval(b, a)
    assert math.isclose(swapped.mean, -one.mean, abs_tol=1e-12)
    assert math.isclose(swapped.low, -one.high, abs_tol=1e-9)
    assert math.isclose(swapped.high, -one.low, abs_tol=1e-9)
    assert math.isclose(one.mean, float(np.mean(a) - np.mean(b)), abs_tol=1e-12)


@given(values, st.floats(min_value=-1, max_value=1))
def test_a_constant_difference_is_its_own_interval(a: list[float], shift: float) -> None:
    interval = paired_interval([x + shift for x in a], a)
    assert math.isclose(interval.low, shift, abs_tol=1e-9)
    assert math.isclose(interval.high, shift, abs_tol=1e-9)
    assert interval.above_zero == (interval.low > 0)


def _one_at_a_time(a: list[float], b: list[float], resamples: int) -> tuple[float, ...]:
    """The interval as it was computed before the draws were shared: its own
    generator, blocks of 200 resamples."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    rng = np.random.default_rng(SEED)
    means = np.concatenate(
        [
            d[rng.integers(0, len(d), size=(min(200, resamples - s), len(d)))].mean(axis=1)
            for s in range(0, resamples, 200)
        ]
    )
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(d.mean()), float(low), float(high)


@settings(max_examples=40, deadline=None)
@given(st.data(), st.integers(1, 4), st.sampled_from([1, 199, 450, 2000]))
def test_intervals_drawn_together_are_each_drawn_alone(
    data: Any, pairs: int, resamples: int
) -> None:
    """Sharing each block of resampled questions between several pairs changes no
    interval, to the last bit (the evaluation's JSON stays byte-identical)."""
    a = data.draw(values)
    n = len(a)
    same = st.lists(st.floats(min_value=0, max_value=1), min_size=n, max_size=n)
    drawn = [(data.draw(same), data.draw(same)) for _ in range(pairs)]
    together = paired_intervals(drawn, resamples=resamples)
    for (x, y), got in zip(drawn, together, strict=True):
        assert (got.mean, got.low, got.high) == _one_at_a_time(x, y, resamples)
        assert got == paired_interval(x, y, resamples=resamples)
    assert paired_intervals([]) == []
    with pytest.raises(ValueError):
        paired_intervals([(a, a), ([*a, 0.5], [*a, 0.5])])


def test_the_same_lists_make_no_difference() -> None:
    interval = paired_interval([0.5, 1.0, 0.2], [0.5, 1.0, 0.2])
    assert (interval.mean, interval.low, interval.high) == (0.0, 0.0, 0.0)
    assert not interval.above_zero and not interval.below_zero
    with pytest.raises(ValueError):
        paired_interval([1.0], [1.0, 2.0])


class _Corpus:
    def corpus_fields(self) -> dict[str, Any]:
        return {}

    def config_fields(self) -> dict[str, Any]:
        return {}


def _evaluation(ranks: list[tuple[int, int]]) -> Evaluation:
    """Questions with (control rank, fused rank); bm25 ranks as the control."""
    results = [
        QuestionResult(f"q{i:03d}", "", {BM25: c, CONTROL: c, IDENTIFIER_BM25_FUSED: f}, True)
        for i, (c, f) in enumerate(ranks)
    ]
    return Evaluation(_Corpus(), (BM25, CONTROL, IDENTIFIER_BM25_FUSED), results, 0)


def test_a_tiny_mean_gain_is_no_significant_difference() -> None:
    """The newcomer's case: 50 questions, MRR +0.0004 was reported as a win."""
    ranks = [(1, 1)] * 20 + [(2, 3), (3, 2)] * 10 + [(5, 4)] * 9 + [(100, 90)]
    verdict = _evaluation(ranks).verdicts()[IDENTIFIER_BM25_FUSED]
    assert 0 < verdict["mrr_minus_control"] < 0.01
    assert verdict["verdict"] == "no significant difference"
    assert verdict["beats_control"] is False
    low, high = verdict["mrr_minus_control_interval"]
    assert low < 0 < high


def test_a_consistent_gain_beats_and_a_consistent_loss_is_worse() -> None:
    gain = _evaluation([(2, 1)] * 30 + [(1, 1)] * 20).verdicts()[IDENTIFIER_BM25_FUSED]
    assert (gain["verdict"], gain["beats_control"]) == ("beats", True)
    assert gain["mrr_minus_control_interval"][0] > 0
    loss = _evaluation([(1, 2)] * 30 + [(1, 1)] * 20).verdicts()[IDENTIFIER_BM25_FUSED]
    assert (loss["verdict"], loss["beats_control"]) == ("worse", False)


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), max_size=40))
def test_inspection_summary_is_mean_and_median(costs: list[tuple[int, int]]) -> None:
    summary = summarize(costs)
    if not costs:
        assert summary == {}
        return
    assert list(summary) == list(INSPECTION_NAMES)
    assert summary["inspected_chars_mean"] == pytest.approx(np.mean([c for c, _ in costs]))
    assert summary["inspected_tokens_median"] == float(np.median([t for _, t in costs]))


@given(st.lists(st.integers(0, 10**7), max_size=30))
def test_tokens_are_ceil_of_a_quarter_of_the_characters(chars: list[int]) -> None:
    got = tokens_of(np.asarray(chars, dtype=np.int64)).tolist()
    assert got == [math.ceil(c / 4) for c in chars]


def test_inspection_counts_exactly_the_documents_above_the_first_target(
    conn: Any, tmp_path: Path
) -> None:
    """For every policy and question: the run-file order above the first target holds
    rank - 1 documents, none a target, and their texts' lengths are the cost."""
    directory = generated_corpus(tmp_path / "beir", 4, n_docs=120, n_questions=20)
    texts = {
        (d := json.loads(line))["_id"]: d["text"]
        for line in (directory / "corpus.jsonl").read_text().splitlines()
    }
    stored = store_corpus(conn, directory)
    runs = tmp_path / "runs"
    result = evaluate(conn, stored.snapshot_id, run_dir=runs, run_depth=120)
    for policy in result.policies:
        order: dict[str, list[str]] = {}
        for line in (runs / f"{policy}.trec").read_text().splitlines():
            qid, _, doc, *_ = line.split(" ")
            order.setdefault(qid, []).append(doc)
        for r in result.results:
            above = order[r.question_id][: r.ranks[policy] - 1]
            assert r.inspected[policy] == (
                sum(len(texts[d]) for d in above),
                sum(math.ceil(len(texts[d]) / 4) for d in above),
            ), (policy, r.question_id)
    data = result.to_dict()
    for policy in result.policies:
        assert set(INSPECTION_NAMES) <= set(data["policies"][policy])


def test_eval_prints_the_control_and_the_interval(cli: Cli, tmp_path: Path) -> None:
    directory = generated_corpus(tmp_path / "beir", 5, n_docs=80, n_questions=12)
    result = cli(["eval", str(directory)])
    assert result.code == 0, result.stderr
    out = result.stdout
    assert "the control: identifier_bm25_baseline_first (bm25's ranking interleaved" in out
    assert "95% paired bootstrap" in out
    assert "read before the first target" in out
    verdicts = [line for line in out.splitlines() if line.startswith("verdict: ")]
    assert verdicts and all("] vs the control" in v for v in verdicts)
    assert all(
        any(w in v for w in ("beats the control", "no significant difference", "worse than"))
        for v in verdicts
    )


def test_eval_of_a_missing_path_never_offers_it_as_a_snapshot(cli: Cli, tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such-dir"
    result = cli(["eval", str(missing)])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.count("\n") == 1
    assert f"{missing}: no such directory" in result.stderr
    assert "--snapshot SNAPSHOT" in result.stderr
    assert f"--snapshot {missing}" not in result.stderr and "such-dir'" not in result.stderr


def test_the_output_is_computed_once_and_each_caller_gets_its_own_copy() -> None:
    """The table and the JSON file read one computed output: a caller changing what
    it got changes neither the next caller's output nor the means."""
    result = _evaluation([(1, 2), (3, 1), (2, 2)] * 4)
    first = result.to_dict()
    means = result.metrics()
    first["policies"][BM25]["mrr"] = -1.0
    means[BM25]["mrr"] = -1.0
    assert result.to_dict()["policies"][BM25]["mrr"] > 0
    assert result.metrics()[BM25]["mrr"] > 0
    assert result.to_json() == result.to_json()
