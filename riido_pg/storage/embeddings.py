"""A snapshot's documents embedded under a learned hint source (``load --model``).

:func:`embed_snapshot` reads a ready snapshot's texts in ``doc_ord`` order, embeds
them in batches with the named model (:mod:`riido_pg.embedding`) and stores one
float32 vector per document, with the model's dimension and the seconds it took, in
one transaction under the snapshot's writer lock: an error stores none of them.
Embedding an unchanged snapshot again under the same model does nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from riido_pg.errors import Hint, InvalidInput
from riido_pg.quoting import shell_command
from riido_pg.server.connect import Conn
from riido_pg.server.errors import translated
from riido_pg.storage.loading import Progress
from riido_pg.storage.snapshots import Snapshot, get_snapshot, load_timeout, snapshot_lock

if TYPE_CHECKING:
    from riido_pg.embedding import CheckedModel

__all__ = [
    "BATCH",
    "SnapshotModel",
    "embed_snapshot",
    "require_model",
    "snapshot_model",
    "store_vectors",
    "vectors",
]

#: Documents embedded per batch (bounded memory for texts and vectors).
BATCH = 512


@dataclass(frozen=True, slots=True)
class SnapshotModel:
    snapshot_id: str
    model: str
    dim: int
    embed_seconds: float


def snapshot_model(conn: Conn, snapshot_id: str, model: str) -> SnapshotModel | None:
    row = conn.execute(
        "SELECT dim, embed_seconds FROM riido.snapshot_models "
        "WHERE snapshot_id = %s AND model = %s",
        (snapshot_id, model),
    ).fetchone()
    return SnapshotModel(snapshot_id, model, int(row[0]), float(row[1])) if row else None


def require_model(conn: Conn, snap: Snapshot, model: CheckedModel) -> SnapshotModel:
    """The snapshot's embeddings under ``model``, or InvalidInput saying how to add them."""
    stored = snapshot_model(conn, snap.snapshot_id, model.name)
    if stored is None:
        load = shell_command("riido-pg", "load", snap.snapshot_id, "SOURCE", "--model", model.name)
        raise InvalidInput(
            f"snapshot {snap.snapshot_id!r} has no embeddings for model {model.name!r}",
            Hint(
                f"add them with `{load}` (the same source: the load is unchanged and only embeds)",
                f"add them with Database.load() of the same documents and model={model.name!r} "
                "(the load is unchanged and only embeds)",
            ),
        )
    if stored.dim != model.dim:
        raise InvalidInput(
            f"snapshot {snap.snapshot_id!r} stores {stored.dim}-dimension vectors for model "
            f"{model.name!r}, which now gives {model.dim}",
            Hint("reload the snapshot with --replace", "reload the snapshot with replace=True"),
        )
    return stored


def vectors(conn: Conn, snapshot_id: str, model: str, ords: list[int], dim: int) -> np.ndarray:
    """The unit vectors of ``ords`` (in that order) as an (n, dim) float32 matrix."""
    from riido_pg.embedding import matrix_from_bytea

    if not ords:
        return np.zeros((0, dim), dtype=np.float32)
    rows = conn.execute(
        "SELECT o.doc_ord, e.vec FROM unnest(%s::int[]) WITH ORDINALITY AS o(doc_ord, n) "
        "JOIN riido.embeddings AS e ON e.snapshot_id = %s AND e.model = %s "
        "AND e.doc_ord = o.doc_ord ORDER BY o.n",
        (ords, snapshot_id, model),
    ).fetchall()
    return matrix_from_bytea((bytes(r[1]) for r in rows), dim)


def store_vectors(
    conn: Conn, snapshot_id: str, model: CheckedModel, *, progress: Progress | None = None
) -> None:
    """Embed every document of a snapshot whose row exists and store the vectors (and
    the model's row) in one transaction; replaces what the model stored before."""
    from riido_pg.embedding import to_bytea

    started = time.perf_counter()
    with conn.transaction(), load_timeout(conn):
        conn.execute(
            "DELETE FROM riido.snapshot_models WHERE snapshot_id = %s AND model = %s",
            (snapshot_id, model.name),
        )
        conn.execute(
            "INSERT INTO riido.snapshot_models (snapshot_id, model, dim, embed_seconds) "
            "VALUES (%s, %s, %s, 0)",
            (snapshot_id, model.name, model.dim),
        )
        total_row = conn.execute(
            "SELECT document_count FROM riido.snapshots WHERE snapshot_id = %s", (snapshot_id,)
        ).fetchone()
        total = int(total_row[0]) if total_row else 0
        read = conn.cursor(name="riido_embed_texts")
        read.execute(
            "SELECT d.doc_ord, t.body FROM riido.documents AS d "
            "JOIN riido.texts AS t ON t.key = d.text_key "
            "WHERE d.snapshot_id = %s ORDER BY d.doc_ord",
            (snapshot_id,),
        )
        done = 0
        write = conn.cursor()
        # one COPY per batch: the connection cannot fetch from the cursor mid-COPY
        while batch := read.fetchmany(BATCH):
            vecs = model.embed([str(r[1]) for r in batch])
            with write.copy(
                "COPY riido.embeddings (snapshot_id, model, doc_ord, vec) FROM STDIN"
            ) as copy:
                for (ord_, _), vec in zip(batch, vecs, strict=True):
                    copy.write_row((snapshot_id, model.name, ord_, to_bytea(vec)))
            done += len(batch)
            if progress:
                progress("embeddings", done, total)
        read.close()
        conn.execute(
            "UPDATE riido.snapshot_models SET embed_seconds = %s "
            "WHERE snapshot_id = %s AND model = %s",
            (time.perf_counter() - started, snapshot_id, model.name),
        )


@translated
def embed_snapshot(
    conn: Conn, snapshot_id: str, model: CheckedModel, *, progress: Progress | None = None
) -> bool:
    """Embed a ready snapshot's documents under ``model`` (under its writer lock);
    False if they already are."""
    get_snapshot(conn, snapshot_id)
    with snapshot_lock(conn, snapshot_id):
        stored = snapshot_model(conn, snapshot_id, model.name)
        if stored is not None and stored.dim == model.dim:
            return False
        store_vectors(conn, snapshot_id, model, progress=progress)
        return True
