"""Running ``riido-pg`` in the tests: in this process, or as a real process.

:func:`run_cli` calls :func:`riido_pg.cli.main.main` in this process, set up as a new
process would find things: stdin, stdout and stderr are typer's ``CliRunner``
buffers (not terminals, like pipes), the environment is :func:`cli_env`'s, the
root logger is bare and logging enabled, the SIGINT and SIGTERM handlers ``main()`` installs and
the model cache (:func:`riido_pg.ranking.model_hints.model_named`) are reset
afterwards, and an exception ``main()`` lets through (``--debug``) becomes a
traceback on stderr and exit 1, as the interpreter does. The click command typer
builds from the ``app`` (``typer.main.get_command``, ~0.1 s of reading signatures and
annotations, what a process pays once) is built once for the session and reused by
every run, as a long-lived process would. Its result is what
:func:`run_cli_process` gives for the same call; ``tests/test_cli_runner.py`` checks
that they agree. One difference is on purpose: a warning raised during the run is an
error, as everywhere in the suite (pytest's ``filterwarnings``), where a process
would print it or stay silent.

:func:`run_cli_process` and :func:`spawn` start ``python -m riido_pg``: for what a
process is needed for (signals, a process killed mid-work, the embedded server,
clusters and standbys, terminals, arguments that are not UTF-8, import costs).
A spawned process is killed and reaped when its block ends, so a test that fails
or times out never leaves one running into the next test. :func:`run_on_terminal`
runs one with stdout or stderr on a pseudo-terminal and gives what it drew there.
"""

from __future__ import annotations

import atexit
import io
import json
import logging
import os
import pty
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any, Literal

import typer.main
from typer.testing import CliRunner

try:  # the click that typer uses: its own copy (newer typer) or the click package
    from typer._click import formatting
except ImportError:  # pragma: no cover
    from click import formatting  # type: ignore[no-redef]

