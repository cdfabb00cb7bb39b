"""Shared plumbing for the benchmark scripts (not a test module; nothing here is timed).

Each script creates its own database ``riido_bench_<name>_<random>`` on the server
named by ``--dsn``, migrates it (``tests/support/database.py``, shared with the tests),
and drops it at the end (``--keep`` keeps it for inspection). Results go to
``bench/out/<name>.json`` (gitignored) and a small markdown table goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
OUT_DIR = BENCH_DIR / "out"
DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"

if str(REPO) not in sys.path:  # run as `python bench/x.py` from a checkout
    sys.path.insert(0, str(REPO))
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))
if str(REPO / "tests") not in sys.path:  # the tests' helpers (package `support`), last
    sys.path.append(str(REPO / "tests"))

from support import database  # noqa: E402
from support.database import drop_database  # noqa: E402


def base_parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument(
        "--dsn",
        default=os.environ.get("RIIDO_BENCH_DSN", DEFAULT_DSN),
        help=f"server to create the benchmark database on (default {DEFAULT_DSN})",
    )
    p.add_argument("--quick", action="store_true", help="a small smoke run")
    p.add_argument("--keep", action="store_true", help="do not drop the benchmark database")
    p.add_argument("--out", type=Path, default=None, help="JSON result file (default bench/out/)")
    return p


def create_database(server_dsn: str, name: str, *, migrated: bool = True) -> tuple[str, str]:
    """Create and migrate ``riido_bench_<name>_<hex>`` (env ``RIIDO_BENCH_DB_PREFIX``
    replaces ``riido_bench``); return (dbname, dsn)."""
    prefix = os.environ.get("RIIDO_BENCH_DB_PREFIX", "riido_bench")
    created = database.create_database(server_dsn, f"{prefix}_{name}", migrated=migrated)
    return created.name, created.dsn


@contextmanager
def bench_database(server_dsn: str, name: str, *, keep: bool = False) -> Iterator[str]:
    dbname, dsn = create_database(server_dsn, name)
    try:
        yield dsn
    finally:
        if keep:
            print(f"(kept database {dbname})", file=sys.stderr)
        else:
            drop_database(server_dsn, dbname)


def connect(dsn: str) -> Any:
    """An autocommit connection the way the CLI opens one (timeouts included)."""
    from riido_pg.db import connect as riido_connect

    return riido_connect(dsn, migrate=True)


def server_info(dsn: str) -> dict[str, Any]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        settings = {
            name: conn.execute(f"SHOW {name}").fetchone()[0]
            for name in (
                "server_version",
                "shared_buffers",
                "work_mem",
                "synchronous_commit",
                "max_wal_size",
                "max_parallel_workers_per_gather",
                "jit",
            )
        }
    return settings


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    try:
        import psutil

        info["memory_gb"] = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:
        pass
    return info


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100), linear interpolation; values need not be sorted."""
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 3),
        "p95_ms": round(percentile(ms, 95), 3),
        "mean_ms": round(statistics.fmean(ms), 3) if ms else float("nan"),
        "max_ms": round(max(ms), 3) if ms else float("nan"),
    }


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            if v != v:  # NaN
                return "–"
            return f"{v:,.1f}" if abs(v) >= 100 else f"{v:.3g}" if abs(v) < 1 else f"{v:.2f}"
        if isinstance(v, int):
            return f"{v:,}"
        return str(v)

    def numeric(i: int) -> bool:
        return bool(rows) and all(isinstance(r[i], int | float) or r[i] == "" for r in rows)

    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---:" if numeric(i) else "---" for i in range(len(headers))) + "|",
    ]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_results(name: str, data: dict[str, Any], out: Path | None = None) -> Path:
    path = out or OUT_DIR / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "benchmark": name,
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine_info(),
        **data,
    }
    path.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
    print(f"\nresults: {path}", file=sys.stderr)
    return path


class Timer:
    """Records (label, seconds since start) marks."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.marks: list[tuple[str, float]] = []

    def mark(self, label: str) -> None:
        self.marks.append((label, time.perf_counter() - self.t0))

    def phases(self) -> dict[str, float]:
        out: dict[str, float] = {}
        prev = 0.0
        for label, t in self.marks:
            out[label] = out.get(label, 0.0) + (t - prev)
            prev = t
        return out


_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def proc_cpu_seconds(pid: int) -> float | None:
    """user+sys CPU seconds of a local process (a PostgreSQL backend), from /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


class CpuClock:
    """Wall time, this process's CPU time and one server backend's CPU time, per lap.

    On a shared 2-core machine wall times move with the neighbours' load; CPU times
    measure the work itself. The backend's CPU is read from /proc, so it is only
    available when the server runs on this machine (else reported as None).
    """

    def __init__(self, backend_pid: int | None) -> None:
        self.pid = backend_pid
        self.wall: dict[str, float] = {}
        self.client_cpu: dict[str, float] = {}
        self.server_cpu: dict[str, float | None] = {}
        self._last = self._now()

    def _now(self) -> tuple[float, float, float | None]:
        return (
            time.perf_counter(),
            time.process_time(),
            proc_cpu_seconds(self.pid) if self.pid else None,
        )

    def lap(self, name: str) -> None:
        now = self._now()
        w, c, s = (
            now[0] - self._last[0],
            now[1] - self._last[1],
            None if now[2] is None or self._last[2] is None else now[2] - self._last[2],
        )
        self.wall[name] = self.wall.get(name, 0.0) + w
        self.client_cpu[name] = self.client_cpu.get(name, 0.0) + c
        prev = self.server_cpu.get(name, 0.0)
        self.server_cpu[name] = None if s is None or prev is None else prev + s
        self._last = now

    def totals(self) -> dict[str, float | None]:
        scpu = list(self.server_cpu.values())
        return {
            "wall_s": sum(self.wall.values()),
            "client_cpu_s": sum(self.client_cpu.values()),
            "server_cpu_s": None if any(v is None for v in scpu) else sum(scpu),
        }  # type: ignore[arg-type]

    def as_dict(self) -> dict[str, Any]:
        return {
            "wall_s": self.wall,
            "client_cpu_s": self.client_cpu,
            "server_cpu_s": self.server_cpu,
            **{f"total_{k}": v for k, v in self.totals().items()},
        }
