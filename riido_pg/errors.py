"""Exceptions a user can act on.

Each class is one failure with one fix. The CLI turns any of them into a single
``error: ...`` line on stderr and exits with the class's ``exit_code``
(2 for bad input or usage, 1 for the environment; README "Command line").
Database failures are turned into these classes once, inside the library
(:mod:`riido_pg.server.errors`), so a Python caller sees the same classes as the CLI.
"""

from __future__ import annotations

__all__ = [
    "ConflictingOptions",
    "DatabaseUnavailable",
    "DownloadFailed",
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
    "UnknownRevision",
]


class RiidoError(Exception):
    """Base class: a failure the user can fix. ``str(err)`` is the whole message."""

    exit_code: int = 1


class InvalidInput(RiidoError):
    """Documents, query or hints that cannot be used as given."""

    exit_code = 2


class InvalidCorpus(InvalidInput):
    """A BEIR directory that is missing a file or has a malformed line."""


class InvalidDsn(InvalidInput):
    """A connection string that does not parse or has a malformed value."""


class InvalidSetting(InvalidInput):
    """An environment variable whose value riido-pg cannot use (:mod:`riido_pg.config`)."""


class UnknownRevision(InvalidInput):
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


class DownloadFailed(RiidoError):
    """A pinned file is not cached and could not be downloaded."""


class ReadOnlyServer(DatabaseUnavailable):
    """A write (load, drop, move) sent to a read-only hot standby."""


class ShardNotFound(InvalidInput):
    """No shard of that name in the coordinator's catalog."""


class ShardExists(InvalidInput):
    """A shard of that name is already registered."""


class ShardInUse(InvalidInput):
    """The shard still holds snapshots (move or drop them first)."""


class ShardUnavailable(DatabaseUnavailable):
    """A shard cannot be reached (down, wrong address or credentials)."""
