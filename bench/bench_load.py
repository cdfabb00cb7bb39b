"""Load throughput: documents/second through ``riido_pg.load_snapshot`` and the CLI.

For each corpus and size a fresh database is created and migrated, the server is
CHECKPOINTed, and one snapshot is loaded end to end (both columns, statistics,
postings, commit). Documents are generated before the clock starts.

Phase timings come from the ``progress`` callback (``("documents", done, total)``
then ``("index", i, 2)``):

* ``stage``: validation, content digest, lock, snapshot row, sort, Python
  identifier splitting and COPY into the staging table (the Python-only parts are
  also timed on their own and shown as ``py_validate_digest`` and ``py_split``);
* ``insert``: ``sql/insert_documents.sql`` (both ``to_tsvector`` calls, lengths,
  documents rows and their indexes);
* ``finalize_raw`` / ``finalize_ident``: ``sql/finalize_column.sql`` per column
  (the column's postings);
* ``count_commit``: the ready flip, ANALYZE and COMMIT.

The CLI run writes the same documents as a ``.jsonl`` file and times
``python -m riido_pg load SNAP FILE`` as a whole process (interpreter start, JSON
parsing, validation, load).

    python bench/bench_load.py                       # 3k/20k/100k, synthetic + cosqa
    python bench/bench_load.py --quick
    python bench/bench_load.py --sizes 20000 --corpus synthetic --no-cli
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
from common import (
    CpuClock,
    base_parser,
    bench_database,
    connect,
    markdown_table,
    server_info,
    write_results,
)

TARGET_DOCS_PER_S = 20_000


def _checkpoint(dsn: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            conn.execute("CHECKPOINT")
        except psycopg.errors.InsufficientPrivilege:
            pass


def _python_parts(docs: list[Any]) -> dict[str, float]:
    """Time the pure-Python work of a load on its own (not part of the measured run)."""
    from riido_pg.documents import validate_documents
    from riido_pg.splitting import split_identifiers
    from riido_pg.storage import content_digest

    t0 = time.perf_counter()
    checked = validate_documents(docs)
    content_digest(checked, "english")
    t1 = time.perf_counter()
    for d in sorted(checked, key=lambda d: d.id):
        split_identifiers(d.text)
    t2 = time.perf_counter()
    return {"py_validate_digest": t1 - t0, "py_split": t2 - t1}


def library_load(dsn: str, docs: list[Any]) -> dict[str, Any]:
    from riido_pg.storage import load_snapshot

    conn = connect(dsn)
    clock = CpuClock(conn.info.backend_pid)
    names = {
        ("documents", True): "stage",
        ("index", 0): "insert",
        ("index", 1): "finalize_raw",
        ("index", 2): "finalize_ident",
    }
    marks: dict[str, float] = {}

    def progress(phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if phase == "documents" and done == total:
            marks["documents"] = now
            clock.lap("stage")
        elif phase == "index":
            marks[f"index{done}"] = now
            clock.lap(names[("index", done)])

    _checkpoint(dsn)
    clock.lap("(setup)")
    t0 = time.perf_counter()
    result = load_snapshot(conn, "bench", docs, progress=progress)
    t_end = time.perf_counter()
    clock.lap("count_commit")
    assert result.action == "created" and result.documents == len(docs), result
    row = conn.execute(
        "SELECT state, document_count FROM riido.snapshots WHERE snapshot_id = 'bench'"
    ).fetchone()
    assert row == ("ready", len(docs)), row
    sizes = conn.execute(
        "SELECT pg_total_relation_size('riido.documents'), "
        "pg_total_relation_size('riido.postings'),"
        " (SELECT count(*) FROM riido.postings)"
    ).fetchone()
    conn.close()
    phases = {
        "stage": marks["documents"] - t0,
        "insert": marks["index0"] - marks["documents"],
        "finalize_raw": marks["index1"] - marks["index0"],
        "finalize_ident": marks["index2"] - marks["index1"],
        "count_commit": t_end - marks["index2"],
    }
    total = t_end - t0
    cpu = clock.as_dict()
    for d in (cpu["wall_s"], cpu["client_cpu_s"], cpu["server_cpu_s"]):
        d.pop("(setup)", None)
    client_cpu = sum(cpu["client_cpu_s"].values())
    server_cpu = (
        None
        if any(v is None for v in cpu["server_cpu_s"].values())
        else sum(cpu["server_cpu_s"].values())
    )
    return {
        "client_cpu_s": client_cpu,
        "server_cpu_s": server_cpu,
        "cpu_by_phase": {
            k: (cpu["client_cpu_s"][k], cpu["server_cpu_s"][k]) for k in cpu["wall_s"]
        },
        "seconds": total,
        "docs_per_s": len(docs) / total,
        "phases_s": phases,
        "documents_bytes": sizes[0],
        "postings_bytes": sizes[1],
        "postings_rows": sizes[2],
    }


def cli_load(dsn: str, docs: list[Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="riido-bench-") as tmp:
        path = corpus.write_jsonl(docs, Path(tmp) / "docs.jsonl")
        env = {k: v for k, v in os.environ.items() if not k.startswith("RIIDO_PG_")}
        env["RIIDO_PG_DSN"] = dsn
        _checkpoint(dsn)
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "riido_pg", "load", "bench", str(path)],
            capture_output=True,
            env=env,
            check=False,
            text=True,
        )
        elapsed = time.perf_counter() - t0
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"riido-pg load failed ({proc.returncode}): {proc.stderr.strip()}")
    client_cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    return {
        "seconds": elapsed,
        "docs_per_s": len(docs) / elapsed,
        "client_cpu_s": client_cpu,
        "stdout": proc.stdout.strip(),
    }


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument(
        "--sizes",
        default="3000,20000,100000",
        help="comma-separated document counts (default 3000,20000,100000)",
    )
    p.add_argument("--cli-sizes", default=None, help="sizes for the CLI run (default: --sizes)")
    p.add_argument(
        "--corpus",
        choices=("synthetic", "cosqa", "both"),
        default="both",
        help="corpus; cosqa falls back to synthetic when the data is absent",
    )
    p.add_argument("--no-cli", action="store_true", help="skip the CLI runs")
    p.add_argument("--repeat", type=int, default=1, help="runs per size (best and median kept)")
    args = p.parse_args()
    if args.quick:
        args.sizes, args.cli_sizes, args.repeat = "1000", "1000", 1
    sizes = [int(s) for s in args.sizes.split(",")]
    cli_sizes = [] if args.no_cli else [int(s) for s in (args.cli_sizes or args.sizes).split(",")]
    kinds = ["synthetic", "cosqa"] if args.corpus == "both" else [args.corpus]
    if "cosqa" in kinds and not corpus.cosqa_available():
        print("cosqa data not found; using only the synthetic corpus", file=sys.stderr)
        kinds = ["synthetic"]

    runs: list[dict[str, Any]] = []
    for kind in kinds:
        for size in sorted(set(sizes) | set(cli_sizes)):
            docs = corpus.documents(kind, size)
            mean_bytes = sum(len(d.text.encode()) for d in docs) / len(docs)
            if size in sizes:
                py = _python_parts(docs)
                for rep in range(args.repeat):
                    with bench_database(args.dsn, "load", keep=args.keep) as dsn:
                        r = library_load(dsn, docs)
                    r.update(
                        corpus=kind,
                        size=size,
                        mode="library",
                        rep=rep,
                        mean_doc_bytes=round(mean_bytes, 1),
                        load_avg=os.getloadavg()[0],
                        **py,
                    )
                    runs.append(r)
                    print(
                        f"library {kind:9s} {size:>7,}: {r['seconds']:.2f} s, "
                        f"{r['docs_per_s']:,.0f} docs/s",
                        file=sys.stderr,
                    )
            if size in cli_sizes:
                for rep in range(args.repeat):
                    with bench_database(args.dsn, "loadcli", keep=args.keep) as dsn:
                        r = cli_load(dsn, docs)
                    r.update(
                        corpus=kind,
                        size=size,
                        mode="cli",
                        rep=rep,
                        mean_doc_bytes=round(mean_bytes, 1),
                        load_avg=os.getloadavg()[0],
                    )
                    runs.append(r)
                    print(
                        f"cli     {kind:9s} {size:>7,}: {r['seconds']:.2f} s, "
                        f"{r['docs_per_s']:,.0f} docs/s",
                        file=sys.stderr,
                    )

    # best run per (mode, corpus, size)
    best: dict[tuple[str, str, int], dict[str, Any]] = {}
    for r in runs:
        key = (r["mode"], r["corpus"], r["size"])
        if key not in best or r["seconds"] < best[key]["seconds"]:
            best[key] = r
    rows = []
    prows = []
    order = sorted(best.items(), key=lambda kv: (kv[0][1], kv[0][0] != "library", kv[0][2]))
    for (mode, kind, size), r in order:
        cpu = (r["client_cpu_s"] + r["server_cpu_s"]) if r.get("server_cpu_s") is not None else None
        rows.append(
            [
                mode,
                kind,
                size,
                r["mean_doc_bytes"],
                round(r["seconds"], 2),
                round(r["docs_per_s"]),
                round(r["client_cpu_s"], 2) if "client_cpu_s" in r else "",
                round(r["server_cpu_s"], 2) if r.get("server_cpu_s") is not None else "",
                round(size / cpu) if cpu else "",
                "yes" if r["docs_per_s"] >= TARGET_DOCS_PER_S else "no",
                round(r["load_avg"], 1),
            ]
        )
        if mode == "library":
            ph, cp = r["phases_s"], r["cpu_by_phase"]
            prows.append(
                [
                    kind,
                    size,
                    *(
                        f"{ph[k]:.2f} ({cp[k][0]:.2f} + {cp[k][1]:.2f})"
                        if cp[k][1] is not None
                        else f"{ph[k]:.2f}"
                        for k in (
                            "stage",
                            "insert",
                            "finalize_raw",
                            "finalize_ident",
                            "count_commit",
                        )
                    ),
                    round(r["py_validate_digest"], 2),
                    round(r["py_split"], 2),
                ]
            )
    print(f"\n### Load throughput (target ≥ {TARGET_DOCS_PER_S:,} docs/s)\n")
    print(
        markdown_table(
            [
                "mode",
                "corpus",
                "docs",
                "mean bytes",
                "wall s",
                "docs/s",
                "client CPU s",
                "server CPU s",
                "docs per CPU-s",
                "target met",
                "load avg",
            ],
            rows,
        )
    )
    print("\n### Library load by phase: wall s (client CPU s + server backend CPU s)\n")
    print(
        markdown_table(
            [
                "corpus",
                "docs",
                "stage",
                "insert (to_tsvector)",
                "finalize raw",
                "finalize ident",
                "count + commit",
                "of stage: py validate+digest s",
                "of stage: py split s",
            ],
            prows,
        )
    )
    write_results(
        "load",
        {"server": server_info(args.dsn), "target_docs_per_s": TARGET_DOCS_PER_S, "runs": runs},
        args.out,
    )


if __name__ == "__main__":
    main()
