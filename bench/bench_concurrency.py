"""Bounded concurrent load test (loopback only): N query processes + 1 loader.

1. A fresh database gets snapshot ``A`` (``--docs`` documents, not timed).
2. Single-client reference: every (query, policy) pair of the work list is ranked
   once with ``rank_snapshot(limit=100)`` on one connection; the sequential rate is
   the single-client queries/second.
3. For ``--duration`` seconds (and at most ``--max-queries`` queries in total), N
   query processes (``--clients``, default 4) each rank the pairs of the work list
   round-robin (each from its own offset) on snapshot ``A``, while one loader process
   loads snapshots ``B0``, ``B1``, ... (``--loader-docs`` documents each) until the
   time is up (at most ``--max-loads``).
4. Every concurrent result must equal the reference exactly (same ids, ranks,
   policy label; scores equal to 1e-12 relative) and no process may see an error;
   the script exits 1 otherwise.

    python bench/bench_concurrency.py                # 4 clients, 20 s
    python bench/bench_concurrency.py --quick
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from common import (
    base_parser,
    bench_database,
    connect,
    markdown_table,
    summary_ms,
    write_results,
)

from riido_pg.ranking import policies

#: Every policy that needs no model (the model policy's cost is measured by eval --model).
POLICIES = tuple(p.name for p in policies() if not p.needs_model)

LIMIT = 100


def _key(ranking: Any) -> tuple[str, list[tuple[str, int, float, float | None]]]:
    return ranking.policy, [
        (c.id, c.rank, c.bm25_score, c.identifier_bm25_score) for c in ranking.candidates
    ]


def _same(a: Any, b: Any) -> bool:
    if a[0] != b[0] or len(a[1]) != len(b[1]):
        return False
    for x, y in zip(a[1], b[1], strict=True):
        if x[0] != y[0] or x[1] != y[1]:
            return False
        for s, t in ((x[2], y[2]), (x[3], y[3])):
            if (s is None) != (t is None):
                return False
            if s is not None and not math.isclose(s, t, rel_tol=1e-12, abs_tol=1e-15):
                return False
    return True


def _work(queries: list[str], ids: list[str]) -> list[tuple[str, str, list[str] | None]]:
    rng = random.Random("concurrency-hints")
    items = []
    for i, q in enumerate(queries):
        policy = POLICIES[i % len(POLICIES)]
        hints = rng.sample(ids, 20) if policy == "external_hints_baseline_first" else None
        items.append((q, policy, hints))
    return items


def query_worker(
    wid: int,
    dsn: str,
    work: list[Any],
    reference: list[Any],
    start: Any,
    deadline_box: Any,
    budget: Any,
    results: Any,
) -> None:
    from riido_pg.ranking import rank_snapshot

    out: dict[str, Any] = {
        "worker": wid,
        "queries": 0,
        "errors": [],
        "mismatches": 0,
        "latencies": [],
    }
    try:
        conn = connect(dsn)
        start.wait()
        t_start = time.perf_counter()
        deadline = deadline_box.value
        i = wid * 7 % len(work)
        while time.time() < deadline:
            with budget.get_lock():
                if budget.value <= 0:
                    break
                budget.value -= 1
            q, policy, hints = work[i]
            t0 = time.perf_counter()
            r = rank_snapshot(conn, "A", q, policy=policy, limit=LIMIT, hints=hints)
            out["latencies"].append(time.perf_counter() - t0)
            out["queries"] += 1
            if not _same(_key(r), reference[i]):
                out["mismatches"] += 1
            i = (i + 1) % len(work)
        out["elapsed"] = time.perf_counter() - t_start
        conn.close()
    except Exception:
        out["errors"].append(traceback.format_exc(limit=3))
    results.put(out)


def loader_worker(
    dsn: str, kind: str, docs_n: int, max_loads: int, start: Any, deadline_box: Any, results: Any
) -> None:
    from riido_pg.documents import Document
    from riido_pg.storage import load_snapshot

    out: dict[str, Any] = {
        "worker": "loader",
        "loads": 0,
        "documents": 0,
        "seconds": [],
        "errors": [],
    }
    try:
        base = corpus.documents("synthetic" if kind == "synthetic" else kind, docs_n, seed=1)
        conn = connect(dsn)
        start.wait()
        deadline = deadline_box.value
        while time.time() < deadline and out["loads"] < max_loads:
            k = out["loads"]
            # distinct content per load, so each one is a real load
            docs = [Document(d.id, f"{d.text}\n# load {k}") for d in base]
            t0 = time.perf_counter()
            res = load_snapshot(conn, f"B{k}", docs)
            out["seconds"].append(time.perf_counter() - t0)
            assert res.action == "created", res
            out["loads"] += 1
            out["documents"] += len(docs)
        conn.close()
    except Exception:
        out["errors"].append(traceback.format_exc(limit=3))
    results.put(out)


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--clients", type=int, default=4, help="query processes (default 4)")
    p.add_argument("--duration", type=float, default=20.0, help="seconds (default 20)")
    p.add_argument("--max-queries", type=int, default=50_000, help="total query cap")
    p.add_argument("--docs", type=int, default=20_000, help="documents in snapshot A")
    p.add_argument("--loader-docs", type=int, default=10_000, help="documents per loader load")
    p.add_argument("--max-loads", type=int, default=20)
    p.add_argument("--queries", type=int, default=100, help="distinct (query, policy) pairs")
    p.add_argument("--corpus", choices=("synthetic", "cosqa"), default="cosqa")
    args = p.parse_args()
    if args.quick:
        args.duration, args.docs, args.loader_docs, args.queries = 4.0, 2_000, 1_000, 20
    kind = args.corpus if corpus.cosqa_available() else "synthetic"

    from riido_pg.ranking import rank_snapshot
    from riido_pg.storage import load_snapshot

    docs = corpus.documents(kind, args.docs)
    ids = [d.id for d in docs]
    work = _work(corpus.queries(kind, args.queries), ids)
    ctx = mp.get_context("spawn")
    with bench_database(args.dsn, "conc", keep=args.keep) as dsn:
        conn = connect(dsn)
        load_snapshot(conn, "A", docs)
        conn.execute("VACUUM ANALYZE riido.postings")
        for q, policy, hints in work[:10]:  # warm-up
            rank_snapshot(conn, "A", q, policy=policy, limit=LIMIT, hints=hints)
        t0 = time.perf_counter()
        reference = [
            _key(rank_snapshot(conn, "A", q, policy=policy, limit=LIMIT, hints=hints))
            for q, policy, hints in work
        ]
        single_s = time.perf_counter() - t0
        single_qps = len(work) / single_s

        start = ctx.Event()
        deadline_box = ctx.Value("d", 0.0)
        budget = ctx.Value("q", args.max_queries)
        results = ctx.Queue()
        procs = [
            ctx.Process(
                target=query_worker,
                args=(w, dsn, work, reference, start, deadline_box, budget, results),
            )
            for w in range(args.clients)
        ]
        procs.append(
            ctx.Process(
                target=loader_worker,
                args=(dsn, kind, args.loader_docs, args.max_loads, start, deadline_box, results),
            )
        )
        for pr in procs:
            pr.start()
        time.sleep(3.0)  # let the workers import, connect and reach the barrier
        deadline_box.value = time.time() + args.duration
        t_start = time.perf_counter()
        start.set()
        outs = [results.get(timeout=args.duration + 600) for _ in procs]
        wall = time.perf_counter() - t_start
        for pr in procs:
            pr.join(timeout=60)
        # snapshot A must be untouched, the B loads complete
        a_count = conn.execute(
            "SELECT document_count, state FROM riido.snapshots WHERE snapshot_id = 'A'"
        ).fetchone()
        b_states = conn.execute(
            "SELECT count(*) FILTER (WHERE state = 'ready'), count(*) FROM riido.snapshots "
            "WHERE snapshot_id LIKE 'B%'"
        ).fetchone()
        conn.close()

    qouts = [o for o in outs if o["worker"] != "loader"]
    loader = next(o for o in outs if o["worker"] == "loader")
    total_q = sum(o["queries"] for o in qouts)
    errors = [e for o in outs for e in o["errors"]]
    mismatches = sum(o["mismatches"] for o in qouts)
    lat = [x for o in qouts for x in o["latencies"]]
    query_wall = max((o.get("elapsed", 0.0) for o in qouts), default=0.0) or wall
    qps = total_q / query_wall
    lsum = summary_ms(lat)
    loader_docs_s = (loader["documents"] / sum(loader["seconds"])) if loader["seconds"] else 0.0
    ok = (
        not errors
        and mismatches == 0
        and total_q > 0
        and a_count == (args.docs, "ready")
        and b_states[0] == b_states[1] == loader["loads"]
    )
    summary = {
        "corpus": kind,
        "docs_A": args.docs,
        "clients": args.clients,
        "duration_s": args.duration,
        "wall_s": wall,
        "query_wall_s": query_wall,
        "queries": total_q,
        "qps": qps,
        "single_client_qps": single_qps,
        "latency": lsum,
        "mismatches": mismatches,
        "errors": errors,
        "loader": {
            "loads": loader["loads"],
            "docs_per_load": args.loader_docs,
            "seconds": loader["seconds"],
            "docs_per_s": loader_docs_s,
        },
        "per_worker_queries": [o["queries"] for o in qouts],
        "ok": ok,
        "load_avg": os.getloadavg()[0],
    }
    print(
        "\n### Concurrency: "
        f"{args.clients} query processes + 1 loader, {args.duration:g} s, loopback\n"
    )
    print(
        markdown_table(
            [
                "corpus",
                "docs A",
                "clients",
                "queries",
                "queries/s",
                "single-client q/s",
                "p50 ms",
                "p95 ms",
                "loads of B",
                "loader docs/s",
                "errors",
                "mismatches",
            ],
            [
                [
                    kind,
                    args.docs,
                    args.clients,
                    total_q,
                    round(qps, 1),
                    round(single_qps, 1),
                    lsum["p50_ms"],
                    lsum["p95_ms"],
                    f"{loader['loads']} × {args.loader_docs:,}",
                    round(loader_docs_s),
                    len(errors),
                    mismatches,
                ]
            ],
        )
    )
    for e in errors:
        print(f"\nERROR:\n{e}", file=sys.stderr)
    write_results("concurrency", summary, args.out)
    if not ok:
        print("FAILED: errors, mismatches or incomplete loads", file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
