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

__all__ = ["LEVEL", "RESAMPLES", "SEED", "Interval", "paired_interval"]

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
    if len(a) != len(b) or not a:
        raise ValueError("paired_interval needs two lists of the same, non-zero length")
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = np.concatenate(
        [
            d[rng.integers(0, len(d), size=(min(_BLOCK, resamples - s), len(d)))].mean(axis=1)
            for s in range(0, resamples, _BLOCK)
        ]
    )
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Interval(float(d.mean()), float(low), float(high))
