"""How the command line reports a failure: one ``error:`` line and an exit code.

The library's errors carry no exit code: the code is chosen here, by class (the
first of the error's classes, most specific first, found in :data:`EXIT_CODES`), and
the message is the error rendered with its command-line hint. Control characters in
it are shown as escapes (:func:`riido_pg.quoting.visible`): a name from an untrusted
tree never drives the terminal, and the error stays on one line.
"""

from __future__ import annotations

import signal
import sys
from typing import Any, NoReturn

import typer

from riido_pg import InvalidInput, RiidoError
from riido_pg.api import visible

__all__ = [
    "EXIT_CODES",
    "SIGNALS",
    "OptionError",
    "exit_code",
    "fail",
    "message",
    "usage_message",
]

#: Exit code by error class (README "Command line", errors).
EXIT_CODES: dict[type[BaseException], int] = {
    InvalidInput: 2,  # bad input, usage, conflicting options
    RiidoError: 1,  # the environment: server, schema, permissions, timeouts
}
#: Exit code and message of the signals that stop a command.
SIGNALS: dict[signal.Signals, tuple[int, str]] = {
    signal.SIGINT: (130, "interrupted"),
    signal.SIGTERM: (143, "terminated"),
}


def exit_code(exc: BaseException) -> int:
    """The exit code of ``exc``: its nearest class in :data:`EXIT_CODES`, else 1."""
    return next((EXIT_CODES[c] for c in type(exc).__mro__ if c in EXIT_CODES), 1)


def message(exc: RiidoError) -> str:
    """``exc`` as the command line says it: the message and its command-line hint."""
    return exc.render(cli=True)


def fail(text: str, code: int) -> NoReturn:
    """Print ``error: TEXT`` (control characters escaped) on stderr and exit ``code``."""
    sys.stderr.write(f"error: {visible(text)}\n")
    sys.stderr.flush()
    raise SystemExit(code)


class OptionError(typer.BadParameter):
    """A bad option value, worded by riido-pg (``--limit must be ...``): shown as it is."""

    def format_message(self) -> str:
        return self.message


def usage_message(exc: Any) -> str:
    """A usage error of click (a missing argument, an unknown option, a bad value) in
    the house style: lower case, no final period, and where to read the usage."""
    text = exc.format_message().strip().rstrip(".")
    text = text[:1].lower() + text[1:]
    ctx = getattr(exc, "ctx", None)
    return f"{text} (see `{ctx.command_path} --help`)" if ctx is not None else text
