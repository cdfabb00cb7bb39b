"""Step 5 of choosing ``structure_bm25``'s constants: the recency prior's factor, on
the development histories only, and its effect on check corpora that choose nothing
(docs/evaluation.md "The recency prior").

The snapshots must be loaded by this version (``riido.snapshots.recent`` is filled
by a load of a git revision; a snapshot loaded before is used as it is, with no
recent document). Every other constant is the shipped one. Each factor of
:data:`FACTORS` is evaluated on every ``--history`` corpus; the script keeps, among
the factors that lower no corpus's MRR significantly (the 95 % paired interval of
the difference from factor 1 lies below 0 on none), the one with the highest MRR
averaged over the ``-notests`` corpora (ties: the smaller). ``--check DIR`` corpora
are evaluated after the choice: the control, ``structure_bm25`` without the prior
(factor 1) and as shipped, with the intervals of the differences.

    python bench/recency.py --history DIR [--history DIR]... [--check DIR]...
        [--reuse DSN]   # evaluate in an existing migrated database (loads once)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common import OUT_DIR, base_parser
from structure import (
    CONTROL,
    database,
    evaluate,
    mean_difference,
    measured,
    registered,
    significantly_lower,
    versus_control,
)

from riido_pg.ranking.policies import STRUCTURE_BM25, get_policy

FACTORS = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)


def shipped_with(recent: float) -> str:
    """``structure_bm25``'s shipped constants with this recency factor, registered."""
    name = f"structure_bm25_r{recent:g}"
    return registered(
        name, lambda: get_policy(STRUCTURE_BM25).combiner.configured({"recent_prior": recent})
    )


def main() -> None:
    p = base_parser("choose structure_bm25's recency prior on development histories")
    p.add_argument("--history", type=Path, action="append", default=[], help="history corpus")
    p.add_argument("--reuse", default=None, help="an existing migrated database's DSN")
    p.add_argument("--check", type=Path, action="append", default=[], help="a check corpus")
    args = p.parse_args()
    corpora = {h.name: h for h in args.history}
    structure = [c for c in corpora if c.endswith("-notests")] or list(corpora)
    grid = [shipped_with(f) for f in FACTORS]
    none = grid[0]
    results: dict[str, Any] = {}
    with database(args.dsn, args.reuse, args.keep) as dsn:
        for c, path in corpora.items():
            results[c] = evaluate(dsn, path, grid)
            print(c, {g: round(results[c][g]["mrr"], 4) for g in grid}, flush=True)
        checks = {h.name: evaluate(dsn, h, [none]) for h in args.check}
    mean = {g: sum(results[c][g]["mrr"] for c in structure) / len(structure) for g in grid}

    def lowers(g: str) -> bool:
        return any(significantly_lower(results[c][g], results[c][none]) for c in corpora)

    safe = [g for g in grid if not lowers(g)]
    best = max(safe, key=lambda g: (mean[g], -grid.index(g)))
    print("step 5, recency prior (the rest kept), mean MRR over " + ", ".join(structure) + ":")
    for g in grid:
        low = [c for c in corpora if significantly_lower(results[c][g], results[c][none])]
        over = mean_difference([(results[c][g], results[c][none]) for c in structure])
        print(f"  {g}: mean {mean[g]:.4f}, difference {over}", " ".join(f"{c}*" for c in low))
    print(f"chosen: {best}")
    table = {**{c: results[c] for c in corpora}, **checks}
    print(
        "\n| corpus | control: R@1 / R@10 / MRR | without: R@1 / R@10 / MRR "
        "| shipped: R@1 / R@10 / MRR | shipped − without [95 %] | shipped − control [95 %] |"
    )
    print("|---|---|---|---|---|---|")
    for c, r in table.items():
        without, ship, control = r[none], r[STRUCTURE_BM25], r[CONTROL]
        label = c if c in corpora else f"{c} (check)"
        print(
            f"| {label} | {measured(control)} | {measured(without)} | {measured(ship)} "
            f"| {versus_control(ship, without)} | {versus_control(ship, control)} |"
        )
    out = args.out or OUT_DIR / "recency.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps({"results": results, "step5": mean, "best": best, "checks": checks}, indent=2)
    )


if __name__ == "__main__":
    main()
