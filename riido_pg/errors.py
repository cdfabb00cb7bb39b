"""Exceptions a user can act on.

Each class is one failure with one fix. An error carries a neutral message (what went
wrong) and, where there is one, a :class:`Hint`: what to do about it, written once for
the command line and once for Python. ``str(err)`` is the message with the Python
hint; the CLI prints the message with the command-line hint as one ``error: ...``
line and picks the exit code from the class (``riido_pg.cli.errors``): the library
knows nothing of exit codes or flags.

Database failures become these classes once, at the library's public boundary
(:mod:`riido_pg.server.errors`), so a Python caller sees the same classes as the CLI
and never a raw driver exception.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "ConflictingOptions",
    "DatabaseError",
    "DatabaseUnavailable",
    "DownloadFailed",
    "Hint",
    "InvalidCorpus",
    "InvalidDsn",
    "InvalidInput",
    "InvalidSetting",
    "InvalidTextConfig",
    "NotConfirmed",
    "OutputError",
    "PermissionDenied",
    "QueryTimeout",
    "ReadOnlyServer",
    "RiidoError",
    "SchemaMissing",
    "ShardExists",
    "ShardInUse",
    "ShardNotFound",
    "ShardUnavailable",
    "SnapshotBusy",
    "SnapshotExists",
    "SnapshotLoading",
    "SnapshotNotFound",
    "TooManyConnections",
    "TransactionFailed",
    "TransactionInProgress",
    "UnknownSchemaRevision",
]


@dataclass(frozen=True, slots=True)
class Hint:
    """What to do about an error, in the caller's terms: ``cli`` for a user of the
    ``riido-pg`` command (``pass --replace to replace it``), ``python`` for a caller of
    the library (``pass replace=True to replace it``). Either may be empty: nothing
    to add in those terms. ``sep`` joins the message and the hint."""

    cli: str = ""
    python: str = ""
    sep: str = "; "

    @classmethod
    def same(cls, text: str, sep: str = "; ") -> Hint:
        """A hint that reads the same in both terms."""
        return cls(text, text, sep)


class RiidoError(Exception):
    """Base class: a failure the user can fix.

    ``message`` says what went wrong, in no caller's terms; ``hint`` what to do, in
    both. ``str(err)`` is ``message; hint.python`` (or the message alone).
    """

    def __init__(self, message: str, hint: Hint | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.render(cli=False)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.hint))

    def render(self, *, cli: bool) -> str:
        """The message followed by the hint for the command line (``cli``) or for
        Python, when there is one."""
        if self.hint is None:
            return self.message
        advice = self.hint.cli if cli else self.hint.python
        return f"{self.message}{self.hint.sep}{advice}" if advice else self.message


class InvalidInput(RiidoError):
    """Documents, query, hints or arguments that cannot be used as given."""


class InvalidCorpus(InvalidInput):
    """A BEIR directory that is missing a file or has a malformed line."""


class InvalidDsn(InvalidInput):
    """A connection string that does not parse or has a malformed value."""


class InvalidSetting(InvalidInput):
    """An environment variable whose value riido-pg cannot use (:mod:`riido_pg.config`)."""


class UnknownSchemaRevision(InvalidInput):
    """A schema revision the installed migrations do not have."""


class InvalidTextConfig(InvalidInput):
    """A text search configuration the server does not know."""


class NotConfirmed(InvalidInput):
    """A change that deletes data was asked for without being confirmed."""


class OutputError(InvalidInput):
    """A file or directory named for output cannot be written as asked."""


class ConflictingOptions(InvalidInput):
    """Options that cannot be used together."""


class SnapshotNotFound(InvalidInput):
    """No snapshot with that id."""


class SnapshotExists(InvalidInput):
    """A snapshot with that id exists with different content."""


class TransactionInProgress(InvalidInput):
    """The operation commits on its own (a parallel load, a move, a write to a shard)
    and the caller's connection is inside a transaction: nothing was done."""


class TransactionFailed(InvalidInput):
    """The caller's connection is in a failed transaction (or busy with another
    statement): nothing was done; roll it back first."""


class SnapshotLoading(RiidoError):
    """The snapshot is being loaded, or its load was interrupted."""


class SnapshotBusy(RiidoError):
    """Another process holds the snapshot (a concurrent load or replace)."""


class SchemaMissing(RiidoError):
    """The database has no riido schema, or an older revision of it."""


class DatabaseUnavailable(RiidoError):
    """The server cannot be reached or the embedded server cannot start."""


class PermissionDenied(DatabaseUnavailable):
    """The connected role may not do this (e.g. a read-only reader asked to load)."""


class QueryTimeout(RiidoError):
    """A statement ran past the statement timeout or waited past the lock timeout."""


class DatabaseError(RiidoError):
    """Any other error the server reported (the message is its first line); the
    driver's exception is the ``__cause__``."""


class DownloadFailed(RiidoError):
    """A pinned file is not cached and could not be downloaded."""


class ReadOnlyServer(DatabaseUnavailable):
    """A write (load, drop, move) sent to a read-only hot standby."""


class TooManyConnections(DatabaseUnavailable):
    """The server refused a parallel load's worker sessions (its or the role's
    connection limit); a load on one connection needs none."""


class ShardNotFound(InvalidInput):
    """No shard of that name in the coordinator's catalog."""


class ShardExists(InvalidInput):
    """A shard of that name is already registered."""


class ShardInUse(InvalidInput):
    """The shard still holds snapshots (move or drop them first)."""


class ShardUnavailable(DatabaseUnavailable):
    """A shard cannot be reached (down, wrong address or credentials)."""
