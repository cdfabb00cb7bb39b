"""A real repository's history, snapshot per commit, and a history corpus evaluated
snapshot by snapshot (docs/how-it-works.md "Snapshots on a base", docs/evaluation.md).

``commits``: ``--commits`` consecutive first-parent commits of the repository at
``REPO`` ending at ``--until``, loaded oldest first as ``riido-pg load
NAME@<12 hex> REPO --rev COMMIT`` loads them (the same extraction, the same automatic
base). Per commit: the extraction's and the load's wall time and the database's
growth; the later commits against the first (cold) one; a fresh, self-contained load
of the last commit beside it.

``corpus``: a history corpus directory (``riido-pg corpus history``) evaluated as
``riido-pg eval DIR`` does, its wall time split by phase: extraction (each snapshot's
tree read at its revision), loading (oldest snapshot first, each on its automatic
base), ranking (``riido-pg eval DIR`` once every snapshot is stored), the database's
size after it, and a second ``eval`` that must reuse every snapshot and write the
same bytes.

    python bench/bench_history.py commits REPO --commits 50
    python bench/bench_history.py corpus DIR [DIR ...]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_bases import size_of, timed_load
from common import base_parser, bench_database, connect, markdown_table, write_results

from riido_pg import Document


def consecutive_commits(repo: Path, until: str, n: int) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--first-parent", "-n", str(n), until],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return out[::-1]  # oldest first


def extract(repo: Path, rev: str, **options: Any) -> tuple[list[Document], float]:
    from riido_pg.extract.documents import tree_documents

    t0 = time.perf_counter()
    docs = list(tree_documents(repo, rev=rev, **options))
    return docs, time.perf_counter() - t0


def run_commits(args: Any) -> dict[str, Any]:
    repo: Path = args.repo
    name = args.name or repo.name.removesuffix(".git")
    commits = consecutive_commits(repo, args.until, args.commits)
    rows: list[dict[str, Any]] = []
    with bench_database(args.dsn, "history", keep=args.keep) as dsn:
        conn = connect(dsn)
        for i, commit in enumerate(commits):
            docs, extraction = extract(repo, commit)
            row = timed_load(conn, f"{name}@{commit[:12]}", docs, args.jobs)
            row["extraction_seconds"] = extraction
            rows.append(row)
            print(
                f"  {i + 1}/{len(commits)} {row['snapshot']}: {len(docs)} functions, "
                f"extract {extraction:.2f} s, load {row['seconds']:.2f} s, "
                f"+{row['grown_bytes'] / 2**20:.2f} MiB "
                f"{'on ' + row['base'] if row['base'] else 'FRESH'} "
                f"(+{row['added']} -{row['removed']})",
                file=sys.stderr,
                flush=True,
            )
        last_docs, _ = extract(repo, commits[-1])
        fresh = timed_load(conn, f"{name}@last-fresh", last_docs, args.jobs, fresh=True)
        conn.close()
    first, later = rows[0], rows[1:]

    def med(key: str) -> float:
        return statistics.median(r[key] for r in later)

    summary = {
        "repository": name,
        "commits": len(rows),
        "functions_first": first["documents"],
        "functions_last": rows[-1]["documents"],
        "first": {k: first[k] for k in ("seconds", "grown_bytes", "extraction_seconds")},
        "later_median": {
            "seconds": med("seconds"),
            "grown_bytes": med("grown_bytes"),
            "extraction_seconds": med("extraction_seconds"),
        },
        "later_median_vs_first": {
            "load_seconds": med("seconds") / first["seconds"],
            "grown_bytes": med("grown_bytes") / first["grown_bytes"],
        },
        "later_max_vs_first": {
            "load_seconds": max(r["seconds"] for r in later) / first["seconds"],
            "grown_bytes": max(r["grown_bytes"] for r in later) / first["grown_bytes"],
        },
        "total_bytes_vs_first": sum(r["grown_bytes"] for r in rows) / first["grown_bytes"],
        "total_load_seconds_vs_first": sum(r["seconds"] for r in rows) / first["seconds"],
        "fresh_bases": sum(1 for r in rows if r["base"] is None),
        "fresh_last": {k: fresh[k] for k in ("seconds", "grown_bytes")},
    }
    return {"rows": rows, "summary": summary, "fresh_last": fresh}


def run_corpus(args: Any) -> dict[str, Any]:
    from riido_pg.corpora.history import read_history_corpus

    corpora = [read_history_corpus(d) for d in args.dirs]
    riido = [sys.executable, "-m", "riido_pg"]
    out: dict[str, Any] = {"corpora": [str(d) for d in args.dirs]}
    extraction = loading = 0.0
    loaded = 0
    with bench_database(args.dsn, "histcorpus", keep=args.keep) as dsn:
        conn = connect(dsn)
        conn.execute("CHECKPOINT")
        empty = size_of(conn)
        for corpus in corpora:
            ex = corpus.extraction
            options: dict[str, Any] = {"excludes": list(ex.excludes)}
            if ex.langs is not None:
                options["langs"] = list(ex.langs)
            by_date = list(corpus.snapshots)[::-1]  # question order is newest first
            for i, snapshot_id in enumerate(by_date):
                docs, seconds = extract(corpus.repository, corpus.snapshots[snapshot_id], **options)
                row = timed_load(conn, snapshot_id, docs, args.jobs)
                extraction += seconds
                loading += row["seconds"]
                loaded += 1
                print(
                    f"  {i + 1}/{len(by_date)} {snapshot_id}: extract {seconds:.2f} s, "
                    f"load {row['seconds']:.2f} s "
                    f"{'on ' + row['base'] if row['base'] else 'FRESH'}",
                    file=sys.stderr,
                    flush=True,
                )
        conn.execute("CHECKPOINT")
        stored = size_of(conn) - empty
        conn.close()
        env = {**os.environ, "RIIDO_PG_DSN": dsn}
        runs = []
        with tempfile.TemporaryDirectory() as tmp:
            for k in (1, 2):
                result = Path(tmp) / f"eval{k}.json"
                t0 = time.perf_counter()
                subprocess.run(
                    [*riido, "eval", *map(str, args.dirs), "--output", str(result)],
                    check=True,
                    env=env,
                    stderr=subprocess.DEVNULL,
                )
                runs.append((time.perf_counter() - t0, result.read_bytes()))
        out["eval_json"] = runs[0][1].decode()
    questions = sum(len(c.questions) for c in corpora)
    out["summary"] = {
        "questions": questions,
        "snapshots": loaded,
        "extraction_seconds": extraction,
        "loading_seconds": loading,
        "ranking_seconds": runs[0][0],
        "second_eval_seconds": runs[1][0],
        "second_eval_identical": runs[0][1] == runs[1][1],
        "database_bytes": stored,
    }
    return out


def main() -> None:
    p = base_parser(__doc__ or "")
    sub = p.add_subparsers(dest="what", required=True)
    c = sub.add_parser("commits", help="consecutive commits loaded with --rev")
    c.add_argument("repo", type=Path)
    c.add_argument("--commits", type=int, default=50)
    c.add_argument("--until", default="HEAD")
    c.add_argument("--name", default=None)
    c.add_argument("--jobs", type=int, default=1)
    k = sub.add_parser("corpus", help="history corpora: extraction, loading, ranking")
    k.add_argument("dirs", type=Path, nargs="+")
    k.add_argument("--jobs", type=int, default=1)
    args = p.parse_args()
    if args.what == "commits":
        data = run_commits(args)
        s = data["summary"]
        print(
            markdown_table(
                ["", "first commit", "later (median)", "ratio", "later (max) ratio"],
                [
                    [
                        "load s",
                        s["first"]["seconds"],
                        s["later_median"]["seconds"],
                        s["later_median_vs_first"]["load_seconds"],
                        s["later_max_vs_first"]["load_seconds"],
                    ],
                    [
                        "growth MiB",
                        s["first"]["grown_bytes"] / 2**20,
                        s["later_median"]["grown_bytes"] / 2**20,
                        s["later_median_vs_first"]["grown_bytes"],
                        s["later_max_vs_first"]["grown_bytes"],
                    ],
                ],
            )
        )
        print(
            f"{s['commits']} commits of {s['repository']} ({s['functions_first']:,}–"
            f"{s['functions_last']:,} functions): total storage {s['total_bytes_vs_first']:.2f}× "
            f"the first, total load {s['total_load_seconds_vs_first']:.2f}×; "
            f"{s['fresh_bases']} fresh base(s); extraction "
            f"{s['later_median']['extraction_seconds']:.2f} s a commit; "
            f"a fresh load of the last {s['fresh_last']['seconds']:.2f} s "
            f"+{s['fresh_last']['grown_bytes'] / 2**20:.1f} MiB"
        )
        write_results("history_commits", data, args.out)
    else:
        data = run_corpus(args)
        s = data["summary"]
        print(
            markdown_table(
                [
                    "questions",
                    "snapshots",
                    "extraction s",
                    "loading s",
                    "ranking s",
                    "database MiB",
                    "second eval s",
                    "identical",
                ],
                [
                    [
                        s["questions"],
                        s["snapshots"],
                        s["extraction_seconds"],
                        s["loading_seconds"],
                        s["ranking_seconds"],
                        s["database_bytes"] / 2**20,
                        s["second_eval_seconds"],
                        str(s["second_eval_identical"]),
                    ]
                ],
            )
        )
        write_results("history_corpus", data, args.out)


if __name__ == "__main__":
    main()
