"""Every environment variable riido-pg reads, declared and validated in one place.

Each :class:`Variable` has a name, a one-line meaning, what a value must be, and its
default; its accessor below reads the environment at call time (so a caller, or a test,
may change it between calls) and validates the value the same way every time. An empty
value counts as unset. A value riido-pg cannot use raises :class:`InvalidSetting`, one
line naming the variable and what it must be (exit 2 on the command line).
:func:`check` validates them all at once; :func:`riido_pg.db.connect` calls it before
it touches a server, so a bad setting is reported before any work starts.

README "Database" and "Limits and guarantees" (Timeouts) describe what they do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from riido_pg.errors import InvalidSetting
from riido_pg.redact import dsn_params

__all__ = [
    "DEFAULT_LOAD_TIMEOUT_MS",
    "DEFAULT_LOAD_WORK_MEM",
    "DEFAULT_LOCK_TIMEOUT_MS",
    "DEFAULT_STATEMENT_TIMEOUT_MS",
    "VARIABLES",
    "Variable",
    "check",
    "dsn",
    "home",
    "home_override",
    "load_timeout_ms",
    "load_work_mem",
    "lock_timeout_ms",
    "runtime_dir",
    "statement_timeout_ms",
]

T = TypeVar("T", covariant=True)

#: Queries and ``hints``: PostgreSQL's ``statement_timeout`` (milliseconds).
DEFAULT_STATEMENT_TIMEOUT_MS = 60_000
#: Every statement: PostgreSQL's ``lock_timeout`` (milliseconds).
DEFAULT_LOCK_TIMEOUT_MS = 5_000
#: Loads: no statement timeout; they are bounded by their input.
DEFAULT_LOAD_TIMEOUT_MS = 0
#: ``work_mem`` of the statement building a column's postings during a load.
DEFAULT_LOAD_WORK_MEM = "256MB"

#: PostgreSQL's largest value of an integer setting (``statement_timeout``, ``work_mem``).
_PG_INT_MAX = 2_147_483_647
#: PostgreSQL's smallest ``work_mem``, in kB.
_WORK_MEM_MIN_KB = 64
_KB_PER_UNIT = {"B": 1 / 1024, "kB": 1, "MB": 1024, "GB": 1024**2, "TB": 1024**3}
_SHOWN = 60


@dataclass(frozen=True)
class Variable(Generic[T]):
    """One environment variable: ``parse`` turns a non-empty value into ``T`` or raises
    ``ValueError`` (its text, if any, is the reason); a ``secret`` value is never shown."""

    name: str
    meaning: str
    expects: str
    default: str
    parse: Callable[[str], T]
    secret: bool = False

    def raw(self) -> str | None:
        """The value as set, or ``None`` when unset or empty."""
        value = os.environ.get(self.name)
        return value if value else None

    def get(self) -> T | None:
        """The validated value, or ``None`` when unset (the accessor applies the default)."""
        value = self.raw()
        if value is None:
            return None
        try:
            return self.parse(value)
        except ValueError as exc:
            raise InvalidSetting(self._message(value, str(exc))) from None

    def _message(self, value: str, reason: str) -> str:
        message = f"{self.name} must be {self.expects}"
        if reason:
            message += f": {reason}"
        if not self.secret:
            shown = value if len(value) <= _SHOWN else f"{value[:_SHOWN]}..."
            message += f", not {shown!r}"
        return message


# --- parsers --------------------------------------------------------------------------


def _dsn(value: str) -> str:
    dsn_params(value)  # a ValueError naming libpq's reason, none of the input
    return value


def _path(value: str) -> Path:
    try:
        return Path(value).expanduser().resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop, an unknown ~user
        raise ValueError(str(exc).lower()) from None


def _milliseconds(value: str) -> int:
    text = value.strip()
    if not text.isascii() or not text.isdigit() or int(text) > _PG_INT_MAX:
        raise ValueError("")
    return int(text)


def _memory(value: str) -> str:
    match = re.fullmatch(r"\s*([0-9]+)\s*(B|kB|MB|GB|TB)?\s*", value)
    if match is None:
        raise ValueError("")
    number, unit = int(match.group(1)), match.group(2) or "kB"
    kilobytes = number * _KB_PER_UNIT[unit]
    if not _WORK_MEM_MIN_KB <= kilobytes <= _PG_INT_MAX:
        raise ValueError("")
    return f"{number}{unit}"


def _runtime_dir(value: str) -> Path | None:
    path = Path(value)
    return path if path.is_absolute() else None  # the XDG spec: ignore a relative path


# --- the variables --------------------------------------------------------------------

_MS = f"a whole number of milliseconds from 0 to {_PG_INT_MAX:,} (0: no limit)"

DSN = Variable(
    "RIIDO_PG_DSN",
    "the PostgreSQL server to use (``--dsn`` overrides it)",
    "a PostgreSQL connection string (a postgresql:// URL or key=value pairs)",
    "unset: the embedded server",
    _dsn,
    secret=True,
)
HOME = Variable(
    "RIIDO_PG_HOME",
    "where riido-pg keeps its files: the embedded server's data and lock, downloads",
    "a directory path",
    "the user data directory (~/.local/share/riido-pg on Linux)",
    _path,
)
STATEMENT_TIMEOUT = Variable(
    "RIIDO_PG_STATEMENT_TIMEOUT_MS",
    "statement timeout of queries and hints",
    _MS,
    f"{DEFAULT_STATEMENT_TIMEOUT_MS}",
    _milliseconds,
)
LOCK_TIMEOUT = Variable(
    "RIIDO_PG_LOCK_TIMEOUT_MS",
    "how long any statement waits for a lock",
    _MS,
    f"{DEFAULT_LOCK_TIMEOUT_MS}",
    _milliseconds,
)
LOAD_TIMEOUT = Variable(
    "RIIDO_PG_LOAD_TIMEOUT_MS",
    "statement timeout of a load's statements",
    _MS,
    f"{DEFAULT_LOAD_TIMEOUT_MS} (no limit)",
    _milliseconds,
)
LOAD_WORK_MEM = Variable(
    "RIIDO_PG_LOAD_WORK_MEM",
    "work_mem of the statement building a load's postings",
    f"a PostgreSQL memory size such as 256MB (64kB to {_PG_INT_MAX}kB; a whole number, "
    "unit B, kB, MB, GB or TB, kB if none)",
    DEFAULT_LOAD_WORK_MEM,
    _memory,
)
RUNTIME_DIR = Variable(
    "XDG_RUNTIME_DIR",
    "where the embedded server's socket goes when its data path is too long for one",
    "an absolute path (a relative one is ignored)",
    "unset: /tmp",
    _runtime_dir,
)

#: Every variable riido-pg reads, in the order the documentation lists them.
VARIABLES: tuple[Variable[object], ...] = (
    DSN,
    HOME,
    STATEMENT_TIMEOUT,
    LOCK_TIMEOUT,
    LOAD_TIMEOUT,
    LOAD_WORK_MEM,
    RUNTIME_DIR,
)


# --- accessors ------------------------------------------------------------------------


def dsn() -> str | None:
    """``RIIDO_PG_DSN``, or ``None`` for the embedded server."""
    return DSN.get()


def home_override() -> Path | None:
    """``RIIDO_PG_HOME`` resolved to an absolute path, or ``None`` when unset."""
    return HOME.get()


def home() -> Path:
    """riido-pg's own directory: ``RIIDO_PG_HOME``, else the user data directory."""
    chosen = HOME.get()
    if chosen is not None:
        return chosen
    import platformdirs

    return Path(platformdirs.user_data_dir("riido-pg")).resolve()


def statement_timeout_ms() -> int:
    value = STATEMENT_TIMEOUT.get()
    return DEFAULT_STATEMENT_TIMEOUT_MS if value is None else value


def lock_timeout_ms() -> int:
    value = LOCK_TIMEOUT.get()
    return DEFAULT_LOCK_TIMEOUT_MS if value is None else value


def load_timeout_ms() -> int:
    value = LOAD_TIMEOUT.get()
    return DEFAULT_LOAD_TIMEOUT_MS if value is None else value


def load_work_mem() -> str:
    """A ``work_mem`` value PostgreSQL accepts (``set_config('work_mem', ...)``)."""
    value = LOAD_WORK_MEM.get()
    return DEFAULT_LOAD_WORK_MEM if value is None else value


def runtime_dir() -> Path | None:
    """``XDG_RUNTIME_DIR`` when it is an absolute path."""
    return RUNTIME_DIR.get()


def check(*, ignore: tuple[Variable[object], ...] = ()) -> None:
    """Validate every variable but those in ``ignore`` (e.g. ``RIIDO_PG_DSN`` when the
    caller names a server itself); raise :class:`InvalidSetting` for the first bad one."""
    for variable in VARIABLES:
        if variable not in ignore:
            variable.get()
