"""A snapshot's documents embedded under a learned hint source (``load --model``).

Vectors are keyed by content: ``riido.text_vectors`` holds one float32 vector per
text (``riido.texts``, which keys a text by its content) and model, shared by every
document of every snapshot holding that text. Embedding a snapshot embeds only the
texts of its documents that no vector exists for, so a function unchanged since an
earlier embedded snapshot (or repeated anywhere) is never embedded again and a
commit costs only its changed functions. ``riido.snapshot_models`` marks the snapshot
itself embedded, with the seconds its embedding took and how many texts it embedded.

:func:`embed_missing_plan` is the one writer of vectors (a load's ``--model`` and
the scratch snapshot of ``hints --model`` both use it); :func:`embed_snapshot`
embeds, in batches, in one transaction under the snapshot's writer lock: an error
stores none of them. Embedding a snapshot again under the same model does nothing.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from psycopg import sql

from riido_pg.errors import Hint, InvalidInput
from riido_pg.quoting import shell_command
from riido_pg.server.connect import Conn
from riido_pg.server.errors import translated
from riido_pg.server.plans import Plan, Query, run
from riido_pg.storage.snapshots import Snapshot, Target, get_snapshot, snapshot_lock
from riido_pg.storage.staging import Progress
from riido_pg.storage.timeouts import load_timeout

if TYPE_CHECKING:
    import numpy as np

    from riido_pg.embedding import CheckedModel

__all__ = [
    "BATCH",
    "PHASE",
    "SnapshotModel",
    "copy_text_vectors",
    "embed_missing_plan",
    "embed_snapshot",
    "model_plan",
    "require_model",
    "snapshot_texts",
    "store_vectors",
    "vector_bytes_plan",
    "vectors_plan",
]

#: Texts embedded per batch (bounded memory for texts and vectors).
BATCH = 512

#: The progress phase of embedding: (texts embedded, texts to embed).
PHASE = "embeddings"


@dataclass(frozen=True, slots=True)
class SnapshotModel:
    snapshot_id: str
    model: str
    dim: int
    embed_seconds: float
    #: Texts the snapshot's embedding computed (the others were stored already);
    #: None for a snapshot embedded before vectors were keyed by content.
    texts_embedded: int | None = None


def model_plan(snapshot_id: str, model: str) -> Plan[SnapshotModel | None]:
    result = yield Query(
        "SELECT dim, embed_seconds, texts_embedded FROM riido.snapshot_models "
        "WHERE snapshot_id = %s AND model = %s",
        (snapshot_id, model),
    )
    if not result.rows:
        return None
    dim, seconds, texts = result.rows[0]
    return SnapshotModel(
        snapshot_id, model, int(dim), float(seconds), None if texts is None else int(texts)
    )


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
    an (n, dim) float32 matrix: each document's text's vector."""
    import numpy as np  # here, not at the top: every load imports this module (shards)

    from riido_pg.embedding import matrix_from_bytea

    if not ords:
        return np.zeros((0, dim), dtype=np.float32)
    result = yield Query(
        "SELECT o.doc_ord, v.vec FROM unnest(%s::int[]) WITH ORDINALITY AS o(doc_ord, n) "
        "JOIN riido.documents AS d ON d.segment_id = ANY(%s::uuid[]) "
        "AND d.doc_ord = o.doc_ord "
        "JOIN riido.text_vectors AS v ON v.text_key = d.text_key AND v.model = %s "
        "ORDER BY o.n",
        (ords, list(target.segments), model),
        binary=True,
    )
    if len(result.rows) != len(ords):
        raise RuntimeError(
            f"{len(ords) - len(result.rows)} of {len(ords)} documents have no vector "
            f"under model {model!r}"
        )
    return matrix_from_bytea((bytes(r[1]) for r in result.rows), dim)


def vector_bytes_plan(snapshot_id: str, model: str) -> Plan[dict[uuid.UUID, int]]:
    """The bytes of each vector the documents of a snapshot use under ``model``, by
    text key (each text once, however many documents hold it)."""
    result = yield Query(
        sql.SQL(
            "SELECT v.text_key, octet_length(v.vec) FROM riido.text_vectors AS v "
            "WHERE v.model = %s AND v.text_key IN ({texts})"
        ).format(texts=snapshot_texts()),
        (model, snapshot_id),
    )
    return {r[0]: int(r[1]) for r in result.rows}


def snapshot_texts() -> sql.Composable:
    """A query of the text keys of a snapshot's documents (its path of segments, the
    documents it removed left out), taking the snapshot id as its one parameter."""
    return sql.SQL(
        "SELECT d.text_key FROM riido.snapshots AS s "
        "JOIN riido.snapshot_segments AS p ON p.snapshot_id = s.snapshot_id "
        "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
        "LEFT JOIN unnest(s.removed) AS r(o) ON r.o = d.doc_ord "
        "WHERE s.snapshot_id = %s AND r.o IS NULL"
    )


