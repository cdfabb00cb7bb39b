"""--model: a learned hint source (wordllama-256, installed with the test extra; no
network) stored with a snapshot, ranked as model_hints_baseline_first, evaluated with
its cost and a verdict against the control. The real model, no mock."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.corpus import generated_corpus, stdlib_functions
from support.database import Database, stored_questions

import riido_pg
from riido_pg import load_snapshot, rank_snapshot
from riido_pg.embedding import register_model, unregister_model
from riido_pg.errors import ConflictingOptions, InvalidInput
from riido_pg.evaluation import evaluate, store_corpus
from riido_pg.ranking.model_hints import model_named
from riido_pg.ranking.policies import BM25, MODEL_HINTS_BASELINE_FIRST, MODEL_OUT_OF_SCOPE
from riido_pg.storage.embeddings import embed_snapshot

pytest.importorskip("tokenizers", reason="needs the model extra: pip install 'riido-pg[model]'")

MODEL = "wordllama-256"
POLICY = MODEL_HINTS_BASELINE_FIRST


@pytest.fixture(scope="module", autouse=True)
def snapshot(db: Database) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "mh", stdlib_functions(200))
        assert embed_snapshot(conn, "mh", model_named(MODEL))
        assert not embed_snapshot(conn, "mh", model_named(MODEL))  # already there


def test_embeddings_are_stored_one_per_text(conn: Any) -> None:
    rows = conn.execute(
        "SELECT count(*), min(octet_length(v.vec)), max(octet_length(v.vec)) "
        "FROM riido.text_vectors AS v WHERE v.model = %s AND v.text_key IN ("
        "SELECT d.text_key FROM riido.documents AS d JOIN riido.snapshot_segments AS p "
        "ON p.segment_id = d.segment_id WHERE p.snapshot_id = 'mh')",
        (MODEL,),
    ).fetchone()
    texts = len({d.text for d in stdlib_functions(200)})
    assert rows == (texts, 256 * 4, 256 * 4)


@pytest.mark.parametrize("query", ["read the config file", "parse json", "split a string"])
def test_model_hints_keep_the_baseline_first_and_every_document(conn: Any, query: str) -> None:
    ranking = rank_snapshot(conn, "mh", query, policy=POLICY, model=MODEL)
    baseline = rank_snapshot(conn, "mh", query)
    assert ranking.policy == POLICY
    assert ranking.candidates[0].id == baseline.candidates[0].id
    assert sorted(c.id for c in ranking.candidates) == sorted(c.id for c in baseline.candidates)
    for k in (1, 5, 50):
        top = rank_snapshot(conn, "mh", query, policy=POLICY, model=MODEL, limit=k)
        assert top.candidates == ranking.candidates[:k]


def test_a_query_the_model_cannot_embed_falls_back_to_bm25(conn: Any) -> None:
    ranking = rank_snapshot(conn, "mh", "   ", policy=POLICY, model=MODEL)
    assert ranking.policy == MODEL_OUT_OF_SCOPE
    assert [c.id for c in ranking.candidates] == [
        c.id for c in rank_snapshot(conn, "mh", "   ").candidates
    ]


def test_rules_of_the_method(conn: Any, cli: Any) -> None:
    with pytest.raises(ConflictingOptions, match="needs a model"):
        rank_snapshot(conn, "mh", "read", policy=POLICY)
    with pytest.raises(ConflictingOptions, match="cannot be used with policy bm25"):
        rank_snapshot(conn, "mh", "read", policy=BM25, model=MODEL)
    for extra in (["--identifier-hints"], ["--policy", "bm25"], ["--policy", "identifier_bm25"]):
        result = cli(["query", "mh", "read", "--model", MODEL, *extra])
        assert result.code == 2 and result.stderr.startswith("error: "), (extra, result)
        assert result.stderr.count("\n") == 1


def test_unknown_model_lists_the_known_ones(cli: Any) -> None:
    result = cli(["query", "mh", "read", "--model", "nope"])
    assert (result.code, result.stdout) == (2, "")
    assert (
        result.stderr
        == "error: unknown model 'nope'; choose among: all-minilm-l6-v2, wordllama-256\n"
    )


def test_a_snapshot_without_embeddings_says_how_to_add_them(db: Database, cli: Any) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "plain", stdlib_functions(20))
    result = cli(["query", "plain", "read", "--model", MODEL])
    assert result.code == 2
    assert result.stderr == (
        "error: snapshot 'plain' has no embeddings for model 'wordllama-256'; add them with "
        "`riido-pg load plain SOURCE --model wordllama-256` (the same source: the load is "
        "unchanged and only embeds)\n"
    )


def test_a_snapshot_without_embeddings_says_in_python_how_to_add_them(db: Database) -> None:
    """From Python there is no SOURCE: the hint names Database.load with model=."""
    with db.connect() as conn:
        load_snapshot(conn, "plain-py", stdlib_functions(20))
        with pytest.raises(InvalidInput) as raised:
            rank_snapshot(conn, "plain-py", "read", policy=POLICY, model=MODEL)
    assert str(raised.value) == (
        "snapshot 'plain-py' has no embeddings for model 'wordllama-256'; add them with "
        "Database.load() of the same documents and model='wordllama-256' (the load is "
        "unchanged and only embeds)"
    )
    assert "SOURCE" not in str(raised.value)
    with db.connect() as conn:  # the hint, followed: unchanged, and only embeds
        loaded = riido_pg.Database(conn).load("plain-py", stdlib_functions(20), model=MODEL)
        assert (loaded.result.action, loaded.embedded) == ("unchanged", MODEL)
        assert rank_snapshot(conn, "plain-py", "read", policy=POLICY, model=MODEL).candidates


def test_a_model_of_another_dimension_is_refused(conn: Any) -> None:
    class Tiny:
        name, dim = "shifting", 8

        def embed(self, texts: Any) -> np.ndarray:
            return np.ones((len(texts), self.dim), dtype=np.float32)

    class Wider(Tiny):
        dim = 16

    register_model("shifting", Tiny, dim=8)
    try:
        model_named.cache_clear()
        embed_snapshot(conn, "mh", model_named("shifting"))
        register_model("shifting", Wider, dim=16, replace=True)
        model_named.cache_clear()
        with pytest.raises(InvalidInput, match="stores 8-dimension vectors"):
            rank_snapshot(conn, "mh", "read", policy=POLICY, model="shifting")
    finally:
        unregister_model("shifting")
        model_named.cache_clear()


def test_cli_load_with_a_model_then_query(cli: Any, tmp_path: Path) -> None:
    src = tmp_path / "d.jsonl"
    src.write_text(
        "".join(
            json.dumps({"id": f"d{i}", "text": t}) + "\n"
            for i, t in enumerate(["def read_config(path): ...", "def write_log(msg): ..."])
        )
    )
    result = cli(["load", "cli-model", str(src), "--model", MODEL])
    assert (
        result.stdout == "loaded snapshot 'cli-model' (2 documents), embedded with wordllama-256\n"
    )
    body = json.loads(cli(["query", "cli-model", "read config", "--model", MODEL]).stdout)
    assert body["policy"] == POLICY and body["candidates"][0]["id"] == "d0"


def test_eval_agrees_with_rank_snapshot_and_judges_with_cost(conn: Any, tmp_path: Path) -> None:
    stored = store_corpus(conn, generated_corpus(tmp_path / "beir", 3, n_docs=150))
    embed_snapshot(conn, stored.snapshot_id, model_named(MODEL))
    result = evaluate(conn, stored.snapshot_id, model=MODEL)
    assert POLICY in result.policies
    questions = stored_questions(conn, stored.snapshot_id)
    for r in result.results:
        q = questions[r.question_id]
        ranking = rank_snapshot(conn, stored.snapshot_id, q.text, policy=POLICY, model=MODEL)
        first = next(c.rank for c in ranking.candidates if c.id in q.targets)
        assert r.ranks[POLICY] == first, r.question_id
    data = result.to_dict()
    verdict = data["verdicts"][POLICY]
    assert set(verdict) == {
        "beats_control",
        "verdict",
        "mrr_minus_control",
        "mrr_minus_control_interval",
        "recall@10_minus_control",
        "recall@10_minus_control_interval",
        "recall@1_minus_bm25",
        "test",
    }
    assert verdict["recall@1_minus_bm25"] == 0.0  # baseline-first keeps bm25's first
    cost = data["cost"][POLICY]
    (distinct,) = conn.execute(
        "SELECT count(DISTINCT d.text_key) FROM riido.documents AS d "
        "JOIN riido.snapshot_segments AS p ON p.segment_id = d.segment_id "
        "WHERE p.snapshot_id = %s",
        (stored.snapshot_id,),
    ).fetchone()
    assert distinct < 150  # the generated corpus repeats some texts: each is stored once
    assert cost["stored_bytes"] == distinct * 256 * 4 and cost["load_seconds"] > 0
    assert (cost["embedded_snapshots"], cost["embedded_documents"]) == (1, 150)
    assert cost["embedded_texts"] == distinct  # every text was new, embedded once
    assert data["cost"]["process"]["peak_rss_mb"] > 0
    assert data["model"] == MODEL


def test_eval_table_says_what_embedding_cost(cli: Any, tmp_path: Path) -> None:
    corpus = generated_corpus(tmp_path / "beir", 5, n_docs=60, n_questions=10)
    result = cli(["eval", str(corpus), "--model", MODEL, "--policy", POLICY])
    assert result.code == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if POLICY in line]
    assert any(re.search(r"\b\d+ / 60\b", line) for line in rows), result.stdout
