"""riido-pg: BM25 code search in PostgreSQL with opt-in, baseline-first identifier hints.

:class:`Database` is the façade that does what the command line does (any source kind,
shards, models, evaluation); the functions below it work on one server's connection
(README "Python API").
"""

# ``riido_pg.db.connect`` works after a plain ``import riido_pg``.
from riido_pg import db
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
    policies,
    rank_documents,
    rank_snapshot,
    register_policy,
)
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

__version__ = "0.1.0"

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
