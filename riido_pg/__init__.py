"""riido-pg: BM25 code search in PostgreSQL with opt-in, baseline-first identifier hints.

:class:`Database` is the façade that does what the command line does (any source kind,
shards, models, evaluation); the functions below it work on one server's connection
(README "Python API").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from riido_pg import db
    from riido_pg._version import __version__
    from riido_pg.api import Database, Evaluated, Listing, Loaded
    from riido_pg.documents import Document, DocumentSet, HintsRequest, RankRequest
    from riido_pg.errors import (
        ConflictingOptions,
        DatabaseError,
        DatabaseUnavailable,
        Hint,
        InvalidCorpus,
        InvalidDsn,
        InvalidInput,
        InvalidTextConfig,
        NotConfirmed,
        PermissionDenied,
        QueryTimeout,
        RiidoError,
        SchemaMissing,
        SnapshotBusy,
        SnapshotExists,
        SnapshotLoading,
        SnapshotNotFound,
        TransactionFailed,
        TransactionInProgress,
    )
    from riido_pg.ranking import (
        Candidate,
        Policy,
        Ranking,
        auxiliary_first,
        baseline_first,
        rank_documents,
        rank_snapshot,
        register_policy,
    )
    from riido_pg.ranking.policies import policies
    from riido_pg.sources import Table, TreeOptions
    from riido_pg.splitting import split_identifiers
    from riido_pg.storage import (
        LoadResult,
        Snapshot,
        drop_snapshot,
        get_snapshot,
        list_snapshots,
        load_snapshot,
        load_snapshot_from_table,
    )


__all__ = [
    "Candidate",
    "ConflictingOptions",
    "Database",
    "DatabaseError",
    "DatabaseUnavailable",
    "Document",
    "DocumentSet",
    "Evaluated",
    "Hint",
    "HintsRequest",
    "InvalidCorpus",
    "InvalidDsn",
    "InvalidInput",
    "InvalidTextConfig",
    "Listing",
    "LoadResult",
    "Loaded",
    "NotConfirmed",
    "PermissionDenied",
    "Policy",
    "QueryTimeout",
    "RankRequest",
    "Ranking",
    "RiidoError",
    "SchemaMissing",
    "Snapshot",
    "SnapshotBusy",
    "SnapshotExists",
    "SnapshotLoading",
    "SnapshotNotFound",
    "Table",
    "TransactionFailed",
    "TransactionInProgress",
    "TreeOptions",
    "__version__",
    "auxiliary_first",
    "baseline_first",
    "db",
    "drop_snapshot",
    "get_snapshot",
    "list_snapshots",
    "load_snapshot",
    "load_snapshot_from_table",
    "policies",
    "rank_documents",
    "rank_snapshot",
    "register_policy",
    "split_identifiers",
]

#: The module each public name comes from. Names are imported when first used
#: (PEP 562), so ``import riido_pg`` costs nothing until then: the command line's
#: start-up imports only what it runs, and reports a ^C that comes during the imports
#: as ``error: interrupted`` (:mod:`riido_pg.cli`). ``riido_pg.db.connect`` works after
#: a plain ``import riido_pg``, as before.
_HOMES = {
    "__version__": "riido_pg._version",
    "Candidate": "riido_pg.ranking",
    "ConflictingOptions": "riido_pg.errors",
    "Database": "riido_pg.api",
    "DatabaseError": "riido_pg.errors",
    "DatabaseUnavailable": "riido_pg.errors",
    "Document": "riido_pg.documents",
    "DocumentSet": "riido_pg.documents",
    "Evaluated": "riido_pg.api",
    "Hint": "riido_pg.errors",
    "HintsRequest": "riido_pg.documents",
    "InvalidCorpus": "riido_pg.errors",
    "InvalidDsn": "riido_pg.errors",
    "InvalidInput": "riido_pg.errors",
    "InvalidTextConfig": "riido_pg.errors",
    "Listing": "riido_pg.api",
    "LoadResult": "riido_pg.storage",
    "Loaded": "riido_pg.api",
    "NotConfirmed": "riido_pg.errors",
    "PermissionDenied": "riido_pg.errors",
    "Policy": "riido_pg.ranking",
    "QueryTimeout": "riido_pg.errors",
    "RankRequest": "riido_pg.documents",
    "Ranking": "riido_pg.ranking",
    "RiidoError": "riido_pg.errors",
    "SchemaMissing": "riido_pg.errors",
    "Snapshot": "riido_pg.storage",
    "SnapshotBusy": "riido_pg.errors",
    "SnapshotExists": "riido_pg.errors",
    "SnapshotLoading": "riido_pg.errors",
    "SnapshotNotFound": "riido_pg.errors",
    "Table": "riido_pg.sources",
    "TransactionFailed": "riido_pg.errors",
    "TransactionInProgress": "riido_pg.errors",
    "TreeOptions": "riido_pg.sources",
    "auxiliary_first": "riido_pg.ranking",
    "baseline_first": "riido_pg.ranking",
    "db": "riido_pg.db",
    "drop_snapshot": "riido_pg.storage",
    "get_snapshot": "riido_pg.storage",
    "list_snapshots": "riido_pg.storage",
    "load_snapshot": "riido_pg.storage",
    "load_snapshot_from_table": "riido_pg.storage",
    "policies": "riido_pg.ranking.policies",
    "rank_documents": "riido_pg.ranking",
    "rank_snapshot": "riido_pg.ranking",
    "register_policy": "riido_pg.ranking",
    "split_identifiers": "riido_pg.splitting",
}

if not TYPE_CHECKING:  # type checkers see the imports above instead

    def __getattr__(name: str) -> Any:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module 'riido_pg' has no attribute {name!r}")
        module = importlib.import_module(home)
        value = module if home == f"riido_pg.{name}" else getattr(module, name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
