"""model_structure_weighted: structure_bm25's first M reordered by structure / top +
w * cosine, held to a Python oracle written from the definition (plain loops, an
exactly rounded cosine) on real PostgreSQL, with the real wordllama-256 (the test
extra; no network) and a tiny deterministic model registered here; the evaluation,
the asyncio API, ``hints`` and ``query --model-ranking`` rank alike."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.corpus import generated_corpus, stdlib_functions
from support.database import Database, stored_questions

import riido_pg.aio
from riido_pg import load_snapshot, rank_snapshot
from riido_pg.embedding import embed_query, from_bytea, register_model, unregister_model
from riido_pg.errors import ConflictingOptions
from riido_pg.evaluation import evaluate, store_corpus
from riido_pg.ranking.model_hints import model_named
from riido_pg.ranking.policies import (
    MODEL_HINTS_BASELINE_FIRST,
    MODEL_STRUCTURE_OUT_OF_SCOPE,
    MODEL_STRUCTURE_WEIGHTED,
    OUT_OF_SCOPE,
    STRUCTURE_BM25,
    get_policy,
)
from riido_pg.ranking.policy.model_weighted import (
    MODEL_DEPTH,
    MODEL_WEIGHT,
    cosines,
    weighted_order,
)
from riido_pg.storage.embeddings import embed_snapshot

pytest.importorskip("tokenizers", reason="needs the model extra: pip install 'riido-pg[model]'")

MODEL = "wordllama-256"
TINY = "tiny-letters"
POLICY = MODEL_STRUCTURE_WEIGHTED
QUERIES = [
    "read the config file",
    "parse json",
    "split a string into words",
    "decode an encoded header",
    "format the date",
]


class Letters:
    """A deterministic 8-dimension model: the counts of the letters a to h. A text
    with none of them (``json``, ``sort``) embeds to nothing."""

    name, dim = TINY, 8

    def embed(self, texts: Any) -> np.ndarray:
        return np.asarray(
            [[t.lower().count(ch) for ch in "abcdefgh"] for t in texts], dtype=np.float32
        )


@pytest.fixture(scope="module", autouse=True)
def snapshot(db: Database) -> Iterator[None]:
    register_model(TINY, Letters, dim=8)
    model_named.cache_clear()
    with db.connect() as conn:
        load_snapshot(conn, "mw", stdlib_functions(300))
        embed_snapshot(conn, "mw", model_named(MODEL))
        embed_snapshot(conn, "mw", model_named(TINY))
    yield
    unregister_model(TINY)
    model_named.cache_clear()


def stored_vectors(conn: Any, snapshot_id: str, model: str, dim: int) -> dict[str, np.ndarray]:
    rows = conn.execute(
        "SELECT d.doc_id, v.vec FROM riido.snapshot_segments AS p "
        "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
        "JOIN riido.text_vectors AS v ON v.text_key = d.text_key AND v.model = %s "
        "WHERE p.snapshot_id = %s",
        (model, snapshot_id),
        binary=True,
    ).fetchall()
    return {r[0]: from_bytea(bytes(r[1]), dim) for r in rows}


def oracle(
    conn: Any,
    snapshot_id: str,
    query: str,
    model: str,
    weight: float = MODEL_WEIGHT,
    depth: int = MODEL_DEPTH,
) -> list[str]:
    """The definition, written out: structure_bm25's full ranking, its first
    ``depth`` by score / top + weight * cosine (ties: structure's order), the rest
    unchanged."""
    structure = rank_snapshot(conn, snapshot_id, query, policy=STRUCTURE_BM25).candidates
    loaded = model_named(model)
    q = [float(x) for x in embed_query(loaded, query).tolist()]
    vectors = stored_vectors(conn, snapshot_id, loaded.name, loaded.dim)
    head = structure[:depth]
    first = head[0].score or 0.0
    top = first if first > 0 else 1.0

    def cos(doc_id: str) -> float:
        v = [float(x) for x in vectors[doc_id].tolist()]
        return math.fsum(a * b for a, b in zip(q, v, strict=True))

    keyed = sorted(
        ((-((c.score or 0.0) / top + weight * cos(c.id)), k, c.id) for k, c in enumerate(head)),
    )
    return [doc_id for _, _, doc_id in keyed] + [c.id for c in structure[depth:]]


#: Every query under each model, but "json" under the tiny model, which embeds it to
#: nothing (its fallback to structure_bm25 is tested below).
CASES = [(q, m) for m in (MODEL, TINY) for q in QUERIES if not (m == TINY and "json" in q)]


@pytest.mark.parametrize(("query", "model"), CASES)
def test_ranks_as_the_oracle(conn: Any, query: str, model: str) -> None:
    ranking = rank_snapshot(conn, "mw", query, policy=POLICY, model=model)
    assert ranking.policy == POLICY
    assert [c.id for c in ranking.candidates] == oracle(conn, "mw", query, model)


@pytest.mark.parametrize(("weight", "depth"), [(0.0, 100), (2.0, 5), (0.5, 1), (4.0, 400)])
def test_its_parameters_rank_as_the_oracle(conn: Any, weight: float, depth: int) -> None:
    query = "read the config file"
    params = {"model_weight": weight, "model_depth": depth}
    ranking = rank_snapshot(conn, "mw", query, policy=POLICY, model=MODEL, params=params)
    assert [c.id for c in ranking.candidates] == oracle(conn, "mw", query, MODEL, weight, depth)


def test_weight_zero_is_structure(conn: Any) -> None:
    for query in QUERIES:
        got = rank_snapshot(
            conn, "mw", query, policy=POLICY, model=MODEL, params={"model_weight": 0.0}
        )
        structure = rank_snapshot(conn, "mw", query, policy=STRUCTURE_BM25)
        assert [c.id for c in got.candidates] == [c.id for c in structure.candidates]


@pytest.mark.parametrize("query", QUERIES[:3])
def test_a_limit_gives_the_first_k_of_the_full_ranking(conn: Any, query: str) -> None:
    full = rank_snapshot(conn, "mw", query, policy=POLICY, model=MODEL)
    assert len(full.candidates) == 300
    for k in (1, 7, 99, 100, 101, 250):
        top = rank_snapshot(conn, "mw", query, policy=POLICY, model=MODEL, limit=k)
        assert top.candidates == full.candidates[:k], k


def test_candidates_carry_the_weighted_score_of_the_first_m(conn: Any) -> None:
    ranking = rank_snapshot(conn, "mw", "read the config file", policy=POLICY, model=MODEL)
    structure = {
        c.id: c
        for c in rank_snapshot(conn, "mw", "read the config file", policy=STRUCTURE_BM25).candidates
    }
    head, rest = ranking.candidates[:MODEL_DEPTH], ranking.candidates[MODEL_DEPTH:]
    weighted = [c.weighted_score for c in head]
    assert all(w is not None for w in weighted)
    assert weighted == sorted(weighted, reverse=True)  # type: ignore[type-var]
    assert all(c.weighted_score is None for c in rest)
    for c in ranking.candidates:  # every other score is structure_bm25's own
        s = structure[c.id]
        assert (c.bm25_score, c.identifier_bm25_score, c.name_bm25_score, c.score) == (
            s.bm25_score,
            s.identifier_bm25_score,
            s.name_bm25_score,
            s.score,
        )
    shown = ranking.to_dict()["candidates"]
    assert "weighted_score" in shown[0] and "structure_score" in shown[0]
    assert "weighted_score" not in shown[-1]


def test_a_query_the_model_cannot_embed_keeps_structure(conn: Any) -> None:
    ranking = rank_snapshot(conn, "mw", "json", policy=POLICY, model=TINY)
    structure = rank_snapshot(conn, "mw", "json", policy=STRUCTURE_BM25)
    assert ranking.policy == MODEL_STRUCTURE_OUT_OF_SCOPE
    assert ranking.candidates == structure.candidates


def test_a_query_outside_the_identifier_limits_is_bm25(conn: Any) -> None:
    ranking = rank_snapshot(conn, "mw", "the of and", policy=POLICY, model=MODEL)
    assert ranking.policy == OUT_OF_SCOPE


def test_rules_of_the_method(conn: Any) -> None:
    with pytest.raises(ConflictingOptions, match="needs a model"):
        rank_snapshot(conn, "mw", "read", policy=POLICY)
    with pytest.raises(ConflictingOptions, match=r"the model.s weight"):
        rank_snapshot(conn, "mw", "read", policy=POLICY, model=MODEL, params={"model_weight": -1})
    with pytest.raises(ConflictingOptions, match="the documents the model reorders"):
        rank_snapshot(conn, "mw", "read", policy=POLICY, model=MODEL, params={"model_depth": 0})
    with pytest.raises(ConflictingOptions, match="no parameter"):
        rank_snapshot(conn, "mw", "read", policy=POLICY, model=MODEL, params={"w_name": 1})
    assert get_policy(POLICY).model_fallback == STRUCTURE_BM25


async def _async_ranked(dsn: str, query: str, limit: int | None) -> Any:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        return await riido_pg.aio.rank_snapshot(
            conn, "mw", query, policy=POLICY, model=MODEL, limit=limit
        )


def test_the_asyncio_api_ranks_alike(db: Database) -> None:
    with db.connect() as conn:
        for limit in (None, 5):
            sync = rank_snapshot(conn, "mw", "parse json", policy=POLICY, model=MODEL, limit=limit)
            assert asyncio.run(_async_ranked(db.dsn, "parse json", limit)) == sync


def test_eval_agrees_with_rank_snapshot_and_judges_with_cost(conn: Any, tmp_path: Path) -> None:
    stored = store_corpus(conn, generated_corpus(tmp_path / "beir", 4, n_docs=150))
    embed_snapshot(conn, stored.snapshot_id, model_named(MODEL))
    run_dir = tmp_path / "runs"
    # a depth below the corpus size, so first targets fall on both sides of it
    result = evaluate(
        conn, stored.snapshot_id, model=MODEL, run_dir=run_dir, params={"model_depth": 20}
    )
    assert result.policies[-2:] == (MODEL_HINTS_BASELINE_FIRST, POLICY)
    questions = stored_questions(conn, stored.snapshot_id)
    runs: dict[str, list[str]] = {}
    for line in (run_dir / f"{POLICY}.trec").read_text().splitlines():
        qid, _, doc, *_ = line.split()
        runs.setdefault(qid, []).append(doc)
    below = 0
    for r in result.results:
        q = questions[r.question_id]
        ranking = rank_snapshot(
            conn,
            stored.snapshot_id,
            q.text,
            policy=POLICY,
            model=MODEL,
            params={"model_depth": 20},
        )
        ids = [c.id for c in ranking.candidates]
        first = next(k for k, i in enumerate(ids, start=1) if i in q.targets)
        assert r.ranks[POLICY] == first, r.question_id
        assert runs[r.question_id] == ids[: len(runs[r.question_id])], r.question_id
        below += first > 20
    assert below  # some first targets lay below the reordered head
    data = result.to_dict()
    verdict = data["verdicts"][POLICY]
    assert verdict["verdict"] in ("beats", "worse", "no significant difference")
    cost = data["cost"][POLICY]
    assert cost["embedded_documents"] == 150 and cost["ms_per_question"] > 0
    assert any("token" in k or "inspect" in k for k in data["policies"][POLICY])


def test_eval_inspection_cost_is_what_lies_above_the_first_target(
    conn: Any, tmp_path: Path
) -> None:
    corpus = generated_corpus(tmp_path / "beir", 6, n_docs=120, n_questions=20)
    texts = {
        (obj := json.loads(line))["_id"]: obj["text"]
        for line in (corpus / "corpus.jsonl").read_text().splitlines()
    }
    stored = store_corpus(conn, corpus)
    embed_snapshot(conn, stored.snapshot_id, model_named(MODEL))
    params = {"model_depth": 10}
    result = evaluate(conn, stored.snapshot_id, model=MODEL, policies=[POLICY], params=params)
    questions = stored_questions(conn, stored.snapshot_id)
    for r in result.results:
        q = questions[r.question_id]
        ids = [
            c.id
            for c in rank_snapshot(
                conn, stored.snapshot_id, q.text, policy=POLICY, model=MODEL, params=params
            ).candidates
        ]
        above = ids[: r.ranks[POLICY] - 1]
        assert r.inspected[POLICY][0] == sum(len(texts[i]) for i in above), r.question_id


def test_cli_query_and_hints_select_it_with_model_ranking(cli: Any, conn: Any) -> None:
    got = cli(
        ["query", "mw", "parse json", "--model", MODEL, "--model-ranking", "weighted", "--all"]
    )
    assert got.code == 0, got.stderr
    body = json.loads(got.stdout)
    assert body["policy"] == POLICY
    expected = rank_snapshot(conn, "mw", "parse json", policy=POLICY, model=MODEL)
    assert [c["id"] for c in body["candidates"]] == [c.id for c in expected.candidates]
    hinted = cli(["query", "mw", "parse json", "--model", MODEL, "--model-ranking", "hints"])
    assert json.loads(hinted.stdout)["policy"] == MODEL_HINTS_BASELINE_FIRST
    request = {
        "snapshot_id": "mine",
        "query": "read config",
        "documents": [
            {"id": "a", "text": "def read_config(path): return open(path).read()"},
            {"id": "b", "text": "def write_log(msg): print(msg)"},
            {"id": "c", "text": "func ReadConfig() {}"},
        ],
    }
    out = cli(["hints", "--model", MODEL, "--model-ranking", "weighted"], input=json.dumps(request))
    assert out.code == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["policy"] == POLICY and len(answer["candidates"]) == 3


@pytest.mark.parametrize(
    "extra",
    [
        ["--model-ranking", "weighted"],  # without --model
        ["--model", MODEL, "--model-ranking", "weighted", "--policy", STRUCTURE_BM25],
        ["--model", MODEL, "--model-ranking", "weighted", "--identifier-hints"],
        ["--model", MODEL, "--policy", POLICY],
        ["--policy", POLICY],
        ["--model", MODEL, "--model-ranking", "nope"],
    ],
)
def test_cli_conflicts_exit_2(cli: Any, extra: list[str]) -> None:
    result = cli(["query", "mw", "read", *extra])
    assert result.code == 2 and result.stderr.startswith("error: "), (extra, result)
    assert result.stderr.count("\n") == 1


def test_help_names_the_selector(cli: Any) -> None:
    out = cli(["query", "--help"]).stdout
    assert "--model-ranking" in out and "model_structure_weighted" in out


# -- the pure parts -------------------------------------------------------------------

finite = st.floats(min_value=0, max_value=1e6, allow_nan=False)
cosine = st.floats(min_value=-1, max_value=1, allow_nan=False)


@given(
    st.lists(st.tuples(finite, cosine), min_size=1, max_size=40),
    st.floats(min_value=0, max_value=8, allow_nan=False),
)
def test_weighted_order_is_the_sorted_definition(
    pairs: list[tuple[float, float]], w: float
) -> None:
    scores = sorted((s for s, _ in pairs), reverse=True)  # structure's order: descending
    cos = [c for _, c in pairs]
    order, weighted = weighted_order(scores, cos, w)
    top = scores[0] if scores[0] > 0 else 1.0
    expected = sorted(range(len(scores)), key=lambda k: (-(scores[k] / top + w * cos[k]), k))
    assert order.tolist() == expected
    assert weighted.tolist() == [s / top + w * c for s, c in zip(scores, cos, strict=True)]


@given(st.lists(st.floats(min_value=-1, max_value=1, width=32), min_size=8, max_size=8))
def test_cosines_are_exactly_rounded_whatever_the_row_position(q: list[float]) -> None:
    rng = np.random.default_rng(len(q))
    rows = rng.standard_normal((5, 8)).astype(np.float32)
    got = cosines(np.asarray(q, dtype=np.float32), rows)
    for k in range(5):
        exact = math.fsum(float(a) * float(b) for a, b in zip(q, rows[k].tolist(), strict=True))
        assert got[k] == exact
        assert cosines(np.asarray(q, dtype=np.float32), rows[k : k + 1])[0] == exact
