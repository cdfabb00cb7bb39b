"""Extraction speed: the whole Python standard library of this interpreter.

Runs ``iter_functions`` once (one core) over ``sysconfig.get_paths()["stdlib"]``,
leaving out ``site-packages`` (third-party code, whatever happens to be
installed), and prints files, functions, seconds and functions per second.
The target is at least 5,000 functions/s of wall time; cpu time is printed
too, since other load on the machine shows in the wall time only. Nothing is
written to disk; the exit status is 1 when the target is missed.

    .venv/bin/python bench/bench_extract.py [DIR]
"""

from __future__ import annotations

import sys
import sysconfig
import time
from pathlib import Path

from riido_pg.extract import ExtractStats, iter_functions

TARGET_PER_SECOND = 5_000


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(sysconfig.get_paths()["stdlib"])
    stats = ExtractStats()
    started = time.perf_counter()
    cpu_started = time.process_time()
    text_bytes = 0
    for function in iter_functions(root, excludes=["site-packages/"], stats=stats):
        text_bytes += len(function.text)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    rate = stats.functions / seconds if seconds else 0.0
    print(f"root: {root}")
    print(f"summary: {stats.describe()}")
    print(f"files extracted: {stats.files_extracted}")
    print(f"functions: {stats.functions}")
    print(f"text characters: {text_bytes}")
    print(f"seconds: {seconds:.2f} wall, {cpu_seconds:.2f} cpu")
    print(f"functions/s: {rate:,.0f} wall (target {TARGET_PER_SECOND:,})")
    if cpu_seconds:
        print(f"functions/cpu-s: {stats.functions / cpu_seconds:,.0f}")
    return 0 if rate >= TARGET_PER_SECOND else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
