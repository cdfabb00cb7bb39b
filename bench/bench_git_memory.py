"""Peak memory of reading a git revision against reading its checkout.

A synthetic repository is written with ``git fast-import`` into a temporary
directory: ``--files`` Python files of ``--functions`` functions each in directories
of 100, one commit, checked out; then a second commit rewriting one ``--huge-mb`` MB
Python file (over the extraction's size limit) besides one ordinary change. Each
command runs as its own process; its peak resident set and that of the largest
git process it started are reported (see :func:`peak`):

* ``load DIR`` (the checkout) and ``load DIR --rev`` into a fresh database (the
  second ``--rev`` load of the same tree with the file cache the first one left);
* ``extract DIR`` and ``extract DIR --rev`` to ``/dev/null`` (no file cache);
* ``corpus history DIR`` over the commit rewriting the huge file.

    python bench/bench_git_memory.py                     # 100,000 files of 3 functions
    python bench/bench_git_memory.py --files 20000 --functions 15
    python bench/bench_git_memory.py --quick
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import base_parser, bench_database, markdown_table, write_results


def _git(repo: Path, *args: str, input: bytes | None = None) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    subprocess.run(["git", "-C", str(repo), *args], input=input, env=env, check=True)


def _python(n: int, functions: int) -> bytes:
    return "\n\n".join(
        f"def handler_{n}_{i}(request, value):\n    total = value + {i}\n    return total * {n}\n"
        for i in range(functions)
    ).encode()


def _data(data: bytes) -> bytes:
    return b"data %d\n" % len(data) + data + b"\n"


def build_repository(path: Path, files: int, functions: int, huge_mb: int) -> None:
    """The repository (see the module docstring), checked out at its second commit."""
    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    huge = b"".join(b"def filler_%d(x):\n    return x + %d\n\n" % (i, i) for i in range(10))
    huge = huge * (huge_mb * (1 << 20) // len(huge) + 1)
    first = _python(0, functions).replace(b"value + 0", b"value - 0", 1)
    stream = [b"commit refs/heads/main\ncommitter A <a@b> 1700000000 +0000\n"]
    stream.append(_data(b"Write every handler of the service"))
    for n in range(files):
        stream.append(b"M 100644 inline pkg%d/mod%d.py\n" % (n // 100, n))
        stream.append(_data(_python(n, functions)))
    stream.append(b"M 100644 inline big/huge.py\n" + _data(huge))
    stream.append(b"commit refs/heads/main\ncommitter A <a@b> 1700000060 +0000\n")
    stream.append(_data(b"Rewrite the huge file and fix the first handler's total"))
    stream.append(b"M 100644 inline big/huge.py\n" + _data(huge.replace(b"x + ", b"x - ")))
    stream.append(b"M 100644 inline pkg0/mod0.py\n" + _data(first))
    _git(path, "fast-import", "--quiet", input=b"".join(stream))
    _git(path, "checkout", "-q", "-f", "main")


def _hwm_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def peak(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float, int]:
    """(seconds, peak RSS of riido-pg in MB, of its largest git child in MB, exit
    status) of ``riido-pg ARGS`` as a new process.

    A peak is a process's ``VmHWM`` (``/proc/PID/status``), read every 20 ms until
    it exits (the high-water mark only grows, so the last reading is the peak, but a
    child living less than 20 ms can be missed): ``ru_maxrss`` would count the
    memory of this script, which a child inherits at fork. ``cwd`` is not this
    checkout, so ``PYTHONPATH`` chooses the code measured."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "riido_pg", *args],
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        own = children = 0
        while proc.poll() is None:
            own = max(own, _hwm_kb(proc.pid))
            for child in _children(proc.pid):
                children = max(children, _hwm_kb(child))
            time.sleep(0.02)
        if proc.returncode != 0:
            err.seek(0)
            print(err.read().decode(errors="replace"), file=sys.stderr)
    return time.perf_counter() - start, own / 1024, children / 1024, proc.returncode


def main() -> None:
    parser = base_parser(__doc__ or "")
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--functions", type=int, default=3)
    parser.add_argument("--huge-mb", type=int, default=90)
    args = parser.parse_args()
    if args.quick:
        args.files, args.huge_mb = 2000, 5
    rows: list[list[Any]] = []
    results: dict[str, Any] = {
        "files": args.files,
        "functions": args.files * args.functions,
        "huge_mb": args.huge_mb,
    }
    with tempfile.TemporaryDirectory() as tmp, bench_database(args.dsn, "gitmem") as dsn:
        repo = Path(tmp) / "repo"
        build_repository(repo, args.files, args.functions, args.huge_mb)
        env = {k: v for k, v in os.environ.items() if not k.startswith("RIIDO_PG_")}
        env.update(RIIDO_PG_DSN=dsn, RIIDO_PG_HOME=str(Path(tmp) / "home"))
        _git(repo, "checkout", "-q", "HEAD~1")
        commands = {
            "load DIR (checkout)": ["load", "dir", str(repo)],
            "load DIR --rev (cold cache)": ["load", "rev", str(repo), "--rev", "HEAD"],
            "load DIR --rev (warm cache)": ["load", "rev2", str(repo), "--rev", "HEAD"],
            "extract DIR (checkout)": ["extract", str(repo), "--output", os.devnull],
            "extract DIR --rev": ["extract", str(repo), "--rev", "HEAD", "--output", os.devnull],
        }
        for label, command in commands.items():
            seconds, mb, git_mb, code = peak(command, env, Path(tmp))
            rows.append([label, f"{mb:.0f}", f"{git_mb:.0f}", f"{seconds:.1f}", code])
            results[label] = {"peak_mb": mb, "git_mb": git_mb, "seconds": seconds, "exit": code}
        _git(repo, "checkout", "-q", "main")
        out = Path(tmp) / "corpus"
        command = ["corpus", "history", str(repo), "--output", str(out)]
        seconds, mb, git_mb, code = peak(command, env, Path(tmp))
        label = f"corpus history (a {args.huge_mb} MB file rewritten)"
        rows.append([label, f"{mb:.0f}", f"{git_mb:.0f}", f"{seconds:.1f}", code])
        results[label] = {"peak_mb": mb, "git_mb": git_mb, "seconds": seconds, "exit": code}
    print(
        f"{args.files:,} files, {args.files * args.functions:,} functions, "
        f"one {args.huge_mb} MB file\n"
    )
    print(markdown_table(["command", "peak RSS MB", "git's peak MB", "wall s", "exit"], rows))
    write_results("git_memory", results, args.out)


if __name__ == "__main__":
    main()