__all__ = [
    "DEFAULT_TIMEOUT",
    "EXAMPLE",
    "EXAMPLE_REQUEST",
    "Cli",
    "CliResult",
    "cli_env",
    "reaped",
    "run_cli",
    "run_cli_process",
    "run_on_terminal",
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


#: The ``cli`` and ``cli_process`` fixtures: ``cli(args, input=..., env=...)``, a run
#: against the test module's database.
Cli = Callable[..., CliResult]


#: The home of CLI runs against a server (``dsn`` given) that name none: riido-pg
#: keeps caches there (``load --rev``'s parsed files), never in the user's own home.
SCRATCH_HOME = Path(tempfile.mkdtemp(prefix="riido-pg-test-home-")) / "home"
atexit.register(shutil.rmtree, SCRATCH_HOME.parent, True)


def cli_env(dsn: str | None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a CLI run: this process's without any ``RIIDO_PG_*``
    variable, ``RIIDO_PG_DSN`` set to ``dsn`` (unless None), then ``env``; with a
    ``dsn`` and no ``RIIDO_PG_HOME`` in ``env``, the home is :data:`SCRATCH_HOME`."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("RIIDO_PG_")}
    if dsn is not None:
        full["RIIDO_PG_DSN"] = dsn
        full["RIIDO_PG_HOME"] = str(SCRATCH_HOME)
    full.update(env or {})
    return full


# -- in this process ------------------------------------------------------------------


class _TimeIsUp(BaseException):
    """Raised in the main thread when a run passes its timeout (not an ``Exception``:
    ``main()`` must not report it as an error of its own)."""


def _time_is_up(signum: int, frame: FrameType | None) -> None:
    raise _TimeIsUp


def _set_environ(wanted: Mapping[str, str]) -> None:
    for key in [k for k in os.environ if k not in wanted]:
        del os.environ[key]
    for key, value in wanted.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


def _forget_models() -> None:
    """Empty the process-wide model cache (a new process starts without it). The other
    ``functools.cache`` functions of the library (SQL texts, tree-sitter grammars and
    queries) are pure functions of the installed package and may stay warm."""
    module = sys.modules.get("riido_pg.ranking.model_hints")
    if module is not None:
        module.model_named.cache_clear()


_get_command = typer.main.get_command
_commands: dict[int, tuple[Any, Any]] = {}


def _command_built_once(app: Any) -> Any:
    """``typer.main.get_command(app)``, built on the first call for ``app`` only (the
    app is kept with it: its id stays its own)."""
    if id(app) not in _commands:
        _commands[id(app)] = (app, _get_command(app))
    return _commands[id(app)][1]


@contextmanager
def _as_a_new_process(env: Mapping[str, str]) -> Iterator[None]:
    """This process's global state as a new ``riido-pg`` process finds it, and put back
    afterwards: environment, root logger, logging switch, SIGINT and SIGTERM handlers,
    model cache; ``typer.main.get_command`` answers from :func:`_command_built_once`
    meanwhile."""
    saved_env = dict(os.environ)
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    saved_disable = logging.root.manager.disable
    saved_signals = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for handler in saved_handlers:
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)
    logging.disable(logging.NOTSET)
    _forget_models()
    _set_environ(env)
    typer.main.get_command = _command_built_once
    try:
        yield
    finally:
        typer.main.get_command = _get_command
        _set_environ(saved_env)
        _forget_models()
        for signum, handler in saved_signals.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        for handler in list(root.handlers):  # --debug's logging.basicConfig
            root.removeHandler(handler)
        for handler in saved_handlers:
            root.addHandler(handler)
        root.setLevel(saved_level)
        logging.disable(saved_disable)


def _help_width(env: Mapping[str, str]) -> int:
    """The help width click picks in a process whose stdout is a pipe: the terminal
    size is ``COLUMNS`` when set, else 80 (:func:`shutil.get_terminal_size`)."""
    try:
        columns = int(env.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    return max(min(columns if columns > 0 else 80, 80) - 2, 50)


def _exit_status(exc: SystemExit) -> int:
    """The exit status of a process ending with ``exc``, as the interpreter makes it."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _call_main(argv: list[str], timeout: float) -> int:
    from riido_pg.cli.main import main

    previous = signal.signal(signal.SIGALRM, _time_is_up)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        try:
            main(argv)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    except SystemExit as exc:
        return _exit_status(exc)
    except _TimeIsUp:
        raise
    except BaseException as exc:  # what the interpreter prints for an uncaught exception
        traceback.print_exception(exc)
        return 1
    return 0


def run_cli(
    args: Sequence[str],
    *,
    dsn: str | None,
    input: bytes | str | io.RawIOBase | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> CliResult:
    """``riido-pg ARGS`` in this process, with RIIDO_PG_DSN set to ``dsn`` and stdin
    ``input`` (bytes, text, or a raw stream read as it goes); as
    :func:`run_cli_process` would run it (see the module's docstring). Runs in the
    main thread only (``main()`` installs a signal handler)."""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("run_cli works in the main thread only; use run_cli_process")
    argv = list(args)
    stream = input if isinstance(input, io.RawIOBase) else None
    with (
        _as_a_new_process(cli_env(dsn, env)),
        CliRunner().isolation(input=None if stream else input) as (stdout, stderr, _),
    ):
        if stream is not None:
            sys.stdin = io.TextIOWrapper(io.BufferedReader(stream), encoding="utf-8")
        formatting.FORCED_WIDTH = _help_width(os.environ)
        try:
            code = _call_main(argv, timeout)
        except _TimeIsUp:
            code = -1
        sys.stdout.flush()
        sys.stderr.flush()
        out, err = stdout.getvalue(), stderr.getvalue()  # the buffers close on the way out
    if code == -1:
        raise subprocess.TimeoutExpired(["riido-pg", *argv], timeout, out, err)
    return CliResult(code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


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
    :func:`cli_env`), for the block; killed and reaped when it ends. The child gets
    SIGINT's default disposition whatever the suite was started with (a shell starts
    a background job with SIGINT ignored, and Python then installs no handler), so
    the interrupt tests send a signal the child hears; ``preexec_fn`` runs after."""
    then = popen.pop("preexec_fn", None)

    def default_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if then is not None:
            then()

    popen["preexec_fn"] = default_sigint
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


def run_cli_process(
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


@dataclass(frozen=True)
class TerminalRun:
    """A process run with one stream on a terminal (:func:`run_on_terminal`)."""

    code: int
    #: Everything the process wrote on the terminal, escape sequences included.
    terminal: bytes
    #: The other stream (a pipe), whole.
    piped: bytes


def run_on_terminal(
    args: Sequence[str],
    *,
    dsn: str | None,
    env: Mapping[str, str] | None = None,
    stream: Literal["stdout", "stderr"] = "stderr",
    timeout: float = DEFAULT_TIMEOUT,
) -> TerminalRun:
    """Run ``python -m riido_pg ARGS`` (:func:`spawn`) with ``stream`` on a
    pseudo-terminal, the other piped, and read the terminal until the process closes
    it (on Linux reading a closed terminal's leader raises ``EIO``: the end)."""
    leader, follower = pty.openpty()
    seen = b""
    try:
        with spawn(args, dsn=dsn, env=env, **{stream: follower}) as proc:
            os.close(follower)
            follower = -1
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal closed when the process exited
                    break
                if not chunk:
                    break
                seen += chunk
            out, err = proc.communicate(timeout=timeout)
    finally:
        for fd in (follower, leader):
            if fd >= 0:
                os.close(fd)
    return TerminalRun(proc.returncode, seen, err if stream == "stdout" else out)
