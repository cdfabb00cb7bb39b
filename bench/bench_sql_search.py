"""Search from SQL against the Python API: p50 / p95 of ``riido.search`` and of
``riido_pg.rank_snapshot`` for the same queries, side by side.

A snapshot of ``--functions`` documents is loaded into a fresh database (not timed):
``cosqa-distinct`` (the CoSQA dev functions, every text made distinct; the default
when the data is present) or ``synthetic`` (``corpus.synthetic_documents``: generated
functions of real size). Then, on one open connection (opened as the CLI opens one),
for every policy riido.search runs and every query, the two paths run one after the
other, in alternating order, each timed as the client sees it on loopback:

* ``sql``: ``SELECT ... FROM riido.search(snapshot, query, k, policy)``, one round trip;
* ``python``: ``rank_snapshot(conn, snapshot, query, policy=..., limit=k)``: its
  read-only transaction and statements, as an application calling the Python API gets.

The first 20 queries of each policy warm both paths up and are not counted. Every
timed pair is also compared: the ids in order must be equal (``mismatches``). Beside
the p50s, the geometric mean of the per-query ratios sql/python with its 95 % paired
bootstrap interval (``riido_pg.evaluation.significance``): an interval wholly below 1
says the SQL path is faster beyond this run's noise.

    python bench/bench_sql_search.py                        # 31,000 functions
    python bench/bench_sql_search.py --functions 1000000    # the million (long load)
    python bench/bench_sql_search.py --quick
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from common import (
    base_parser,
    bench_database,
    connect,
    markdown_table,
    server_info,
    summary_ms,
    write_results,
)

from riido_pg import Document, load_snapshot, rank_snapshot
from riido_pg.evaluation.significance import paired_interval
from riido_pg.ranking import policies

POLICIES = tuple(p.name for p in policies() if not p.needs_model)
WARMUP = 20
HINTS = 20
SEARCH = "SELECT id FROM riido.search(%s, %s, %s, %s, %s)"


def measure(
    conn: Any, snapshot: str, policy: str, queries: list[str], k: int, ids: list[str]
) -> dict[str, Any]:
    rng = random.Random(7)
    times: dict[str, list[float]] = {"sql": [], "python": []}
    mismatches = 0
    for i, query in enumerate(queries):
        hints = rng.sample(ids, HINTS) if policy == "external_hints_baseline_first" else None
        got: dict[str, list[str]] = {}
        order = ("sql", "python") if i % 2 == 0 else ("python", "sql")
        for path in order:
            start = time.perf_counter()
            if path == "sql":
                rows = conn.execute(SEARCH, (snapshot, query, k, policy, hints)).fetchall()
                got[path] = [r[0] for r in rows]
            else:
                ranking = rank_snapshot(conn, snapshot, query, policy=policy, limit=k, hints=hints)
                got[path] = [c.id for c in ranking.candidates]
            elapsed = time.perf_counter() - start
            if i >= WARMUP:
                times[path].append(elapsed)
        mismatches += got["sql"] != got["python"]
    sql_s, py_s = summary_ms(times["sql"]), summary_ms(times["python"])
    # each query's two timings are a pair (same query, back to back, order alternating):
    # the geometric mean of their ratios and its bootstrap interval say whether one
    # path is faster beyond the machine's noise, which two p50s alone cannot
    paired = paired_interval(
        [math.log(t) for t in times["sql"]], [math.log(t) for t in times["python"]]
    )
    return {
        "policy": policy,
        "sql": sql_s,
        "python": py_s,
        "p50_ratio": round(sql_s["p50_ms"] / py_s["p50_ms"], 3),
        "paired_ratio": [round(math.exp(v), 3) for v in (paired.mean, paired.low, paired.high)],
        "mismatches": mismatches,
    }


def main() -> None:
    p = base_parser(__doc__.splitlines()[0])
    p.add_argument("--functions", type=int, default=31_000)
    p.add_argument("--queries", type=int, default=200, help="timed queries per policy (+20)")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--corpus", default="cosqa-distinct", choices=["cosqa-distinct", "synthetic"])
    p.add_argument("--policy", action="append", dest="policies", choices=POLICIES)
    p.add_argument("--jobs", type=int, default=2, help="load jobs (the load is not timed)")
    p.add_argument(
        "--reuse",
        metavar="DSN",
        help="measure a database an earlier run kept (--keep) instead of loading one",
    )
    args = p.parse_args()
    if args.quick:
        args.functions, args.queries = 2_000, 20
    chosen = tuple(args.policies or POLICIES)
    kind = args.corpus if corpus.cosqa_available() else "synthetic"
    ids: list[str] = []

    def documents() -> Iterator[Document]:  # streamed: a million are not held at once
        stream = (
            corpus.iter_cosqa_distinct(args.functions)
            if kind == "cosqa-distinct"
            else iter(corpus.synthetic_documents(args.functions))
        )
        for d in stream:
            ids.append(d.id)
            yield d

    queries = corpus.queries("cosqa" if kind != "synthetic" else "synthetic", args.queries + WARMUP)
    results = []
    with (
        nullcontext(args.reuse)
        if args.reuse
        else bench_database(args.dsn, "sqlsearch", keep=args.keep)
    ) as dsn:
        conn = connect(dsn)
        started = time.perf_counter()
        if args.reuse:
            ids.extend(
                r[0] for r in conn.execute("SELECT doc_id FROM riido.documents LIMIT 100000")
            )
            # what the kept database holds, not --functions' default
            row = conn.execute(
                "SELECT document_count FROM riido.snapshots WHERE snapshot_id = 'bench'"
            ).fetchone()
            assert row is not None, "the database holds no snapshot 'bench'"
            args.functions = int(row[0])
        else:
            load_snapshot(conn, "bench", documents(), jobs=args.jobs)
            conn.execute("ANALYZE")
        load_s = time.perf_counter() - started
        for policy in chosen:
            results.append(measure(conn, "bench", policy, queries, args.k, ids))
            r = results[-1]
            print(
                f"{policy}: sql p50 {r['sql']['p50_ms']} ms, python p50 {r['python']['p50_ms']} ms",
                file=sys.stderr,
            )
        info = server_info(dsn)
        conn.close()
    rows = [
        [
            r["policy"],
            r["sql"]["p50_ms"],
            r["sql"]["p95_ms"],
            r["python"]["p50_ms"],
            r["python"]["p95_ms"],
            r["p50_ratio"],
            "{} [{}, {}]".format(*r["paired_ratio"]),
            r["mismatches"],
        ]
        for r in results
    ]
    print(f"{args.functions:,} functions ({kind}), k = {args.k}, {args.queries} queries per policy")
    print(
        markdown_table(
            [
                "policy",
                "sql p50 ms",
                "sql p95 ms",
                "python p50 ms",
                "python p95 ms",
                "sql/python p50",
                "sql/python per query [95 %]",
                "id mismatches",
            ],
            rows,
        )
    )
    write_results(
        "sql_search",
        {
            "functions": args.functions,
            "corpus": kind,
            "k": args.k,
            "queries": args.queries,
            "load_seconds": round(load_s, 1),
            "server": info,
            "results": results,
        },
        args.out,
    )


if __name__ == "__main__":
    main()
