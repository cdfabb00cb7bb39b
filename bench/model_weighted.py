"""The registered ``model_structure_weighted`` judged with its cost (bench/MODELS.md
"The weighted cosine, registered"; docs/evaluation.md "The learned source judged
again, with its cost").

For each corpus (a BEIR directory or a history corpus), with one model, the shipped
``Database.evaluate(..., model=MODEL)`` stores the corpus (a history: every missing
snapshot, from the repository), embeds what has no vector yet (vectors are keyed by
content, so a later commit embeds only its changed functions) and evaluates ``bm25``,
the control ``identifier_bm25_baseline_first``, ``structure_bm25``,
``model_hints_baseline_first`` and ``model_structure_weighted``. Per policy: Recall@1,
Recall@10, MRR, the evaluation's cost (milliseconds per question, the query embedding
included for the model policies; the embedding's seconds and texts), and the 95 %
paired bootstrap interval (``riido_pg.evaluation.significance``) of its reciprocal-rank
difference from the control and from ``structure_bm25``. Then, per corpus, the
latency of ``rank_snapshot(..., limit=10)`` for ``structure_bm25`` and the weighted
policy on up to 40 of its questions, the two alternated question by question.

    python bench/model_weighted.py --model wordllama-256 --corpus cosqa-dev=DIR \\
        --corpus docproxy=DIR --corpus click-notests=DIR ...
    python bench/model_weighted.py --table bench/out/model_weighted_*.json [--summary]
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from common import OUT_DIR, base_parser, bench_database, connect, write_results
from model_in_ranking import _commit, embedded_rows, judge

from riido_pg import Database, rank_snapshot
from riido_pg.ranking.policies import (
    BM25,
    IDENTIFIER_BM25_BASELINE_FIRST,
    MODEL_HINTS_BASELINE_FIRST,
    MODEL_STRUCTURE_WEIGHTED,
    STRUCTURE_BM25,
)

CONTROL = IDENTIFIER_BM25_BASELINE_FIRST
POLICIES = (BM25, CONTROL, STRUCTURE_BM25, MODEL_HINTS_BASELINE_FIRST, MODEL_STRUCTURE_WEIGHTED)
LATENCY_QUESTIONS = 40
#: The tables' order of corpora: the development corpora, then the check corpora.
ORDER = (
    "cosqa-dev",
    "docproxy",
    "click-notests",
    "httpx-notests",
    "attrs-notests",
    "cobra-notests",
    "got-notests",
    "reqwest-notests",
)


def ordered(corpora: dict[str, Any]) -> list[tuple[str, Any]]:
    """The corpora in :data:`ORDER`, any other after them by name."""
    rank = {name: k for k, name in enumerate(ORDER)}
    return sorted(corpora.items(), key=lambda kv: (rank.get(kv[0], len(ORDER)), kv[0]))


def per_commit(lines: Sequence[str]) -> dict[str, float] | None:
    """From the ``embedded …`` lines of a history evaluation: the snapshots embedded
    now, and the median texts and seconds of a snapshot after the first."""
    rows = embedded_rows(lines)
    if len(rows) < 2:
        return None
    later = rows[1:]
    return {
        "snapshots": float(len(rows)),
        "first_texts": float(rows[0][0]),
        "first_seconds": rows[0][1],
        "median_texts": float(np.median([t for t, _ in later])),
        "median_seconds": float(np.median([s for _, s in later])),
        "mean_texts": float(np.mean([t for t, _ in later])),
    }


def questions_of(corpus: Path, snapshot_id: str | None) -> list[tuple[str, str]]:
    """(snapshot id, text) of the corpus's questions, in file order."""
    if (corpus / "history.json").exists():
        from riido_pg.corpora.history.corpus import read_history_corpus

        return [(q.snapshot_id, q.text) for q in read_history_corpus(corpus).questions]
    assert snapshot_id is not None
    out = []
    for line in (corpus / "queries.jsonl").read_text().splitlines():
        if line.strip():
            out.append((snapshot_id, json.loads(line)["text"]))
    return out


