"""Snapshots in the ``riido`` schema: loading, listing, dropping, scratch snapshots."""

from riido_pg.storage.loading import LoadResult, Progress, load_snapshot
from riido_pg.storage.scratch import scratch_snapshot
from riido_pg.storage.snapshots import (
    DEFAULT_TEXT_CONFIG,
    K1,
    B,
    Snapshot,
    check_text_config,
    drop_snapshot,
    get_snapshot,
    list_snapshots,
    snapshot_lock,
)
from riido_pg.storage.table import load_snapshot_from_table
from riido_pg.storage.texts import collect_garbage, text_key

__all__ = [
    "DEFAULT_TEXT_CONFIG",
    "K1",
    "B",
    "LoadResult",
    "Progress",
    "Snapshot",
    "check_text_config",
    "collect_garbage",
    "drop_snapshot",
    "get_snapshot",
    "list_snapshots",
    "load_snapshot",
    "load_snapshot_from_table",
    "scratch_snapshot",
    "snapshot_lock",
    "text_key",
]
