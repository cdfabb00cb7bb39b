"""Query latency per policy: p50 / p95 of ``riido_pg.ranking.rank_snapshot(limit=100)``.

For each size a snapshot is loaded into a fresh database (not timed). Then, on one
open connection (opened like the CLI does), every policy ranks the same query list
with ``limit=100``: ``bm25``, ``identifier_bm25``, ``identifier_bm25_baseline_first``,
``identifier_bm25_auxiliary_first`` and ``external_hints_baseline_first`` (hints: 20
document ids of the snapshot, chosen per query with a seeded RNG). A warm-up pass of
20 queries per policy is not counted. The time is the client-observed wall time of
``rank_snapshot`` on loopback: every statement and round trip of the call (read-only
transaction, snapshot row, query lexemes, one or two ranked lists, missing scores),
no connection setup, no process start. Two connection modes (``--modes``):

* ``prepared``: a long-lived connection with psycopg's default
  ``prepare_threshold=5``: after five executions a statement is prepared
  server-side, and PostgreSQL may then switch it to a generic plan (an application
  holding a connection, ``eval``);
* ``unprepared``: ``prepare_threshold=None``: every statement is planned with its
  actual values (a custom plan), which is what a one-shot ``riido-pg query`` process
  gets, since it never runs a statement five times.

Queries: the 500 real CoSQA dev queries when the corpus is CoSQA (the default when
present), otherwise generated ones (``corpus.synthetic_queries``).

For a few queries (fastest, median, p95, slowest of ``bm25`` plus the first) the
script also records ``EXPLAIN (ANALYZE, BUFFERS)`` of ``sql/rank.sql`` for both
columns, under the custom plan and under the generic plan (``PREPARE`` with
``plan_cache_mode = force_generic_plan``); its "Execution Time" is the pure server
time of the ranking statement.

    python bench/bench_query.py                      # 3,000 and 100,000 docs
    python bench/bench_query.py --quick
    python bench/bench_query.py --sizes 20000 --queries 500 --corpus synthetic
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from common import (
    base_parser,
    bench_database,
    connect,
    markdown_table,
    percentile,
    proc_cpu_seconds,
    server_info,
    summary_ms,
    write_results,
)

from riido_pg.ranking import policies

#: Every policy that needs no model (the model policy's cost is measured by eval --model).
POLICIES = tuple(p.name for p in policies() if not p.needs_model)

LIMIT = 100
HINTS = 20
TARGET_P50_MS = {3_000: 5.0, 100_000: 50.0}


def target_for(size: int) -> float | None:
    """The p50 target: 5 ms up to 3,000 docs, 50 ms up to 100,000 (README "Benchmarks")."""
    if size <= 3_000:
        return TARGET_P50_MS[3_000]
    if size <= 100_000:
        return TARGET_P50_MS[100_000]
    return None


def _prepared_rank_sql() -> str:
    """sql/rank.sql as a PREPARE body with $1..$5 (for EXPLAIN of the generic plan)."""
    from riido_pg.resources import sql_text

    text = sql_text("rank")
    for i, name in enumerate(("snapshot_id", "col", "lexemes", "n", "limit"), start=1):
        text = text.replace(f"%({name})s", f"${i}")
    assert "%(" not in text
    return text


def _exec_ms(plan: list[str]) -> float:
    return next(
        float(line.split(":")[1].split()[0]) for line in plan if line.startswith("Execution Time")
    )


def explain_rank(conn: Any, snapshot_id: str, query: str, col: str, n: int) -> dict[str, Any]:
    """EXPLAIN ANALYZE of sql/rank.sql: custom plan (values known: what a one-shot
    process gets) and generic plan (what psycopg's auto-prepared statements get)."""
    from psycopg import sql

    from riido_pg.ranking import query_terms
    from riido_pg.resources import sql_text

    terms = query_terms(conn, query, "english")
    lexemes = terms.raw if col == "raw" else terms.ident
    custom = [
        r[0]
        for r in conn.execute(
            "EXPLAIN (ANALYZE, BUFFERS) " + sql_text("rank"),
            {"snapshot_id": snapshot_id, "col": col, "lexemes": lexemes, "n": n, "limit": LIMIT},
            prepare=False,
        ).fetchall()
    ]
    with conn.transaction():
        conn.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        conn.execute(
            "PREPARE riido_bench_rank(text, text, text[], int, int) AS " + _prepared_rank_sql(),
            prepare=False,
        )
        # EXECUTE's arguments cannot be bind parameters: quote them as literals
        args = sql.SQL(", ").join(sql.Literal(v) for v in (snapshot_id, col, lexemes, n, LIMIT))
        generic = [
            r[0]
            for r in conn.execute(
                sql.SQL("EXPLAIN (ANALYZE, BUFFERS) EXECUTE riido_bench_rank({})").format(args),
                prepare=False,
            ).fetchall()
        ]
        conn.execute("DEALLOCATE riido_bench_rank", prepare=False)
    df = conn.execute(
        "SELECT coalesce(sum(df), 0), count(*) FROM riido.postings "
        "WHERE snapshot_id = %s AND col = %s AND lexeme = ANY(%s::text[])",
        (snapshot_id, col, lexemes),
    ).fetchone()
    return {
        "query": query,
        "col": col,
        "lexemes": lexemes,
        "postings_read": int(df[1]),
        "sum_df": int(df[0]),
        "execution_ms": _exec_ms(custom),
        "generic_execution_ms": _exec_ms(generic),
        "plan": custom,
        "generic_plan": generic,
    }


def run_size(args: Any, kind: str, size: int, queries: list[str]) -> dict[str, Any]:
    from riido_pg.ranking import rank_snapshot
    from riido_pg.storage import load_snapshot

    docs = corpus.documents(kind, size)
    ids = [d.id for d in docs]
    out: dict[str, Any] = {"corpus": kind, "size": size, "queries": len(queries), "policies": {}}
    with bench_database(args.dsn, "query", keep=args.keep) as dsn:
        conn = connect(dsn)
        t = time.perf_counter()
        load_snapshot(conn, "bench", docs)
        out["load_seconds"] = round(time.perf_counter() - t, 2)
        conn.execute("VACUUM ANALYZE riido.postings")
        conn.execute("VACUUM ANALYZE riido.documents")
        del docs
        rng = random.Random(f"hints:{size}")
        hint_lists = [rng.sample(ids, HINTS) for _ in queries]
        per_query: dict[str, list[float]] = {}
        for mode in args.modes:
            # "prepared": one long-lived connection as psycopg behaves by default
            # (statements are prepared server-side after 5 executions, then PostgreSQL
            # may switch to a generic plan). "unprepared": prepare_threshold=None, so
            # every statement is planned with its values, as in a one-shot
            # `riido-pg query` process, which never runs a statement 5 times.
            qconn = connect(dsn)
            qconn.prepare_threshold = None if mode == "unprepared" else 5
            for policy in POLICIES:

                def call(i: int, q: str, policy: str = policy, qconn: Any = qconn) -> Any:
                    hints = hint_lists[i] if policy == "external_hints_baseline_first" else None
                    return rank_snapshot(qconn, "bench", q, policy=policy, limit=LIMIT, hints=hints)

                for i, q in enumerate(queries[:20]):  # warm-up
                    call(i, q)
                times = []
                labels: dict[str, int] = {}
                pid = qconn.info.backend_pid
                c0, s0 = time.process_time(), proc_cpu_seconds(pid)
                for i, q in enumerate(queries):
                    t0 = time.perf_counter()
                    r = call(i, q)
                    times.append(time.perf_counter() - t0)
                    assert len(r.candidates) == min(LIMIT, size)
                    labels[r.policy] = labels.get(r.policy, 0) + 1
                c1, s1 = time.process_time(), proc_cpu_seconds(pid)
                per_query[f"{mode}/{policy}"] = times
                s = summary_ms(times)
                s["result_labels"] = labels
                s["client_cpu_ms_per_query"] = round((c1 - c0) * 1000 / len(queries), 3)
                s["server_cpu_ms_per_query"] = (
                    round((s1 - s0) * 1000 / len(queries), 3)
                    if s0 is not None and s1 is not None
                    else None
                )
                out["policies"][f"{mode}/{policy}"] = s
                print(
                    f"  {kind} {size:>7,} {mode:10s} {policy:34s} p50 {s['p50_ms']:8.2f} ms  "
                    f"p95 {s['p95_ms']:8.2f} ms",
                    file=sys.stderr,
                )
            qconn.close()
        # EXPLAIN ANALYZE of rank.sql for representative queries (by bm25 latency)
        bm = per_query[f"{args.modes[0]}/bm25"]
        order = sorted(range(len(queries)), key=lambda i: bm[i])
        picks = {
            "first": 0,
            "fastest": order[0],
            "median": order[len(order) // 2],
            "p95": order[min(len(order) - 1, int(len(order) * 0.95))],
            "slowest": order[-1],
        }
        explains = []
        for label, i in picks.items():
            for col in ("raw", "ident"):
                e = explain_rank(conn, "bench", queries[i], col, size)
                e.update(pick=label, bm25_call_ms=round(bm[i] * 1000, 3))
                explains.append(e)
        out["explain"] = explains
        out["explain_summary"] = {
            col: {
                "median_custom_ms": percentile(
                    [e["execution_ms"] for e in explains if e["col"] == col], 50
                ),
                "median_generic_ms": percentile(
                    [e["generic_execution_ms"] for e in explains if e["col"] == col], 50
                ),
            }
            for col in ("raw", "ident")
        }
        sizes = conn.execute(
            "SELECT pg_total_relation_size('riido.postings'), "
            "(SELECT max(df) FROM riido.postings), (SELECT count(*) FROM riido.postings)"
        ).fetchone()
        out["postings_bytes"], out["max_df"], out["postings_rows"] = (int(x) for x in sizes)
        conn.close()
    out["load_avg"] = os.getloadavg()[0]
    return out


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--sizes", default="3000,100000")
    p.add_argument("--queries", type=int, default=300, help="queries per policy (default 300)")
    p.add_argument(
        "--corpus",
        choices=("synthetic", "cosqa", "both"),
        default="cosqa",
        help="cosqa (real queries; synthetic when absent), synthetic, both",
    )
    p.add_argument(
        "--modes",
        default="prepared,unprepared",
        help="prepared (long-lived connection, psycopg default), unprepared "
        "(every statement planned with its values, like a one-shot CLI process)",
    )
    args = p.parse_args()
    args.modes = args.modes.split(",")
    if args.quick:
        args.sizes, args.queries = "1000", 30
    sizes = [int(s) for s in args.sizes.split(",")]
    kinds = ["synthetic", "cosqa"] if args.corpus == "both" else [args.corpus]
    if "cosqa" in kinds and not corpus.cosqa_available():
        print(
            "cosqa data not found; using the synthetic corpus and generated queries",
            file=sys.stderr,
        )
        kinds = ["synthetic"]
    results = []
    for kind in dict.fromkeys(kinds):
        queries = corpus.queries(kind, args.queries)
        for size in sizes:
            results.append(run_size(args, kind, size, queries))

    rows = []
    for r in results:
        target = target_for(r["size"])
        for key, s in r["policies"].items():
            mode, policy = key.split("/")
            rows.append(
                [
                    r["corpus"],
                    r["size"],
                    mode,
                    policy,
                    s["n"],
                    s["p50_ms"],
                    s["p95_ms"],
                    s["max_ms"],
                    s["mean_ms"],
                    s["client_cpu_ms_per_query"],
                    "" if s["server_cpu_ms_per_query"] is None else s["server_cpu_ms_per_query"],
                    f"≤ {target:g} ms" if target else "–",
                    ("yes" if s["p50_ms"] <= target else "no") if target else "–",
                    round(r["load_avg"], 1),
                ]
            )
    print(f"\n### Query latency, limit={LIMIT}, rank_snapshot on an open connection\n")
    print(
        markdown_table(
            [
                "corpus",
                "docs",
                "statements",
                "policy",
                "queries",
                "p50 ms",
                "p95 ms",
                "max ms",
                "mean ms",
                "client CPU ms/q",
                "server CPU ms/q",
                "target p50",
                "met",
                "load avg",
            ],
            rows,
        )
    )
    erows = []
    for r in results:
        for e in r["explain"]:
            erows.append(
                [
                    r["corpus"],
                    r["size"],
                    e["pick"],
                    e["col"],
                    len(e["lexemes"]),
                    e["sum_df"],
                    e["execution_ms"],
                    e["generic_execution_ms"],
                    e["bm25_call_ms"],
                    e["query"][:48],
                ]
            )
    print(
        "\n### EXPLAIN ANALYZE of sql/rank.sql (limit 100): custom plan (one-shot) and "
        "generic plan (prepared)\n"
    )
    print(
        markdown_table(
            [
                "corpus",
                "docs",
                "query pick",
                "col",
                "lexemes",
                "Σ df",
                "custom plan ms",
                "generic plan ms",
                f"bm25 call ms ({args.modes[0]})",
                "query",
            ],
            erows,
        )
    )
    write_results(
        "query",
        {
            "server": server_info(args.dsn),
            "limit": LIMIT,
            "targets_p50_ms": TARGET_P50_MS,
            "results": results,
        },
        args.out,
    )


if __name__ == "__main__":
    main()