def latency(conn: Any, questions: Sequence[tuple[str, str]], model: str) -> dict[str, Any]:
    """Per question, structure_bm25 and then the weighted policy (limit 10), the order
    alternated from one question to the next; the medians and their ratio."""
    times: dict[str, list[float]] = {STRUCTURE_BM25: [], MODEL_STRUCTURE_WEIGHTED: []}
    for k, (sid, text) in enumerate(questions[:LATENCY_QUESTIONS]):
        order = [STRUCTURE_BM25, MODEL_STRUCTURE_WEIGHTED]
        for policy in order if k % 2 == 0 else order[::-1]:
            m = model if policy == MODEL_STRUCTURE_WEIGHTED else None
            began = time.perf_counter()
            rank_snapshot(conn, sid, text, policy=policy, model=m, limit=10)
            times[policy].append(time.perf_counter() - began)
    med = {p: float(np.median(v)) * 1000 for p, v in times.items()}
    ratios = [
        w / s for w, s in zip(times[MODEL_STRUCTURE_WEIGHTED], times[STRUCTURE_BM25], strict=True)
    ]
    return {
        "questions": len(ratios),
        "p50_ms": med,
        "median_ratio": float(np.median(ratios)),
    }


def run_corpus(conn: Any, corpus: Path, model: str) -> dict[str, Any]:
    notes: list[str] = []
    began = time.perf_counter()
    done = Database(conn).evaluate(corpus, policies=list(POLICIES), model=model, note=notes.append)
    seconds = time.perf_counter() - began
    data = done.evaluation.to_dict()
    ranks = {p: [r.ranks[p] for r in done.evaluation.results] for p in POLICIES}
    table = {
        p: {
            **{m: data["policies"][p][m] for m in ("recall@1", "recall@10", "mrr")},
            "vs_control": judge(ranks[p], ranks[CONTROL]),
            "vs_structure": judge(ranks[p], ranks[STRUCTURE_BM25]),
            "ms_per_question": data["cost"][p]["ms_per_question"],
        }
        for p in POLICIES
    }
    return {
        "questions": len(done.evaluation.results),
        "eval_seconds": seconds,
        "cost": data["cost"][MODEL_STRUCTURE_WEIGHTED],
        "per_commit": per_commit(notes),
        "verdicts": data.get("verdicts", {}),
        "policies": table,
        "latency": latency(conn, questions_of(corpus, done.snapshot_id), model),
    }


def _cell(j: dict[str, Any]) -> str:
    mark = {"better": " **better**", "worse": " worse"}.get(j["verdict"], "")
    return f"{j['mean']:+.4f} [{j['low']:+.4f}, {j['high']:+.4f}]{mark}"


def markdown(paths: Sequence[Path]) -> str:
    out = []
    for path in paths:
        data = json.loads(path.read_text())
        out.append(f"\n**{data['model']}** (commit {data['commit']}, {data['when']})\n")
        out.append(
            "| corpus | questions | snapshots | documents ranked | texts embedded | embedding s "
            "| a later commit (median texts, s) | query p50 ms: structure / weighted (ratio) |"
        )
        out.append("|---|---:|---:|---:|---:|---:|---|---|")
        for name, c in ordered(data["corpora"]):
            cost, per, lat = c["cost"], c["per_commit"], c["latency"]
            p50 = lat["p50_ms"]
            out.append(
                f"| {name} | {c['questions']} | {cost['embedded_snapshots']:.0f} "
                f"| {cost['embedded_documents']:,.0f} | {cost['embedded_texts']:,.0f} "
                f"| {cost['load_seconds']:.1f} | "
                + (f"{per['median_texts']:g} texts, {per['median_seconds']:.2f} s" if per else "–")
                + f" | {p50[STRUCTURE_BM25]:.1f} / {p50[MODEL_STRUCTURE_WEIGHTED]:.1f} "
                f"({lat['median_ratio']:.2f}×) |"
            )
        out.append("")
        out.append(
            "| corpus | policy | R@1 | R@10 | MRR | ms/question (eval) | MRR − control [95 %] "
            "| MRR − structure_bm25 [95 %] |"
        )
        out.append("|---|---|---:|---:|---:|---:|---|---|")
        for name, c in ordered(data["corpora"]):
            for p in POLICIES[1:]:
                m = c["policies"][p]
                out.append(
                    f"| {name} | `{p}` | {m['recall@1']:.4f} | {m['recall@10']:.4f} "
                    f"| {m['mrr']:.4f} | {m['ms_per_question']:.2f} | {_cell(m['vs_control'])} "
                    f"| {_cell(m['vs_structure'])} |"
                )
    return "\n".join(out)


