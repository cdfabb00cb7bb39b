"""Whole-process time of the README main-job example: ``riido-pg hints --identifier-hints``.

Runs the console script as a subprocess, the main-job request on stdin, N times (default
20) and reports median and p95 wall time, checking every run prints ``a, c, b``:

* ``server``: against the running server (``RIIDO_PG_DSN`` = a fresh migrated
  benchmark database);
* ``embedded``: against the embedded default under a temporary ``RIIDO_PG_HOME``,
  already running (one untimed run starts it first); ``riido-pg db stop`` stops it
  at the end. ``--no-embedded`` skips this.

It also breaks one in-process run into phases (interpreter start, imports,
connect + schema check, ranking) and lists the top ``python -X importtime``
offenders of the real command.

    python bench/bench_hints.py
    python bench/bench_hints.py --quick --no-embedded
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    base_parser,
    bench_database,
    markdown_table,
    percentile,
    write_results,
)

TARGET_S = 0.5
REQUEST = (
    json.dumps(
        {
            "snapshot_id": "demo",
            "query": "read config",
            "documents": [
                {"id": "a", "text": "read"},
                {"id": "b", "text": "config"},
                {"id": "c", "text": "func ReadConfig() {}"},
            ],
        }
    )
    + "\n"
)

PHASES = r"""
import time, sys, io, json
t0 = time.perf_counter()
import riido_pg.cli
t1 = time.perf_counter()
import psycopg, typer
from riido_pg.db import connect
from riido_pg.documents import parse_request
from riido_pg.ranking import rank_documents
t2 = time.perf_counter()
conn = connect(None)
t3 = time.perf_counter()
req = parse_request(sys.argv[1].encode())
r = rank_documents(conn, req, policy="identifier_bm25_baseline_first")
t4 = time.perf_counter()
conn.close()
print(json.dumps({"import_cli": t1 - t0, "import_rest": t2 - t1, "connect_check_schema": t3 - t2,
                  "rank_documents": t4 - t3, "order": [c.id for c in r.candidates]}))
"""


def _env(dsn: str | None, home: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIIDO_PG_")}
    if dsn:
        env["RIIDO_PG_DSN"] = dsn
    if home:
        env["RIIDO_PG_HOME"] = home
    return env


def _script() -> list[str]:
    exe = Path(sys.executable).parent / "riido-pg"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("riido-pg")
    return [found] if found else [sys.executable, "-m", "riido_pg"]


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_once(env: dict[str, str], cpu: list[float] | None = None) -> float:
    """Wall time of one run; appends the child's user+sys CPU time to ``cpu``."""
    c0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*_script(), "hints", "--identifier-hints"],
        input=REQUEST,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    elapsed = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(_children_cpu() - c0)
    if proc.returncode != 0:
        raise RuntimeError(f"hints failed ({proc.returncode}): {proc.stderr.strip()}")
    out = json.loads(proc.stdout)
    order = [c["id"] for c in out["candidates"]]
    assert order == ["a", "c", "b"], order
    assert out["policy"] == "identifier_bm25_baseline_first" and out["status"] == "unverified"
    return elapsed


def measure(env: dict[str, str], runs: int) -> dict[str, Any]:
    run_once(env)  # warm-up: page cache, embedded start
    cpu: list[float] = []
    times = [run_once(env, cpu) for _ in range(runs)]
    return {
        "runs": runs,
        "median_s": statistics.median(times),
        "p95_s": percentile(times, 95),
        "min_s": min(times),
        "max_s": max(times),
        "times_s": times,
        "cpu_median_s": statistics.median(cpu),
        "cpu_s": cpu,
        "load_avg": os.getloadavg()[0],
    }


def baseline_costs(env: dict[str, str], runs: int = 5) -> dict[str, float]:
    """Interpreter start alone and `riido-pg --version`, for scale."""

    def med(cmd: list[str]) -> float:
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run(cmd, capture_output=True, env=env, check=True)
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    return {
        "python_-c_pass_s": med([sys.executable, "-c", "pass"]),
        "python_-S_-c_pass_s": med([sys.executable, "-S", "-c", "pass"]),
        "riido-pg_--version_s": med([*_script(), "--version"]),
    }


