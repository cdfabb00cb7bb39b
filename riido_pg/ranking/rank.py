"""Ranking a snapshot under a policy (README "Ranking" and "Result JSON").

A policy (:mod:`riido_pg.ranking.policies`) names one or two lists; this module asks
SQL for each (:mod:`riido_pg.ranking.lists`) and interleaves two with
:mod:`riido_pg.ranking.interleave`. With ``limit=K`` each list is cut at K: the first
K of an interleave draw at most K ids from either list, so the result is exactly the
first K of the full ranking.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from riido_pg.documents import RankRequest, check_query
from riido_pg.errors import InvalidInput
from riido_pg.ranking import lists
from riido_pg.ranking.interleave import iter_interleave
from riido_pg.ranking.policies import (
    BM25,
    HINTS,
    IDENT,
    MODEL,
    MODEL_OUT_OF_SCOPE,
    OUT_OF_SCOPE,
    RAW,
    Policy,
    check_hints,
    check_weight,
    get_policy,
)
from riido_pg.ranking.terms import QueryTerms, query_terms
from riido_pg.server.connect import Conn
from riido_pg.server.errors import read_transaction, translated
from riido_pg.storage.scratch import scratch_snapshot
from riido_pg.storage.snapshots import DEFAULT_TEXT_CONFIG, Snapshot, get_snapshot

__all__ = ["Candidate", "Ranking", "rank_documents", "rank_snapshot"]


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    rank: int
    bm25_score: float
    identifier_bm25_score: float | None = None
    #: identifier_bm25_fused only: bm25_score + w * identifier_bm25_score.
    fused_score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "rank": self.rank, "bm25_score": self.bm25_score}
        if self.identifier_bm25_score is not None:
            out["identifier_bm25_score"] = self.identifier_bm25_score
        if self.fused_score is not None:
            out["fused_score"] = self.fused_score
        return out


@dataclass(frozen=True, slots=True)
class Ranking:
    snapshot_id: str
    policy: str
    candidates: list[Candidate] = field(default_factory=list)
    #: Always "unverified": candidates are suggestions the caller must check.
    status: str = "unverified"
    #: False when no word of the query survived the text search configuration (every
    #: document then scores 0 and follows in id order). Not part of the JSON.
    searchable: bool = True
    #: Candidates in the full ranking (every document of the snapshot), however many
    #: ``limit`` kept. Not part of the JSON.
    total: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "policy": self.policy,
            "status": self.status,
            "candidates": [c.to_dict() for c in self.candidates],
        }


def _combine(policy: Policy, ranked: dict[str, list[int]]) -> list[int]:
    first = ranked[policy.lists[0]]
    if len(policy.lists) == 1:
        return first
    return list(iter_interleave(first, ranked[policy.lists[1]]))


def _rank_fused(
    conn: Conn, snap: Snapshot, terms: QueryTerms, weight: float, limit: int | None, label: str
) -> Ranking:
    rows = lists.fused(conn, snap, terms.raw, terms.ident, weight, limit)
    candidates = [
        Candidate(doc_id, rank, raw, ident, score)
        for rank, (_, doc_id, score, raw, ident) in enumerate(rows, start=1)
    ]
    return Ranking(
        snap.snapshot_id, label, candidates, searchable=terms.searchable, total=snap.documents
    )


def _model_hints(
    conn: Conn, snap: Snapshot, query: str, terms: QueryTerms, model_name: str
) -> list[int] | None:
    """The model's hint doc_ords, or None when the query embeds to nothing."""
    from riido_pg.embedding import EmptyEmbedding, embed_query
    from riido_pg.ranking.model_hints import CANDIDATES, cosine_hints, model_named
    from riido_pg.storage.embeddings import require_model, vectors

    model = model_named(model_name)
    stored = require_model(conn, snap, model)
    try:
        query_vec = embed_query(model, query)
    except EmptyEmbedding:
        return None
    candidates = sorted(
        {
            o
            for col in (RAW, IDENT)
            for o, _, _ in lists.ranked(conn, snap, col, terms.of(col), CANDIDATES)
        }
    )
    return cosine_hints(
        query_vec, candidates, vectors(conn, snap.snapshot_id, model.name, candidates, stored.dim)
    )


