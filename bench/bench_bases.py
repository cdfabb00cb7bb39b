"""Snapshots on a base: what the next commit, and a chain of commits, cost to load and
to store, and what a snapshot on a base costs to query (docs/how-it-works.md
"Snapshots on a base").

A repository snapshotted per commit: ``repo@0`` is ``--size`` CoSQA functions with
every text distinct (``cosqa-distinct``); each next commit changes ``--change`` of the
previous one's functions (a third edited, a third removed, a third added), the rest
identical. In one database:

1. **the next commit**: ``repo@0`` loaded cold, then ``repo@1`` (the load picks
   ``repo@0`` as its base): wall time and database growth of each, and their ratios;
2. **a chain**: ``repo@2`` … ``repo@<chain>`` loaded one after the other: per commit,
   wall time, growth, and whether it was stored on a base or fresh (the bounds make a
   long chain write a fresh base now and then); totals against the cold load;
3. **queries**: p50/p95 of ``--queries`` CoSQA questions (top 10, every policy but the
   model's) on ``repo@1`` (a 1 % difference) and on the chain's snapshot with the
   largest difference the bounds allowed, each against a fresh, self-contained load of
   the same documents (``--fresh``), alternating, in one run; the rankings must be
   identical.

``--big 1000000`` repeats 1. and 3. at that size (a base, a 1 % next commit, a commit
changing just under the bound, and fresh copies of both), without the chain.

    python bench/bench_bases.py                          # 100,000 functions, chain of 100
    python bench/bench_bases.py --quick
    python bench/bench_bases.py --chain 0 --big 1000000  # the million, no chain
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from common import base_parser, bench_database, connect, markdown_table, write_results

from riido_pg import Document

POLICIES = (
    "bm25",
    "identifier_bm25",
    "identifier_bm25_baseline_first",
    "identifier_bm25_fused",
    "identifier_bm25_rrf",
)


class History:
    """Commits of one synthetic repository: each changes a fraction of the last."""

    def __init__(self, size: int, seed: int = 0) -> None:
        self.docs = corpus.cosqa_distinct_documents(size)
        self.rng = random.Random(seed)
        self.spare = corpus.iter_cosqa_distinct(10 * size)  # texts for added functions
        for _ in range(size):  # skip the ones the first commit holds
            next(self.spare)
        self.added = 0

    def commit(self, change: float) -> list[Document]:
        n = max(3, round(len(self.docs) * change))
        picked = self.rng.sample(range(len(self.docs)), 2 * (n // 3))
        edited, removed = set(picked[0::2]), set(picked[1::2])
        out = []
        for i, d in enumerate(self.docs):
            if i in removed:
                continue
            text = d.text + f"\n    # edit {self.added + i}" if i in edited else d.text
            out.append(Document(d.id, text))
        for _ in range(n // 3):
            extra = next(self.spare)
            self.added += 1
            out.append(Document(f"new{self.added:07d}", extra.text))
        self.docs = out
        return out


def size_of(conn: Any) -> int:
    row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0])


def timed_load(
    conn: Any, snapshot_id: str, docs: list[Document], jobs: int, **kw: Any
) -> dict[str, Any]:
    from riido_pg.storage import load_snapshot

    conn.execute("CHECKPOINT")
    before = size_of(conn)
    t0 = time.perf_counter()
    result = load_snapshot(conn, snapshot_id, docs, jobs=jobs, **kw)
    seconds = time.perf_counter() - t0
    grown = size_of(conn) - before
    return {
        "snapshot": snapshot_id,
        "seconds": seconds,
        "grown_bytes": grown,
        "base": result.base,
        "added": result.added,
        "removed": result.removed,
        "documents": result.documents,
    }


def query_times(
    conn: Any, pairs: list[tuple[str, str]], queries: list[str], rounds: int
) -> dict[str, dict[str, float]]:
    """p50/p95 (ms) per snapshot of every (snapshot on a base, its fresh copy) pair,
    alternating, and a check that each pair ranks identically."""
    from riido_pg.ranking import rank_snapshot

    times: dict[str, list[float]] = {s: [] for pair in pairs for s in pair}
    for _ in range(rounds):
        for q in queries:
            for policy in POLICIES:
                for on_base, fresh in pairs:
                    got = {}
                    for snap in (on_base, fresh) if random.random() < 0.5 else (fresh, on_base):
                        t0 = time.perf_counter()
                        got[snap] = rank_snapshot(conn, snap, q, policy=policy, limit=10)
                        times[snap].append(time.perf_counter() - t0)
                    a, b = got[on_base], got[fresh]
                    assert [c.to_dict() for c in a.candidates] == [
                        c.to_dict() for c in b.candidates
                    ], (on_base, q, policy)
    out = {}
    for snap, ts in times.items():
        ts.sort()
        out[snap] = {
            "p50_ms": 1000 * statistics.median(ts),
            "p95_ms": 1000 * ts[int(0.95 * (len(ts) - 1))],
            "n": len(ts),
        }
    return out


def run_size(args: Any, size: int, chain: int) -> dict[str, Any]:
    history = History(size)
    queries = corpus.queries("cosqa", args.queries)
    out: dict[str, Any] = {"size": size}
    with bench_database(args.dsn, f"bases{size}", keep=args.keep) as dsn:
        conn = connect(dsn)
        cold = timed_load(conn, "repo@0", history.docs, args.jobs, fresh=True)
        nxt = timed_load(conn, "repo@1", history.commit(args.change), args.jobs)
        out["cold"], out["next"] = cold, nxt
        print(
            f"{size}: cold {cold['seconds']:.2f} s +{cold['grown_bytes'] / 2**20:.1f} MiB; "
            f"next commit {nxt['seconds']:.2f} s +{nxt['grown_bytes'] / 2**20:.1f} MiB "
            f"(on {nxt['base']}, +{nxt['added']} -{nxt['removed']})",
            file=sys.stderr,
        )
        pairs_docs = {"repo@1": list(history.docs)}
        commits = []
        widest = ("repo@1", nxt["removed"] / max(1, nxt["documents"]))
        for k in range(2, chain + 1):
            docs = history.commit(args.change)
            row = timed_load(conn, f"repo@{k}", docs, args.jobs)
            commits.append(row)
            share = row["removed"] / max(1, row["documents"])
            if row["base"] is not None and share > widest[1]:
                widest = (row["snapshot"], share)
                pairs_docs[row["snapshot"]] = list(docs)
            print(
                f"  repo@{k}: {row['seconds']:.2f} s +{row['grown_bytes'] / 2**20:.2f} MiB "
                f"{'on ' + row['base'] if row['base'] else 'FRESH'} "
                f"(+{row['added']} -{row['removed']})",
                file=sys.stderr,
            )
        if args.big_change and not commits:  # no chain: one commit just under the bound
            wide = history.commit(args.big_change)  # on repo@1's documents
            row = timed_load(conn, "repo@wide", wide, args.jobs, base="repo@1")
            out["wide"] = row
            widest = ("repo@wide", row["removed"] / max(1, row["documents"]))
            pairs_docs["repo@wide"] = wide
        out["chain"] = commits
        if commits:
            total_s = cold["seconds"] + nxt["seconds"] + sum(r["seconds"] for r in commits)
            total_b = cold["grown_bytes"] + nxt["grown_bytes"]
            total_b += sum(r["grown_bytes"] for r in commits)
            out["chain_totals"] = {
                "commits": len(commits) + 2,
                "seconds": total_s,
                "bytes": total_b,
                "seconds_vs_cold": total_s / cold["seconds"],
                "bytes_vs_cold": total_b / cold["grown_bytes"],
                "fresh_bases": 1 + sum(1 for r in commits if r["base"] is None),
            }
        pairs = []
        for snap in ("repo@1", widest[0]):
            if snap in pairs_docs and (snap, snap + "-fresh") not in pairs:
                timed_load(conn, snap + "-fresh", pairs_docs[snap], args.jobs, fresh=True)
                pairs.append((snap, snap + "-fresh"))
        conn.execute("ANALYZE")
        out["widest"] = {"snapshot": widest[0], "removed_share": widest[1]}
        out["queries"] = query_times(conn, pairs, queries, args.rounds)
        conn.close()
    return out


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--change", type=float, default=0.01, help="fraction changed per commit")
    p.add_argument("--chain", type=int, default=100, help="commits in the chain (0: none)")
    p.add_argument("--big", type=int, default=0, help="also a run at this size, no chain")
    p.add_argument(
        "--big-change",
        type=float,
        default=0.36,
        help="the big run's wide commit: changed fraction (a third of it removed)",
    )
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    if args.quick:
        args.size, args.chain, args.queries, args.rounds = 5_000, 8, 10, 1
    runs = [run_size(args, args.size, args.chain)]
    if args.big:
        runs.append(run_size(args, args.big, 0))
    for r in runs:
        cold, nxt = r["cold"], r["next"]
        print(f"\n### {r['size']:,} functions: the next commit ({args.change:.0%} changed)\n")
        print(
            markdown_table(
                ["", "wall s", "database growth MiB", "vs cold"],
                [
                    [
                        "cold load (`--fresh`)",
                        round(cold["seconds"], 2),
                        round(cold["grown_bytes"] / 2**20, 1),
                        "1",
                    ],
                    [
                        f"next commit (on {nxt['base']})",
                        round(nxt["seconds"], 2),
                        round(nxt["grown_bytes"] / 2**20, 2),
                        f"{nxt['seconds'] / cold['seconds']:.3f}× time, "
                        f"{nxt['grown_bytes'] / cold['grown_bytes']:.3f}× growth",
                    ],
                ],
            )
        )
        if "chain_totals" in r:
            t = r["chain_totals"]
            print(
                f"\nchain of {t['commits']} commits: {t['seconds']:.1f} s "
                f"({t['seconds_vs_cold']:.2f}× one cold load), "
                f"{t['bytes'] / 2**20:.0f} MiB ({t['bytes_vs_cold']:.2f}× one snapshot), "
                f"{t['fresh_bases']} self-contained snapshots"
            )
        print("\nqueries (top 10, every policy but the model's), ms:\n")
        rows = []
        for snap, q in r["queries"].items():
            rows.append([snap, round(q["p50_ms"], 2), round(q["p95_ms"], 2), q["n"]])
        print(markdown_table(["snapshot", "p50", "p95", "queries"], rows))
        print(f"(widest difference: {r['widest']})")
    write_results("bases", {"runs": runs, "load_avg": os.getloadavg()}, args.out)


if __name__ == "__main__":
    main()
