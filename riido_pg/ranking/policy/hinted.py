"""Hinted policies: bm25 interleaved, first, with a list the caller supplies per
query, so ``eval`` runs them only when it can make that list itself:
``external_hints_baseline_first`` (the caller's hint ids) and
``model_hints_baseline_first`` (a learned model's cosine order, ``--model``). The
interleave is :class:`~riido_pg.ranking.policy.interleaved.Interleave`. No
parameters."""

from __future__ import annotations

from riido_pg.ranking.policy.interleaved import Interleave
from riido_pg.ranking.policy.skeleton import HINTS, MODEL, RAW, Policy

__all__ = ["EXTERNAL_HINTS_BASELINE_FIRST", "MODEL_HINTS_BASELINE_FIRST", "POLICIES"]

EXTERNAL_HINTS_BASELINE_FIRST = "external_hints_baseline_first"
MODEL_HINTS_BASELINE_FIRST = "model_hints_baseline_first"

POLICIES = (
    Policy(
        EXTERNAL_HINTS_BASELINE_FIRST,
        Interleave(RAW, HINTS),
        "interleave bm25 (first) with the caller's hint ids",
        flag="--hints-file",
    ),
    Policy(
        MODEL_HINTS_BASELINE_FIRST,
        Interleave(RAW, MODEL),
        "interleave bm25 (first) with a learned model's cosine order",
        flag="--model",
        model_ranking="hints",
    ),
)