def _rank(
    conn: Conn,
    snap: Snapshot,
    query: str,
    policy: Policy,
    limit: int | None,
    hints: Sequence[str] | None,
    weight: float | None = None,
    model: str | None = None,
) -> Ranking:
    terms = query_terms(conn, query, snap.text_config)
    label = policy.name
    if policy.identifier and not terms.identifier_in_scope:
        policy, label = get_policy(BM25), OUT_OF_SCOPE
    model_ords: list[int] | None = None
    if policy.needs_model:
        assert model is not None
        model_ords = _model_hints(conn, snap, query, terms, model)
        if model_ords is None:
            policy, label = get_policy(BM25), MODEL_OUT_OF_SCOPE
    if policy.fused:
        assert weight is not None
        return _rank_fused(conn, snap, terms, weight, limit, label)
    names: dict[int, str] = {}
    score: dict[str, dict[int, float]] = {RAW: {}, IDENT: {}}
    ranked: dict[str, list[int]] = {}
    for source in policy.lists:
        if source == HINTS:
            assert hints is not None
            ranked[source] = lists.hint_ords(conn, snap, hints)
            continue
        if source == MODEL:
            assert model_ords is not None
            ranked[source] = model_ords
            continue
        rows = lists.ranked(conn, snap, source, terms.of(source), limit)
        ranked[source] = [o for o, _, _ in rows]
        names.update((o, i) for o, i, _ in rows)
        score[source].update((o, s) for o, _, s in rows)
    order = _combine(policy, ranked)
    if limit is not None:
        order = order[:limit]
    shown = [RAW, IDENT] if policy.identifier else [RAW]
    for column in shown:
        missing = [o for o in order if o not in score[column]]
        score[column].update(lists.scores(conn, snap, column, terms.of(column), missing))
    names.update(lists.doc_ids(conn, snap, [o for o in order if o not in names]))
    candidates = [
        Candidate(
            names[o],
            rank,
            score[RAW][o],
            score[IDENT][o] if policy.identifier else None,
        )
        for rank, o in enumerate(order, start=1)
    ]
    return Ranking(
        snap.snapshot_id, label, candidates, searchable=terms.searchable, total=snap.documents
    )


def _check(
    query: str,
    policy: str,
    limit: int | None,
    hints: Sequence[str] | None,
    fused_weight: float | None,
    model: str | None,
) -> tuple[Policy, float | None]:
    check_query(query)
    chosen = get_policy(policy)
    check_hints(chosen, hints, model)
    if limit is not None and limit < 1:
        raise InvalidInput("limit must be at least 1")
    return chosen, check_weight(chosen, fused_weight)


@translated
def rank_snapshot(
    conn: Conn,
    snapshot_id: str,
    query: str,
    *,
    policy: str = BM25,
    limit: int | None = None,
    hints: Sequence[str] | None = None,
    fused_weight: float | None = None,
    model: str | None = None,
) -> Ranking:
    """Rank a stored snapshot. ``limit`` gives exactly the first K of the full ranking;
    ``fused_weight`` overrides a fused policy's weight; ``model`` names the learned
    hint source of ``model_hints_baseline_first`` (the snapshot must have been loaded
    with it).

    Runs in one read-only repeatable-read transaction, so a concurrent ``replace``
    is seen entirely or not at all.
    """
    chosen, weight = _check(query, policy, limit, hints, fused_weight, model)
    with read_transaction(conn):
        # heavy queries hash and sort posting rows; 4MB spills them to disk
        conn.execute("SET LOCAL work_mem = '32MB'")
        snap = get_snapshot(conn, snapshot_id)
        return _rank(conn, snap, query, chosen, limit, hints, weight, model)


@translated
def rank_documents(
    conn: Conn,
    request: RankRequest,
    *,
    policy: str = BM25,
    text_config: str = DEFAULT_TEXT_CONFIG,
    limit: int | None = None,
    hints: Sequence[str] | None = None,
    fused_weight: float | None = None,
    model: str | None = None,
) -> Ranking:
    """Rank the caller's documents without keeping them (a scratch snapshot; with a
    ``model``, the documents are embedded inside it too)."""
    chosen, weight = _check(request.query, policy, limit, hints, fused_weight, model)
    with scratch_snapshot(conn, request.documents, text_config) as snap:
        if model is not None:
            from riido_pg.ranking.model_hints import model_named
            from riido_pg.storage.embeddings import store_vectors

            store_vectors(conn, snap.snapshot_id, model_named(model))
        ranking = _rank(conn, snap, request.query, chosen, limit, hints, weight, model)
    return dataclasses.replace(ranking, snapshot_id=request.snapshot_id)
