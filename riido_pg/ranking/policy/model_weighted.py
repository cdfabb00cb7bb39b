"""``model_structure_weighted``: a learned model's cosine weighted into
``structure_bm25`` (README "Policies", docs/evaluation.md "The learned source judged
again, with its cost").

The first ``model_depth`` (M) documents of the ``structure_bm25`` ranking are ordered
by ``structure / top + w * cos``: ``structure`` is a document's ``structure_bm25``
score, ``top`` the question's highest (the first document's; 1 when it is 0), ``cos``
the cosine between the question's and the document's embeddings under the model
(their stored unit vectors) and ``w`` the ``model_weight``; equal scores keep
structure's order. The rest of the ranking is ``structure_bm25``'s, unchanged below
them. A question the model embeds to nothing is ranked by ``structure_bm25`` (its
result labelled ``structure_bm25_model_input_out_of_scope``); one outside the
identifier limits by ``bm25``, as ``structure_bm25`` does.

Parameters ``model_weight`` (w = 0.5) and ``model_depth`` (M = 100), both chosen on
the development corpora (bench/MODELS.md "The model inside a ranking"): w from 0.1,
0.2, 0.5, 1, 2 and 4, the one never significantly below ``structure_bm25`` on any
development corpus with either model; M = 100 was not swept.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

from riido_pg.ranking.policy import structure
from riido_pg.ranking.policy.skeleton import (
    AT_LEAST_ONE,
    AT_LEAST_ZERO,
    COSINE,
    IDENT,
    NAME,
    RAW,
    Base,
    EvalScores,
    Param,
    Policy,
    RankInput,
    Row,
)
from riido_pg.server.plans import Plan

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "MODEL_DEPTH",
    "MODEL_STRUCTURE_WEIGHTED",
    "MODEL_WEIGHT",
    "PARAMS",
    "POLICIES",
    "ModelWeighted",
    "cosines",
    "weighted_order",
]

MODEL_STRUCTURE_WEIGHTED = "model_structure_weighted"
#: w: the cosine's weight against structure's score divided by the question's top
#: one; chosen on the development corpora (bench/MODELS.md).
MODEL_WEIGHT = 0.5
#: M: how many of structure's first documents the weighted score reorders.
MODEL_DEPTH = 100

PARAMS = (
    Param("model_weight", MODEL_WEIGHT, AT_LEAST_ZERO, "the model's weight"),
    Param("model_depth", float(MODEL_DEPTH), AT_LEAST_ONE, "the documents the model reorders"),
)


def cosines(query: npt.ArrayLike, matrix: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The cosine of a unit query with each unit row: the float32 components'
    products (exact in float64) summed exactly and rounded once (``math.fsum``), so a
    row's cosine does not depend on where it stands or on the BLAS: both paths, and
    any oracle, get the same float64 for the same two vectors."""
    import numpy as np  # here, not at the top: every command line start imports this module

    q = np.asarray(query, dtype=np.float32).astype(np.float64).ravel()
    m = np.asarray(matrix, dtype=np.float32).astype(np.float64)
    if m.ndim != 2 or m.shape[1] != q.shape[0]:
        raise ValueError(f"a query of dimension {q.shape[0]} against rows of shape {m.shape}")
    products = (m * q).tolist()
    return np.fromiter((math.fsum(row) for row in products), dtype=np.float64, count=len(m))


