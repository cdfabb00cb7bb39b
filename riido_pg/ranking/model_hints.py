"""The hint list of a learned model (policy ``model_hints_baseline_first``).

The model's hints are documents ordered by cosine similarity between the query's
embedding and the document's stored embedding, ties by ``doc_ord``. They are ordered
over a bounded candidate set, not the whole snapshot: the union of the first
:data:`CANDIDATES` documents of the ``bm25`` ranking and of the ``identifier_bm25``
ranking (each a prefix of the full ranking, so the set does not depend on ``limit``).
Measured on the development corpora (README "A learned hint source"), 1,000 per list
keeps 97–100 % of the whole-snapshot gain at a per-query cost that does not grow with
the snapshot. The same rule is used by ``rank_snapshot`` and by ``eval``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from riido_pg.embedding import CheckedModel

__all__ = ["CANDIDATES", "cosine_hints", "model_named"]

#: Documents taken from the top of each BM25 ranking into the candidate set.
CANDIDATES = 1000


@cache
def model_named(name: str) -> CheckedModel:
    """The loaded model ``name`` (loaded once per process)."""
    from riido_pg.embedding import load_model

    return load_model(name)


def cosine_hints(
    query_vec: np.ndarray, candidates: Sequence[int], vectors: np.ndarray
) -> list[int]:
    """``candidates`` (doc_ords, each once, any order; ``vectors`` their rows in the
    same order) by decreasing cosine with ``query_vec``, ties by doc_ord."""
    if not len(candidates):
        return []
    ords = np.asarray(candidates, dtype=np.int64)
    scores = vectors.astype(np.float32) @ query_vec.astype(np.float32)
    order = np.lexsort((ords, -scores))
    return ords[order].tolist()  # type: ignore[no-any-return]
