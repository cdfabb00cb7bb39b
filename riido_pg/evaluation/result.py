"""The result of an evaluation as plain data, and its JSON (README "Evaluation").

Per question: the rank of its first target under each policy. Aggregates (the
measures of :mod:`riido_pg.evaluation.metrics`), per-question comparisons with the
baseline and per-repository figures are derived from those ranks.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from riido_pg.evaluation.inspection import INSPECTION_NAMES, Inspected, summarize
from riido_pg.evaluation.metrics import MEASURE_NAMES, aggregate_ranks, rounded
from riido_pg.evaluation.significance import LEVEL, RESAMPLES, SEED, paired_intervals
from riido_pg.ranking.policies import BM25, IDENTIFIER_BM25_BASELINE_FIRST, get_policy

#: The non-learned control every challenger is judged against.
CONTROL = IDENTIFIER_BM25_BASELINE_FIRST

__all__ = ["EvaluatedCorpus", "Evaluation", "QuestionResult"]


def _reciprocal(rank: int) -> float:
    return 1.0 / rank


def _in_top_ten(rank: int) -> float:
    return 1.0 if rank <= 10 else 0.0


class EvaluatedCorpus(Protocol):
    """What an evaluation reports of the corpus it ran on: a stored corpus
    (:class:`~riido_pg.evaluation.corpora.CorpusInfo`) or history corpora
    (:class:`~riido_pg.evaluation.history.HistoryInfo`)."""

    def corpus_fields(self) -> dict[str, Any]:
        """The result's ``corpus``, besides the question counts."""
        ...

    def config_fields(self) -> dict[str, Any]:
        """The result's ``config``, besides the fused weight."""
        ...


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """One evaluated question: the rank of its first target under each policy
    (always including ``bm25``, the baseline)."""

    question_id: str
    repo: str
    ranks: dict[str, int]
    identifier_in_scope: bool
    #: Per evaluated policy: what a reader reads before the first target
    #: (:mod:`~riido_pg.evaluation.inspection`).
    inspected: dict[str, Inspected] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Evaluation:
    corpus: EvaluatedCorpus
    policies: tuple[str, ...]
    #: Evaluated questions (those with targets), in question id byte order.
    results: list[QuestionResult]
    #: Stored questions without targets: not evaluated.
    skipped: int
    run_files: list[Path] = field(default_factory=list)
    #: The weight the fused policy ran with (None when it did not run).
    fused_weight: float | None = None
    #: Each evaluated policy's parameter values, as it ran (``config.policy_params``).
    params: dict[str, dict[str, float]] = field(default_factory=dict)
    #: The learned hint source evaluated (``eval --model``), if any.
    model: str | None = None
    #: Per policy, measured in this run (with ``--model`` only): milliseconds per
    #: question, extra load seconds, extra bytes stored; under "process", the run's
    #: peak resident memory. Not byte-identical on re-run.
    costs: dict[str, dict[str, float]] | None = None
    #: What :meth:`to_dict` computed (its output and the means over every question),
    #: kept so a table and a JSON file of one evaluation compute them once.
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def snapshot_id(self) -> str | None:
        """The snapshot of a stored corpus (None: history corpora, one per question)."""
        value = self.corpus.corpus_fields().get("snapshot_id")
        return value if isinstance(value, str) else None

    @property
    def out_of_scope(self) -> int:
        return sum(1 for r in self.results if not r.identifier_in_scope)

    def metrics(
        self, results: Sequence[QuestionResult] | None = None
    ) -> dict[str, dict[str, float]]:
        """Mean of each measure, per policy (unrounded)."""
        if results is None:
            return copy.deepcopy(self._means())
        return self._metrics(results)

    def _metrics(self, chosen: Sequence[QuestionResult]) -> dict[str, dict[str, float]]:
        return {
            p: {
                **aggregate_ranks([r.ranks[p] for r in chosen]),
                **summarize([r.inspected[p] for r in chosen if p in r.inspected]),
            }
            for p in self.policies
        }

    def _means(self) -> dict[str, dict[str, float]]:
        """:meth:`metrics` over every question, computed once."""
        if "means" not in self._memo:
            self._memo["means"] = self._metrics(self.results)
        means: dict[str, dict[str, float]] = self._memo["means"]
        return means

    def versus(self, reference: str) -> dict[str, dict[str, int]]:
        """Per policy (but ``reference``): questions whose first-target rank is better,
        worse or the same than under ``reference``."""
        out: dict[str, dict[str, int]] = {}
        if reference not in self.policies and reference != BM25:
            return out
        for p in self.policies:
            if p == reference:
                continue
            counts = {"improved": 0, "worsened": 0, "unchanged": 0}
            for r in self.results:
                mine, base = r.ranks[p], r.ranks[reference]
                key = "improved" if mine < base else "worsened" if mine > base else "unchanged"
                counts[key] += 1
            out[p] = counts
        return out

    def versus_baseline(self) -> dict[str, dict[str, int]]:
        return self.versus(BM25)

    def verdicts(self) -> dict[str, dict[str, Any]]:
        """Each challenger (the fused and learned policies) against the non-learned
        control ``identifier_bm25_baseline_first``, question by question
        (:mod:`~riido_pg.evaluation.significance`): it beats the control when the
        95 % paired bootstrap interval of its MRR difference lies above 0, that of
        its Recall@10 difference does not lie below 0, and its Recall@1 is not below
        bm25's; it is worse when the MRR interval lies below 0; otherwise there is no
        significant difference."""
        if CONTROL not in self.policies:
            return {}
        means = self._means()
        bm25 = means[BM25] if BM25 in means else None
        base_r1 = bm25["recall@1"] if bm25 is not None else self.metrics_of(BM25)["recall@1"]
        out: dict[str, dict[str, Any]] = {}
        challengers = [p for p in self.policies if get_policy(p).fused or get_policy(p).needs_model]
        # every interval in one pass: the resampled questions are drawn once
        intervals = iter(
            paired_intervals(
                [
                    self._paired(p, measure)
                    for p in challengers
                    for measure in (_reciprocal, _in_top_ten)
                ]
            )
        )
        for p in challengers:
            mrr, r10 = next(intervals), next(intervals)
            r1 = means[p]["recall@1"] - base_r1
            beats = mrr.above_zero and not r10.below_zero and r1 >= 0
            word = "beats" if beats else "worse" if mrr.below_zero else "no significant difference"
            out[p] = {
                "beats_control": beats,
                "verdict": word,
                "mrr_minus_control": rounded(mrr.mean),
                "mrr_minus_control_interval": [rounded(mrr.low), rounded(mrr.high)],
                "recall@10_minus_control": rounded(r10.mean),
                "recall@10_minus_control_interval": [rounded(r10.low), rounded(r10.high)],
                "recall@1_minus_bm25": rounded(r1),
                "test": {
                    "kind": "paired bootstrap over questions",
                    "level": LEVEL,
                    "resamples": RESAMPLES,
                    "seed": SEED,
                },
            }
        return out

    def _paired(
        self, policy: str, of_rank: Callable[[int], float]
    ) -> tuple[list[float], list[float]]:
        """``policy`` and the control, per question, under a measure of the rank."""
        return (
            [of_rank(r.ranks[policy]) for r in self.results],
            [of_rank(r.ranks[CONTROL]) for r in self.results],
        )

    def metrics_of(self, policy: str) -> dict[str, float]:
        return aggregate_ranks([r.ranks[policy] for r in self.results])

    def repos(self) -> dict[str, list[QuestionResult]]:
        """Evaluated questions per non-empty repo."""
        by_repo: dict[str, list[QuestionResult]] = {}
        for r in self.results:
            if r.repo:
                by_repo.setdefault(r.repo, []).append(r)
        return by_repo

    def to_dict(self) -> dict[str, Any]:
        """The output object, figures rounded to 6 decimals (computed once; each
        call returns its own copy)."""
        if "dict" not in self._memo:
            self._memo["dict"] = self._to_dict()
        return copy.deepcopy(self._memo["dict"])

    def _to_dict(self) -> dict[str, Any]:

        def table(means: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
            names = (*MEASURE_NAMES, *INSPECTION_NAMES)
            return {p: {m: rounded(v[m]) for m in names if m in v} for p, v in means.items()}

        return {
            "corpus": {
                **self.corpus.corpus_fields(),
                "questions": len(self.results),
                "skipped_questions": self.skipped,
                "identifier_out_of_scope": self.out_of_scope,
            },
            "config": {
                **self.corpus.config_fields(),
                **({} if self.fused_weight is None else {"fused_weight": self.fused_weight}),
                **({"policy_params": self.params} if self.params else {}),
            },
            "policies": table(self._means()),
            "versus_baseline": self.versus_baseline(),
            "per_repo": {repo: table(self._metrics(rs)) for repo, rs in self.repos().items()},
            **self._judged(),
        }

    def _judged(self) -> dict[str, Any]:
        """``versus_control`` (every other policy against the control) and
        ``verdicts`` (each challenger) when a challenger ran beside the control;
        ``model`` and ``cost`` with ``--model``."""
        out: dict[str, Any] = {}
        verdicts = self.verdicts()
        if verdicts:
            out["versus_control"] = self.versus(CONTROL)
            out["verdicts"] = verdicts
        if self.model is not None:
            out["model"] = self.model
        if self.costs is not None:
            out["cost"] = {p: {k: rounded(v) for k, v in c.items()} for p, c in self.costs.items()}
        return out

    def to_json(self) -> str:
        """The output file: keys sorted, 6-decimal figures, byte-identical on re-run
        (same input, same PostgreSQL major version)."""
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, indent=2) + "\n"
