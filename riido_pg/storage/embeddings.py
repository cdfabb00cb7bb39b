"""A snapshot's documents embedded under a learned hint source (``load --model``).

Vectors belong to documents, and documents to segments (README "Snapshots on a
base"): ``riido.embeddings`` holds one float32 vector per document of a segment and
``riido.segment_models`` marks a segment embedded under a model, so a snapshot on a
base embeds only its own segment's documents. ``riido.snapshot_models`` marks the
snapshot itself, with the seconds its embedding took. :func:`embed_snapshot` embeds,
in batches, the documents of the snapshot's segments not yet embedded under the
model, in one transaction under the snapshot's writer lock: an error stores none of
them. Embedding a snapshot again under the same model does nothing.
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
from riido_pg.server.plans import Plan, Query
from riido_pg.storage.snapshots import Snapshot, Target, get_snapshot, snapshot_lock
from riido_pg.storage.staging import Progress
from riido_pg.storage.timeouts import load_timeout

if TYPE_CHECKING:
    from riido_pg.embedding import CheckedModel

__all__ = [
    "BATCH",
    "SnapshotModel",
    "embed_snapshot",
    "model_plan",
    "require_model",
    "store_vectors",
    "vectors_plan",
]

#: Documents embedded per batch (bounded memory for texts and vectors).
BATCH = 512


@dataclass(frozen=True, slots=True)
class SnapshotModel:
    snapshot_id: str
    model: str
    dim: int
    embed_seconds: float


def model_plan(snapshot_id: str, model: str) -> Plan[SnapshotModel | None]:
    result = yield Query(
        "SELECT dim, embed_seconds FROM riido.snapshot_models "
        "WHERE snapshot_id = %s AND model = %s",
        (snapshot_id, model),
    )
    if not result.rows:
        return None
    dim, seconds = result.rows[0]
    return SnapshotModel(snapshot_id, model, int(dim), float(seconds))


def require_model(
    snap: Snapshot, model: CheckedModel, stored: SnapshotModel | None
) -> SnapshotModel:
    """The snapshot's embeddings under ``model``, or InvalidInput saying how to add them."""
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


def vectors_plan(target: Target, model: str, ords: list[int], dim: int) -> Plan[np.ndarray]:
    """The unit vectors of ``ords`` (documents of ``target``'s path, in that order) as
    an (n, dim) float32 matrix."""
    from riido_pg.embedding import matrix_from_bytea

    if not ords:
        return np.zeros((0, dim), dtype=np.float32)
    result = yield Query(
        "SELECT o.doc_ord, e.vec FROM unnest(%s::int[]) WITH ORDINALITY AS o(doc_ord, n) "
        "JOIN riido.embeddings AS e ON e.segment_id = ANY(%s::uuid[]) AND e.model = %s "
        "AND e.doc_ord = o.doc_ord ORDER BY o.n",
        (ords, list(target.segments), model),
        binary=True,
    )
    return matrix_from_bytea((bytes(r[1]) for r in result.rows), dim)


def store_vectors(
    conn: Conn, snapshot_id: str, model: CheckedModel, *, progress: Progress | None = None
) -> None:
    """Embed the documents of a snapshot's segments not yet embedded under ``model``
    and record the snapshot's model row, in one transaction; replaces what the model
    stored for the snapshot before."""
    from riido_pg.embedding import to_bytea

    started = time.perf_counter()
    with conn.transaction(), load_timeout(conn):
        conn.execute(
            "DELETE FROM riido.snapshot_models WHERE snapshot_id = %s AND model = %s",
            (snapshot_id, model.name),
        )
        # segments embedded under another dimension (the model changed) are redone
        conn.execute(
            "DELETE FROM riido.segment_models AS m USING riido.snapshot_segments AS p "
            "WHERE p.snapshot_id = %s AND m.segment_id = p.segment_id AND m.model = %s "
            "AND m.dim <> %s",
            (snapshot_id, model.name, model.dim),
        )
        todo = [
            r[0]
            for r in conn.execute(
                "SELECT p.segment_id FROM riido.snapshot_segments AS p "
                "WHERE p.snapshot_id = %s AND NOT EXISTS (SELECT 1 FROM riido.segment_models "
                "AS m WHERE m.segment_id = p.segment_id AND m.model = %s) ORDER BY p.position",
                (snapshot_id, model.name),
            )
        ]
        total_row = conn.execute(
            "SELECT coalesce(sum(documents), 0) FROM riido.segments WHERE segment_id = ANY(%s)",
            (todo,),
        ).fetchone()
        total = int(total_row[0]) if total_row else 0
        done = 0
        for segment in todo:
            conn.execute(
                "INSERT INTO riido.segment_models (segment_id, model, dim) VALUES (%s, %s, %s)",
                (segment, model.name, model.dim),
            )
            read = conn.cursor(name="riido_embed_texts")
            read.execute(
                "SELECT d.doc_ord, t.body FROM riido.documents AS d "
                "JOIN riido.texts AS t ON t.key = d.text_key "
                "WHERE d.segment_id = %s ORDER BY d.doc_ord",
                (segment,),
            )
            write = conn.cursor()
            # one COPY per batch: the connection cannot fetch from the cursor mid-COPY
            while batch := read.fetchmany(BATCH):
                vecs = model.embed([str(r[1]) for r in batch])
                with write.copy(
                    "COPY riido.embeddings (segment_id, model, doc_ord, vec) FROM STDIN"
                ) as copy:
                    for (ord_, _), vec in zip(batch, vecs, strict=True):
                        copy.write_row((segment, model.name, ord_, to_bytea(vec)))
                done += len(batch)
                if progress:
                    progress("embeddings", done, total)
            read.close()
        conn.execute(
            "INSERT INTO riido.snapshot_models (snapshot_id, model, dim, embed_seconds) "
            "VALUES (%s, %s, %s, %s)",
            (snapshot_id, model.name, model.dim, time.perf_counter() - started),
        )


@translated
def embed_snapshot(
    conn: Conn, snapshot_id: str, model: CheckedModel, *, progress: Progress | None = None
) -> bool:
    """Embed a ready snapshot's documents under ``model`` (under its writer lock);
    False if they already are."""
    get_snapshot(conn, snapshot_id)
    with snapshot_lock(conn, snapshot_id):
        row = conn.execute(
            "SELECT dim FROM riido.snapshot_models WHERE snapshot_id = %s AND model = %s",
            (snapshot_id, model.name),
        ).fetchone()
        if row is not None and int(row[0]) == model.dim:
            return False
        store_vectors(conn, snapshot_id, model, progress=progress)
        return True
