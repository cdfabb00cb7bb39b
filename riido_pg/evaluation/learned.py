"""A learned hint source inside ``eval --model NAME``.

The stored corpus must have been embedded with the model (``eval --model`` embeds it
when it is not). Each question is embedded on its own, exactly as ``rank_snapshot``
embeds a query, and its hints are the candidate documents — the first
:data:`~riido_pg.ranking.model_hints.CANDIDATES` of the ``bm25`` ranking and of the
``identifier_bm25`` ranking — ordered by cosine with
:func:`riido_pg.ranking.model_hints.cosine_hints` (ties by id): the same floats
in the same order as the query path, so the ranks agree. A question the model cannot
embed falls back to ``bm25``, as ``rank_snapshot`` does.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import numpy as np

from riido_pg.evaluation.scoring import Batch, Documents
from riido_pg.ranking.inputs import IDENT, RAW
from riido_pg.ranking.model_hints import CANDIDATES, cosine_hints, model_named
from riido_pg.server.connect import Conn
from riido_pg.server.plans import run
from riido_pg.storage.embeddings import (
    model_plan,
    require_model,
    vector_bytes_plan,
    vectors_plan,
)
from riido_pg.storage.snapshots import Snapshot

__all__ = ["LearnedSide", "prepare"]


@dataclass(slots=True)
class LearnedSide:
    model: str
    #: Every document's unit vector, row = its place in id order.
    vectors: np.ndarray
    #: Each question's unit vector, None when it embeds to nothing.
    queries: list[np.ndarray | None]
    #: Seconds the load spent embedding the corpus, and the bytes the vectors its
    #: documents use take, per text (each text once, however many documents hold it).
    load_seconds: float
    vector_bytes: dict[uuid.UUID, int]
    #: Seconds spent embedding the questions (part of the per-question cost).
    embed_seconds: float
    #: The snapshot's documents, and the texts its embedding computed (the others
    #: were stored already; None when embedded before vectors were keyed by content).
    documents: int = 0
    texts_embedded: int | None = None

    def hints(self, i: int, batch: Batch, row: int) -> list[int] | None:
        """Question ``i``'s hint places (``row``: its row in the batch), or None."""
        query = self.queries[i]
        if query is None:
            return None
        first = (batch.order(c, row, CANDIDATES) for c in (RAW, IDENT))
        candidates = sorted({p for order in first for p in order})
        return cosine_hints(query, candidates, self.vectors[candidates])


def prepare(
    conn: Conn, snap: Snapshot, model_name: str, texts: list[str], docs: Documents
) -> LearnedSide:
    """Read the corpus's vectors and embed the questions (inside eval's transaction)."""
    from riido_pg.embedding import EmptyEmbedding, embed_query

    model = model_named(model_name)
    stored = require_model(snap, model, run(conn, model_plan(snap.snapshot_id, model.name)))
    matrix = run(conn, vectors_plan(snap.target, model.name, docs.ords.tolist(), stored.dim))
    vector_bytes = run(conn, vector_bytes_plan(snap.snapshot_id, model.name))
    started = time.perf_counter()
    queries: list[np.ndarray | None] = []
    for text in texts:
        try:
            queries.append(embed_query(model, text))
        except EmptyEmbedding:
            queries.append(None)
    return LearnedSide(
        model.name,
        matrix,
        queries,
        stored.embed_seconds,
        vector_bytes,
        time.perf_counter() - started,
        snap.documents,
        stored.texts_embedded,
    )