def summary(paths: Sequence[Path]) -> str:
    """docs/evaluation.md's table: per model and corpus, the weighted policy against
    structure_bm25 and the control."""
    out = [
        "| model | corpus | `structure_bm25` MRR | `model_structure_weighted` R@1 / R@10 / MRR "
        "| − `structure_bm25` [95 %] | − control [95 %] | a later commit embeds "
        "| query p50 (× structure's) |",
        "|---|---|---:|---|---|---|---|---:|",
    ]
    for path in paths:
        data = json.loads(path.read_text())
        for name, c in ordered(data["corpora"]):
            m, s = c["policies"][MODEL_STRUCTURE_WEIGHTED], c["policies"][STRUCTURE_BM25]
            per = c["per_commit"]
            later = f"{per['median_texts']:g} texts, {per['median_seconds']:.2f} s" if per else "–"
            out.append(
                f"| {data['model']} | {name} | {s['mrr']:.4f} | {m['recall@1']:.4f} / "
                f"{m['recall@10']:.4f} / {m['mrr']:.4f} | {_cell(m['vs_structure'])} "
                f"| {_cell(m['vs_control'])} | {later} | {c['latency']['median_ratio']:.2f}× |"
            )
    return "\n".join(out)


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--model", default="wordllama-256")
    p.add_argument(
        "--corpus", action="append", default=[], help="NAME=DIR (a BEIR or history corpus)"
    )
    p.add_argument("--database", default=None, help="an existing database's DSN (reused)")
    p.add_argument("--table", type=Path, nargs="*", help="print the tables of these results")
    p.add_argument("--summary", action="store_true", help="with --table: the short table")
    args = p.parse_args()
    if args.table:
        print(summary(args.table) if args.summary else markdown(args.table))
        return
    corpora = dict(item.split("=", 1) for item in args.corpus)
    out: dict[str, Any] = {"model": args.model, "commit": _commit(), "corpora": {}}
    path = args.out or OUT_DIR / f"model_weighted_{args.model}.json"

    def run_all(dsn: str) -> None:
        conn = connect(dsn)
        try:
            for name, where in corpora.items():
                print(f"{name} …", flush=True)
                out["corpora"][name] = got = run_corpus(conn, Path(where), args.model)
                for policy, m in got["policies"].items():
                    print(
                        f"  {policy:34} MRR {m['mrr']:.4f} vs control {_cell(m['vs_control'])} "
                        f"vs structure {_cell(m['vs_structure'])}",
                        flush=True,
                    )
                print(f"  cost {json.dumps(got['cost'])} latency {got['latency']}", flush=True)
                write_results(f"model_weighted_{args.model}", out, path)  # after each corpus
        finally:
            conn.close()

    if args.database:
        run_all(args.database)
    else:
        with bench_database(args.dsn, "model_weighted", keep=args.keep) as dsn:
            run_all(dsn)


if __name__ == "__main__":
    main()
