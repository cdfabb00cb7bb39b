"""The next commit's snapshot: reusing stored texts against a fresh load.

A repository snapshotted per commit: ``repo@1`` is ``--size`` CoSQA functions with
every text distinct (``cosqa-distinct``); ``repo@2`` changes ``--change`` of them
(a third edited, a third removed, a third added), the rest identical. In one
database ``repo@1`` is loaded, then ``repo@2`` (its unchanged functions' texts are
stored already: only the changed ones are split and indexed). In a second, empty
database ``repo@2`` is loaded fresh. Both loads of ``repo@2`` are timed with the same
``--jobs``; then every policy that needs no model ranks the same questions on both
copies of ``repo@2`` and the rankings (ids and float scores) must be identical.

    python bench/bench_reuse.py                     # 100,000 functions, 1 % changed
    python bench/bench_reuse.py --quick
    python bench/bench_reuse.py --size 100000 --jobs 1,2
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from common import base_parser, bench_database, connect, markdown_table, write_results

from riido_pg import Document

TARGET_RATIO = 5.0


def next_commit(docs: list[Document], change: float) -> list[Document]:
    """``docs`` with ``change`` of them edited, removed or added (a third each)."""
    n = max(3, round(len(docs) * change))
    third = n // 3
    extra = corpus.cosqa_distinct_documents(len(docs) + third)[len(docs) :]
    step = max(1, len(docs) // n)
    picked = list(range(0, len(docs), step))[: 2 * third]
    edited = set(picked[0::2])
    removed = set(picked[1::2])
    out = []
    for i, d in enumerate(docs):
        if i in removed:
            continue
        if i in edited:
            out.append(Document(d.id, d.text + "\n    # edited in the next commit"))
        else:
            out.append(d)
    return out + [Document(f"new/{d.id}", d.text) for d in extra]


def timed_load(dsn: str, snapshot_id: str, docs: list[Document], jobs: int) -> dict[str, Any]:
    from riido_pg.storage import load_snapshot

    conn = connect(dsn)
    t0 = time.perf_counter()
    result = load_snapshot(conn, snapshot_id, docs, jobs=jobs)
    elapsed = time.perf_counter() - t0
    conn.close()
    assert result.action == "created", result
    return {"seconds": elapsed, "docs_per_s": len(docs) / elapsed}


def rankings(dsn: str, queries: list[str]) -> dict[str, list[Any]]:
    from bench_query import POLICIES

    from riido_pg.ranking import rank_snapshot

    conn = connect(dsn)
    out: dict[str, list[Any]] = {}
    for policy in POLICIES:
        if policy == "external_hints_baseline_first":
            continue
        out[policy] = [
            [
                dataclasses.astuple(c)
                for c in rank_snapshot(conn, "repo@2", q, policy=policy, limit=100).candidates
            ]
            for q in queries
        ]
    conn.close()
    return out


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--change", type=float, default=0.01, help="fraction changed (0.01)")
    p.add_argument("--jobs", default="1,2", help="comma-separated --jobs values")
    p.add_argument("--queries", type=int, default=50)
    args = p.parse_args()
    if args.quick:
        args.size, args.jobs, args.queries = 5000, "2", 10
    first = corpus.cosqa_distinct_documents(args.size)
    second = next_commit(first, args.change)
    queries = corpus.queries("cosqa", args.queries)
    runs = []
    for jobs in [int(j) for j in args.jobs.split(",")]:
        with bench_database(args.dsn, "reuse", keep=args.keep) as dsn_a:
            base = timed_load(dsn_a, "repo@1", first, jobs)
            reuse = timed_load(dsn_a, "repo@2", second, jobs)
            with bench_database(args.dsn, "fresh", keep=args.keep) as dsn_b:
                fresh = timed_load(dsn_b, "repo@2", second, jobs)
                a, b = rankings(dsn_a, queries), rankings(dsn_b, queries)
        identical = a == b
        assert identical, "the reused snapshot ranks differently from the fresh one"
        ratio = fresh["seconds"] / reuse["seconds"]
        runs.append(
            {
                "jobs": jobs,
                "size": args.size,
                "change": args.change,
                "repo@1_fresh_s": base["seconds"],
                "repo@2_reuse_s": reuse["seconds"],
                "repo@2_fresh_s": fresh["seconds"],
                "speedup": ratio,
                "policies_compared": sorted(a),
                "queries": len(queries),
                "identical": identical,
                "load_avg": os.getloadavg()[0],
            }
        )
        print(
            f"jobs {jobs}: repo@2 fresh {fresh['seconds']:.2f} s, reusing repo@1 "
            f"{reuse['seconds']:.2f} s: {ratio:.1f}x; rankings identical",
            file=sys.stderr,
        )
    print(f"\n### The next commit's load (target ≥ {TARGET_RATIO:.0f}× faster than fresh)\n")
    print(
        markdown_table(
            [
                "functions",
                "changed",
                "jobs",
                "repo@1 s",
                "repo@2 fresh s",
                "repo@2 reusing s",
                "speed-up",
                "rankings identical",
                "load avg",
            ],
            [
                [
                    r["size"],
                    f"{r['change']:.0%}",
                    r["jobs"],
                    round(r["repo@1_fresh_s"], 2),
                    round(r["repo@2_fresh_s"], 2),
                    round(r["repo@2_reuse_s"], 2),
                    f"{r['speedup']:.1f}×",
                    "yes" if r["identical"] else "NO",
                    round(r["load_avg"], 1),
                ]
                for r in runs
            ],
        )
    )
    write_results("reuse", {"runs": runs}, args.out)


if __name__ == "__main__":
    main()
