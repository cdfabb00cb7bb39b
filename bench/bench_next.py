"""The next commit's load, this checkout against another, side by side in one run.

``repo@0`` (``--size`` ``cosqa-distinct`` functions, as ``bench_bases.py`` builds it)
is loaded cold once with this checkout's code; then, ``--reps`` times, each version
loads a commit changing ``--change`` of ``repo@0`` (a third edited, a third removed,
a third added; every load a different commit, so no load finds another's new texts
stored) in a child process whose ``riido_pg`` is that checkout's, the versions
alternating which goes first. Each child times its own ``load_snapshot`` (``--jobs``,
on ``repo@0``); a ``CHECKPOINT`` comes before every load.
Reported: each version's median next-commit time and its ratio to the cold load.

``--cli`` also times the command line, as a user (or an independent check) runs it:
in each rep each version's child writes its commit as a ``.jsonl`` file (not timed),
then times ``python -m riido_pg load`` of it (``--jobs``, on ``repo@0``; a process
whose ``riido_pg`` is that checkout's, compiled to bytecode first as an installed
package is) and ``python -m riido_pg snapshots list``, the fixed cost of any command
(the interpreter, the imports, the connection and its schema check, one query).

    python bench/bench_next.py --other ../main [--size 100000] [--reps 4] [--cli]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_bases import History
from common import REPO, base_parser, bench_database, connect, markdown_table, write_results

CHILD = r"""
import json, sys, time
import riido_pg  # this checkout's (the working directory), before bench/ puts its own first
from riido_pg.storage import load_snapshot
sys.path.insert(0, sys.argv[1] + "/bench")
from bench_bases import History
from common import connect
dsn, size, seed, change, jobs, name = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
    float(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
docs = History(size, seed=seed).commit(change)
conn = connect(dsn)
conn.execute("CHECKPOINT")
t = time.perf_counter()
result = load_snapshot(conn, name, docs, jobs=jobs, base="repo@0")
print(json.dumps({"seconds": time.perf_counter() - t, "base": result.base,
                  "added": result.added, "removed": result.removed,
                  "code": riido_pg.__file__}))
"""

CLI_CHILD = r"""
import json, os, subprocess, sys, time
sys.path.insert(0, sys.argv[1] + "/bench")
from bench_bases import History
dsn, size, seed, change, jobs, name, path = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
    float(sys.argv[5]), sys.argv[6], sys.argv[7], sys.argv[8]
with open(path, "w") as out:
    for d in History(size, seed=seed).commit(change):
        out.write(json.dumps({"id": d.id, "text": d.text}) + "\n")
env = dict(os.environ, RIIDO_PG_DSN=dsn)
cli = [sys.executable, "-m", "riido_pg"]
subprocess.run(["psql", dsn, "-qc", "CHECKPOINT"], check=True)
t = time.perf_counter()
load = subprocess.run(cli + ["load", name, path, "--base", "repo@0", "--jobs", jobs],
                      env=env, capture_output=True, text=True)
seconds = time.perf_counter() - t
t = time.perf_counter()
listed = subprocess.run(cli + ["snapshots", "list"], env=env, capture_output=True, text=True)
fixed = time.perf_counter() - t
os.unlink(path)
if load.returncode or listed.returncode:
    raise SystemExit(load.stderr + listed.stderr)
print(json.dumps({"seconds": seconds, "fixed": fixed, "said": load.stdout.strip()}))
"""


def _child(checkout: Path, *args: str, script: str = CHILD) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", script, str(REPO), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=checkout,
    )
    if proc.returncode != 0:
        raise SystemExit(f"child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--other", type=Path, required=True, help="the other checkout")
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--change", type=float, default=0.01)
    p.add_argument("--reps", type=int, default=4)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--cli", action="store_true", help="also time the command line's load")
    args = p.parse_args()
    if args.quick:
        args.size, args.reps = 5_000, 1
    versions = [("this", REPO), (args.other.name, args.other.resolve())]
    times: dict[str, list[dict[str, Any]]] = {v: [] for v, _ in versions}
    cli: dict[str, list[dict[str, Any]]] = {v: [] for v, _ in versions}
    if args.cli:
        for _, checkout in versions:  # bytecode, as an installed package has
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", "riido_pg"], cwd=checkout, check=True
            )
    with bench_database(args.dsn, "next", keep=args.keep) as dsn:
        from riido_pg.storage import load_snapshot

        conn = connect(dsn)
        conn.execute("CHECKPOINT")
        t = time.perf_counter()
        load_snapshot(conn, "repo@0", History(args.size).docs, jobs=args.jobs, fresh=True)
        cold = time.perf_counter() - t
        conn.close()
        print(f"cold {cold:.2f} s", file=sys.stderr)
        seed = 1
        for rep in range(args.reps):
            for label, checkout in versions[rep % 2 :] + versions[: rep % 2]:
                run = (dsn, str(args.size), str(seed), str(args.change), str(args.jobs))
                row = _child(checkout, *run, f"{label}@{seed}")
                seed += 1
                times[label].append(row)
                print(f"  {label}: {row}", file=sys.stderr)
                if args.cli:
                    fd, path = tempfile.mkstemp(suffix=".jsonl")
                    os.close(fd)
                    row = _child(checkout, *run, f"{label}@{seed}", path, script=CLI_CHILD)
                    seed += 1
                    cli[label].append(row)
                    print(f"  {label} (cli): {row}", file=sys.stderr)
    rows = []
    for label, _ in versions:
        med = statistics.median(r["seconds"] for r in times[label])
        runs = ", ".join(f"{r['seconds']:.2f}" for r in times[label])
        rows.append([label, round(cold, 2), round(med, 2), round(med / cold, 3), runs])
    print(markdown_table(["code", "cold s", "next commit s (median)", "ratio", "runs"], rows))
    if args.cli:
        rows = []
        for label, _ in versions:
            med = statistics.median(r["seconds"] for r in cli[label])
            fixed = statistics.median(r["fixed"] for r in cli[label])
            runs = ", ".join(f"{r['seconds']:.2f}" for r in cli[label])
            rows.append([label, round(med, 2), round(med / cold, 3), round(fixed, 2), runs])
        headers = ["code", "CLI load s (median)", "ratio", "CLI fixed s (median)", "runs"]
        print(markdown_table(headers, rows))
    write_results(
        "next",
        {"cold_s": cold, "runs": times, "cli": cli, "size": args.size, "change": args.change},
        args.out,
    )


if __name__ == "__main__":
    main()
