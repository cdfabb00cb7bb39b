"""Running ``riido-pg`` in the tests as a real process.

:func:`run_cli` and :func:`spawn` start ``python -m riido_pg``. A spawned process is
killed and reaped when its block ends, so a test that fails or times out never
leaves one running into the next test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

__all__ = [
    "DEFAULT_TIMEOUT",
    "EXAMPLE",
    "EXAMPLE_REQUEST",
    "CliResult",
    "cli_env",
    "reaped",
    "run_cli",
    "spawn",
]

#: Seconds a CLI run may take before the test fails (a hang, not a slow machine: the
#: slowest run of the suite takes well under a minute on a loaded 2-core machine).
DEFAULT_TIMEOUT = 300.0

#: The README main-job example request.
EXAMPLE_REQUEST: dict[str, Any] = {
    "snapshot_id": "demo",
    "query": "read config",
    "documents": [
        {"id": "a", "text": "read"},
        {"id": "b", "text": "config"},
        {"id": "c", "text": "func ReadConfig() {}"},
    ],
}
#: ... as the JSON text piped into `riido-pg hints`.
EXAMPLE = json.dumps(EXAMPLE_REQUEST)


@dataclass(frozen=True)
class CliResult:
    code: int
    stdout: str
    stderr: str


def cli_env(dsn: str | None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a CLI run: this process's without any ``RIIDO_PG_*``
    variable, ``RIIDO_PG_DSN`` set to ``dsn`` (unless None), then ``env``."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("RIIDO_PG_")}
    if dsn is not None:
        full["RIIDO_PG_DSN"] = dsn
    full.update(env or {})
    return full


# -- as a real process ----------------------------------------------------------------


@contextmanager
def reaped(proc: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    """``proc`` for the block; then killed if it still runs, waited for and its pipes
    closed, whatever happened in the block."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        with proc:  # closes the pipes and waits
            pass


@contextmanager
def spawn(
    args: Sequence[str],
    *,
    dsn: str | None,
    env: Mapping[str, str] | None = None,
    stdin: int | IO[Any] | None = subprocess.DEVNULL,
    stdout: int | IO[Any] | None = subprocess.PIPE,
    stderr: int | IO[Any] | None = subprocess.PIPE,
    **popen: Any,
) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m riido_pg ARGS`` started in the background (environment
    :func:`cli_env`), for the block; killed and reaped when it ends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "riido_pg", *args],
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=cli_env(dsn, env),
        **popen,
    )
    with reaped(proc):
        yield proc


def run_cli(
    args: Sequence[str],
    *,
    dsn: str | None,
    input: bytes | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> CliResult:
    """Run ``python -m riido_pg ARGS`` as a user would, with RIIDO_PG_DSN set to ``dsn``;
    on a timeout it is killed and reaped, and ``subprocess.TimeoutExpired`` raised."""
    data = input.encode() if isinstance(input, str) else input
    with spawn(args, dsn=dsn, env=env, stdin=subprocess.PIPE) as proc:
        out, err = proc.communicate(data if data is not None else b"", timeout=timeout)
    return CliResult(
        proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    )
