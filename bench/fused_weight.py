"""Choosing w of ``identifier_bm25_fused`` (bm25 + w * identifier_bm25) on the
development corpora: cosqa-dev and the docproxy corpus, ``english``.

For each corpus the BEIR directory is stored once (``store_corpus``) and evaluated
with ``bm25``, ``identifier_bm25_baseline_first`` (the control) and the fused policy
at every w of the sweep, with the shipped ``evaluate``. The chosen w is the one with
the highest MRR averaged over the two corpora (ties: the smaller w); the README's
table "Choosing the fused weight" comes from this script.

    python bench/fused_weight.py                     # both corpora (builds docproxy)
    python bench/fused_weight.py --docproxy DIR      # an already built docproxy
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common import OUT_DIR, base_parser, bench_database, connect
from corpus import development_corpora

from riido_pg.evaluation import evaluate, store_corpus
from riido_pg.ranking.policies import (
    BM25,
    IDENTIFIER_BM25_BASELINE_FIRST,
    IDENTIFIER_BM25_FUSED,
)

WEIGHTS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
MEASURES = ("recall@1", "recall@10", "mrr", "mean_first_target_rank")


def sweep(dsn: str, corpus: Path, weights: tuple[float, ...]) -> dict[str, Any]:
    conn = connect(dsn)
    stored = store_corpus(conn, corpus)
    base = evaluate(conn, stored.snapshot_id, policies=[BM25, IDENTIFIER_BM25_BASELINE_FIRST])
    out: dict[str, Any] = {"baseline": base.to_dict()["policies"], "fused": {}}
    for w in weights:
        result = evaluate(
            conn, stored.snapshot_id, policies=[IDENTIFIER_BM25_FUSED], fused_weight=w
        )
        out["fused"][str(w)] = result.to_dict()["policies"][IDENTIFIER_BM25_FUSED]
    conn.close()
    return out


def main() -> None:
    p = base_parser("sweep the fused weight on the development corpora")
    p.add_argument("--docproxy", type=Path, default=None, help="a built docproxy BEIR dir")
    args = p.parse_args()
    weights = (0.5, 1.0, 2.0) if args.quick else WEIGHTS
    corpora = development_corpora(args.docproxy)
    results: dict[str, Any] = {}
    with bench_database(args.dsn, "fused", keep=args.keep) as dsn:
        for name, path in corpora.items():
            results[name] = sweep(dsn, path, weights)
    mean_mrr = {
        str(w): sum(results[c]["fused"][str(w)]["mrr"] for c in corpora) / len(corpora)
        for w in weights
    }
    best = max(weights, key=lambda w: (mean_mrr[str(w)], -w))
    print("| corpus | policy | w | recall@1 | recall@10 | MRR | mean first-target rank |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for c in corpora:
        for policy in (BM25, IDENTIFIER_BM25_BASELINE_FIRST):
            m = results[c]["baseline"][policy]
            print(f"| {c} | `{policy}` | – | " + " | ".join(f"{m[k]:.4f}" for k in MEASURES) + " |")
        for w in weights:
            m = results[c]["fused"][str(w)]
            print(f"| {c} | fused | {w:g} | " + " | ".join(f"{m[k]:.4f}" for k in MEASURES) + " |")
    print(
        "\nmean MRR over the corpora: "
        + ", ".join(f"w={w:g}: {mean_mrr[str(w)]:.4f}" for w in weights)
    )
    print(f"chosen w (highest mean MRR): {best:g}")
    out = args.out or OUT_DIR / "fused_weight.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"results": results, "mean_mrr": mean_mrr, "best": best}, indent=2))


if __name__ == "__main__":
    main()
