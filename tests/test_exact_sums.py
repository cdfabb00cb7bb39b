"""The shortcuts that keep a ranking fast without changing it by one unit.

* ``sql/scored.sql`` adds a document's units as float8 when no sum can reach 2^53
  (``bm25._sum``): the bound must hold for every weight BM25 can produce, and the
  int8 sum must rank exactly alike;
* ``sql/rank_tail.sql`` keeps the documents scoring at least the K-th best score
  (a bounded sort) instead of FETCH FIRST ... WITH TIES: every policy's first K is
  still the full ranking's first K, also when the cut falls inside a tie and on a
  snapshot that removed documents from its path;
* the evaluation's ranks (``scoring._row_order``) and first documents
  (``FirstTargets.order``) without a full sort equal a full three-key sort;
* the evaluation computes each weight in numpy (``scoring.units``) from what
  ``sql/eval_postings.sql`` reads: the same integer units as the SQL's weight, and,
  on a snapshot that removed documents from its path, the same scores as the ranking.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import psycopg
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg import sql

from riido_pg import Document, load_snapshot, rank_snapshot
from riido_pg.evaluation import scoring
from riido_pg.ranking import bm25
from riido_pg.ranking.terms import query_terms
from riido_pg.storage import get_snapshot
from riido_pg.storage.snapshots import Target

POLICIES = (
    "bm25",
    "identifier_bm25",
    "identifier_bm25_baseline_first",
    "identifier_bm25_fused",
    "identifier_bm25_rrf",
    "structure_bm25",
)
QUERIES = ("read the config file", "parse json value", "write file", "zzz nothing")


def _target(documents: int, k1: float = 1.2, b: float = 0.75) -> Target:
    return Target("s", (), documents, 0, 0, 0, k1, b)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 2**31 - 1),
    df_part=st.floats(0, 1),
    tf=st.integers(1, 32767),
    dl_extra=st.integers(0, 10**6),
    avgdl=st.floats(0.01, 1e6),
    k1=st.floats(0, 5),
    b=st.floats(0, 1),
    count=st.integers(1, 5000),
)
def test_the_float_sum_is_chosen_only_when_no_sum_reaches_2_53(
    n: int,
    df_part: float,
    tf: int,
    dl_extra: int,
    avgdl: float,
    k1: float,
    b: float,
    count: int,
) -> None:
    df = max(1, round(df_part * n))
    dl = tf + dl_extra
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    unit = round(idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)) * bm25.SCALE)
    chosen = bm25._sum(_target(n, k1, b), count).as_string(None)
    if "float8" in chosen:
        # at most one unit per query lexeme in a document's sum
        assert count * unit < 2**53


def test_a_long_query_sums_as_int8() -> None:
    assert "float8" not in bm25._sum(_target(10**6), 10_000).as_string(None)
    assert "float8" in bm25._sum(_target(10**6), 100).as_string(None)
    assert "float8" not in bm25._sum(_target(100, k1=-1.0), 3).as_string(None)


@pytest.fixture(scope="module")
def snapshots(db: Any) -> list[Document]:
    # several ids share a text, so scores tie, and a limit cuts inside a tie
    texts = [
        "def read_config(path): return open(path).read()",
        "def parse_json(value): return json.loads(value)",
        "def write_file(path, text): open(path, 'w').write(text)",
        "class ConfigReader: pass",
        "def test_read_config(): assert read_config('x')",
    ]
    docs = [
        Document(f"{'tests/' if i % 7 == 0 else 'src/'}m{i % 5}.py:f{i:03d}:1", texts[i % 5])
        for i in range(60)
    ]
    kept = [d for i, d in enumerate(docs) if i % 9 != 4]
    with db.connect() as conn:
        load_snapshot(conn, "whole", docs, fresh=True)
        load_snapshot(conn, "less", kept, base="whole")
    return docs


def _ranked(conn: Any, snapshot: str, query: str, policy: str, limit: int | None) -> Any:
    return [
        (c.id, c.bm25_score, c.identifier_bm25_score)
        for c in rank_snapshot(conn, snapshot, query, policy=policy, limit=limit).candidates
    ]


@pytest.mark.parametrize("snapshot", ["whole", "less"])
def test_every_first_k_is_the_full_rankings_first_k_across_ties(
    conn: psycopg.Connection[Any], snapshots: list[Document], snapshot: str
) -> None:
    for policy in POLICIES:
        for query in QUERIES:
            full = _ranked(conn, snapshot, query, policy, None)
            for k in (1, 3, 11, 12, 13, 25, len(full), len(full) + 3):
                assert _ranked(conn, snapshot, query, policy, k) == full[:k], (policy, query, k)


@pytest.mark.parametrize("snapshot", ["whole", "less"])
def test_the_int8_sum_ranks_exactly_as_the_float_sum(
    conn: psycopg.Connection[Any],
    snapshots: list[Document],
    snapshot: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    floats = {(p, q): _ranked(conn, snapshot, q, p, 20) for p in POLICIES for q in QUERIES}
    monkeypatch.setattr(bm25, "_EXACT", 0)  # no query is short enough: int8 everywhere
    for (policy, query), want in floats.items():
        assert _ranked(conn, snapshot, query, policy, 20) == want, (policy, query)


def _matrix(data: st.DrawFn, big: bool) -> sp.csr_matrix:
    rows = data(st.integers(1, 6))
    cols = data(st.integers(1, 12))
    top = 2**62 if big else 5
    dense = np.array(
        data(
            st.lists(
                st.lists(st.integers(0, top), min_size=cols, max_size=cols),
                min_size=rows,
                max_size=rows,
            )
        ),
        dtype=np.int64,
    )
    return sp.csr_matrix(dense)


@st.composite
def matrices(draw: st.DrawFn) -> sp.csr_matrix:
    return _matrix(draw, draw(st.booleans()))


@settings(max_examples=300, deadline=None)
@given(m=matrices())
def test_row_order_is_the_three_key_sort(m: sp.csr_matrix) -> None:
    m.sort_indices()
    rows = np.repeat(np.arange(m.shape[0], dtype=np.int64), np.diff(m.indptr))
    want = np.lexsort((m.indices, -m.data, rows))
    assert scoring._row_order(rows, m.data).tolist() == want.tolist()
    # float scores (a derived list's) and any subset of the entries, in their order
    floats = m.data / 7.0
    want_f = np.lexsort((m.indices, -floats, rows))
    assert scoring._row_order(rows, floats).tolist() == want_f.tolist()
    picked = np.flatnonzero(m.data % 2 == 0)
    sub = np.lexsort((m.indices[picked], -m.data[picked], rows[picked]))
    assert scoring._row_order(rows[picked], m.data[picked]).tolist() == sub.tolist()


@settings(max_examples=300, deadline=None)
@given(m=matrices(), depth=st.integers(0, 15))
def test_first_documents_without_a_full_sort(m: sp.csr_matrix, depth: int) -> None:
    m.sort_indices()
    n_docs = m.shape[1]
    empty = np.zeros(0, dtype=np.int64)
    firsts = scoring.FirstTargets(m, n_docs, empty, empty, empty.astype(float), empty.astype(bool))
    for i in range(m.shape[0]):
        row = m.getrow(i).toarray().ravel()
        # score descending, then place ascending; zero scores in place order at the end
        want = sorted(range(n_docs), key=lambda p: (-int(row[p]), p))[:depth]
        assert firsts.order(i, depth) == want


@st.composite
def targeted(draw: st.DrawFn) -> tuple[sp.csr_matrix, list[list[int]], list[int]]:
    """A small score matrix (ties and zero scores likely), targets per row (at least
    one) and a value per document."""
    m = _matrix(draw, False)
    m.sort_indices()
    n_rows, n_docs = m.shape
    places = st.lists(st.integers(0, n_docs - 1), min_size=1, max_size=3, unique=True)
    targets = [draw(places) for _ in range(n_rows)]
    values = draw(st.lists(st.integers(0, 1000), min_size=n_docs, max_size=n_docs))
    return m, targets, values


@settings(max_examples=400, deadline=None)
@given(case=targeted())
def test_first_target_ranks_and_costs_above_are_the_full_sorts(
    case: tuple[sp.csr_matrix, list[list[int]], list[int]],
) -> None:
    """Each row's first-target rank, and the sum of a per-document value over the
    documents above it (the inspection cost, computed for every row at once), equal
    those read off a full sort of the row."""
    m, targets, values = case
    n_docs = m.shape[1]
    rows = np.asarray([i for i, ts in enumerate(targets) for _ in ts], dtype=np.int64)
    ords = np.asarray([t for ts in targets for t in ts], dtype=np.int64)
    firsts = scoring.first_targets(m, n_docs, rows, ords)
    sums = firsts.above_sums(np.asarray(values, dtype=np.int64)[:, None])[:, 0]
    batch = scoring.Batch({"raw": m}, n_docs, rows, ords)
    batch.chars = np.asarray(values, dtype=np.int64)
    batch.tokens = 2 * batch.chars
    for i, ts in enumerate(targets):
        row = m.getrow(i).toarray().ravel()
        full = sorted(range(n_docs), key=lambda p: (-int(row[p]), p))
        rank = next(r for r, p in enumerate(full, start=1) if p in ts)
        above = full[: rank - 1]
        assert int(firsts.ranks[i]) == rank
        assert int(sums[i]) == sum(values[p] for p in above)
        assert firsts.prefix(i)[:-1] == above
        assert batch.cost_above("raw", i) == batch.cost_of(above)
        assert batch.cost_of(above) == (sum(values[p] for p in above), 2 * int(sums[i]))


@pytest.mark.parametrize("b", [0.75, 0.0, 1.0, 0.3])
def test_the_numpy_weight_is_the_sql_weight_to_the_unit(
    conn: psycopg.Connection[Any], b: float
) -> None:
    """``scoring.units`` against :data:`bm25.WEIGHT` evaluated by PostgreSQL over the
    same values: tf and dl over their stored ranges (int2, int4), idf as ``scored.sql``
    computes it from n and df, avgdl of any size; b = 0 as the name field writes it."""
    rng = np.random.default_rng(20261206)
    size = 20_000
    n = rng.integers(1, 2**31 - 1, size)
    df = np.maximum(1, (rng.random(size) * n).astype(np.int64))
    idf = np.log1p((n - df + 0.5) / (df + 0.5))  # any float8 the SQL's ln could give
    half = size // 2  # and the C library's log, as PostgreSQL's ln calls it
    idf[:half] = [
        math.log(1 + (x - d + 0.5) / (d + 0.5))
        for x, d in zip(n[:half].tolist(), df[:half].tolist(), strict=True)
    ]
    tf = np.concatenate([rng.integers(1, 20, size // 2), rng.integers(1, 32768, size // 2)])
    dl = tf + rng.integers(0, 10**6, size)
    avgdl = np.exp(rng.uniform(math.log(0.5), math.log(1e6), size))
    k1 = 1.2
    b_sql = sql.SQL("0::float8") if b == 0.0 else sql.SQL("%(b)s::float8")
    weight = bm25.WEIGHT.format(b=b_sql, scale=bm25.SCALE_SQL)
    statement = sql.SQL(
        "SELECT {} FROM unnest(%(idf)s::float8[], %(tf)s::int2[], %(dl)s::int4[], "
        "%(avgdl)s::float8[]) WITH ORDINALITY AS u(idf, tf, dl, avgdl, i) ORDER BY u.i"
    ).format(weight)
    params = {
        "idf": idf.tolist(),
        "tf": tf.tolist(),
        "dl": dl.tolist(),
        "avgdl": avgdl.tolist(),
        "k1": k1,
        "b": b,
    }
    want = [r[0] for r in conn.execute(statement, params).fetchall()]
    got = scoring.units(idf, avgdl, tf.astype(np.float64), dl.astype(np.float64), k1, b)
    assert got.tolist() == want


@pytest.mark.parametrize("snapshot", ["whole", "less"])
def test_the_evaluations_weights_score_as_the_ranking(
    conn: psycopg.Connection[Any], snapshots: list[Document], snapshot: str
) -> None:
    """Each column's weights, computed in numpy from the postings rows and leaving out
    the removed documents the rows list, give every document the ranking's score."""
    snap = get_snapshot(conn, snapshot)
    assert (snap.removed > 0) == (snapshot == "less")
    docs = scoring.documents(conn, snap)
    ids = sorted(d.id for d in snapshots if snapshot == "whole" or d in _held(snapshots))
    for query in QUERIES:
        terms = query_terms(conn, query, "english")
        for col, policy, field in (
            ("raw", "bm25", "bm25_score"),
            ("ident", "identifier_bm25", "identifier_bm25_score"),
        ):
            weights = scoring.column_weights(conn, snap, col, [terms.of(col)], docs)
            ours = (weights.questions @ weights.weights).toarray()[0]
            assert len(ours) == len(ids)
            ranking = rank_snapshot(conn, snapshot, query, policy=policy)
            theirs = {c.id: getattr(c, field) for c in ranking.candidates}
            for place, doc_id in enumerate(ids):
                assert bm25.score(int(ours[place])) == theirs.get(doc_id, 0.0), (query, col)


def _held(docs: list[Document]) -> list[Document]:
    return [d for i, d in enumerate(docs) if i % 9 != 4]
