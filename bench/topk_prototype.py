"""Exact top-K with dynamic pruning (issue 9): prototype, exactness check, benchmark.

Not the product. For each size (CoSQA functions replicated, ``bench/topk_db.py``;
``--reuse`` keeps and reuses ``riido_bench_topk_<size>`` across runs) this script

1. builds schema ``topk`` from the loaded ``riido.postings`` (``bench/topk_prototype.sql``:
   impact-ordered chunks + ``topk.rank`` / ``topk.scores``), timing the build, and
   a native table ``topk.native(doc_ord, tsv)`` = ``tsv_raw`` with a GIN index;
2. times, per query and interleaved (shipped, candidate, native, rotating order),
   ``rank_snapshot(policy, limit=K)`` one-shot style (``prepare_threshold=None``)
   for ``bm25``, ``identifier_bm25`` and ``identifier_bm25_baseline_first`` with
   the shipped SQL and with the candidate monkeypatched into ``riido_pg.ranking``
   (``_ranked`` -> ``topk.rank``, ``_scores`` -> ``topk.scores``; no file changed),
   and native ``WHERE tsv @@ q ORDER BY ts_rank(tsv, q) DESC LIMIT K``;
3. checks exactness: every candidate Ranking equals the shipped one (ids, ranks,
   float scores with ``==``), and the candidate list (doc_ord, score) of each column
   equals the first K rows of rank.sql's FULL ranking (``limit`` NULL) - for every
   query up to 100,000 documents, for the first ``--full-check`` queries above;
4. reports storage (``pg_total_relation_size``) and per-query pruning statistics.

    python bench/topk_prototype.py --reuse --keep          # 10k, 100k, 1M
    python bench/topk_prototype.py --quick
    python bench/topk_db.py --drop                         # drop the databases
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
import topk_db
from common import (
    base_parser,
    connect,
    drop_database,
    markdown_table,
    server_info,
    summary_ms,
    write_results,
)

import riido_pg.ranking as ranking
from riido_pg.resources import sql_text

POLICIES = ("bm25", "identifier_bm25", "identifier_bm25_baseline_first")
SQL_PATH = Path(__file__).resolve().parent / "topk_prototype.sql"


def _rank_sql_positional() -> str:
    text = sql_text("rank")
    for i, name in enumerate(("snapshot_id", "col", "lexemes", "n", "limit"), start=1):
        text = text.replace(f"%({name})s", f"${i}")
    assert "%(" not in text and "$rank$" not in text
    return text


def setup_sql() -> tuple[str, str]:
    """(schema + functions, build statement)."""
    text = SQL_PATH.read_text()
    head, rest = text.split("-- @@BUILD_BEGIN@@")
    build, tail = rest.split("-- @@BUILD_END@@")
    schema = (head + tail).replace("{rank_sql}", _rank_sql_positional())
    return schema, build


def build_topk(conn: Any) -> dict[str, Any]:
    schema, build = setup_sql()
    out: dict[str, Any] = {}
    conn.execute(schema)
    t = time.perf_counter()
    with conn.transaction():
        conn.execute("SET LOCAL work_mem = '256MB'")
        conn.execute("SET LOCAL statement_timeout = 0")
        conn.execute(build, {"snapshot_id": topk_db.SNAPSHOT})
    conn.execute("VACUUM ANALYZE topk.chunks")
    out["chunks_build_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    with conn.transaction():
        conn.execute("SET LOCAL maintenance_work_mem = '512MB'")
        conn.execute("SET LOCAL statement_timeout = 0")
        conn.execute(
            "CREATE TABLE topk.native AS SELECT doc_ord, tsv_raw AS tsv "
            "FROM riido.documents WHERE snapshot_id = %s",
            (topk_db.SNAPSHOT,),
        )
        conn.execute("CREATE INDEX native_tsv ON topk.native USING gin (tsv)")
    conn.execute("VACUUM ANALYZE topk.native")
    out["native_build_s"] = round(time.perf_counter() - t, 2)
    return out


def have_topk(conn: Any) -> bool:
    row = conn.execute(
        "SELECT to_regclass('topk.native') IS NOT NULL AND to_regclass('topk.chunks') IS NOT NULL"
    ).fetchone()
    return bool(row and row[0])


def storage(conn: Any, size: int) -> dict[str, Any]:
    rels = ["riido.postings", "riido.documents", "topk.chunks", "topk.native"]
    out = {}
    for r in rels:
        b = conn.execute("SELECT pg_total_relation_size(%s::regclass)", (r,)).fetchone()[0]
        out[r] = {"bytes": int(b), "bytes_per_doc": round(int(b) / size, 1)}
    row = conn.execute(
        "SELECT count(*), max(chunk) + 1 FROM topk.chunks WHERE snapshot_id = %s",
        (topk_db.SNAPSHOT,),
    ).fetchone()
    out["chunk_rows"], out["max_chunks_per_lexeme"] = int(row[0]), int(row[1])
    out["postings_rows"] = int(conn.execute("SELECT count(*) FROM riido.postings").fetchone()[0])
    return out


# --- the methods -------------------------------------------------------------------

_SHIPPED_RANKED = ranking._ranked
_SHIPPED_SCORES = ranking._scores


def cand_ranked(conn: Any, snap: Any, col: str, lexemes: list[str], limit: int | None) -> Any:
    if limit is None:
        return _SHIPPED_RANKED(conn, snap, col, lexemes, limit)
    rows = conn.execute(
        "SELECT doc_ord, doc_id, score FROM topk.rank(%s, %s, %s::text[], %s, %s)",
        (snap.snapshot_id, col, lexemes, snap.documents, limit),
        prepare=False,
    ).fetchall()
    return [(int(r[0]), str(r[1]), float(r[2])) for r in rows]


def cand_scores(conn: Any, snap: Any, col: str, lexemes: list[str], ords: Any) -> dict[int, float]:
    if not ords:
        return {}
    rows = conn.execute(
        "SELECT doc_ord, score FROM topk.scores(%s, %s, %s::text[], %s::int[])",
        (snap.snapshot_id, col, lexemes, list(ords)),
        prepare=False,
    ).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}


def run_policy(conn: Any, method: str, q: str, policy: str, k: int) -> Any:
    if method == "candidate":
        ranking._ranked, ranking._scores = cand_ranked, cand_scores
    try:
        return ranking.rank_snapshot(conn, topk_db.SNAPSHOT, q, policy=policy, limit=k)
    finally:
        ranking._ranked, ranking._scores = _SHIPPED_RANKED, _SHIPPED_SCORES


def tsquery_text(lexemes: list[str]) -> str:
    def quote(lx: str) -> str:
        return "'" + lx.replace("\\", "\\\\").replace("'", "''") + "'"

    return " | ".join(quote(x) for x in lexemes)


NATIVE_SQL = (
    "SELECT doc_ord FROM topk.native WHERE tsv @@ %(q)s::tsquery "
    "ORDER BY ts_rank(tsv, %(q)s::tsquery) DESC LIMIT %(k)s"
)


def run_native(conn: Any, tsq: str, k: int) -> list[int]:
    if not tsq:
        return []
    return [r[0] for r in conn.execute(NATIVE_SQL, {"q": tsq, "k": k}, prepare=False).fetchall()]


def key(r: Any) -> list[tuple[Any, ...]]:
    return [(c.id, c.rank, c.bm25_score, c.identifier_bm25_score) for c in r.candidates]


# --- one size ----------------------------------------------------------------------


def run_size(args: Any, size: int, queries: list[str]) -> dict[str, Any]:
    dbname, dsn, info = topk_db.ensure_database(args.dsn, size, reuse=args.reuse)
    out: dict[str, Any] = {"size": size, "db": dbname, **info}
    conn = connect(dsn)
    if not (args.reuse and have_topk(conn)) or args.rebuild:
        out["build"] = build_topk(conn)
        print(f"  {size:>9,} build {out['build']}", file=sys.stderr, flush=True)
    else:
        out["build"] = "reused"
        # functions may have changed: re-create them only (schema part without tables)
        schema, _ = setup_sql()
        fn_part = schema[schema.index("CREATE FUNCTION topk.scores") :]
        conn.execute("DROP FUNCTION IF EXISTS topk.scores, topk.rank")
        conn.execute(fn_part)
    out["storage"] = storage(conn, size)
    terms = [ranking.query_terms(conn, q, "english") for q in queries]

    qconn = connect(dsn)
    qconn.prepare_threshold = None  # one-shot: every statement planned with its values
    methods = ("shipped", "candidate", "native")
    # warm-up (not counted)
    for i, q in enumerate(queries[:20]):
        for k in args.limits:
            for p in POLICIES:
                run_policy(qconn, "shipped", q, p, k)
                run_policy(qconn, "candidate", q, p, k)
            run_native(qconn, tsquery_text(terms[i].raw), k)

    times: dict[str, list[float]] = {}
    mismatches: list[dict[str, Any]] = []
    checked = 0
    for i, q in enumerate(queries):
        tsq = tsquery_text(terms[i].raw)
        for k in args.limits:
            order = methods[i % 3 :] + methods[: i % 3]  # rotate who goes first
            res: dict[tuple[str, str], Any] = {}
            for m in order:
                if m == "native":
                    t0 = time.perf_counter()
                    run_native(qconn, tsq, k)
                    times.setdefault(f"native/k{k}", []).append(time.perf_counter() - t0)
                    continue
                for p in POLICIES:
                    t0 = time.perf_counter()
                    r = run_policy(qconn, m, q, p, k)
                    times.setdefault(f"{m}/{p}/k{k}", []).append(time.perf_counter() - t0)
                    res[(m, p)] = r
            for p in POLICIES:
                checked += 1
                a, b = key(res[("shipped", p)]), key(res[("candidate", p)])
                if a != b or res[("shipped", p)].policy != res[("candidate", p)].policy:
                    mismatches.append(
                        {"query": q, "policy": p, "k": k, "shipped": a, "candidate": b}
                    )
        if (i + 1) % 50 == 0:
            print(f"  {size:>9,} {i + 1}/{len(queries)} queries", file=sys.stderr, flush=True)

    # exactness against the FULL ranking (limit NULL) of rank.sql, per column
    full_n = len(queries) if size <= 100_000 else min(args.full_check, len(queries))
    snap = ranking.get_snapshot(conn, topk_db.SNAPSHOT)
    full_checked = 0
    t = time.perf_counter()
    for i in range(full_n):
        for col in ("raw", "ident"):
            lex = terms[i].raw if col == "raw" else terms[i].ident
            with conn.transaction():
                conn.execute("SET LOCAL work_mem = '256MB'")
                conn.execute("SET LOCAL statement_timeout = 0")
                cur = conn.execute(
                    sql_text("rank"),
                    {
                        "snapshot_id": snap.snapshot_id,
                        "col": col,
                        "lexemes": lex,
                        "n": snap.documents,
                        "limit": None,
                    },
                )
                full = [(int(r[0]), float(r[2])) for r in cur.fetchmany(max(args.limits))]
                cur.close()
            for k in args.limits:
                full_checked += 1
                got = [(o, s) for o, _, s in cand_ranked(conn, snap, col, lex, k)]
                if got != full[:k]:
                    mismatches.append(
                        {
                            "query": queries[i],
                            "col": col,
                            "k": k,
                            "full": full[:k],
                            "candidate": got,
                            "check": "full",
                        }
                    )
    out["full_check_s"] = round(time.perf_counter() - t, 1)

    # pruning statistics (not timed): notices of topk.rank with topk.debug = on
    stats: list[dict[str, Any]] = []
    notes: list[str] = []
    conn.add_notice_handler(lambda d: notes.append(d.message_primary or ""))
    conn.execute("SET topk.debug = 'on'")
    for i in range(len(queries)):
        for col in ("raw", "ident"):
            lex = terms[i].raw if col == "raw" else terms[i].ident
            for k in args.limits:
                notes.clear()
                got = cand_ranked(conn, snap, col, lex, k)
                d = next((json.loads(n[5:]) for n in notes if n.startswith("topk ")), None) or {}
                theta = got[k - 1][2] if len(got) >= k else 0.0
                if theta > 0 and d.get("sum_df"):
                    dr = conn.execute(
                        "SELECT lexeme, chunk, max_impact, n FROM topk.chunks "
                        "WHERE snapshot_id = %s AND col = %s AND lexeme = ANY(%s::text[])",
                        (snap.snapshot_id, col, lex),
                    ).fetchall()
                    d["oracle_fraction"] = oracle_read(dr, theta) / d["sum_df"]
                stats.append({"col": col, "k": k, **d})
    conn.execute("RESET topk.debug")
    out["pruning"] = summarize_pruning(stats, args.limits)
    if args.oracle:
        with conn.transaction():
            conn.execute("SET LOCAL work_mem = '32MB'")
            out["oracle"] = oracle_timing(conn, snap, terms, args.limits, args.oracle)

    out["summary"] = {name: summary_ms(v) for name, v in times.items()}
    out["exact"] = {
        "policy_results_compared": checked,
        "full_ranking_lists_compared": full_checked,
        "full_check_queries": full_n,
        "mismatches": len(mismatches),
        "first_mismatches": mismatches[:5],
    }
    out["load_avg"] = os.getloadavg()
    conn.close()
    qconn.close()
    if not args.keep:
        drop_database(args.dsn, dbname)
    return out


def oracle_read(directory: list[tuple[str, int, float, int]], theta: float) -> int:
    """Postings an impact-ordered method must read (at this chunk granularity, greedy)
    to prove sum(tail) < theta when it knows the true p_k-th score theta upfront."""
    lists: dict[str, list[tuple[float, int]]] = {}
    for lex, _chunk, mx, n in sorted(directory):
        lists.setdefault(lex, []).append((mx, n))
    cut = dict.fromkeys(lists, 0)

    def tail(t: str) -> float:
        return lists[t][cut[t]][0] if cut[t] < len(lists[t]) else 0.0

    while sum(tail(t) for t in lists) >= theta * (1 - 1e-9):
        best, best_j, best_gain = None, 0, -1.0
        for t in lists:  # best (term, depth), looking past plateaus, as topk.rank does
            cost = 0
            for j in range(cut[t] + 1, len(lists[t]) + 1):
                cost += lists[t][j - 1][1]
                nxt = lists[t][j][0] if j < len(lists[t]) else 0.0
                g = (tail(t) - nxt) / cost
                if g > best_gain:
                    best, best_j, best_gain = t, j, g
        if best is None:
            break
        cut[best] = best_j
    return sum(n for t in lists for _, n in lists[t][: cut[t]])


def oracle_cut(
    directory: list[tuple[str, int, float, int]], theta: float, factor: float = 1.0
) -> tuple[list[str], list[int], list[float], float, int]:
    """oracle_read's cutoffs for sum(tail) < factor * theta:
    (lexemes, cut, tail, sum(tail), postings read)."""
    lists: dict[str, list[tuple[float, int]]] = {}
    for lex, _chunk, mx, n in sorted(directory):
        lists.setdefault(lex, []).append((mx, n))
    cut = dict.fromkeys(lists, 0)

    def tail(t: str) -> float:
        return lists[t][cut[t]][0] if cut[t] < len(lists[t]) else 0.0

    while sum(tail(t) for t in lists) >= factor * theta * (1 - 1e-9) and any(
        cut[t] < len(lists[t]) for t in lists
    ):
        best, best_j, best_gain = None, 0, -1.0
        for t in lists:  # best (term, depth), looking past plateaus, as topk.rank does
            cost = 0
            for j in range(cut[t] + 1, len(lists[t]) + 1):
                cost += lists[t][j - 1][1]
                nxt = lists[t][j][0] if j < len(lists[t]) else 0.0
                g = (tail(t) - nxt) / cost
                if g > best_gain:
                    best, best_j, best_gain = t, j, g
        if best is None:
            break
        cut[best] = best_j
    lex = sorted(lists)
    tails = [tail(t) for t in lex]
    read = sum(n for t in lists for _, n in lists[t][: cut[t]])
    return lex, [cut[t] for t in lex], tails, sum(tails), read


ORACLE_SQL = """
WITH agg AS (
    SELECT u.doc_ord
    FROM unnest(%(lex)s::text[], %(cut)s::int[], %(tail)s::float8[]) AS t(lexeme, cut, tail)
    JOIN topk.chunks AS c
      ON c.snapshot_id = %(snap)s AND c.col = %(col)s AND c.lexeme = t.lexeme AND c.chunk < t.cut
    CROSS JOIN LATERAL unnest(c.doc_ords, c.impacts) AS u(doc_ord, imp)
    GROUP BY u.doc_ord
    HAVING %(tail_sum)s + sum(u.imp - t.tail) >= %(theta)s * (1 - 1e-9)
)
SELECT x.doc_ord, x.score, (SELECT count(*) FROM agg)
FROM topk.scores(%(snap)s, %(col)s, %(lex)s::text[], (SELECT array_agg(doc_ord) FROM agg)) AS x
ORDER BY x.score DESC, x.doc_ord
LIMIT %(k)s
"""


def oracle_timing(
    conn: Any, snap: Any, terms: list[Any], limits: list[int], n: int
) -> dict[str, Any]:
    """The best this design family can do: one pass with the cutoffs the TRUE p_k-th
    score allows (known upfront, as if by an oracle), then exact scores of the
    survivors; queries whose sum(df) is over 20,000 only (the others run rank.sql)."""
    out: dict[str, Any] = {}
    for col in ("raw", "ident"):
        for k in limits:
            times, reads, survivors, mism = [], [], [], 0
            shipped: list[float] = []
            factors: dict[float, int] = {}
            for tq in terms[:n]:
                lex = tq.raw if col == "raw" else tq.ident
                ref = _SHIPPED_RANKED(conn, snap, col, lex, k)
                if len(ref) < k or ref[k - 1][2] <= 0:
                    continue
                dr = conn.execute(
                    "SELECT lexeme, chunk, max_impact, n FROM topk.chunks "
                    "WHERE snapshot_id = %s AND col = %s AND lexeme = ANY(%s::text[])",
                    (snap.snapshot_id, col, lex),
                ).fetchall()
                if sum(r[3] for r in dr) <= 20_000:
                    continue
                # the depth is an oracle choice too: the fastest of four
                best: tuple[float, float, int, float] | None = None
                for factor in (1.0, 0.5, 0.25, 0.0):
                    lx, cut, tails, tail_sum, read = oracle_cut(dr, ref[k - 1][2], factor)
                    params = {
                        "lex": lx,
                        "cut": cut,
                        "tail": tails,
                        "tail_sum": tail_sum,
                        "theta": ref[k - 1][2],
                        "snap": snap.snapshot_id,
                        "col": col,
                        "k": k,
                    }
                    t0 = time.perf_counter()
                    rows = conn.execute(ORACLE_SQL, params, prepare=False).fetchall()
                    dt = time.perf_counter() - t0
                    if [(int(r[0]), float(r[1])) for r in rows] != [(o, sc) for o, _, sc in ref]:
                        mism += 1
                    if best is None or dt < best[0]:
                        best = (
                            dt,
                            read / sum(r[3] for r in dr),
                            int(rows[0][2]) if rows else 0,
                            factor,
                        )
                assert best is not None
                times.append(best[0])
                reads.append(best[1])
                survivors.append(best[2])
                factors[best[3]] = factors.get(best[3], 0) + 1
                shipped_t0 = time.perf_counter()
                _SHIPPED_RANKED(conn, snap, col, lex, k)
                shipped.append(time.perf_counter() - shipped_t0)
            sv = sorted(survivors)
            out[f"{col}/k{k}"] = {
                **summary_ms(times),
                "median_read_fraction": round(sorted(reads)[len(reads) // 2], 4) if reads else None,
                "median_survivors": sv[len(sv) // 2] if sv else None,
                "mismatches": mism,
                "best_depth_factor_counts": {str(f): c for f, c in sorted(factors.items())},
                "shipped_rank_sql_same_queries": summary_ms(shipped),
            }
    return out


def summarize_pruning(stats: list[dict[str, Any]], limits: list[int]) -> dict[str, Any]:
    import statistics as st

    def q(vals: list[float], p: float) -> float:
        vals = sorted(vals)
        return round(vals[int(p * (len(vals) - 1))], 4) if vals else float("nan")

    out: dict[str, Any] = {}
    for col in ("raw", "ident"):
        for k in limits:
            s = [x for x in stats if x["col"] == col and x["k"] == k]
            outcomes: dict[str, int] = {}
            for x in s:
                outcomes[x.get("outcome", "?")] = outcomes.get(x.get("outcome", "?"), 0) + 1
            big = [x for x in s if x.get("outcome") in ("pruned", "fallback")]
            pr = [x for x in s if x.get("outcome") == "pruned"]
            fb = [x for x in s if x.get("outcome") == "fallback"]
            orc = [x["oracle_fraction"] for x in s if x.get("oracle_fraction") is not None]
            out[f"{col}/k{k}"] = {
                "calls": len(s),
                "outcomes": outcomes,
                "median_sum_df": st.median([x["sum_df"] for x in s if x.get("sum_df")] or [0]),
                "pruned_median_read_fraction": q([x["read_total"] / x["sum_df"] for x in pr], 0.5),
                "pruned_median_survivors": q([x["survivors"] for x in pr], 0.5),
                "fallback_median_wasted_fraction": q(
                    [x["read_total"] / x["sum_df"] for x in fb], 0.5
                ),
                "oracle_read_fraction_p25_p50_p75": [q(orc, 0.25), q(orc, 0.5), q(orc, 0.75)],
                "oracle_le_10pct": sum(1 for f in orc if f <= 0.10),
                "oracle_n": len(orc),
                "probe_passes_median": q([x["passes"] for x in big], 0.5),
            }
    return out


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--sizes", default="10000,100000,1000000")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--limits", default="10,100")
    p.add_argument(
        "--reuse",
        action="store_true",
        help="reuse riido_bench_topk_<size> (and its topk schema) when present",
    )
    p.add_argument("--rebuild", action="store_true", help="rebuild schema topk even with --reuse")
    p.add_argument(
        "--full-check",
        type=int,
        default=30,
        help="queries checked against the full ranking above 100,000 docs",
    )
    p.add_argument(
        "--oracle",
        type=int,
        default=0,
        help="also time the oracle pass (true theta known) for this many queries",
    )
    p.add_argument(
        "--only-oracle",
        action="store_true",
        help="skip the timing and checks; build nothing; oracle pass only",
    )
    args = p.parse_args()
    if args.quick:
        args.sizes, args.queries = "10000", 30
    args.limits = [int(x) for x in args.limits.split(",")]
    queries = corpus.queries("cosqa", args.queries)
    if args.only_oracle:
        res = {}
        for size in (int(x) for x in args.sizes.split(",")):
            _, dsn, _ = topk_db.ensure_database(args.dsn, size, reuse=True)
            conn = connect(dsn)
            conn.execute("SET work_mem = '32MB'")
            terms = [ranking.query_terms(conn, q, "english") for q in queries]
            snap = ranking.get_snapshot(conn, topk_db.SNAPSHOT)
            res[size] = oracle_timing(conn, snap, terms, args.limits, args.oracle or len(queries))
            for key_, v in res[size].items():
                print(f"oracle {size:,} {key_}: {json.dumps(v)}", flush=True)
            conn.close()
        write_results("topk_oracle", {"server": server_info(args.dsn), "oracle": res}, args.out)
        return
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        results.append(run_size(args, size, queries))
        print_tables(results[-1:], args.limits)
    write_results("topk_prototype", {"server": server_info(args.dsn), "results": results}, args.out)


def print_tables(results: list[dict[str, Any]], limits: list[int]) -> None:
    rows = []
    for r in results:
        sm = r["summary"]
        for k in limits:
            nat = sm[f"native/k{k}"]
            rows.append(
                [r["size"], k, "native GIN+ts_rank", "", "", nat["p50_ms"], nat["p95_ms"], "", ""]
            )
            for pol in POLICIES:
                s, c = sm[f"shipped/{pol}/k{k}"], sm[f"candidate/{pol}/k{k}"]
                rows.append(
                    [
                        r["size"],
                        k,
                        pol,
                        s["p50_ms"],
                        s["p95_ms"],
                        c["p50_ms"],
                        c["p95_ms"],
                        round(c["p50_ms"] / s["p50_ms"], 3),
                        round(c["p50_ms"] / nat["p50_ms"], 3),
                    ]
                )
    print(
        markdown_table(
            [
                "docs",
                "K",
                "policy",
                "shipped p50",
                "shipped p95",
                "candidate p50",
                "candidate p95",
                "cand/shipped p50",
                "cand/native p50",
            ],
            rows,
        )
    )
    for r in results:
        exact = {k: v for k, v in r["exact"].items() if k != "first_mismatches"}
        print(f"\nexactness {r['size']:,}: {json.dumps(exact)}")
        print(f"storage {r['size']:,}: {json.dumps(r['storage'])}")
        print(f"build {r['size']:,}: {r['build']}  load avg {r['load_avg']}")
        for key_, v in r.get("oracle", {}).items():
            print(f"oracle {r['size']:,} {key_}: {json.dumps(v)}")
        for key_, v in r["pruning"].items():
            print(f"pruning {r['size']:,} {key_}: {json.dumps(v)}")


if __name__ == "__main__":
    main()
