"""The learned hint source as the façade uses it: load a model before any work, embed a
snapshot after a load (``model=``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from riido_pg.server.connect import Conn
from riido_pg.storage import Progress

if TYPE_CHECKING:
    from riido_pg.storage.embeddings import SnapshotModel

__all__ = ["embed", "embedded_line", "load_model"]


def load_model(name: str) -> None:
    """Load the named model now (cached for the process), so an unknown or uninstalled
    one fails before any work."""
    from riido_pg.ranking.model_hints import model_named

    model_named(name)


def embed(
    conn: Conn, snapshot_id: str, model: str, progress: Progress | None
) -> SnapshotModel | None:
    """Embed the snapshot under ``model`` unless it is already; what it cost if it ran
    now, else None."""
    from riido_pg.ranking.model_hints import model_named
    from riido_pg.server.plans import run
    from riido_pg.storage.embeddings import embed_snapshot, model_plan

    if not embed_snapshot(conn, snapshot_id, model_named(model), progress=progress):
        return None
    return run(conn, model_plan(snapshot_id, model))


def embedded_line(done: SnapshotModel, documents: int) -> str:
    """``embedded gin@03f3e420a3c3: 12 new texts for 1,323 documents in 0.41 s``."""
    return (
        f"embedded {done.snapshot_id}: {done.texts_embedded or 0:,} new "
        f"{'text' if done.texts_embedded == 1 else 'texts'} for {documents:,} "
        f"{'document' if documents == 1 else 'documents'} in {done.embed_seconds:.2f} s"
    )
