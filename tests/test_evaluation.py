"""Batch evaluation (riido_pg.evaluation) against a real PostgreSQL: agreement with the
SQL ranking path for every policy, hand-computed figures, storing and reuse, output
determinism, run files, and the baseline-first Recall@1 invariant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.corpus import generated_corpus, tie_corpus, write_beir
from support.database import Database

import riido_pg.evaluation.batch as evaluate_module
from riido_pg.errors import InvalidInput, SnapshotNotFound
from riido_pg.evaluation import (
    Evaluation,
    corpora,
    evaluate,
    scoring,
    snapshot_id_for,
    store_corpus,
)
from riido_pg.evaluation.metrics import first_target_rank, rounded
from riido_pg.ranking import (
    BM25,
    IDENTIFIER_BM25,
    IDENTIFIER_BM25_AUXILIARY_FIRST,
    IDENTIFIER_BM25_BASELINE_FIRST,
    IDENTIFIER_BM25_FUSED,
    IDENTIFIER_BM25_RRF,
    OUT_OF_SCOPE,
    evaluated_policies,
    query_terms,
    rank_snapshot,
)
from riido_pg.ranking.bm25 import SCALE
from riido_pg.ranking.interleave import auxiliary_first, baseline_first
from riido_pg.ranking.policies import (
    FUSED_WEIGHT,
    RRF_K,
    STRUCTURE_BM25,
    STRUCTURE_RECENT_PRIOR,
    get_policy,
)
from riido_pg.storage import drop_snapshot, get_snapshot, load_snapshot

NEAR = 1e-12  # relative: float summation-order noise is ~1e-16


def canonical(scored: list[tuple[str, float]]) -> list[str]:
    """The contract order (score descending, then id) of (id, score) pairs, scores
    within NEAR of each other counted as equal."""
    keyed = []
    group: float | None = None
    for doc_id, score in sorted(scored, key=lambda c: -c[1]):
        if group is None or abs(group - score) > NEAR * max(abs(group), 1e-300):
            group = score
        keyed.append((-group, doc_id))
    return [doc_id for _, doc_id in sorted(keyed)]


def reciprocal_rank_order(
    raw_order: list[str],
    ident_order: list[str],
    raw: dict[str, float],
    ident: dict[str, float],
    k: float,
) -> list[str]:
    """Reciprocal rank fusion written out: 1 / (k + rank) for each column matching a
    document, summed; documents neither column matches follow in id order."""
    score: dict[str, float] = {}
    for order, scores in ((raw_order, raw), (ident_order, ident)):
        matched = [d for d in order if scores[d] > 0]
        for rank, d in enumerate(matched, start=1):
            score[d] = score.get(d, 0.0) + 1.0 / (k + rank)
    ranked = sorted(score, key=lambda d: (-score[d], d.encode()))
    return ranked + sorted((d for d in raw_order if d not in score), key=str.encode)


def sql_path_ranks(
    conn: Any, directory: Path, snapshot_id: str
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]], set[str]]:
    """First-target rank per question and policy from rank_snapshot's full lists:
    as given, and with scores within NEAR counted as ties (the contract's order,
    free of float summation-order noise); and the questions whose SQL lists have
    such near ties."""
    queries = [json.loads(x) for x in (directory / "queries.jsonl").read_text().splitlines()]
    targets: dict[str, set[str]] = {}
    for line in (directory / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        q, d, s = line.split("\t")
        if int(s) > 0:
            targets.setdefault(q, set()).add(d)
    strict: dict[str, dict[str, int]] = {}
    tolerant: dict[str, dict[str, int]] = {}
    noisy: set[str] = set()
    for q in queries:
        qid = q["_id"]
        if qid not in targets:
            continue
        lists = {
            p: rank_snapshot(conn, snapshot_id, q["text"], policy=p) for p in evaluated_policies()
        }
        strict[qid] = {
            p: first_target_rank((c.id for c in r.candidates), targets[qid])
            for p, r in lists.items()
        }
        raw = [(c.id, c.bm25_score) for c in lists[BM25].candidates]
        ident_list = lists[IDENTIFIER_BM25]
        raw_order = canonical(raw)
        if ident_list.policy == OUT_OF_SCOPE:
            orders = dict.fromkeys(evaluated_policies(), raw_order)
            ident_order = raw_order
        else:
            ident = [(c.id, c.identifier_bm25_score or 0.0) for c in ident_list.candidates]
            ident_order = canonical(ident)
            fused = [(c.id, c.fused_score or 0.0) for c in lists[IDENTIFIER_BM25_FUSED].candidates]
            orders = {
                BM25: raw_order,
                IDENTIFIER_BM25: ident_order,
                IDENTIFIER_BM25_BASELINE_FIRST: baseline_first(raw_order, ident_order),
                IDENTIFIER_BM25_AUXILIARY_FIRST: auxiliary_first(raw_order, ident_order),
                IDENTIFIER_BM25_FUSED: canonical(fused),
                IDENTIFIER_BM25_RRF: reciprocal_rank_order(
                    raw_order, ident_order, dict(raw), dict(ident), RRF_K
                ),
                STRUCTURE_BM25: canonical(
                    [(c.id, c.score or 0.0) for c in lists[STRUCTURE_BM25].candidates]
                ),
            }
        if raw_order != [c.id for c in lists[BM25].candidates] or ident_order != [
            c.id for c in ident_list.candidates
        ]:
            noisy.add(qid)
        tolerant[qid] = {p: first_target_rank(o, targets[qid]) for p, o in orders.items()}
    return strict, tolerant, noisy


@pytest.mark.parametrize(("seed", "text_config"), [(1, "english"), (2, "simple")])
def test_every_rank_equals_the_sql_path(
    conn: Any, tmp_path: Path, seed: int, text_config: str
) -> None:
    """Every first-target rank of every policy equals the one found by scanning
    rank_snapshot's full candidate list, exactly; and the SQL lists themselves are in
    the contract's order up to scores within 1e-12 (both paths sum a document's terms
    in lexeme order, so equal documents score bit-identically whatever plan the
    server picks)."""
    directory = generated_corpus(tmp_path / "beir", seed)
    stored = store_corpus(conn, directory, text_config=text_config)
    result = evaluate(conn, stored.snapshot_id)
    strict, tolerant, _noisy = sql_path_ranks(conn, directory, stored.snapshot_id)
    got = {r.question_id: {p: r.ranks[p] for p in evaluated_policies()} for r in result.results}
    assert got == strict
    assert got == tolerant
    # the corpus exercises what it is meant to
    assert result.out_of_scope >= 1  # q-many, and q-stop/q-empty under english
    assert any(r.ranks[BM25] > 10 for r in result.results)
    assert any(r.ranks[IDENTIFIER_BM25_BASELINE_FIRST] != r.ranks[BM25] for r in result.results)
    assert_baseline_first_recall_at_1(result)


def test_sql_path_ties_identical_documents(conn: Any, tmp_path: Path) -> None:
    directory = generated_corpus(tmp_path / "beir", 1)
    stored = store_corpus(conn, directory)
    texts: dict[str, str] = {}
    for line in (directory / "corpus.jsonl").read_text().splitlines():
        obj = json.loads(line)
        texts[obj["_id"]] = obj["text"]
    lines = (directory / "queries.jsonl").read_text().splitlines()
    for query in [json.loads(x)["text"] for x in lines[:50]]:
        ranking = rank_snapshot(conn, stored.snapshot_id, query)
        by_text: dict[str, set[float]] = {}
        for c in ranking.candidates:
            by_text.setdefault(texts[c.id], set()).add(c.bm25_score)
        assert all(len(scores) == 1 for scores in by_text.values()), query


def assert_our_scores_match_the_sql_scores(conn: Any, snapshot_id: str, query: str) -> None:
    """The sparse engine's scores are the SQL path's, exactly (integer units)."""
    ranking = rank_snapshot(conn, snapshot_id, query)
    terms = query_terms(conn, query, "english")
    snap = get_snapshot(conn, snapshot_id)
    docs = scoring.documents(conn, snap)
    col = scoring.column_weights(conn, snap, "raw", [terms.raw], docs)
    ours = (col.questions @ col.weights).toarray()[0]
    # the sparse engine's columns are the documents in id order
    places = {c.id: i for i, c in enumerate(sorted(ranking.candidates, key=lambda c: c.id))}
    for c in ranking.candidates:
        assert ours[places[c.id]] / SCALE == c.bm25_score


def test_scores_match_the_sql_scores(conn: Any, tmp_path: Path) -> None:
    directory = generated_corpus(tmp_path / "beir", 6, n_questions=10)
    stored = store_corpus(conn, directory)
    for line in (directory / "queries.jsonl").read_text().splitlines():
        assert_our_scores_match_the_sql_scores(conn, stored.snapshot_id, json.loads(line)["text"])


def assert_baseline_first_recall_at_1(result: Evaluation) -> None:
    data = result.to_dict()
    policies = data["policies"]
    assert policies[IDENTIFIER_BM25_BASELINE_FIRST]["recall@1"] == policies[BM25]["recall@1"]
    for repo in data["per_repo"].values():
        assert repo[IDENTIFIER_BM25_BASELINE_FIRST]["recall@1"] == repo[BM25]["recall@1"]
    for r in result.results:
        assert (r.ranks[IDENTIFIER_BM25_BASELINE_FIRST] == 1) == (r.ranks[BM25] == 1)


def test_small_batches_give_the_same_result(
    conn: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = store_corpus(conn, generated_corpus(tmp_path / "beir", 3))
    whole = evaluate(conn, stored.snapshot_id).to_json()
    monkeypatch.setattr(evaluate_module, "BATCH_CELLS", 7 * 300)  # 7 questions per batch
    seen: list[tuple[int, int]] = []
    batched = evaluate(
        conn, stored.snapshot_id, progress=lambda _p, done, total: seen.append((done, total))
    )
    assert batched.to_json() == whole
    assert len(seen) == 8 and seen[-1] == (53, 53)


def test_hand_computed_ranks_and_figures(conn: Any, tmp_path: Path) -> None:
    stored = store_corpus(conn, tie_corpus(tmp_path / "beir"))
    result = evaluate(conn, stored.snapshot_id)
    bm25 = {r.question_id: r.ranks[BM25] for r in result.results}
    # q_tie: a, b, j are the same text "alpha beta": tied, so in id order; j is third.
    # q_multi: h ("gamma gamma alpha") is the only document with both words: first.
    # q_zero: only the 12 filler documents match ("words"), all equally: z11 is 12th.
    # q_ident: f ("read the config file") is the only raw match of both words.
    # q_late: 5 documents contain "alpha"; then the zero-score ones in id order:
    #         c d e f i z00 .. z05 -> z05 is 5 + 5 + 6 = 16th.
    # q_stop: only stopwords (english): every score is 0, id order: a b c -> c is 3rd.
    assert bm25 == {"q_tie": 3, "q_multi": 1, "q_zero": 12, "q_ident": 1, "q_late": 16, "q_stop": 3}
    figures = result.to_dict()["policies"][BM25]
    assert figures == {
        "recall@1": rounded(2 / 6),
        "recall@10": rounded(4 / 6),
        "mrr": rounded((1 / 3 + 1 + 1 / 12 + 1 + 1 / 16 + 1 / 3) / 6),
        "mean_first_target_rank": 6.0,
        # read before the first target (the documents above it, listed above):
        # q_tie a b; q_zero z00..z10; q_late a b g h j c d e f i z00..z04; q_stop a b
        "inspected_chars_mean": rounded((20 + 144 + 204 + 20) / 6),
        "inspected_chars_median": 20.0,
        "inspected_tokens_mean": rounded((6 + 44 + 59 + 6) / 6),  # ceil(chars/4) each
        "inspected_tokens_median": 6.0,
    }
    by_id = {r.question_id: r for r in result.results}
    assert {q: r.inspected[BM25] for q, r in by_id.items()} == {
        "q_tie": (20, 6),
        "q_multi": (0, 0),
        "q_zero": (10 * 13 + 14, 10 * 4 + 4),
        "q_ident": (0, 0),
        "q_late": (204, 59),
        "q_stop": (20, 6),
    }
    # q_stop has no identifier lexemes either: identifier policies fall back to bm25
    assert not by_id["q_stop"].identifier_in_scope
    assert {by_id["q_stop"].ranks[p] for p in evaluated_policies()} == {3}
    assert result.to_dict()["corpus"]["identifier_out_of_scope"] == 1
    # q_ident: the identifier column finds e and f, both targets
    assert by_id["q_ident"].ranks["identifier_bm25"] == 1
    assert_baseline_first_recall_at_1(result)


def test_output_shape_rounding_and_byte_identical_rerun(conn: Any, tmp_path: Path) -> None:
    directory = tie_corpus(tmp_path / "beir")
    stored = store_corpus(conn, directory)
    first = evaluate(conn, stored.snapshot_id).to_json()
    assert evaluate(conn, stored.snapshot_id).to_json() == first
    data = json.loads(first)
    assert list(data) == [
        "config",
        "corpus",
        "per_repo",
        "policies",
        "verdicts",  # the fused challenger against the control
        "versus_baseline",
        "versus_control",
    ]
    assert list(data["verdicts"]) == [IDENTIFIER_BM25_FUSED, IDENTIFIER_BM25_RRF, STRUCTURE_BM25]
    major = int(conn.execute("SHOW server_version_num").fetchone()[0]) // 10000
    params = data["config"]["policy_params"]
    assert {k: v for k, v in data["config"].items() if k != "policy_params"} == {
        "b": 0.75,
        "k1": 1.2,
        "text_config": "english",
        "postgresql_major": major,
        "fused_weight": FUSED_WEIGHT,
    }
    # each policy's parameters as it ran: those of the registry, none for the lists
    assert params == {
        p: dict(get_policy(p).combiner.values)
        for p in evaluated_policies()
        if get_policy(p).combiner.values
    }
    assert params[IDENTIFIER_BM25_FUSED] == {"weight": FUSED_WEIGHT}
    assert params[STRUCTURE_BM25]["recent_prior"] == STRUCTURE_RECENT_PRIOR
    assert BM25 not in params
    corpus = data["corpus"]
    assert corpus["documents"] == 22 and corpus["questions"] == 6
    assert corpus["skipped_questions"] == 0
    assert corpus["sha256"] == stored.corpus_sha256
    assert corpus["snapshot_id"] == snapshot_id_for(stored.corpus_sha256, "english")
    assert list(data["policies"]) == sorted(evaluated_policies())
    assert sorted(data["versus_baseline"]) == sorted(p for p in evaluated_policies() if p != BM25)
    for counts in data["versus_baseline"].values():
        assert sum(counts.values()) == 6
    assert data["per_repo"] == {}  # no question or target has a repo

    def floats(obj: Any) -> list[float]:
        if isinstance(obj, dict):
            return [f for v in obj.values() for f in floats(v)]
        return [obj] if isinstance(obj, float) else []

    assert all(round(f, 6) == f for f in floats(data))
    assert first == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def test_versus_baseline_counts(conn: Any, tmp_path: Path) -> None:
    stored = store_corpus(conn, generated_corpus(tmp_path / "beir", 4))
    result = evaluate(conn, stored.snapshot_id)
    versus = result.to_dict()["versus_baseline"]
    for policy, counts in versus.items():
        mine = [r.ranks[policy] for r in result.results]
        base = [r.ranks[BM25] for r in result.results]
        assert counts == {
            "improved": sum(m < b for m, b in zip(mine, base, strict=True)),
            "worsened": sum(m > b for m, b in zip(mine, base, strict=True)),
            "unchanged": sum(m == b for m, b in zip(mine, base, strict=True)),
        }


def test_policy_selection(conn: Any, tmp_path: Path) -> None:
    stored = store_corpus(conn, tie_corpus(tmp_path / "beir"))
    full = evaluate(conn, stored.snapshot_id).to_dict()
    one = evaluate(conn, stored.snapshot_id, policies=["identifier_bm25", "identifier_bm25"])
    data = one.to_dict()
    assert list(data["policies"]) == ["identifier_bm25"]
    assert data["policies"]["identifier_bm25"] == full["policies"]["identifier_bm25"]
    versus = full["versus_baseline"]["identifier_bm25"]
    assert data["versus_baseline"] == {"identifier_bm25": versus}
    only_bm25 = evaluate(conn, stored.snapshot_id, policies=["bm25"]).to_dict()
    assert only_bm25["versus_baseline"] == {}
    for bad in ("external_hints_baseline_first", "bm25_identifier_input_out_of_scope", "x"):
        with pytest.raises(InvalidInput):
            evaluate(conn, stored.snapshot_id, policies=[bad])


def test_per_repo_uses_the_question_repo(conn: Any, tmp_path: Path) -> None:
    directory = write_beir(
        tmp_path / "beir",
        [
            {"_id": "a1", "text": "open the file", "metadata": {"repo": "alpha"}},
            {"_id": "a2", "text": "close the file", "metadata": {"repo": "alpha"}},
            {"_id": "b1", "text": "parse json", "metadata": {"repo": "beta"}},
            {"_id": "n1", "text": "no repo here"},
        ],
        [
            {"_id": "q1", "text": "open file", "metadata": {"repo": "gamma"}},  # own repo
            {"_id": "q2", "text": "close file"},  # repo of its target: alpha
            {"_id": "q3", "text": "parse json"},  # beta
            {"_id": "q4", "text": "repo here"},  # target without repo: no per-repo entry
            {"_id": "q5", "text": "skipped"},  # no target
        ],
        [("q1", "a1", 1), ("q2", "a2", 1), ("q3", "b1", 1), ("q4", "n1", 1), ("q5", "a1", 0)],
    )
    result = evaluate(conn, store_corpus(conn, directory).snapshot_id)
    data = result.to_dict()
    assert data["corpus"]["questions"] == 4
    assert data["corpus"]["skipped_questions"] == 1
    assert sorted(data["per_repo"]) == ["alpha", "beta", "gamma"]
    assert {q: [r.question_id for r in rs] for q, rs in result.repos().items()} == {
        "alpha": ["q2"],
        "beta": ["q3"],
        "gamma": ["q1"],
    }
    # each of these questions finds its only target first: every figure is perfect,
    # and nothing is read before it
    for repo in data["per_repo"].values():
        for figures in repo.values():
            assert figures == {
                "recall@1": 1.0,
                "recall@10": 1.0,
                "mrr": 1.0,
                "mean_first_target_rank": 1.0,
                "inspected_chars_mean": 0.0,
                "inspected_chars_median": 0.0,
                "inspected_tokens_mean": 0.0,
                "inspected_tokens_median": 0.0,
            }


# --- storing -------------------------------------------------------------------------


def test_store_then_reuse_without_reloading(conn: Any, db: Database, tmp_path: Path) -> None:
    directory = tie_corpus(tmp_path / "beir")
    (directory / "corpus.jsonl").write_text(
        (directory / "corpus.jsonl").read_text() + '{"_id": "zz", "text": "unique to reuse"}\n'
    )
    first = store_corpus(conn, directory)
    assert first.action == "stored"
    assert first.snapshot_id == snapshot_id_for(first.corpus_sha256, "english")
    row = conn.execute(
        "SELECT created_at, xmin::text FROM riido.snapshots WHERE snapshot_id = %s",
        (first.snapshot_id,),
    ).fetchone()
    before = db.counts()
    again = store_corpus(conn, directory)
    assert again == type(first)(first.snapshot_id, first.corpus_sha256, "reused")
    assert db.counts() == before
    assert (
        conn.execute(
            "SELECT created_at, xmin::text FROM riido.snapshots WHERE snapshot_id = %s",
            (first.snapshot_id,),
        ).fetchone()
        == row
    )
    stored_q = conn.execute(
        "SELECT count(*) FROM riido.questions WHERE snapshot_id = %s", (first.snapshot_id,)
    ).fetchone()
    assert stored_q == (6,)
    # another text configuration is another snapshot
    simple = store_corpus(conn, directory, text_config="simple")
    assert simple.snapshot_id == snapshot_id_for(first.corpus_sha256, "simple")
    assert simple.action == "stored"


def test_failure_while_storing_questions_stores_nothing(
    conn: Any, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = generated_corpus(tmp_path / "beir", 5, n_docs=40, n_questions=5)
    before = db.counts()
    real = corpora._write_questions

    def write_then_fail(*args: Any) -> None:
        real(*args)  # documents, postings, questions and targets are written by now...
        raise RuntimeError("boom")

    monkeypatch.setattr(corpora, "_write_questions", write_then_fail)
    with pytest.raises(RuntimeError):
        store_corpus(conn, directory)
    assert db.counts() == before  # ...and all rolled back
    monkeypatch.undo()
    assert store_corpus(conn, directory).action == "stored"  # and the lock was released


def test_evaluating_by_snapshot_id_and_its_errors(conn: Any, tmp_path: Path) -> None:
    stored = store_corpus(conn, tie_corpus(tmp_path / "beir"))
    assert evaluate(conn, stored.snapshot_id).snapshot_id == stored.snapshot_id
    with pytest.raises(SnapshotNotFound, match=r"store_corpus\(\) stores a corpus"):
        evaluate(conn, "no-such-snapshot")
    load_snapshot(conn, "plain", [type_doc("a", "alpha")])
    with pytest.raises(InvalidInput, match="has no stored questions"):
        evaluate(conn, "plain")


def type_doc(doc_id: str, text: str) -> Any:
    from riido_pg.documents import Document

    return Document(doc_id, text)


def test_replaced_snapshot_is_detected(conn: Any, tmp_path: Path) -> None:
    directory = write_beir(
        tmp_path / "beir",
        [{"_id": "r1", "text": "replace me"}, {"_id": "r2", "text": "other words"}],
        [{"_id": "q", "text": "replace"}],
        [("q", "r1", 1)],
    )
    stored = store_corpus(conn, directory)
    load_snapshot(conn, stored.snapshot_id, [type_doc("x", "new content")], replace=True)
    with pytest.raises(InvalidInput, match="was replaced"):
        evaluate(conn, stored.snapshot_id)
    with pytest.raises(InvalidInput, match=r"drop_snapshot\(\)") as info:
        store_corpus(conn, directory)
    assert "`riido-pg snapshots drop beir-" in info.value.render(cli=True)
    drop_snapshot(conn, stored.snapshot_id)
    assert store_corpus(conn, directory).action == "stored"


def test_drop_removes_questions_and_targets(conn: Any, db: Database, tmp_path: Path) -> None:
    directory = write_beir(
        tmp_path / "beir",
        [{"_id": "x1", "text": "drop me"}, {"_id": "x2", "text": "keep"}],
        [{"_id": "q", "text": "drop"}, {"_id": "q2", "text": "keep"}],
        [("q", "x1", 1), ("q2", "x2", 1)],
    )
    before = db.counts()
    stored = store_corpus(conn, directory)
    after = db.counts()
    assert after["questions"] - before["questions"] == 2
    assert after["targets"] - before["targets"] == 2
    assert after["eval_corpora"] - before["eval_corpora"] == 1
    drop_snapshot(conn, stored.snapshot_id)
    assert db.counts() == before


# --- run files -----------------------------------------------------------------------


def test_run_files(conn: Any, tmp_path: Path) -> None:
    stored = store_corpus(conn, tie_corpus(tmp_path / "beir"))
    run_dir = tmp_path / "runs"
    result = evaluate(conn, stored.snapshot_id, run_dir=run_dir, run_depth=3)
    assert sorted(p.name for p in run_dir.iterdir()) == sorted(
        f"{p}.trec" for p in evaluated_policies()
    )
    assert result.run_files == [run_dir / f"{p}.trec" for p in evaluated_policies()]
    bm25_ranks = {r.question_id: r.ranks[BM25] for r in result.results}
    for policy in evaluated_policies():
        lines = (run_dir / f"{policy}.trec").read_text().splitlines()
        assert len(lines) == 6 * 3
        rows = [line.split(" ") for line in lines]
        assert all(len(r) == 6 and r[1] == "Q0" and r[5] == policy for r in rows)
        for i in range(0, len(rows), 3):
            block = rows[i : i + 3]
            assert len({r[0] for r in block}) == 1
            assert [int(r[3]) for r in block] == [1, 2, 3]
            assert [int(r[4]) for r in block] == [22, 21, 20]  # N - rank + 1
    bm25_rows = [line.split(" ") for line in (run_dir / "bm25.trec").read_text().splitlines()]
    first = {r[0]: r[2] for r in bm25_rows if r[3] == "1"}
    assert first["q_tie"] == "a"  # tie: id order
    assert bm25_ranks["q_multi"] == 1 and first["q_multi"] == "h"


def test_questions_matching_nothing(conn: Any, tmp_path: Path) -> None:
    """A batch in which no question matches any document: every score is 0, so the
    ranking is id order (c is third, b second) under every policy."""
    directory = write_beir(
        tmp_path / "beir",
        [
            {"_id": "c", "text": "gamma"},
            {"_id": "a", "text": "alpha"},
            {"_id": "b", "text": "beta"},
        ],
        [{"_id": "q1", "text": ""}, {"_id": "q2", "text": "the"}],
        [("q1", "c", 1), ("q2", "b", 1)],
    )
    result = evaluate(conn, store_corpus(conn, directory).snapshot_id)
    assert {r.question_id: set(r.ranks.values()) for r in result.results} == {"q1": {3}, "q2": {2}}
    assert result.out_of_scope == 2
