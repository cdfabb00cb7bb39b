"""Choosing the constants of ``structure_bm25`` on the development corpora only, and
the table of docs/evaluation.md "Ranking with structure".

The development corpora are cosqa-dev, the docproxy corpus and history corpora of
repositories that are not evaluated anywhere else (``riido-pg corpus history REPO
--output DIR``; docs/evaluation.md names them and gives the commands). A history
corpus whose directory name ends in ``-notests`` was built with the test,
documentation and example paths excluded: structure is judged there and on the two
BEIR corpora (step 1); the test prior on the corpora built with tests (step 2).

Step 1 evaluates every (w_ident, w_name) of the grid with no test prior (1) and
keeps the pair with the highest MRR averaged over the structure corpora (ties: the
smaller weights). Step 2 keeps those weights and evaluates each test prior on the
corpora with tests; it keeps the largest prior within 0.001 of the highest mean MRR
there (history targets are never tests, so these corpora always reward a smaller one). Every
variant is a registered policy evaluated in the same run as ``bm25`` and the control
``identifier_bm25_baseline_first``, with the shipped ``Database.evaluate``.

    python bench/structure.py --history DIR [--history DIR]... [--docproxy DIR]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common import OUT_DIR, base_parser, bench_database, connect
from corpus import development_corpora

from riido_pg import Database
from riido_pg.ranking import Policy, register_policy
from riido_pg.ranking.combiners import Structure
from riido_pg.ranking.policies import (
    BM25,
    IDENTIFIER_BM25_BASELINE_FIRST,
    IDENTIFIER_BM25_FUSED,
    IDENTIFIER_BM25_RRF,
    STRUCTURE_BM25,
)

W_IDENT = (1.0, 2.0, 3.0, 4.0, 6.0)
W_NAME = (0.0, 1.0, 1.5, 2.0, 3.0, 4.0, 8.0)
PRIORS = (1.0, 0.5, 0.3, 0.2, 0.1, 0.05)
MEASURES = ("recall@1", "recall@10", "mrr")
SHIPPED = (BM25, IDENTIFIER_BM25_BASELINE_FIRST, IDENTIFIER_BM25_FUSED, IDENTIFIER_BM25_RRF)


def variant(w_ident: float, w_name: float, prior: float) -> str:
    """The registered name of one point of the grid (registered once)."""
    name = f"structure_i{w_ident:g}_n{w_name:g}_p{prior:g}"
    from riido_pg.ranking.policies import policies

    if name not in {p.name for p in policies()}:
        register_policy(Policy(name, Structure(w_ident, w_name, prior), name))
    return name


def evaluate(dsn: str, corpus: Path, names: list[str]) -> dict[str, Any]:
    conn = connect(dsn)
    try:
        result = Database(conn).evaluate(corpus, policies=[*SHIPPED, STRUCTURE_BM25, *names])
        return dict(result.evaluation.to_dict()["policies"])
    finally:
        conn.close()


def row(corpus: str, policy: str, m: dict[str, float], control: dict[str, float]) -> str:
    cells = " | ".join(f"{m[k]:.4f}" for k in MEASURES)
    delta = m["mrr"] - control["mrr"]
    return f"| {corpus} | `{policy}` | {cells} | {delta:+.4f} |"


def main() -> None:
    p = base_parser("choose structure_bm25's constants on the development corpora")
    p.add_argument("--docproxy", type=Path, default=None, help="a built docproxy BEIR dir")
    p.add_argument("--history", type=Path, action="append", default=[], help="history corpus")
    args = p.parse_args()
    corpora = {**development_corpora(args.docproxy), **{h.name: h for h in args.history}}
    with_tests = [
        c for c, path in corpora.items() if path in args.history and not c.endswith("-notests")
    ]
    structure = [c for c in corpora if c not in with_tests]
    grid = [variant(i, n, 1.0) for i in W_IDENT for n in W_NAME]
    results: dict[str, Any] = {}
    with bench_database(args.dsn, "structure", keep=args.keep) as dsn:
        for c in structure:
            results[c] = evaluate(dsn, corpora[c], grid)
            print(c, {g: round(results[c][g]["mrr"], 4) for g in grid}, flush=True)
        mean = {g: sum(results[c][g]["mrr"] for c in structure) / len(structure) for g in grid}
        best = max(grid, key=lambda g: (mean[g], -grid.index(g)))
        combiner = Structure(1, 1, 1)
        for name_ in (best,):
            from riido_pg.ranking.policies import get_policy

            chosen = get_policy(name_).combiner
            assert isinstance(chosen, Structure)
            combiner = chosen
        priors = [variant(combiner.w_ident, combiner.w_name, q) for q in PRIORS]
        for c in with_tests:
            results[c] = evaluate(dsn, corpora[c], priors)
            print(c, {q: round(results[c][q]["mrr"], 4) for q in priors}, flush=True)
    prior_mean = {
        q: sum(results[c][q]["mrr"] for c in with_tests) / max(1, len(with_tests)) for q in priors
    }
    # History targets are never test code, so these corpora always reward a smaller
    # prior; the largest prior within 0.001 of the best mean MRR is kept (a test that
    # matches much better than the code may still lead).
    top = max(prior_mean.values(), default=0.0)
    best_prior = next((q for q in priors if prior_mean[q] >= top - 0.001), priors[0])
    print("step 1, mean MRR over " + ", ".join(structure) + ":")
    for g in sorted(grid, key=lambda g: -mean[g]):
        print(f"  {g}: {mean[g]:.4f}")
    print(f"chosen: {best}")
    if with_tests:
        print("step 2, mean MRR over " + ", ".join(with_tests) + ":")
        for q in priors:
            print(f"  {q}: {prior_mean[q]:.4f}")
        print(f"chosen: {best_prior}")
    print("\n| corpus | policy | recall@1 | recall@10 | MRR | MRR vs control |")
    print("|---|---|---:|---:|---:|---:|")
    for c in corpora:
        control = results[c][IDENTIFIER_BM25_BASELINE_FIRST]
        for policy in (*SHIPPED, STRUCTURE_BM25):
            print(row(c, policy, results[c][policy], control))
    out = args.out or OUT_DIR / "structure.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "results": results,
                "step1": mean,
                "best": best,
                "step2": prior_mean,
                "best_prior": best_prior,
            },
            indent=2,
            sort_keys=True,
        )
    )


if __name__ == "__main__":
    main()
