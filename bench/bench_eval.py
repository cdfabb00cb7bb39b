"""`riido-pg eval` against bm25s, side by side.

For a BEIR corpus (the pinned docproxy corpus, built into bench/out/docproxy, and
../shared/data/cosqa-dev when present), each repetition runs, in fresh processes:

* riido cold: a new database, `eval DIR` for all four policies (loads the corpus as a
  snapshot, stores the questions, ranks every document for every question);
* riido warm: `eval DIR` again on the stored corpus;
* bm25s: index the corpus and retrieve the FULL ranking for every question, with both
  tokenizations (raw words, and riido_pg.split_identifiers words), English stopwords
  and the Snowball English stemmer (PyStemmer), as riido's english configuration does.

Reported: wall seconds (median of the repetitions; riido's includes importing numpy
and scipy, bm25s's excludes its imports), peak RSS of each client process, and the
ratio riido / bm25s (target <= 1.0). Also the client processes' CPU seconds (user +
system; riido's whole process, bm25s's from the same point as its wall time), the
figure a loaded machine moves least; riido's leaves out the server's CPU. The
PostgreSQL server's memory is not counted.

    python bench/bench_eval.py [--reps 3] [--corpus docproxy|cosqa|all] [--text-config english]
    python bench/bench_eval.py --other ../main   # also riido of that checkout, same run

``--other CHECKOUT`` runs riido's cold and warm evaluation a second time per
repetition with that checkout's code (its children run in CHECKOUT), in a new
database, so two versions are compared against the same bm25s runs; the versions
alternate which goes first.

Before timing, each checkout's ``riido_pg`` is compiled to bytecode
(``compileall``), as an installed package is: otherwise, where
``PYTHONDONTWRITEBYTECODE`` is set (as on the project's machine), every riido
process compiles its own source again (~0.3 s of CPU). ``--no-compile`` leaves
that out (the riido figures before 2026-12-06's afternoon were measured so).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    OUT_DIR,
    REPO,
    base_parser,
    create_database,
    drop_database,
    markdown_table,
    write_results,
)

COSQA = REPO.parent / "shared" / "data" / "cosqa-dev"

RIIDO_CHILD = r"""
import json, resource, sys, time
from riido_pg.cli import main
dsn, directory, out = sys.argv[1], sys.argv[2], sys.argv[3]
t = time.perf_counter()
try:
    main(["--dsn", dsn, "eval", directory, "--text-config", sys.argv[4], "--output", out])
except SystemExit as exc:
    if exc.code:
        raise
wall = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "rss_mb": use.ru_maxrss / 1024,
                  "cpu": use.ru_utime + use.ru_stime}))
"""

BM25S_CHILD = r"""
import json, resource, sys, time
import numpy as np
t0 = time.perf_counter()
import bm25s, Stemmer
from riido_pg.splitting import split_identifiers
directory = sys.argv[1]
def rows(name):
    with open(f"{directory}/{name}", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
corpus = rows("corpus.jsonl")
queries = rows("queries.jsonl")
targets = {}
with open(f"{directory}/qrels/test.tsv", encoding="utf-8") as fh:
    next(fh)
    for line in fh:
        q, d, s = line.rstrip("\n").split("\t")
        if int(s) > 0:
            targets.setdefault(q, set()).add(d)
queries = [q for q in queries if q["_id"] in targets]
ids = [d["_id"] for d in corpus]
texts = [(d.get("title") + "\n" if d.get("title") else "") + d["text"] for d in corpus]
stemmer = Stemmer.Stemmer("english")
t = time.perf_counter()
use0 = resource.getrusage(resource.RUSAGE_SELF)
ranks = {}
for name, prep in (("raw", lambda s: s), ("ident", split_identifiers)):
    tokens = bm25s.tokenize([prep(x) for x in texts], stopwords="en", stemmer=stemmer,
                            show_progress=False)
    retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    retriever.index(tokens, show_progress=False)
    qtok = bm25s.tokenize([prep(q["text"]) for q in queries], stopwords="en",
                          stemmer=stemmer, show_progress=False)
    docs, _ = retriever.retrieve(qtok, k=len(ids), show_progress=False, n_threads=1)
    first = []
    for qi, q in enumerate(queries):
        row = docs[qi]
        want = targets[q["_id"]]
        pos = next(r for r, di in enumerate(row) if ids[di] in want)
        first.append(pos + 1)
    ranks[name] = float(np.mean(first))
wall = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_SELF)
cpu = use.ru_utime + use.ru_stime - use0.ru_utime - use0.ru_stime
print(json.dumps({"wall": wall, "rss_mb": use.ru_maxrss / 1024, "cpu": cpu,
                  "mean_first_rank": ranks}))
