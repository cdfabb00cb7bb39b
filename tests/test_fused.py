"""identifier_bm25_fused: one ranking by bm25 + w * identifier_bm25, recomputed here
from the two single-column rankings; its invariants in w; eval agrees with SQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.corpus import generated_corpus, stdlib_functions
from support.database import Database, stored_questions

from riido_pg import load_snapshot, rank_snapshot
from riido_pg.errors import ConflictingOptions
from riido_pg.evaluation import evaluate, store_corpus
from riido_pg.ranking.policies import (
    BM25,
    FUSED_WEIGHT,
    IDENTIFIER_BM25,
    IDENTIFIER_BM25_FUSED,
)

QUERIES = ["read the config file", "parse json string", "getHTTPResponse", "the of", "x"]
FUSED = IDENTIFIER_BM25_FUSED


@pytest.fixture(scope="module", autouse=True)
def snapshot(db: Database) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "fz", stdlib_functions(300))


def _expected(conn: Any, query: str, w: float) -> list[tuple[str, float, float, float]]:
    raw = {c.id: c.bm25_score for c in rank_snapshot(conn, "fz", query).candidates}
    ident = {
        c.id: c.identifier_bm25_score or 0.0
        for c in rank_snapshot(conn, "fz", query, policy=IDENTIFIER_BM25).candidates
    }
    rows = [(i, raw[i] + w * ident[i], raw[i], ident[i]) for i in raw]
    matched = sorted((r for r in rows if r[1] > 0), key=lambda r: (-r[1], r[0]))
    zero = sorted((r for r in rows if r[1] <= 0), key=lambda r: r[0])
    return [(i, 0.0 if s <= 0 else s, a, b) for i, s, a, b in matched + zero]


@pytest.mark.parametrize("w", [0.0, 0.5, FUSED_WEIGHT, 100.0])
@pytest.mark.parametrize("query", QUERIES)
def test_fused_ranking_is_bm25_plus_w_identifier_bm25(conn: Any, query: str, w: float) -> None:
    got = rank_snapshot(conn, "fz", query, policy=FUSED, fused_weight=w)
    assert got.policy == FUSED or got.policy == "bm25_identifier_input_out_of_scope"
    if got.policy != FUSED:
        return  # outside the identifier limits: the bm25 fallback, tested elsewhere
    rows = [(c.id, c.fused_score, c.bm25_score, c.identifier_bm25_score) for c in got.candidates]
    assert rows == _expected(conn, query, w)  # bit-identical floats, ties by id
    for k in (1, 7, 300):
        top = rank_snapshot(conn, "fz", query, policy=FUSED, fused_weight=w, limit=k)
        assert top.candidates == got.candidates[:k]


def test_weight_zero_is_bm25(conn: Any) -> None:
    for query in QUERIES:
        fused = rank_snapshot(conn, "fz", query, policy=FUSED, fused_weight=0.0)
        plain = rank_snapshot(conn, "fz", query)
        assert [c.id for c in fused.candidates] == [c.id for c in plain.candidates]


def test_a_large_weight_approaches_identifier_bm25_on_documents_both_match(conn: Any) -> None:
    query = "read the config file"
    fused = rank_snapshot(conn, "fz", query, policy=FUSED, fused_weight=1e6).candidates
    both = {c.id for c in fused if c.bm25_score > 0 and (c.identifier_bm25_score or 0) > 0}
    ident = rank_snapshot(conn, "fz", query, policy=IDENTIFIER_BM25).candidates
    assert [c.id for c in fused if c.id in both] == [c.id for c in ident if c.id in both]


def test_result_json_carries_the_fused_score(conn: Any) -> None:
    body = rank_snapshot(conn, "fz", "read config", policy=FUSED, limit=1).to_dict()
    c = body["candidates"][0]
    assert set(c) == {"id", "rank", "bm25_score", "identifier_bm25_score", "fused_score"}
    assert c["fused_score"] == c["bm25_score"] + FUSED_WEIGHT * c["identifier_bm25_score"]


def test_bad_weights_are_refused(conn: Any) -> None:
    for w in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ConflictingOptions, match="fused weight"):
            rank_snapshot(conn, "fz", "read", policy=FUSED, fused_weight=w)
    with pytest.raises(ConflictingOptions, match="fused policies"):
        rank_snapshot(conn, "fz", "read", policy=BM25, fused_weight=1.0)


def test_eval_agrees_with_the_sql_ranking_at_any_weight(conn: Any, tmp_path: Path) -> None:
    stored = store_corpus(conn, generated_corpus(tmp_path / "beir", 7, n_docs=120))
    questions = stored_questions(conn, stored.snapshot_id)
    for w in (0.0, 1.0, FUSED_WEIGHT):
        result = evaluate(conn, stored.snapshot_id, policies=[BM25, FUSED], fused_weight=w)
        assert result.to_dict()["config"]["fused_weight"] == w
        for r in result.results:
            q = questions[r.question_id]
            ranking = rank_snapshot(conn, stored.snapshot_id, q.text, policy=FUSED, fused_weight=w)
            first = next(c.rank for c in ranking.candidates if c.id in q.targets)
            assert r.ranks[FUSED] == first, (w, r.question_id)


def test_fusions_of_several_parameters_in_one_eval_each_rank_by_their_own(
    conn: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registered fused and RRF policies of other weights and k, evaluated together in
    one batch, each get the first-target ranks of their own SQL ranking."""
    import sys

    from riido_pg.ranking import Policy, register_policy
    from riido_pg.ranking.policy.fused import Fused
    from riido_pg.ranking.policy.rrf import ReciprocalRank

    registry = sys.modules["riido_pg.ranking.policies"]  # the name is also a function's
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    swept = {
        "fused_w0": Fused(0.0),
        "fused_w100": Fused(100.0),
        "rrf_k1": ReciprocalRank(1.0),
        "rrf_k500": ReciprocalRank(500.0),
    }
    for name, combiner in swept.items():
        register_policy(Policy(name, combiner, name))
    stored = store_corpus(conn, generated_corpus(tmp_path / "beir", 7, n_docs=120))
    result = evaluate(conn, stored.snapshot_id, policies=list(swept))
    questions = stored_questions(conn, stored.snapshot_id)
    for r in result.results:
        q = questions[r.question_id]
        for name in swept:
            ranking = rank_snapshot(conn, stored.snapshot_id, q.text, policy=name)
            first = next(c.rank for c in ranking.candidates if c.id in q.targets)
            assert r.ranks[name] == first, (name, r.question_id)
    assert len({tuple(r.ranks[n] for r in result.results) for n in swept}) > 1