def phases(env: dict[str, str], runs: int = 5) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-c", PHASES, REQUEST],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        samples.append(json.loads(proc.stdout))
    return {k: statistics.median(s[k] for s in samples) for k in samples[0] if k != "order"}


def importtime(env: dict[str, str], top: int = 15) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "riido_pg", "hints", "--identifier-hints"],
        input=REQUEST,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = line.split(":", 1)[1].split("|")
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        rows.append(
            {
                "module": name.strip(),
                "self_ms": int(self_us) / 1000,
                "cumulative_ms": int(cum_us) / 1000,
                "depth": depth,
            }
        )
    total = sum(r["self_ms"] for r in rows)
    # outermost imports (depth 0), including ones made lazily at run time, children included
    tops = sorted((r for r in rows if r["depth"] == 0), key=lambda r: -r["cumulative_ms"])
    return [{"total_import_ms": round(total, 1)}, *tops[:top]]


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--no-embedded", action="store_true", help="skip the embedded default")
    args = p.parse_args()
    if args.quick:
        args.runs = 3
    results: dict[str, Any] = {"target_s": TARGET_S}
    with bench_database(args.dsn, "hints", keep=args.keep) as dsn:
        env = _env(dsn, None)
        results["server"] = measure(env, args.runs)
        results["baseline"] = baseline_costs(env)
        results["phases_server"] = phases(env)
        results["importtime"] = importtime(env)
    if not args.no_embedded:
        home = tempfile.mkdtemp(prefix="riido-bench-home-")
        env = _env(None, home)
        try:
            t0 = time.perf_counter()
            run_once(env)
            results["embedded_first_run_s"] = time.perf_counter() - t0  # initdb + start
            results["embedded"] = measure(env, args.runs)
            results["phases_embedded"] = phases(env)
        finally:
            subprocess.run([*_script(), "db", "stop"], env=env, capture_output=True, check=False)
            shutil.rmtree(home, ignore_errors=True)

    rows = []
    for where in ("server", "embedded"):
        if where in results:
            r = results[where]
            rows.append(
                [
                    where,
                    r["runs"],
                    round(r["median_s"], 3),
                    round(r["p95_s"], 3),
                    round(r["min_s"], 3),
                    round(r["cpu_median_s"], 3),
                    f"≤ {TARGET_S} s",
                    "yes" if r["median_s"] <= TARGET_S else "no",
                    round(r["load_avg"], 1),
                ]
            )
    print("\n### `riido-pg hints --identifier-hints` (the README main job), whole process\n")
    print(
        markdown_table(
            [
                "database",
                "runs",
                "median s",
                "p95 s",
                "min s",
                "client CPU s (median)",
                "target",
                "met",
                "load avg",
            ],
            rows,
        )
    )
    if "embedded_first_run_s" in results:
        first = results["embedded_first_run_s"]
        print(f"\nembedded first run (initdb + start + migrate): {first:.2f} s")
    b = results["baseline"]
    print("\n### Where one run's time goes (in-process, median of 5)\n")
    prow = [
        ["python -c pass", round(b["python_-c_pass_s"] * 1000, 1)],
        ["riido-pg --version", round(b["riido-pg_--version_s"] * 1000, 1)],
    ]
    for k, v in results["phases_server"].items():
        prow.append([f"server: {k}", round(v * 1000, 1)])
    for k, v in results.get("phases_embedded", {}).items():
        prow.append([f"embedded: {k}", round(v * 1000, 1)])
    print(markdown_table(["phase", "ms"], prow))
    it = results["importtime"]
    print(
        f"\n### python -X importtime (total self time {it[0]['total_import_ms']} ms), "
        "outermost imports by cumulative time\n"
    )
    print(
        markdown_table(
            ["module", "cumulative ms", "self ms"],
            [[r["module"], round(r["cumulative_ms"], 1), round(r["self_ms"], 1)] for r in it[1:]],
        )
    )
    write_results("hints", results, args.out)


if __name__ == "__main__":
    main()
