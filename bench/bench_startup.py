"""A command's fixed cost, this checkout against another, side by side in one run.

Each command runs ``--reps`` times per version as ``python -m riido_pg ...`` in a fresh
process whose ``riido_pg`` is that checkout's (compiled to bytecode first, as an
installed package is), the versions alternating which goes first: ``snapshots list``
on an empty database (the interpreter, the imports, the arguments, the connection and
its schema check, one query), ``load`` of a file that is not there, and ``eval`` of a
directory that is no corpus with ``--output`` (each parses its arguments, imports what
it runs and stops at its first check, exit 2). Reported: each version's median client
CPU (user + system of the child) and wall seconds, and the CPU ratio.

    python bench/bench_startup.py --other ../main [--reps 10]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import REPO, base_parser, bench_database, markdown_table, write_results


def _run(checkout: Path, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "riido_pg", *args],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 2):
        raise SystemExit(f"{checkout}: riido-pg {' '.join(args)}: {proc.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, wall


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--other", type=Path, required=True, help="the other checkout")
    p.add_argument("--reps", type=int, default=10)
    args = p.parse_args()
    if args.quick:
        args.reps = 2
    versions = [("this", REPO), (args.other.name, args.other.resolve())]
    for _, checkout in versions:  # bytecode, as an installed package has
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "riido_pg"], cwd=checkout, check=True
        )
    results: dict[str, dict[str, list[tuple[float, float]]]] = {}
    with (
        bench_database(args.dsn, "startup", keep=args.keep) as dsn,
        tempfile.TemporaryDirectory() as tmp,
    ):
        env = dict(os.environ, RIIDO_PG_DSN=dsn)
        commands = {
            "snapshots list": ["snapshots", "list"],
            "load (a missing file)": ["load", "s", str(Path(tmp) / "missing.jsonl")],
            "eval (no corpus)": ["eval", tmp, "--output", str(Path(tmp) / "out.json")],
        }
        for name, command in commands.items():
            results[name] = {label: [] for label, _ in versions}
            for rep in range(args.reps):
                for label, checkout in versions[rep % 2 :] + versions[: rep % 2]:
                    results[name][label].append(_run(checkout, command, env))
            print(f"  {name}: {results[name]}", file=sys.stderr)
    rows: list[list[Any]] = []
    for name, by_version in results.items():
        cpu = {v: statistics.median(c for c, _ in runs) for v, runs in by_version.items()}
        wall = {v: statistics.median(w for _, w in runs) for v, runs in by_version.items()}
        this, other = versions[0][0], versions[1][0]
        rows.append(
            [
                name,
                round(cpu[this], 3),
                round(cpu[other], 3),
                round(cpu[this] / cpu[other], 2),
                round(wall[this], 3),
                round(wall[other], 3),
            ]
        )
    other = versions[1][0]
    headers = [
        "command",
        "this CPU s",
        f"{other} CPU s",
        "CPU ratio",
        "this wall s",
        f"{other} wall s",
    ]
    print(markdown_table(headers, rows))
    print(f"1-minute load average at the end: {os.getloadavg()[0]:.1f}")
    write_results("startup", {"reps": args.reps, "results": results}, args.out)


if __name__ == "__main__":
    main()
