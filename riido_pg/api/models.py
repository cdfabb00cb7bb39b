"""The learned hint source as the façade uses it: load a model before any work, embed a
snapshot after a load (``model=``)."""

from __future__ import annotations

from riido_pg.server.connect import Conn
from riido_pg.storage import Progress

__all__ = ["embed", "load_model"]


def load_model(name: str) -> None:
    """Load the named model now (cached for the process), so an unknown or uninstalled
    one fails before any work."""
    from riido_pg.ranking.model_hints import model_named

    model_named(name)


def embed(conn: Conn, snapshot_id: str, model: str, progress: Progress | None) -> bool:
    """Embed the snapshot under ``model`` unless it is already; True if it ran now."""
    from riido_pg.ranking.model_hints import model_named
    from riido_pg.storage.embeddings import embed_snapshot

    return embed_snapshot(conn, snapshot_id, model_named(model), progress=progress)
