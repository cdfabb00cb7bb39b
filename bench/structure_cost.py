"""What structure_bm25's length prior costs a query: the same questions ranked with the
shipped exponent and with 0 (``params={"length_prior": 0}``: no lengths read), one
after the other in alternating order on one connection, each timed as the client sees
it. The snapshot is one a corpus directory already stored (``--reuse`` a database
that holds it; nothing is loaded or dropped); its stored questions are the queries.
The first ``--warmup`` pairs are not counted. Printed: the p50 of each side and the
geometric mean of the per-question ratios (with / without) with its 95 % paired
bootstrap interval (:mod:`riido_pg.evaluation.significance`), for the first 10 and for
the full ranking.

    python bench/structure_cost.py --reuse DSN --snapshot docproxy [--questions 150]
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import base_parser, connect

from riido_pg import rank_snapshot
from riido_pg.evaluation.significance import paired_interval
from riido_pg.ranking.policies import STRUCTURE_BM25


def main() -> None:
    p = base_parser("the length prior's cost per query")
    p.add_argument("--reuse", required=True, help="a migrated database holding the snapshot")
    p.add_argument("--snapshot", required=True, help="a stored snapshot with questions")
    p.add_argument("--questions", type=int, default=150)
    p.add_argument("--warmup", type=int, default=10)
    args = p.parse_args()
    conn = connect(args.reuse)
    texts = [
        str(t)
        for (t,) in conn.execute(
            "SELECT q.text FROM riido.questions AS q WHERE q.snapshot_id = %s "
            "ORDER BY q.question_id LIMIT %s",
            (args.snapshot, args.questions + args.warmup),
        ).fetchall()
    ]
    for limit in (10, None):
        times: dict[str, list[float]] = {"with": [], "without": []}
        for n, text in enumerate(texts):
            order = ("with", "without") if n % 2 == 0 else ("without", "with")
            for side in order:
                params = {} if side == "with" else {"length_prior": 0.0}
                began = time.perf_counter()
                rank_snapshot(
                    conn, args.snapshot, text, policy=STRUCTURE_BM25, limit=limit, params=params
                )
                if n >= args.warmup:
                    times[side].append(time.perf_counter() - began)
        logs = [math.log(a / b) for a, b in zip(times["with"], times["without"], strict=True)]
        i = paired_interval(logs, [0.0] * len(logs))
        print(
            f"limit {limit}: p50 with {1000 * statistics.median(times['with']):.1f} ms, "
            f"without {1000 * statistics.median(times['without']):.1f} ms; "
            f"ratio {math.exp(i.mean):.2f} [{math.exp(i.low):.2f}, {math.exp(i.high):.2f}] "
            f"({len(logs)} questions)",
            flush=True,
        )
    conn.close()


if __name__ == "__main__":
    main()
