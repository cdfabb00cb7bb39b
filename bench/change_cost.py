"""What structure_bm25's change-history prior costs a query: one snapshot of a git
revision (with its window), the questions of a history corpus ranked in it with the
shipped γ and with 0 (``params={"change_prior": 0}``: the window's change counts not
read), alternating which goes first question by question, on one connection, each
timed as the client sees it; ``--rounds`` passes over the questions, the first
``--warmup`` pairs not counted. Printed: the median of each side, the median of the
per-question ratios (with / without) and their geometric mean with its 95 % paired
bootstrap interval (:mod:`riido_pg.evaluation.significance`), and ``bm25`` on the
same snapshot for scale.

    python bench/change_cost.py --reuse DSN --snapshot ID --queries DIR/queries.jsonl
        [--questions 60] [--rounds 3] [--limit 10]
"""

from __future__ import annotations

import json
import math
import statistics
import time
from pathlib import Path

from common import base_parser, connect

from riido_pg import rank_snapshot
from riido_pg.evaluation.significance import paired_interval
from riido_pg.ranking.policies import BM25, STRUCTURE_BM25


def main() -> None:
    p = base_parser("the change-history prior's cost per query")
    p.add_argument("--reuse", required=True, help="a migrated database holding the snapshot")
    p.add_argument("--snapshot", required=True, help="a snapshot of a git revision")
    p.add_argument("--queries", type=Path, required=True, help="a corpus's queries.jsonl")
    p.add_argument("--questions", type=int, default=60)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--limit", type=int, default=10)
    args = p.parse_args()
    lines = args.queries.read_text().splitlines()[: args.questions]
    texts = [str(json.loads(line)["text"]) for line in lines]
    conn = connect(args.reuse)
    window = conn.execute(
        "SELECT count(*) FROM riido.window_commits WHERE snapshot_id = %s", (args.snapshot,)
    ).fetchone()
    print(f"{args.snapshot}: {window[0] if window else 0} window commits")
    sides = {"with": {}, "without": {"change_prior": 0.0}}
    times: dict[str, list[float]] = {"with": [], "without": [], "bm25": []}
    n = 0
    for _ in range(args.rounds):
        for text in texts:
            order = ("with", "without") if n % 2 == 0 else ("without", "with")
            for side in order:
                began = time.perf_counter()
                rank_snapshot(
                    conn,
                    args.snapshot,
                    text,
                    policy=STRUCTURE_BM25,
                    limit=args.limit,
                    params=sides[side],
                )
                if n >= args.warmup:
                    times[side].append(time.perf_counter() - began)
            began = time.perf_counter()
            rank_snapshot(conn, args.snapshot, text, policy=BM25, limit=args.limit)
            if n >= args.warmup:
                times["bm25"].append(time.perf_counter() - began)
            n += 1
    ratios = [a / b for a, b in zip(times["with"], times["without"], strict=True)]
    logs = [math.log(r) for r in ratios]
    i = paired_interval(logs, [0.0] * len(logs))
    ms = {k: 1000 * statistics.median(v) for k, v in times.items()}
    print(
        f"limit {args.limit}, {len(ratios)} pairs: median {ms['with']:.2f} ms with the prior, "
        f"{ms['without']:.2f} ms without (bm25 {ms['bm25']:.2f} ms); median paired ratio "
        f"{statistics.median(ratios):.3f}x, geometric mean {math.exp(i.mean):.3f}x "
        f"[{math.exp(i.low):.3f}, {math.exp(i.high):.3f}]"
    )


if __name__ == "__main__":
    main()
