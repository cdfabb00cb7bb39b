"""Choosing k of ``identifier_bm25_rrf`` (reciprocal rank fusion of bm25 and
identifier_bm25) on the development corpora: cosqa-dev and the docproxy corpus,
``english``.

Each k of the sweep is registered as a policy of its own (``register_policy`` with
the same combiner and another k), and every corpus is stored once and evaluated with
``bm25``, the control ``identifier_bm25_baseline_first`` and the sweep's policies by
the shipped ``evaluate``. The shipped k (``RRF_K``) was taken from this sweep (the
customary 60 would have stayed unless another k had a clearly higher MRR averaged over
the two corpora); docs/evaluation.md's table "Choosing the fused weight" (RRF's k)
comes from this script.

    python bench/rrf_k.py                     # both corpora (builds docproxy)
    python bench/rrf_k.py --docproxy DIR      # an already built docproxy
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common import OUT_DIR, base_parser, bench_database, connect
from corpus import development_corpora

from riido_pg.evaluation import evaluate, store_corpus
from riido_pg.ranking import Policy, register_policy
from riido_pg.ranking.policies import BM25, IDENTIFIER_BM25_BASELINE_FIRST
from riido_pg.ranking.policy.rrf import ReciprocalRank

KS = (0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 60.0, 100.0, 200.0)
MEASURES = ("recall@1", "recall@10", "mrr", "mean_first_target_rank")


def _name(k: float) -> str:
    return f"identifier_bm25_rrf_k{k:g}"


def sweep(dsn: str, corpus: Path, ks: tuple[float, ...]) -> dict[str, Any]:
    conn = connect(dsn)
    stored = store_corpus(conn, corpus)
    result = evaluate(
        conn,
        stored.snapshot_id,
        policies=[BM25, IDENTIFIER_BM25_BASELINE_FIRST, *(_name(k) for k in ks)],
    )
    conn.close()
    return result.to_dict()["policies"]  # type: ignore[no-any-return]


def main() -> None:
    p = base_parser("sweep RRF's k on the development corpora")
    p.add_argument("--docproxy", type=Path, default=None, help="a built docproxy BEIR dir")
    args = p.parse_args()
    ks = (10.0, 60.0) if args.quick else KS
    for k in ks:
        register_policy(Policy(_name(k), ReciprocalRank(k), f"rrf with k = {k:g}"))
    corpora = development_corpora(args.docproxy)
    results: dict[str, Any] = {}
    with bench_database(args.dsn, "rrf", keep=args.keep) as dsn:
        for name, path in corpora.items():
            results[name] = sweep(dsn, path, ks)
    mean_mrr = {
        str(k): sum(results[c][_name(k)]["mrr"] for c in corpora) / len(corpora) for k in ks
    }
    print(
        "| k | "
        + " | ".join(f"{c} R@1 | R@10 | MRR | mean rank" for c in corpora)
        + " | mean MRR |"
    )
    print("|---:|" + "---:|" * (4 * len(corpora) + 1))
    for k in ks:
        cells = [
            f"{results[c][_name(k)][m]:.4f}"
            if m != "mean_first_target_rank"
            else f"{results[c][_name(k)][m]:.2f}"
            for c in corpora
            for m in MEASURES
        ]
        print(f"| {k:g} | " + " | ".join(cells) + f" | {mean_mrr[str(k)]:.4f} |")
    for c in corpora:
        for policy in (BM25, IDENTIFIER_BM25_BASELINE_FIRST):
            m = results[c][policy]
            print(f"{c} {policy}: " + " / ".join(f"{m[x]:.4f}" for x in MEASURES))
    best = max(ks, key=lambda k: (mean_mrr[str(k)], k == 60.0))
    print(f"highest mean MRR: k = {best:g}")
    out = args.out or OUT_DIR / "rrf_k.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"results": results, "mean_mrr": mean_mrr, "best": best}, indent=2))


if __name__ == "__main__":
    main()
