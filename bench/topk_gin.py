"""Exact top-K, second look: GIN candidate generation for an exact BM25 top-K.

For each CoSQA question, with the true 10th score theta taken from sql/rank.sql (an
oracle: a real implementation would have to find it), the documents that can reach
theta are those holding a set of query lexemes whose largest impacts sum to at least
theta. That condition is a tsquery in disjunctive normal form over the minimal such
sets, which a GIN index on the tsvectors answers in C. The script times: rank.sql
(limit 10), the GIN candidate count alone, and GIN candidates scored from their
tsvectors (idf * tf; exact tfn adds one division per term and costs the same).

    python bench/topk_gin.py --dsn postgresql://postgres@127.0.0.1:5432/topk --setup
    python bench/topk_gin.py --dsn postgresql://postgres@127.0.0.1:5432/topk 200

The database must hold a ready snapshot ``big`` (e.g. 1,000,000 CoSQA functions:
``corpus.cosqa_documents(1_000_000)`` loaded with ``load_snapshot``); ``--setup``
copies its raw tsvectors into ``exp.docs`` with a GIN index, and each lexeme's
largest impact into ``exp.maxes``. Measured 2026-12-01: bench/TOPK.md.
"""

import itertools
import statistics
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus

from riido_pg.resources import sql_text

DSN = sys.argv[sys.argv.index("--dsn") + 1]
args = [a for a in sys.argv[1:] if a not in ("--dsn", DSN, "--setup")]
conn = psycopg.connect(DSN, autocommit=True)
conn.execute("SET work_mem = '64MB'")
if "--setup" in sys.argv:
    conn.execute("DROP SCHEMA IF EXISTS exp CASCADE; CREATE SCHEMA exp")
    t = time.time()
    conn.execute(
        "CREATE TABLE exp.docs AS SELECT doc_ord, tsv_raw AS tsv "
        "FROM riido.documents WHERE snapshot_id = 'big'"
    )
    conn.execute("CREATE INDEX ON exp.docs USING gin (tsv)")
    conn.execute("CREATE INDEX ON exp.docs (doc_ord)")
    print("gin built", time.time() - t)
    t = time.time()
    conn.execute(
        "CREATE TABLE exp.maxes AS SELECT lexeme, idf, df, "
        "(SELECT max(x) FROM unnest(tfn) x) * idf AS m "
        "FROM riido.postings WHERE snapshot_id = 'big' AND col = 'raw'"
    )
    conn.execute("CREATE UNIQUE INDEX ON exp.maxes (lexeme)")
    conn.execute("ANALYZE exp.docs; ANALYZE exp.maxes")
    print("maxes", time.time() - t)
    sys.exit()

n = conn.execute("SELECT document_count FROM riido.snapshots WHERE snapshot_id='big'").fetchone()[0]
qs = corpus.cosqa_queries()[: int(args[0]) if args else 60]
K = 10
rows = []
for q in qs:
    lex = conn.execute("SELECT tsvector_to_array(to_tsvector('english', %s))", (q,)).fetchone()[0]
    if not lex:
        continue
    t0 = time.perf_counter()
    full = conn.execute(
        sql_text("rank"), {"snapshot_id": "big", "col": "raw", "lexemes": lex, "n": n, "limit": K}
    ).fetchall()
    t_rank = time.perf_counter() - t0
    theta = full[-1][2]
    ms = dict(
        conn.execute("SELECT lexeme, m FROM exp.maxes WHERE lexeme = ANY(%s)", (lex,)).fetchall()
    )
    terms = sorted(ms, key=lambda x: -ms[x])
    if theta <= 0:
        continue
    # minimal subsets whose max-sum reaches theta
    minimal = []
    for r in range(1, len(terms) + 1):
        for S in itertools.combinations(terms, r):
            if sum(ms[t] for t in S) >= theta and not any(set(m) <= set(S) for m in minimal):
                minimal.append(S)

    def qt(t):
        return "'" + t.replace("'", "''") + "'"

    dnf = " | ".join("(" + " & ".join(qt(t) for t in S) + ")" for S in minimal)
    t0 = time.perf_counter()
    gin = "SELECT count(*) FROM exp.docs WHERE tsv @@ %s::tsquery"
    cnt = conn.execute(gin, (dnf,)).fetchone()[0]
    t_gin = time.perf_counter() - t0
    # scores of the candidates from their tsvectors: setweight + ts_filter (C) keep
    # only the query's lexemes, so the unnest sees a handful of entries
    t0 = time.perf_counter()
    conn.execute(
        """
        WITH c AS (SELECT doc_ord, tsv FROM exp.docs WHERE tsv @@ %(dnf)s::tsquery)
        SELECT c.doc_ord, s.score FROM c CROSS JOIN LATERAL (
            SELECT sum(m.idf * cardinality(u.positions)::float8) AS score
            FROM unnest(ts_filter(setweight(c.tsv, 'A', %(lex)s), '{a}')) AS u
            JOIN exp.maxes AS m ON m.lexeme = u.lexeme
        ) AS s
        ORDER BY s.score DESC, c.doc_ord LIMIT %(k)s""",
        {"dnf": dnf, "lex": lex, "k": K},
    ).fetchall()
    t_score = time.perf_counter() - t0
    sdf = conn.execute("SELECT sum(df) FROM exp.maxes WHERE lexeme = ANY(%s)", (lex,)).fetchone()
    sdf = sdf[0]
    rows.append((t_rank, t_gin, t_score, cnt, len(minimal), sdf))
    print(
        f"{t_rank * 1000:7.1f} {t_gin * 1000:7.1f} {t_score * 1000:7.1f} cand={cnt:7d} "
        f"subsets={len(minimal):3d} sdf={sdf} {q[:40]}",
        flush=True,
    )
for i, name in enumerate(["rank.sql", "gin count", "gin+score"]):
    v = sorted(r[i] for r in rows)
    print(
        name,
        "p50",
        round(statistics.median(v) * 1000, 1),
        "p95",
        round(v[int(0.95 * len(v))] * 1000, 1),
    )
print("candidates p50", statistics.median(r[3] for r in rows))
