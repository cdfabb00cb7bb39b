"""Evaluation measures over a question's first-target rank (README "Evaluation").

Every measure of the study is a function of one number per question: the rank
(1-based, in the full ranking) of the first document that is one of its targets.
Per-question results are plain records, like ir_measures' ``Metric``; a run's
figure for a measure is the mean of its records.

=========================  ==============================  =====================
measure                    per question                    ir_measures name
=========================  ==============================  =====================
``recall@1``               1 if rank <= 1 else 0           ``Success@1``
``recall@10``              1 if rank <= 10 else 0          ``Success@10``
``mrr``                    1 / rank                        ``RR``
``mean_first_target_rank`` rank                            (none)
=========================  ==============================  =====================

``recall@k`` is the study's name: a question counts when *any* of its targets is
in the first k (with one target per question it is recall@k; with several it is
what IR calls success@k).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "DECIMALS",
    "MEASURES",
    "MEASURE_NAMES",
    "Measure",
    "Metric",
    "aggregate",
    "aggregate_ranks",
    "first_target_rank",
    "records",
    "rounded",
]

T = TypeVar("T")

#: Output figures are rounded to this many decimals.
DECIMALS = 6


@dataclass(frozen=True, slots=True)
class Metric:
    """One measure's value for one question."""

    query_id: str
    measure: str
    value: float


@dataclass(frozen=True, slots=True)
class Measure:
    """A measure: its name and its value for a first-target rank."""

    name: str
    of_rank: Callable[[int], float]


def _success_at(k: int) -> Callable[[int], float]:
    def success(rank: int) -> float:
        return 1.0 if rank <= k else 0.0

    return success


MEASURES: tuple[Measure, ...] = (
    Measure("recall@1", _success_at(1)),
    Measure("recall@10", _success_at(10)),
    Measure("mrr", lambda rank: 1.0 / rank),
    Measure("mean_first_target_rank", float),
)
MEASURE_NAMES: tuple[str, ...] = tuple(m.name for m in MEASURES)


def first_target_rank(ranking: Iterable[T], targets: Collection[T]) -> int:
    """The 1-based rank of the first target in ``ranking``.

    Raises ValueError when no target is ranked (every document is ranked in an
    evaluation, so that means the question has no targets).
    """
    for rank, item in enumerate(ranking, start=1):
        if item in targets:
            return rank
    raise ValueError("no target in the ranking")


def records(query_id: str, rank: int, measures: Sequence[Measure] = MEASURES) -> Iterator[Metric]:
    """The per-question records of one question whose first target is at ``rank``."""
    if rank < 1:
        raise ValueError(f"rank must be at least 1, got {rank}")
    for measure in measures:
        yield Metric(query_id, measure.name, measure.of_rank(rank))


def rounded(value: float) -> float:
    """A figure as it appears in the output: rounded to DECIMALS places, no -0.0."""
    return round(value, DECIMALS) + 0.0


def aggregate(metrics: Iterable[Metric]) -> dict[str, float]:
    """Mean value per measure over the records (unrounded; exact sums via fsum)."""
    values: dict[str, list[float]] = {}
    for m in metrics:
        values.setdefault(m.measure, []).append(m.value)
    return {name: math.fsum(v) / len(v) for name, v in values.items()}


def aggregate_ranks(
    ranks: Sequence[int], measures: Sequence[Measure] = MEASURES
) -> dict[str, float]:
    """:func:`aggregate` of the questions' :func:`records`, one first-target rank per
    question, without a record object per question and measure: the same values
    summed by the same fsum (empty: nothing)."""
    for rank in ranks:
        if rank < 1:
            raise ValueError(f"rank must be at least 1, got {rank}")
    if not ranks:
        return {}
    return {m.name: math.fsum([m.of_rank(r) for r in ranks]) / len(ranks) for m in measures}
