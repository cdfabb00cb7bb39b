"""Paired bootstrap intervals over questions: whether a policy's difference from the
control is more than the luck of the questions drawn (README "Evaluation", verdicts).

For a measure with one value per question (reciprocal rank, success@10), the paired
differences ``d_q = a_q - b_q`` are resampled with replacement, :data:`RESAMPLES`
times, from a generator seeded with :data:`SEED` (the same questions give the same
interval on every run and machine); the interval is the 2.5th and 97.5th percentiles
of the resampled means (numpy's linear interpolation). A difference is significant
when its interval excludes 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["LEVEL", "RESAMPLES", "SEED", "Interval", "paired_interval", "paired_intervals"]

#: Resamples of the questions.
RESAMPLES = 2000
#: The generator's seed (numpy's default_rng).
SEED = 11
#: The interval's coverage.
LEVEL = 0.95
#: Resampled means per block (bounds memory: block x questions indices).
_BLOCK = 200


@dataclass(frozen=True, slots=True)
class Interval:
    """The mean paired difference and its bootstrap interval ``[low, high]``."""

    mean: float
    low: float
    high: float

    @property
    def above_zero(self) -> bool:
        return self.low > 0

    @property
    def below_zero(self) -> bool:
        return self.high < 0


def paired_interval(
    a: Sequence[float], b: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED
) -> Interval:
    """The mean of ``a - b`` (paired by position) and its :data:`LEVEL` bootstrap
    interval. ValueError when the lengths differ or there is nothing to compare."""
    return paired_intervals([(a, b)], resamples=resamples, seed=seed)[0]


def paired_intervals(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> list[Interval]:
    """:func:`paired_interval` of each pair, all of the same length: the resampled
    questions depend only on the seed and the length, so each block of them is drawn
    once and serves every pair (each interval is the one :func:`paired_interval`
    gives alone, to the last bit)."""
    if not pairs:
        return []
    n = len(pairs[0][0])
    for a, b in pairs:
        if len(a) != len(b) or not a or len(a) != n:
            raise ValueError("paired_interval needs two lists of the same, non-zero length")
    ds = [np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64) for a, b in pairs]
    rng = np.random.default_rng(seed)
    means: list[list[npt.NDArray[np.float64]]] = [[] for _ in ds]
    for s in range(0, resamples, _BLOCK):
        drawn = rng.integers(0, n, size=(min(_BLOCK, resamples - s), n))
        for d, out in zip(ds, means, strict=True):
            out.append(d[drawn].mean(axis=1))
    tail = (1 - LEVEL) / 2 * 100
    found = []
    for d, blocks in zip(ds, means, strict=True):
        low, high = np.percentile(np.concatenate(blocks), [tail, 100 - tail])
        found.append(Interval(float(d.mean()), float(low), float(high)))
    return found