def weighted_order(
    scores: npt.ArrayLike, cos: npt.ArrayLike, weight: float
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The order of structure's first documents (``scores``, their structure scores
    in structure's order; ``cos`` their cosines) by ``score / top + weight * cos``,
    ties in structure's order, and each one's weighted score (by position in the
    input). ``top`` is the first score, or 1 when it is not above 0."""
    import numpy as np

    s = np.asarray(scores, dtype=np.float64)
    c = np.asarray(cos, dtype=np.float64)
    if s.shape != c.shape:
        raise ValueError(f"{s.shape[0]} scores and {c.shape[0]} cosines")
    top = float(s[0]) if len(s) and s[0] > 0 else 1.0
    weighted = s / top + float(weight) * c
    order = np.lexsort((np.arange(len(s)), -weighted))
    return order.astype(np.int64), weighted


class ModelWeighted(Base):
    """structure_bm25's first M reordered by its normalised score plus w x cosine."""

    lists = (RAW, IDENT, NAME, COSINE)
    score_name = "structure_score"
    params = PARAMS

    def __init__(
        self,
        inner: structure.Structure,
        model_weight: float = MODEL_WEIGHT,
        model_depth: float = MODEL_DEPTH,
    ) -> None:
        super().__init__(model_weight=model_weight, model_depth=model_depth)
        self.inner = inner

    @property
    def weight(self) -> float:
        return self["model_weight"]

    @property
    def depth(self) -> int:
        return int(self["model_depth"])

    # -- a stored snapshot --------------------------------------------------------

    def rank(self, given: RankInput) -> Plan[list[Row]]:
        from riido_pg.storage.embeddings import vectors_plan

        depth = None if given.limit is None else max(given.limit, self.depth)
        rows = yield from self.inner.rank(dataclasses.replace(given, limit=depth))
        emb = given.embedded
        if emb is not None and rows:
            head = rows[: self.depth]
            matrix = yield from vectors_plan(
                given.target, emb.model, [r.doc_ord for r in head], emb.dim
            )
            order, weighted = weighted_order(
                [r.score or 0.0 for r in head], cosines(emb.query, matrix), self.weight
            )
            for k, row in enumerate(head):
                row.learned = float(weighted[k])
            rows = [head[k] for k in order.tolist()] + rows[self.depth :]
        return rows if given.limit is None else rows[: given.limit]

    # -- inside the evaluation ------------------------------------------------------

    def derive(self, batch: EvalScores) -> None:
        self.inner.derive(batch)

    def _head(self, batch: EvalScores, i: int) -> tuple[list[int], list[int]] | None:
        """Structure's first M places of question ``i`` and their weighted order
        (places), or None when the question embeds to nothing."""
        head = batch.order(self.inner.key, i, self.depth)
        got = batch.embedded(i, head)
        if got is None:
            return None
        query, matrix = got
        scores = batch.score_of(self.inner.key, i, head)
        order, _ = weighted_order(scores, cosines(query, matrix), self.weight)
        return head, [head[k] for k in order.tolist()]

    def first_target(self, batch: EvalScores, i: int, targets: set[int]) -> int:
        return self.first_target_cost(batch, i, targets)[0]

    def first_target_cost(
        self, batch: EvalScores, i: int, targets: set[int]
    ) -> tuple[int, tuple[int, int]]:
        key = self.inner.key
        rank = batch.rank_of_first(key, i)
        got = self._head(batch, i) if rank <= self.depth else None
        if got is None:  # below the first M (or not embedded): structure's rank, the same
            return rank, batch.cost_above(key, i)  # documents above it in another order
        _, reordered = got
        at = next(k for k, place in enumerate(reordered) if place in targets)
        return at + 1, batch.cost_of(reordered[:at])

    def run_order(self, batch: EvalScores, i: int, depth: int) -> list[int]:
        got = self._head(batch, i)
        below = batch.order(self.inner.key, i, max(depth, self.depth))
        if got is None:
            return below[:depth]
        head, reordered = got
        return (reordered + below[len(head) :])[:depth]


def _policy() -> Policy:
    (structure_bm25,) = structure.POLICIES
    inner = structure_bm25.combiner
    assert isinstance(inner, structure.Structure)
    return Policy(
        MODEL_STRUCTURE_WEIGHTED,
        ModelWeighted(inner),
        f"structure_bm25's first {MODEL_DEPTH} by structure / top + {MODEL_WEIGHT:g} * a learned "
        "model's cosine, the rest as structure_bm25",
        model_ranking="weighted",
        model_fallback=structure.STRUCTURE_BM25,
    )


POLICIES = (_policy(),)
