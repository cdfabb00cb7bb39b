"""The learned source judged again, inside a ranking and with its cost
(bench/MODELS.md "The model inside a ranking"; docs/evaluation.md "A learned hint
source").

For each development corpus (cosqa-dev, the docproxy corpus, history corpora), with
one model:

1. The shipped ``Database.evaluate(..., model=MODEL)`` stores the corpus (a history
   corpus: every missing snapshot, from the repository), embeds every snapshot with
   the model — only the texts no vector exists for — and evaluates ``bm25``, the
   control ``identifier_bm25_baseline_first``, ``structure_bm25`` and
   ``model_hints_baseline_first``. Its ``cost`` gives the embedding seconds and
   counts (snapshots, documents, texts embedded).
2. For each question, the first M documents of ``structure_bm25``
   (``rank_snapshot(..., limit=M)``, with their structure scores) and the cosine of
   each with the question's embedding (the stored vectors) give two variants, the
   rest of the ranking unchanged below them:

   * ``structure+cos w``: the first M by ``structure / max structure + w * cos``;
   * ``rerank@m``: the first m by cosine alone (ties: structure's order).

   A question the model cannot embed keeps ``structure_bm25``'s ranking.
3. Per variant: Recall@1, Recall@10, MRR and a paired bootstrap interval
   (``riido_pg.evaluation.significance``) of the reciprocal-rank difference from the
   control and from ``structure_bm25``.

    python bench/model_in_ranking.py --model wordllama-256 --docproxy DIR \\
        --history dev/click-notests --history dev/httpx-notests --history dev/attrs-notests
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from common import OUT_DIR, base_parser, bench_database, connect, write_results
from corpus import COSQA_DIR

from riido_pg import Database, rank_snapshot
from riido_pg.embedding import EmptyEmbedding, embed_query, from_bytea
from riido_pg.evaluation.significance import paired_interval
from riido_pg.ranking.model_hints import model_named
from riido_pg.ranking.policies import (
    BM25,
    IDENTIFIER_BM25_BASELINE_FIRST,
    MODEL_HINTS_BASELINE_FIRST,
    STRUCTURE_BM25,
)

CONTROL = IDENTIFIER_BM25_BASELINE_FIRST
SHIPPED = (BM25, CONTROL, STRUCTURE_BM25, MODEL_HINTS_BASELINE_FIRST)
#: Structure's first M documents, the candidate set of both variants.
M = 100
WEIGHTS = (0.1, 0.2, 0.5, 1.0, 2.0, 4.0)
RERANK = (3, 5, 10, 20, 50, 100)


def questions_of(corpus: Path, snapshot_id: str | None) -> list[tuple[str, str, str, set[str]]]:
    """(question id, text, snapshot id, target ids) of a BEIR or history corpus."""
    if (corpus / "history.json").exists():
        from riido_pg.corpora.history.corpus import read_history_corpus

        hc = read_history_corpus(corpus)
        return [(q.id, q.text, q.snapshot_id, set(q.targets)) for q in hc.questions]
    assert snapshot_id is not None
    texts = {}
    for line in (corpus / "queries.jsonl").read_text().splitlines():
        if line.strip():
            obj = json.loads(line)
            texts[obj["_id"]] = obj["text"]
    targets: dict[str, set[str]] = {}
    for line in (corpus / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        qid, did, score = line.split("\t")
        if int(score) > 0:
            targets.setdefault(qid, set()).add(did)
    return [(q, texts[q], snapshot_id, t) for q, t in targets.items() if q in texts]


def snapshot_vectors(conn: Any, snapshot_id: str, model: str, dim: int) -> dict[str, np.ndarray]:
    rows = conn.execute(
        "SELECT d.doc_id, v.vec FROM riido.snapshots AS s "
        "JOIN riido.snapshot_segments AS p ON p.snapshot_id = s.snapshot_id "
        "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
        "LEFT JOIN unnest(s.removed) AS r(o) ON r.o = d.doc_ord "
        "JOIN riido.text_vectors AS v ON v.text_key = d.text_key AND v.model = %s "
        "WHERE s.snapshot_id = %s AND r.o IS NULL",
        (model, snapshot_id),
        binary=True,
    ).fetchall()
    return {r[0]: from_bytea(bytes(r[1]), dim) for r in rows}


def first_rank(order: Sequence[str], targets: set[str], below: int) -> int:
    """The rank of the first target in ``order`` (the reordered first M), else
    ``below`` (structure's own rank, which is past M)."""
    for i, doc in enumerate(order):
        if doc in targets:
            return i + 1
    return below


def measures(ranks: Sequence[int]) -> dict[str, float]:
    r = np.asarray(ranks, dtype=np.float64)
    return {
        "recall@1": float((r <= 1).mean()),
        "recall@10": float((r <= 10).mean()),
        "mrr": float((1 / r).mean()),
    }


def judge(ranks: Sequence[int], against: Sequence[int]) -> dict[str, float | str]:
    iv = paired_interval([1 / r for r in ranks], [1 / r for r in against])
    verdict = "better" if iv.low > 0 else "worse" if iv.high < 0 else "no significant difference"
    return {"mean": iv.mean, "low": iv.low, "high": iv.high, "verdict": verdict}


def run_corpus(conn: Any, corpus: Path, model_name: str) -> dict[str, Any]:
    model = model_named(model_name)
    notes: list[str] = []
    began = time.perf_counter()
    done = Database(conn).evaluate(
        corpus, policies=list(SHIPPED), model=model_name, note=notes.append
    )
    eval_seconds = time.perf_counter() - began
    data = done.evaluation.to_dict()
    per_q = {r.question_id: r.ranks for r in done.evaluation.results}
    qs = questions_of(corpus, done.snapshot_id)
    variants: dict[str, list[int]] = {p: [] for p in SHIPPED}
    for w in WEIGHTS:
        variants[f"structure+cos {w:g}"] = []
    for m in RERANK:
        variants[f"rerank@{m}"] = []
    vectors: dict[str, np.ndarray] = {}
    current = None
    began = time.perf_counter()
    for qid, text, sid, targets in sorted(qs, key=lambda q: (q[2], q[0])):
        if sid != current:
            vectors, current = snapshot_vectors(conn, sid, model.name, model.dim), sid
        ranks = per_q[qid]
        for p in SHIPPED:
            variants[p].append(ranks[p])
        structure_rank = ranks[STRUCTURE_BM25]
        top = rank_snapshot(conn, sid, text, policy=STRUCTURE_BM25, limit=M).candidates
        ids = [c.id for c in top]
        assert first_rank(ids, targets, structure_rank) == structure_rank, qid
        try:
            q = embed_query(model, text)
        except EmptyEmbedding:
            q = None
        if q is None:
            for name in variants:
                if name not in SHIPPED:
                    variants[name].append(structure_rank)
            continue
        cos = np.array([float(vectors[i] @ q) for i in ids])
        s = np.array([c.score or 0.0 for c in top])
        s_norm = s / s.max() if s.max() > 0 else s
        place = np.arange(len(ids))
        for w in WEIGHTS:
            order = np.lexsort((place, -(s_norm + w * cos)))
            variants[f"structure+cos {w:g}"].append(
                first_rank([ids[k] for k in order], targets, structure_rank)
            )
        for m in RERANK:
            head = np.lexsort((place[:m], -cos[:m]))
            reordered = [ids[k] for k in head] + ids[m:]
            variants[f"rerank@{m}"].append(first_rank(reordered, targets, structure_rank))
    variant_seconds = time.perf_counter() - began
    table = {
        name: {
            **measures(ranks),
            "vs_control": judge(ranks, variants[CONTROL]),
            "vs_structure": judge(ranks, variants[STRUCTURE_BM25]),
        }
        for name, ranks in variants.items()
    }
    for p in SHIPPED:  # the shipped evaluation's own figures agree with the ranks read here
        assert abs(table[p]["mrr"] - data["policies"][p]["mrr"]) < 1e-6, p
    return {
        "questions": len(qs),
        "eval_seconds": eval_seconds,
        "variant_seconds": variant_seconds,
        "cost": data["cost"][MODEL_HINTS_BASELINE_FIRST],
        "embedded_lines": notes,
        "variants": table,
    }


def embedded_rows(lines: Sequence[str]) -> list[tuple[int, float]]:
    """(texts embedded, seconds) of each snapshot, from the ``embedded …`` lines of a
    history evaluation."""
    import re

    got = [
        re.fullmatch(r"embedded \S+: ([\d,]+) new texts? for [\d,]+ documents? in ([\d.]+) s", x)
        for x in lines
    ]
    return [(int(m[1].replace(",", "")), float(m[2])) for m in got if m]


def _per_commit(lines: Sequence[str]) -> tuple[int, float, float] | None:
    """(snapshots embedded now, median texts per snapshot after the first, median
    seconds after the first) from the ``embedded …`` lines of a history evaluation."""
    rows = embedded_rows(lines)
    if len(rows) < 2:
        return None
    later = rows[1:]
    return (
        len(rows),
        float(np.median([t for t, _ in later])),
        float(np.median([s for _, s in later])),
    )


def _row_order(variant: str) -> tuple[int, float]:
    """The shipped policies first (as :data:`SHIPPED`), then each variant by its number."""
    if variant in SHIPPED:
        return SHIPPED.index(variant), 0.0
    kind, _, number = variant.replace("@", " ").rpartition(" ")
    return (len(SHIPPED) if kind.startswith("structure") else len(SHIPPED) + 1), float(number)


def markdown(paths: Sequence[Path]) -> str:
    """The tables of bench/MODELS.md from result files of this script."""
    out = []
    for path in paths:
        data = json.loads(path.read_text())
        out.append(f"\n**{data['model']}** (commit {data.get('commit', '?')}, {data['when']})\n")
        out.append(
            "| corpus | snapshots | documents | texts embedded | embedding s "
            "| per later commit: texts, s |"
        )
        out.append("|---|---:|---:|---:|---:|---|")
        for name, c in data["corpora"].items():
            cost = c["cost"]
            per = _per_commit(c["embedded_lines"])
            out.append(
                f"| {name} | {cost['embedded_snapshots']:.0f} | {cost['embedded_documents']:,.0f} "
                f"| {cost['embedded_texts']:,.0f} | {cost['load_seconds']:.1f} | "
                + (f"{per[1]:g} texts, {per[2]:.2f} s (median of {per[0] - 1})" if per else "–")
                + " |"
            )
        out.append("")
        out.append(
            "| corpus | ranking | R@1 | R@10 | MRR | MRR − control [95 %] "
            "| MRR − structure_bm25 [95 %] |"
        )
        out.append("|---|---|---:|---:|---:|---|---|")
        for name, c in data["corpora"].items():
            for v, m in sorted(c["variants"].items(), key=lambda kv: _row_order(kv[0])):
                if v in (BM25,):
                    continue
                cells = []
                for key in ("vs_control", "vs_structure"):
                    j = m[key]
                    mark = {"better": " **better**", "worse": " worse"}.get(j["verdict"], "")
                    cells.append(f"{j['mean']:+.4f} [{j['low']:+.4f}, {j['high']:+.4f}]{mark}")
                out.append(
                    f"| {name} | {v} | {m['recall@1']:.4f} | {m['recall@10']:.4f} | {m['mrr']:.4f} "
                    f"| {cells[0]} | {cells[1]} |"
                )
    return "\n".join(out)


def _commit() -> str:
    import subprocess

    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--model", default="wordllama-256")
    p.add_argument("--cosqa", type=Path, default=COSQA_DIR)
    p.add_argument("--no-cosqa", action="store_true", help="leave cosqa-dev out")
    p.add_argument("--docproxy", type=Path, default=None)
    p.add_argument("--history", type=Path, action="append", default=[])
    p.add_argument("--database", default=None, help="an existing database's DSN (snapshots reused)")
    p.add_argument("--table", type=Path, nargs="*", help="print the tables of these results")
    args = p.parse_args()
    if args.table:
        print(markdown(args.table))
        return
    corpora = {} if args.no_cosqa else {"cosqa-dev": args.cosqa}
    if args.docproxy is not None:
        corpora["docproxy"] = args.docproxy
    for h in args.history:
        corpora[h.name] = h
    out: dict[str, Any] = {"model": args.model, "commit": _commit(), "m": M, "corpora": {}}

    def run_all(dsn: str) -> None:
        conn = connect(dsn)
        try:
            for name, path in corpora.items():
                print(f"{name} …", flush=True)
                out["corpora"][name] = got = run_corpus(conn, path, args.model)
                print(
                    f"{name}: {got['questions']} questions, eval {got['eval_seconds']:.1f} s, "
                    f"cost {json.dumps(got['cost'])}",
                    flush=True,
                )
                for v, m in got["variants"].items():
                    c, s = m["vs_control"], m["vs_structure"]
                    print(
                        f"  {v:32} R@1 {m['recall@1']:.4f} R@10 {m['recall@10']:.4f} "
                        f"MRR {m['mrr']:.4f}  vs control {c['mean']:+.4f} "
                        f"[{c['low']:+.4f}, {c['high']:+.4f}]  vs structure {s['mean']:+.4f} "
                        f"[{s['low']:+.4f}, {s['high']:+.4f}]",
                        flush=True,
                    )
        finally:
            conn.close()

    if args.database:
        run_all(args.database)
    else:
        with bench_database(args.dsn, "model_rank", keep=args.keep) as dsn:
            run_all(dsn)
    path = write_results(
        f"model_in_ranking_{args.model}",
        out,
        args.out or OUT_DIR / f"model_in_ranking_{args.model}.json",
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
