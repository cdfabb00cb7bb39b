"""Inspection cost: what a reader (a person or an agent) reads before the first target
(README "Evaluation", docs/evaluation.md "Inspection cost").

For a question and a policy, the candidates *above* the first target are the
``rank - 1`` documents the policy ranks before it (the target itself is not counted:
a reader reads it under every policy). Their cost is counted two ways:

* ``chars``: the sum of their stored texts' lengths in characters (Unicode code
  points, PostgreSQL's ``char_length``);
* ``tokens``: the sum, per candidate, of ``ceil(chars / 4)`` — a tokenizer-free
  estimate (about four characters per token for English and code under the usual
  byte-pair tokenizers), rounded up per document so each candidate costs at least
  one token.

Every document of the snapshot is ranked in an evaluation and every evaluated
question has a target in its snapshot, so the first target is always found: there is
no question whose cost is undefined. A question whose target is first costs 0.
Per policy the output gives the mean and the median over questions
(``inspected_chars_mean``, ``inspected_chars_median``, ``inspected_tokens_mean``,
``inspected_tokens_median``), in ``policies`` and ``per_repo``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["CHARS_PER_TOKEN", "INSPECTION_NAMES", "Inspected", "summarize", "tokens_of"]

#: Characters per estimated token.
CHARS_PER_TOKEN = 4
#: The inspection measures of a policy, in output order.
INSPECTION_NAMES = (
    "inspected_chars_mean",
    "inspected_chars_median",
    "inspected_tokens_mean",
    "inspected_tokens_median",
)

#: (characters, estimated tokens) of the candidates above a question's first target.
Inspected = tuple[int, int]


def tokens_of(chars: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Estimated tokens of documents of ``chars`` characters each: ceil(chars / 4)."""
    return -(-chars // CHARS_PER_TOKEN)


def summarize(costs: Sequence[Inspected]) -> dict[str, float]:
    """Mean and median of the characters and tokens over questions (empty: nothing)."""
    if not costs:
        return {}
    chars = [c for c, _ in costs]
    tokens = [t for _, t in costs]
    return {
        "inspected_chars_mean": math.fsum(chars) / len(chars),
        "inspected_chars_median": float(statistics.median(chars)),
        "inspected_tokens_mean": math.fsum(tokens) / len(tokens),
        "inspected_tokens_median": float(statistics.median(tokens)),
    }
