"""The hint list of a learned model (policy ``model_hints_baseline_first``).

The model's hints are documents ordered by cosine similarity between the query's
embedding and the document's stored embedding, ties by document id. They are ordered
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

from riido_pg.ranking import bm25
from riido_pg.ranking.policy.skeleton import Embedded
from riido_pg.ranking.terms import QueryTerms
from riido_pg.server.plans import Plan
from riido_pg.storage.embeddings import model_plan, require_model, vectors_plan
from riido_pg.storage.snapshots import Snapshot, Target

if TYPE_CHECKING:
    from riido_pg.embedding import CheckedModel

__all__ = ["CANDIDATES", "cosine_hints", "embedded_plan", "hints_plan", "model_named"]

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
    """``candidates`` (doc_ords, each once, in document id order; ``vectors`` their
    rows in the same order) by decreasing cosine with ``query_vec``, ties by id."""
    if not len(candidates):
        return []
    ords = np.asarray(candidates, dtype=np.int64)
    scores = vectors.astype(np.float32) @ query_vec.astype(np.float32)
    order = np.lexsort((np.arange(len(ords)), -scores))
    return ords[order].tolist()  # type: ignore[no-any-return]


def embedded_plan(snap: Snapshot, query: str, name: str) -> Plan[Embedded | None]:
    """The query embedded by the model ``name`` for a snapshot embedded with it
    (:func:`~riido_pg.storage.embeddings.require_model` checks that first), or None
    when the query embeds to nothing."""
    from riido_pg.embedding import EmptyEmbedding, embed_query

    model = model_named(name)
    stored = yield from model_plan(snap.snapshot_id, model.name)
    require_model(snap, model, stored)
    try:
        return Embedded(model.name, model.dim, embed_query(model, query))
    except EmptyEmbedding:
        return None


def hints_plan(target: Target, embedded: Embedded, terms: QueryTerms) -> Plan[list[int]]:
    """The model's hint doc_ords for an embedded query in a snapshot embedded with
    the model."""
    found: dict[int, str] = {}
    for col in ("raw", "ident"):
        result = yield bm25.ranked(target, col, terms.of(col), CANDIDATES)
        found.update((int(o), str(i)) for o, i, _ in result.rows)
    candidates = sorted(found, key=lambda o: found[o])
    matrix = yield from vectors_plan(target, embedded.model, candidates, embedded.dim)
    return cosine_hints(embedded.query, candidates, matrix)
