"""riido-pg: BM25 code search in PostgreSQL with opt-in, baseline-first identifier hints."""

# ``riido_pg.db.connect`` works after a plain ``import riido_pg``.
from riido_pg import db
from riido_pg.documents import Document, DocumentSet, HintsRequest
from riido_pg.errors import (
    ConflictingOptions,
    DatabaseUnavailable,
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
)
from riido_pg.ranking import (
    POLICIES,
    REGISTRY,
    Candidate,
    Policy,
    Ranking,
    auxiliary_first,
    baseline_first,
    rank_documents,
    rank_snapshot,
)
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
    "POLICIES",
    "REGISTRY",
    "Candidate",
    "ConflictingOptions",
    "DatabaseUnavailable",
    "Document",
    "DocumentSet",
    "HintsRequest",
    "InvalidCorpus",
    "InvalidDsn",
    "InvalidInput",
    "InvalidTextConfig",
    "LoadResult",
    "PermissionDenied",
    "Policy",
    "QueryTimeout",
    "Ranking",
    "RiidoError",
    "SchemaMissing",
    "Snapshot",
    "SnapshotBusy",
    "SnapshotExists",
    "SnapshotLoading",
    "SnapshotNotFound",
    "__version__",
    "auxiliary_first",
    "baseline_first",
    "db",
    "drop_snapshot",
    "get_snapshot",
    "list_snapshots",
    "load_snapshot",
    "load_snapshot_from_table",
    "rank_documents",
    "rank_snapshot",
    "split_identifiers",
]
