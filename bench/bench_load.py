"""Load throughput: documents/second through ``riido_pg.load_snapshot`` and the CLI,
against ``--jobs``.

For each corpus, size and job count a fresh database is created and migrated, the
server is CHECKPOINTed, and one snapshot is loaded end to end (streamed input, texts
indexed on the workers, postings of both columns, statistics, commit). Documents are
generated before the clock starts.

Corpora: ``cosqa`` is the 6,267 CoSQA functions copied verbatim up to the size (a
load indexes each distinct text once, so it measures mostly the reuse path);
``cosqa-distinct`` gives every copy one more comment line, so every text is new and
every one is indexed (the honest fresh-load number); ``synthetic`` is generated code.

Phase walls come from the ``progress`` callback: ``documents`` (reading, keys,
splitting, indexing new texts, staging, the digest, numbering the documents; with
``--jobs 1`` also the documents rows), ``postings`` (both columns; with ``--jobs`` > 1
the documents rows are written alongside, on a third session) and ``rest``
(statistics, commit). Server CPU is the CPU time of every PostgreSQL
backend of the bench database (psutil), client CPU this process's.

The CLI run writes the same documents as a ``.jsonl`` file and times
``python -m riido_pg load SNAP FILE --jobs N`` as a whole process, with its peak RSS.

    python bench/bench_load.py                                   # 100k, jobs 1,2,4
    python bench/bench_load.py --quick
    python bench/bench_load.py --sizes 20000 --corpus cosqa-distinct --jobs 1,2 --no-cli
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from common import base_parser, bench_database, connect, markdown_table, write_results

TARGET_DOCS_PER_S = 20_000


def _checkpoint(dsn: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            conn.execute("CHECKPOINT")
        except psycopg.errors.InsufficientPrivilege:
            pass


class _ServerCpu:
    """Samples the backends of one database often enough to see short-lived workers."""

    def __init__(self, dbname: str) -> None:
        import threading

        self.dbname = dbname
        self.seen: dict[int, float] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        import psutil

        for proc in psutil.process_iter(["name", "cmdline"]):
            try:
                cmd = " ".join(proc.info["cmdline"] or [])
                if "postgres" in (proc.info["name"] or "") and f" {self.dbname} " in f" {cmd} ":
                    t = proc.cpu_times()
                    self.seen[proc.pid] = t.user + t.system
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue

    def _run(self) -> None:
        while not self.stop.wait(0.25):
            self._sample()

    def __enter__(self) -> _ServerCpu:
        self._sample()
        self.base = dict(self.seen)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._sample()
        self.stop.set()
        self.thread.join()

    def seconds(self) -> float:
        return sum(v - self.base.get(pid, 0.0) for pid, v in self.seen.items())


def library_load(dsn: str, docs: list[Any], jobs: int) -> dict[str, Any]:
    from riido_pg.storage import load_snapshot

    conn = connect(dsn)
    dbname = conn.info.dbname
    marks: dict[str, float] = {}

    def progress(phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if phase == "documents" and total and done == total:
            marks["documents"] = now
        elif phase == "index" and done == 2:
            marks["postings"] = now

    _checkpoint(dsn)
    cpu0 = time.process_time()
    with _ServerCpu(dbname) as server:
        t0 = time.perf_counter()
        result = load_snapshot(conn, "bench", docs, progress=progress, jobs=jobs)
        t_end = time.perf_counter()
    client_cpu = time.process_time() - cpu0
    assert result.action == "created" and result.documents == len(docs), result
    row = conn.execute(
        "SELECT state, document_count FROM riido.snapshots WHERE snapshot_id = 'bench'"
    ).fetchone()
    assert row == ("ready", len(docs)), row
    sizes = conn.execute(
        "SELECT pg_total_relation_size('riido.documents'), pg_total_relation_size('riido.texts'),"
        " pg_total_relation_size('riido.postings'), (SELECT count(*) FROM riido.texts)"
    ).fetchone()
    conn.close()
    total = t_end - t0
    return {
        "jobs": jobs,
        "seconds": total,
        "docs_per_s": len(docs) / total,
        "client_cpu_s": client_cpu,
        "server_cpu_s": server.seconds(),
        "phases_s": {
            "documents": marks["documents"] - t0,
            "postings": marks["postings"] - marks["documents"],
            "rest": t_end - marks["postings"],
        },
        "documents_bytes": sizes[0],
        "texts_bytes": sizes[1],
        "postings_bytes": sizes[2],
        "texts": sizes[3],
    }


def cli_load(dsn: str, docs: list[Any], jobs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="riido-bench-") as tmp:
        path = corpus.write_jsonl(docs, Path(tmp) / "docs.jsonl")
        env = {k: v for k, v in os.environ.items() if not k.startswith("RIIDO_PG_")}
        env["RIIDO_PG_DSN"] = dsn
        _checkpoint(dsn)
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "riido_pg", "load", "bench", str(path), "--jobs", str(jobs)],
            capture_output=True,
            env=env,
            check=False,
            text=True,
        )
        elapsed = time.perf_counter() - t0
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"riido-pg load failed ({proc.returncode}): {proc.stderr.strip()}")
    return {
        "jobs": jobs,
        "seconds": elapsed,
        "docs_per_s": len(docs) / elapsed,
        # ru_maxrss of the largest child so far (KiB on Linux): the CLI runs grow
        "peak_rss_mb_max_so_far": ru.ru_maxrss / 1024,
        "stdout": proc.stdout.strip(),
    }


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--sizes", default="100000", help="comma-separated document counts")
    p.add_argument("--jobs", default="1,2,4", help="comma-separated --jobs values")
    p.add_argument(
        "--corpus",
        default="cosqa-distinct,cosqa",
        help="comma-separated: synthetic, cosqa, cosqa-distinct",
    )
    p.add_argument("--no-cli", action="store_true", help="skip the CLI runs")
    p.add_argument("--repeat", type=int, default=1, help="runs per point (the best is kept)")
    args = p.parse_args()
    if args.quick:
        args.sizes, args.jobs, args.corpus = "3000", "1,2", "cosqa-distinct"
    sizes = [int(s) for s in args.sizes.split(",")]
    job_counts = [int(j) for j in args.jobs.split(",")]
    kinds = args.corpus.split(",")
    runs: list[dict[str, Any]] = []
    for kind in kinds:
        for size in sizes:
            docs = corpus.documents(kind, size)
            mean_bytes = sum(len(d.text.encode()) for d in docs) / len(docs)
            for jobs in job_counts:
                best: dict[str, Any] | None = None
                for _ in range(args.repeat):
                    with bench_database(args.dsn, "load", keep=args.keep) as dsn:
                        r = library_load(dsn, docs, jobs)
                    if best is None or r["seconds"] < best["seconds"]:
                        best = r
                assert best is not None
                best.update(mode="library", corpus=kind, docs=size, mean_bytes=mean_bytes)
                best["load_avg"] = os.getloadavg()[0]
                runs.append(best)
                print(
                    f"library {kind:>14} {size:>9,} jobs {jobs}: {best['seconds']:.2f} s, "
                    f"{best['docs_per_s']:,.0f} docs/s",
                    file=sys.stderr,
                )
                if not args.no_cli:
                    with bench_database(args.dsn, "load_cli", keep=args.keep) as dsn:
                        c = cli_load(dsn, docs, jobs)
                    c.update(mode="cli", corpus=kind, docs=size, mean_bytes=mean_bytes)
                    c["load_avg"] = os.getloadavg()[0]
                    runs.append(c)
    rows = [
        [
            r["mode"],
            r["corpus"],
            r["docs"],
            r["jobs"],
            round(r["mean_bytes"], 1),
            round(r["seconds"], 2),
            round(r["docs_per_s"]),
            round(r.get("client_cpu_s", float("nan")), 2),
            round(r.get("server_cpu_s", float("nan")), 2),
            "yes" if r["docs_per_s"] >= TARGET_DOCS_PER_S else "no",
            round(r["load_avg"], 1),
        ]
        for r in runs
    ]
    print(f"\n### Load throughput (target ≥ {TARGET_DOCS_PER_S:,} docs/s)\n")
    print(
        markdown_table(
            [
                "mode",
                "corpus",
                "docs",
                "jobs",
                "mean bytes",
                "wall s",
                "docs/s",
                "client CPU s",
                "server CPU s",
                "target met",
                "load avg",
            ],
            rows,
        )
    )
    lib = [r for r in runs if r["mode"] == "library"]
    print("\n### Library load by phase (wall s)\n")
    print(
        markdown_table(
            ["corpus", "docs", "jobs", "documents", "postings", "rest", "texts stored"],
            [
                [
                    r["corpus"],
                    r["docs"],
                    r["jobs"],
                    round(r["phases_s"]["documents"], 2),
                    round(r["phases_s"]["postings"], 2),
                    round(r["phases_s"]["rest"], 2),
                    r["texts"],
                ]
                for r in lib
            ],
        )
    )
    write_results("load", {"runs": runs}, args.out)


if __name__ == "__main__":
    main()
