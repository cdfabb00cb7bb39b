"""Extraction speed: the whole Python standard library of this interpreter.

Runs ``iter_functions`` once (one core) over ``sysconfig.get_paths()["stdlib"]``,
leaving out ``site-packages`` (third-party code, whatever happens to be
installed), and prints files, functions, seconds and functions per second.
The target is at least 5,000 functions/s. Nothing is written to disk.

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
    text_bytes = 0
    for function in iter_functions(root, excludes=["site-packages/"], stats=stats):
        text_bytes += len(function.text)
    seconds = time.perf_counter() - started
    rate = stats.functions / seconds if seconds else 0.0
    print(f"root: {root}")
    print(f"summary: {stats.describe()}")
    print(f"files extracted: {stats.files_extracted}")
    print(f"functions: {stats.functions}")
    print(f"text characters: {text_bytes}")
    print(f"seconds: {seconds:.2f}")
    print(f"functions/s: {rate:,.0f} (target {TARGET_PER_SECOND:,})")
    return 0 if rate >= TARGET_PER_SECOND else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
