"""BM25 as README "Ranking" defines it, recomputed independently in Python.

PostgreSQL supplies only its own tokens (``to_tsvector`` lexemes and position
counts, computed here per document, not read from our tables); the formula, the
statistics and the tie-breaking are redone in Python and must agree with the SQL
ranking: same order, scores equal to 1e-9 relative.
"""

from __future__ import annotations

import math
from typing import Any

import psycopg
import pytest
from support.corpus import stdlib_functions

from riido_pg import load_snapshot, rank_snapshot
from riido_pg.documents import Document
from riido_pg.splitting import split_identifiers

K1, B = 1.2, 0.75
QUERIES = [
    "parse a quoted string",
    "read config file sections",
    "encode json object to string",
    "split shell command line into tokens",
    "wrap text paragraphs to width",
    "match file names against a pattern",
    "add argument parser option",
    "the",
    "ReadConfig getHTTPResponseCode",
    "dict keys sorted with indent",
]


def _counts(conn: psycopg.Connection[Any], config: str, text: str) -> dict[str, int]:
    rows = conn.execute(
        "SELECT lexeme, cardinality(positions) FROM unnest(to_tsvector(%s::regconfig, %s))",
        (config, text),
    ).fetchall()
    return {str(lex): int(n) for lex, n in rows}


def _python_bm25(
    doc_terms: dict[str, dict[str, int]], query_terms: set[str]
) -> list[tuple[str, float]]:
    n = len(doc_terms)
    dl = {d: sum(t.values()) for d, t in doc_terms.items()}
    avgdl = sum(dl.values()) / n
    df: dict[str, int] = {}
    for terms in doc_terms.values():
        for lex in terms:
            df[lex] = df.get(lex, 0) + 1
    scores = {}
    for d, terms in doc_terms.items():
        s = 0.0
        for lex in sorted(query_terms):
            tf = terms.get(lex, 0)
            if tf:
                idf = math.log(1 + (n - df[lex] + 0.5) / (df[lex] + 0.5))
                s += idf * tf / (tf + K1 * (1 - B + B * dl[d] / avgdl))
        scores[d] = s
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0].encode()))


@pytest.fixture(scope="module")
def corpus(db: Any) -> list[Document]:
    docs = stdlib_functions(400)
    assert len(docs) >= 300
    with db.connect() as conn:
        load_snapshot(conn, "stdlib", docs)
        load_snapshot(conn, "stdlib-simple", docs, text_config="simple")
    return docs


def _check(ranked: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    assert [d for d, _ in ranked] == [d for d, _ in expected]
    for (_, got), (_, want) in zip(ranked, expected, strict=True):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize(
    ("snapshot", "config"), [("stdlib", "english"), ("stdlib-simple", "simple")]
)
def test_raw_column_matches_python(
    conn: psycopg.Connection[Any], corpus: list[Document], query: str, snapshot: str, config: str
) -> None:
    doc_terms = {d.id: _counts(conn, config, d.text) for d in corpus}
    expected = _python_bm25(doc_terms, set(_counts(conn, config, query)))
    ranking = rank_snapshot(conn, snapshot, query)
    _check([(c.id, c.bm25_score) for c in ranking.candidates], expected)


@pytest.mark.parametrize("query", QUERIES[:-3] + QUERIES[-1:])
def test_identifier_column_matches_python(
    conn: psycopg.Connection[Any], corpus: list[Document], query: str
) -> None:
    doc_terms = {d.id: _counts(conn, "english", split_identifiers(d.text)) for d in corpus}
    expected = _python_bm25(doc_terms, set(_counts(conn, "english", split_identifiers(query))))
    ranking = rank_snapshot(conn, "stdlib", query, policy="identifier_bm25")
    scores = [(c.id, c.identifier_bm25_score or 0.0) for c in ranking.candidates]
    _check(scores, expected)


def test_limit_is_prefix_of_full_ranking_for_every_policy(
    conn: psycopg.Connection[Any], corpus: list[Document]
) -> None:
    hints = [corpus[7].id, corpus[3].id, corpus[100].id]
    for policy in (
        "bm25",
        "identifier_bm25",
        "identifier_bm25_baseline_first",
        "identifier_bm25_auxiliary_first",
        "external_hints_baseline_first",
    ):
        h = hints if policy == "external_hints_baseline_first" else None
        full = rank_snapshot(conn, "stdlib", "read a json config", policy=policy, hints=h)
        assert len(full.candidates) == len(corpus)
        assert {c.id for c in full.candidates} == {d.id for d in corpus}
        for k in (1, 2, 5, 37, len(corpus), len(corpus) + 5):
            part = rank_snapshot(
                conn, "stdlib", "read a json config", policy=policy, limit=k, hints=h
            )
            assert part.candidates == full.candidates[:k], (policy, k)


def test_zero_score_documents_follow_in_id_byte_order(conn: psycopg.Connection[Any]) -> None:
    docs = [
        Document(i, t) for i, t in [("b", "x"), ("B", "y"), ("é", "z"), ("a", "q"), ("ab", "q q")]
    ]
    load_snapshot(conn, "zeros", docs)
    ranking = rank_snapshot(conn, "zeros", "q")
    # "ab" has tf 2 but a longer document; both match "q"; the rest follow in byte order
    ids = [c.id for c in ranking.candidates]
    matched = [c.id for c in ranking.candidates if c.bm25_score > 0]
    assert set(matched) == {"a", "ab"}
    assert ids[2:] == sorted(["b", "B", "é"], key=lambda s: s.encode())