"""


def _child(code: str, *args: str, cwd: Path = REPO) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False, cwd=cwd
    )
    if proc.returncode != 0:
        raise SystemExit(f"child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _docproxy_dir() -> Path:
    target = OUT_DIR / "docproxy"
    if not (target / "corpus.jsonl").exists():
        from riido_pg.corpora.docproxy import build_docproxy

        build_docproxy(target)
    return target


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--corpus", choices=["docproxy", "cosqa", "all"], default="all")
    p.add_argument("--text-config", default="english")
    p.add_argument("--other", type=Path, default=None, help="another checkout, run beside")
    p.add_argument(
        "--no-compile", action="store_true", help="do not compile riido_pg to bytecode first"
    )
    args = p.parse_args()
    reps = 1 if args.quick else args.reps
    corpora: list[tuple[str, Path]] = []
    if args.corpus in ("docproxy", "all"):
        corpora.append(("docproxy", _docproxy_dir()))
    if args.corpus in ("cosqa", "all") and (COSQA / "corpus.jsonl").exists():
        corpora.append(("cosqa-dev", COSQA))
    rows = []
    results: dict[str, Any] = {}
    versions = [("", REPO)] + ([(f" ({args.other.name})", args.other)] if args.other else [])
    if not args.no_compile:
        for _, checkout in versions:
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", "riido_pg"], cwd=checkout, check=True
            )
    for name, directory in corpora:
        cold: dict[str, list[dict[str, Any]]] = {v: [] for v, _ in versions}
        warm: dict[str, list[dict[str, Any]]] = {v: [] for v, _ in versions}
        bm = []
        for rep in range(reps):
            for label, checkout in (
                versions[rep % len(versions) :] + versions[: rep % len(versions)]
            ):
                dbname, dsn = create_database(args.dsn, "eval")
                try:
                    with tempfile.TemporaryDirectory() as tmp:
                        out = str(Path(tmp) / "eval.json")
                        run = (RIIDO_CHILD, dsn, str(directory), out, args.text_config)
                        cold[label].append(_child(*run, cwd=checkout))
                        warm[label].append(_child(*run, cwd=checkout))
                finally:
                    drop_database(args.dsn, dbname)
            bm.append(_child(BM25S_CHILD, str(directory)))
        bm_wall = statistics.median(r["wall"] for r in bm)
        bm_cpu = statistics.median(r["cpu"] for r in bm)
        bm_peak = max(r["rss_mb"] for r in bm)
        for label, _ in versions:
            med = {
                k: statistics.median(r["wall"] for r in v)
                for k, v in (("cold", cold[label]), ("warm", warm[label]))
            }
            med["bm25s"] = bm_wall
            cpu = {
                k: statistics.median(r["cpu"] for r in v)
                for k, v in (("cold", cold[label]), ("warm", warm[label]))
            }
            cpu["bm25s"] = bm_cpu
            peak = {k: max(r["rss_mb"] for r in v) for k, v in (("cold", cold[label]),)}
            results[name + label] = {
                "wall_s": med,
                "client_cpu_s": cpu,
                "peak_rss_mb": {**peak, "bm25s": bm_peak},
                "runs": {"cold": cold[label], "warm": warm[label], "bm25s": bm},
                "reps": reps,
            }
            rows.append(
                [
                    name + label,
                    round(med["cold"], 2),
                    round(med["warm"], 2),
                    round(bm_wall, 2),
                    round(med["cold"] / bm_wall, 2),
                    round(med["warm"] / bm_wall, 2),
                    round(cpu["warm"], 2),
                    round(bm_cpu, 2),
                    round(cpu["warm"] / bm_cpu, 2),
                    round(peak["cold"]),
                    round(bm_peak),
                ]
            )
    print(
        markdown_table(
            [
                "corpus",
                "riido cold s",
                "riido warm s",
                "bm25s s",
                "ratio cold",
                "ratio warm",
                "riido warm client CPU s",
                "bm25s CPU s",
                "ratio warm CPU",
                "riido peak RSS MB",
                "bm25s peak RSS MB",
            ],
            rows,
        )
    )
    write_results(
        "eval",
        {
            "text_config": args.text_config,
            "results": results,
            "when_started": time.strftime("%H:%M:%S"),
            "compiled": not args.no_compile,
        },
        args.out,
    )


if __name__ == "__main__":
    main()