def embed_missing_plan(
    model: CheckedModel,
    texts: sql.Composable,
    params: tuple[object, ...],
    *,
    progress: Progress | None = None,
) -> Plan[int]:
    """Embed, in batches, the texts ``texts`` (a query of text keys, with ``params``)
    names that have no vector under ``model`` yet (or one of another dimension), and
    store their vectors; returns how many texts it embedded. Runs in the caller's
    transaction; reports (:data:`PHASE`, done, total) after each batch."""
    from riido_pg.embedding import to_bytea

    yield Query(
        "CREATE TEMP TABLE IF NOT EXISTS riido_embed_todo (key uuid PRIMARY KEY) ON COMMIT DROP"
    )
    yield Query("TRUNCATE riido_embed_todo")
    yield Query(
        sql.SQL(
            "INSERT INTO riido_embed_todo (key) SELECT DISTINCT x.text_key FROM ({texts}) AS x "
            "WHERE NOT EXISTS (SELECT 1 FROM riido.text_vectors AS v "
            "WHERE v.text_key = x.text_key AND v.model = %s AND v.dim = %s)"
        ).format(texts=texts),
        (*params, model.name, model.dim),
    )
    found = yield Query("SELECT count(*) FROM riido_embed_todo")
    total = int(found.one()[0])
    if progress is not None:
        progress(PHASE, 0, total)
    done = 0
    last = uuid.UUID(int=0)
    while done < total:
        batch = yield Query(
            "SELECT k.key, t.body FROM riido_embed_todo AS k "
            "JOIN riido.texts AS t ON t.key = k.key "
            "WHERE k.key > %s ORDER BY k.key LIMIT %s",
            (last, BATCH),
        )
        if not batch.rows:
            break
        vecs = model.embed([str(r[1]) for r in batch.rows])
        yield Query(
            "INSERT INTO riido.text_vectors (text_key, model, dim, vec) "
            "SELECT u.k, %s, %s, u.v FROM unnest(%s::uuid[], %s::bytea[]) AS u(k, v) "
            "ON CONFLICT (text_key, model) DO UPDATE SET dim = EXCLUDED.dim, vec = EXCLUDED.vec",
            (model.name, model.dim, [r[0] for r in batch.rows], [to_bytea(v) for v in vecs]),
        )
        last = batch.rows[-1][0]
        done += len(batch.rows)
        if progress is not None:
            progress(PHASE, done, total)
    return done


def store_vectors(
    conn: Conn, snapshot_id: str, model: CheckedModel, *, progress: Progress | None = None
) -> int:
    """Embed the texts of a snapshot's documents that have no vector under ``model``
    and record the snapshot's model row, in one transaction; replaces what the model
    recorded for the snapshot before. Returns how many texts it embedded."""
    started = time.perf_counter()
    with conn.transaction(), load_timeout(conn):
        conn.execute(
            "DELETE FROM riido.snapshot_models WHERE snapshot_id = %s AND model = %s",
            (snapshot_id, model.name),
        )
        embedded = run(
            conn, embed_missing_plan(model, snapshot_texts(), (snapshot_id,), progress=progress)
        )
        conn.execute(
            "INSERT INTO riido.snapshot_models "
            "(snapshot_id, model, dim, embed_seconds, texts_embedded) "
            "VALUES (%s, %s, %s, %s, %s)",
            (snapshot_id, model.name, model.dim, time.perf_counter() - started, embedded),
        )
    return embedded


@translated
def embed_snapshot(
    conn: Conn, snapshot_id: str, model: CheckedModel, *, progress: Progress | None = None
) -> bool:
    """Embed a ready snapshot's documents under ``model`` (under its writer lock);
    False if they already are (then without waiting for the lock: a snapshot another
    process is embedding under another model can still be read)."""
    get_snapshot(conn, snapshot_id)
    if _embedded(conn, snapshot_id, model):
        return False
    with snapshot_lock(conn, snapshot_id):
        if _embedded(conn, snapshot_id, model):
            return False
        store_vectors(conn, snapshot_id, model, progress=progress)
        return True


def _embedded(conn: Conn, snapshot_id: str, model: CheckedModel) -> bool:
    row = conn.execute(
        "SELECT dim FROM riido.snapshot_models WHERE snapshot_id = %s AND model = %s",
        (snapshot_id, model.name),
    ).fetchone()
    return row is not None and int(row[0]) == model.dim


def copy_text_vectors(source: Conn, target: Conn, snapshot_id: str) -> None:
    """Store on ``target`` the vectors of the texts of ``snapshot_id``'s documents on
    ``source`` that it lacks, inside target's transaction, after the texts themselves
    (``snapshots move``)."""
    target.execute(
        "CREATE TEMP TABLE IF NOT EXISTS riido_vectors_copy (LIKE riido.text_vectors) "
        "ON COMMIT DELETE ROWS"
    )
    target.execute("TRUNCATE riido_vectors_copy")
    out = sql.SQL(
        "COPY (SELECT v.text_key, v.model, v.dim, v.vec FROM riido.text_vectors AS v "
        "WHERE v.text_key IN ({texts}) ORDER BY v.text_key, v.model) TO STDOUT"
    ).format(texts=snapshot_texts())
    into = "COPY riido_vectors_copy (text_key, model, dim, vec) FROM STDIN"
    with source.cursor().copy(out, (snapshot_id,)) as reader, target.cursor().copy(into) as w:
        for block in reader:
            w.write(block)
    target.execute(
        "INSERT INTO riido.text_vectors SELECT * FROM riido_vectors_copy "
        "ORDER BY text_key, model ON CONFLICT (text_key, model) DO NOTHING"
    )
