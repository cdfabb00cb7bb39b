"""Search from SQL against the Python API: p50 / p95 of ``riido.search``, of
``riido_pg.rank_snapshot`` and of the Python API's composed path for the same queries,
side by side.

A snapshot of ``--functions`` documents is loaded into a fresh database (not timed):
``cosqa-distinct`` (the CoSQA dev functions, every text made distinct; the default
when the data is present) or ``synthetic`` (``corpus.synthetic_documents``: generated
functions of real size). Then, on one open connection (opened as the CLI opens one),
for every policy riido.search runs and every query, the three paths run one after the
other, in an order that rotates query by query, each timed as the client sees it on
loopback:

* ``sql``: ``SELECT ... FROM riido.search(snapshot, query, k, policy)``, one round trip;
* ``python``: ``rank_snapshot(conn, snapshot, query, policy=..., limit=k)``, as an
  application calling the Python API gets it: one statement, ``riido.search_ranked``
  (riido.search's body; since migration 0021, at every limit since 0024), and the
  Ranking built from its rows;
* ``composed``: the Python API's composed path (``riido_pg.ranking.rank.rank_composed``,
  what ``rank_snapshot`` ran before: its read-only transaction and statements).

The first 20 queries of each policy warm the paths up and are not counted. Every timed
triple is also compared: the ids in order must be equal (``mismatches``). Beside the
p50s, the geometric mean of the per-query ratios with its 95 % paired bootstrap
interval (``riido_pg.evaluation.significance``), for python/composed (the Python API
now against before), sql/python and sql/composed: an interval wholly below 1 says the
first path is faster beyond this run's noise.

    python bench/bench_sql_search.py                        # 31,000 functions
    python bench/bench_sql_search.py --functions 1000000    # the million (long load)
    python bench/bench_sql_search.py --quick
    python bench/bench_sql_search.py --reuse DSN --k 0 --queries 20   # every candidate
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
from riido_pg.ranking.rank import RankOptions, rank_composed

POLICIES = tuple(p.name for p in policies() if not p.needs_model)
WARMUP = 20
HINTS = 20
SEARCH = "SELECT id FROM riido.search(%s, %s, %s, %s, %s)"
PATHS = ("sql", "python", "composed")
#: The order of the paths, rotating query by query (each path first and last equally).
ORDERS = (
    ("sql", "python", "composed"),
    ("python", "composed", "sql"),
    ("composed", "sql", "python"),
    ("sql", "composed", "python"),
    ("python", "sql", "composed"),
    ("composed", "python", "sql"),
)


def ratio(times: dict[str, list[float]], a: str, b: str) -> list[float]:
    """The geometric mean of the per-query ratios a/b and its 95 % interval."""
    paired = paired_interval([math.log(t) for t in times[a]], [math.log(t) for t in times[b]])
    return [round(math.exp(v), 3) for v in (paired.mean, paired.low, paired.high)]


def measure(
    conn: Any, snapshot: str, policy: str, queries: list[str], k: int | None, ids: list[str]
) -> dict[str, Any]:
    rng = random.Random(7)
    times: dict[str, list[float]] = {path: [] for path in PATHS}
    # riido.search's k for every document: the snapshot's document count
    sql_k = (
        k
        or conn.execute(
            "SELECT document_count FROM riido.snapshots WHERE snapshot_id = %s", (snapshot,)
        ).fetchone()[0]
    )
    mismatches = 0
    for i, query in enumerate(queries):
        hints = rng.sample(ids, HINTS) if policy == "external_hints_baseline_first" else None
        got: dict[str, list[str]] = {}
        for path in ORDERS[i % len(ORDERS)]:
            start = time.perf_counter()
            if path == "sql":
                rows = conn.execute(SEARCH, (snapshot, query, sql_k, policy, hints)).fetchall()
                got[path] = [r[0] for r in rows]
            elif path == "python":
                ranking = rank_snapshot(conn, snapshot, query, policy=policy, limit=k, hints=hints)
                got[path] = [c.id for c in ranking.candidates]
            else:
                opts = RankOptions.check(query, policy, k, hints, None, None)
                ranking = rank_composed(conn, snapshot, query, opts)
                got[path] = [c.id for c in ranking.candidates]
            elapsed = time.perf_counter() - start
            if i >= WARMUP:
                times[path].append(elapsed)
        mismatches += not got["sql"] == got["python"] == got["composed"]
    summary = {path: summary_ms(times[path]) for path in PATHS}
    # each query's timings are paired (same query, back to back, order rotating): the
    # geometric mean of their ratios and its bootstrap interval say whether one path is
    # faster beyond the machine's noise, which two p50s alone cannot
    return {
        "policy": policy,
        **summary,
        "p50_ratio": round(summary["sql"]["p50_ms"] / summary["python"]["p50_ms"], 3),
        "paired_ratio": ratio(times, "sql", "python"),
        "sql_composed_paired_ratio": ratio(times, "sql", "composed"),
        "api_p50_ratio": round(summary["python"]["p50_ms"] / summary["composed"]["p50_ms"], 3),
        "api_paired_ratio": ratio(times, "python", "composed"),
        "mismatches": mismatches,
    }


def main() -> None:
    p = base_parser(__doc__.splitlines()[0])
    p.add_argument("--functions", type=int, default=31_000)
    p.add_argument("--queries", type=int, default=200, help="timed queries per policy (+20)")
    p.add_argument(
        "--k",
        type=int,
        default=10,
        help="candidates (0: every document: the Python paths' limit=None, riido.search's "
        "k = the snapshot's document count)",
    )
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
            results.append(measure(conn, "bench", policy, queries, args.k or None, ids))
            r = results[-1]
            print(
                f"{policy}: sql p50 {r['sql']['p50_ms']} ms, python p50 {r['python']['p50_ms']} "
                f"ms, composed p50 {r['composed']['p50_ms']} ms",
                file=sys.stderr,
            )
        info = server_info(dsn)
        conn.close()
    rows = [
        [
            r["policy"],
            *(r[path][q] for path in PATHS for q in ("p50_ms", "p95_ms")),
            r["api_p50_ratio"],
            "{} [{}, {}]".format(*r["api_paired_ratio"]),
            r["p50_ratio"],
            "{} [{}, {}]".format(*r["paired_ratio"]),
            "{} [{}, {}]".format(*r["sql_composed_paired_ratio"]),
            r["mismatches"],
        ]
        for r in results
    ]
    k_text = args.k or "every document"
    print(f"{args.functions:,} functions ({kind}), k = {k_text}, {args.queries} queries per policy")
    print(
        markdown_table(
            [
                "policy",
                "sql p50 ms",
                "sql p95 ms",
                "python p50 ms",
                "python p95 ms",
                "composed p50 ms",
                "composed p95 ms",
                "python/composed p50",
                "python/composed per query [95 %]",
                "sql/python p50",
                "sql/python per query [95 %]",
                "sql/composed per query [95 %]",
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
