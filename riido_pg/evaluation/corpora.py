"""Evaluation corpora as stored: a snapshot plus its questions and targets.

:func:`store_corpus` reads a BEIR directory once (:mod:`riido_pg.evaluation.beir`),
loads its documents as the snapshot ``beir-<first 16 hex of the corpus sha256>-<text
config>`` and stores its questions and targets (``riido.questions``,
``riido.targets``, ``riido.eval_corpora``), all in one transaction under the
snapshot's lock: an error leaves nothing behind. When that snapshot already holds this
corpus, nothing is parsed or written again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psycopg import sql

from riido_pg.errors import Hint, InvalidCorpus, InvalidInput, SnapshotExists, SnapshotNotFound
from riido_pg.evaluation.beir import BeirCorpus, parse_beir, read_files
from riido_pg.quoting import shell_command
from riido_pg.resources import sql_template, sql_text
from riido_pg.server.connect import Conn
from riido_pg.server.errors import translated
from riido_pg.storage.fragments import HELD
from riido_pg.storage.loading import Progress, write_snapshot
from riido_pg.storage.snapshots import (
    DEFAULT_TEXT_CONFIG,
    Snapshot,
    check_text_config,
    get_snapshot,
    snapshot_lock,
)

__all__ = [
    "GIVEN_TARGETS",
    "STORED_TARGETS",
    "CorpusInfo",
    "GivenQuestion",
    "StoredCorpus",
    "StoredQuestion",
    "config_fields",
    "corpus_info",
    "given_questions",
    "load_questions",
    "snapshot_id_for",
    "store_corpus",
    "targets_statement",
]


def _drop(snapshot_id: str) -> str:
    return shell_command("riido-pg", "snapshots", "drop", snapshot_id)


@dataclass(frozen=True, slots=True)
class StoredCorpus:
    snapshot_id: str
    corpus_sha256: str
    #: "stored" (documents and questions written now) or "reused" (already stored)
    action: str


def snapshot_id_for(sha256: str, text_config: str) -> str:
    """The snapshot id of a BEIR corpus: its digest's first 16 hex and the config."""
    return f"beir-{sha256[:16]}-{text_config}"


def _stored(conn: Conn, snapshot_id: str, sha256: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM riido.eval_corpora AS e "
        "JOIN riido.snapshots AS s ON s.snapshot_id = e.snapshot_id "
        "WHERE e.snapshot_id = %s AND e.corpus_sha256 = %s AND s.state = 'ready' "
        "AND s.content_digest = e.content_digest",
        (snapshot_id, sha256),
    ).fetchone()
    return row is not None


def _write_questions(conn: Conn, snapshot_id: str, corpus: BeirCorpus) -> None:
    conn.execute("DELETE FROM riido.eval_corpora WHERE snapshot_id = %s", (snapshot_id,))
    conn.execute("DELETE FROM riido.questions WHERE snapshot_id = %s", (snapshot_id,))
    cur = conn.cursor()
    with cur.copy("COPY riido.questions (snapshot_id, question_id, text, repo) FROM STDIN") as cp:
        for q in corpus.questions:
            cp.write_row((snapshot_id, q.id, q.text, q.repo))
    with cur.copy("COPY riido.targets (snapshot_id, question_id, doc_id, score) FROM STDIN") as cp:
        for q in corpus.questions:
            for doc_id, score in q.targets:
                cp.write_row((snapshot_id, q.id, doc_id, score))
    conn.execute(
        "INSERT INTO riido.eval_corpora (snapshot_id, corpus_sha256, content_digest) "
        "SELECT snapshot_id, %s, content_digest FROM riido.snapshots WHERE snapshot_id = %s",
        (corpus.sha256, snapshot_id),
    )


@translated
def store_corpus(
    conn: Conn,
    directory: Path,
    *,
    text_config: str = DEFAULT_TEXT_CONFIG,
    progress: Progress | None = None,
) -> StoredCorpus:
    """Store a BEIR directory as an evaluation corpus, or find it already stored.

    The snapshot and the questions are written in one transaction, holding the
    snapshot's advisory lock until it commits: an error stores nothing.
    """
    files = read_files(directory)
    cfg = check_text_config(conn, text_config)
    snapshot_id = snapshot_id_for(files.sha256, cfg)
    if _stored(conn, snapshot_id, files.sha256):
        return StoredCorpus(snapshot_id, files.sha256, "reused")
    corpus = parse_beir(files)
    with snapshot_lock(conn, snapshot_id), conn.transaction():
        try:
            write_snapshot(conn, snapshot_id, corpus.documents, text_config=cfg, progress=progress)
        except SnapshotExists as exc:
            raise SnapshotExists(
                f"snapshot {snapshot_id!r} exists with other documents",
                Hint(
                    f"drop it with `{_drop(snapshot_id)}` and run eval again",
                    "drop it with drop_snapshot() and store the corpus again",
                ),
            ) from exc
        _write_questions(conn, snapshot_id, corpus)
    return StoredCorpus(snapshot_id, files.sha256, "stored")


@dataclass(frozen=True, slots=True)
class CorpusInfo:
    """What an evaluation reports about the stored corpus it ran on."""

    snapshot: Snapshot
    snapshot_id: str
    corpus_sha256: str
    documents: int
    text_config: str
    k1: float
    b: float
    #: The server's major version: the ``english`` stemmer, hence the numbers, can
    #: differ between major versions.
    server_major: int

    def corpus_fields(self) -> dict[str, Any]:
        """What the result's ``corpus`` says of it (besides the question counts)."""
        return {
            "snapshot_id": self.snapshot_id,
            "documents": self.documents,
            "sha256": self.corpus_sha256,
        }

    def config_fields(self) -> dict[str, Any]:
        """The result's ``config`` (besides the fused weight)."""
        return config_fields(self.text_config, self.k1, self.b, self.server_major)


def config_fields(text_config: str, k1: float, b: float, server_major: int) -> dict[str, Any]:
    """An evaluation result's ``config``: what its numbers depend on."""
    return {"text_config": text_config, "k1": k1, "b": b, "postgresql_major": server_major}


def corpus_info(conn: Conn, snapshot_id: str) -> CorpusInfo:
    """The stored corpus of a ready snapshot with questions, or a RiidoError saying
    what to do."""
    try:
        snap = get_snapshot(conn, snapshot_id)
    except SnapshotNotFound as exc:
        raise SnapshotNotFound(
            f"no snapshot {snapshot_id!r}",
            Hint(
                "`riido-pg eval BEIR_DIR` stores a corpus (`riido-pg snapshots list` shows "
                "the stored ones)",
                "store_corpus() stores a corpus (list_snapshots() shows the stored ones)",
            ),
        ) from exc
    row = conn.execute(
        "SELECT e.corpus_sha256, s.document_count, s.text_config, s.k1, s.b, "
        "       e.content_digest = s.content_digest, "
        "       current_setting('server_version_num')::int / 10000 "
        "FROM riido.snapshots AS s LEFT JOIN riido.eval_corpora AS e USING (snapshot_id) "
        "WHERE s.snapshot_id = %s",
        (snapshot_id,),
    ).fetchone()
    assert row is not None
    if row[0] is None:
        raise InvalidInput(
            f"snapshot {snapshot_id!r} has no stored questions",
            Hint(
                "evaluate a BEIR directory with `riido-pg eval BEIR_DIR`, which stores them",
                "store a BEIR directory with store_corpus(), which stores them",
            ),
        )
    if not row[5]:
        raise InvalidInput(
            f"snapshot {snapshot_id!r} was replaced after its questions were stored",
            Hint(
                f"drop it with `{_drop(snapshot_id)}` and evaluate the BEIR directory again",
                "drop it with drop_snapshot() and store the BEIR directory again",
            ),
        )
    return CorpusInfo(
        snap,
        snapshot_id,
        str(row[0]),
        int(row[1]),
        str(row[2]),
        float(row[3]),
        float(row[4]),
        int(row[6]),
    )


@dataclass(frozen=True, slots=True)
class StoredQuestion:
    id: str
    text: str
    repo: str
    #: doc_ords of the question's targets, ascending (empty: skipped by the evaluation)
    targets: tuple[int, ...]


#: The targets ``eval_targets.sql`` looks up: a stored corpus's, or given ones.
STORED_TARGETS = sql.SQL("riido.targets AS t WHERE t.snapshot_id = %(snapshot_id)s")
GIVEN_TARGETS = sql.SQL(
    "unnest(%(question_ids)s::text[], %(doc_ids)s::text[]) AS t(question_id, doc_id)"
)


def targets_statement(targets: sql.SQL) -> sql.Composed:
    """``eval_targets.sql`` over ``targets`` (:data:`STORED_TARGETS` or
    :data:`GIVEN_TARGETS`)."""
    return sql.SQL(sql_template("eval_targets")).format(held=HELD, targets=targets)


def load_questions(conn: Conn, snap: Snapshot) -> list[StoredQuestion]:
    """The stored questions, in question id byte order, with their targets' doc_ords."""
    targets: dict[str, list[int]] = {}
    snapshot_id = snap.snapshot_id
    params = {"snapshot_id": snapshot_id, "segments": list(snap.segments)}
    for qid, _, ord_ in conn.execute(targets_statement(STORED_TARGETS), params):
        targets.setdefault(str(qid), []).append(int(ord_))
    rows = conn.execute(sql_text("eval_questions"), {"snapshot_id": snapshot_id}).fetchall()
    return [
        StoredQuestion(str(r[0]), str(r[1]), str(r[2]), tuple(targets.get(str(r[0]), ())))
        for r in rows
    ]


@dataclass(frozen=True, slots=True)
class GivenQuestion:
    """A question to rank in a snapshot that does not store it (a history corpus's):
    its targets are document ids of that snapshot."""

    id: str
    text: str
    repo: str
    targets: tuple[str, ...]


def given_questions(
    conn: Conn, snap: Snapshot, questions: Sequence[GivenQuestion]
) -> list[StoredQuestion]:
    """``questions`` with their targets' doc_ords in ``snap``, in question id byte
    order. A target the snapshot does not hold is InvalidCorpus: the snapshot holds
    other documents than the questions were written for."""
    pairs = [(q.id, t) for q in questions for t in q.targets]
    params = {
        "snapshot_id": snap.snapshot_id,
        "segments": list(snap.segments),
        "question_ids": [p[0] for p in pairs],
        "doc_ids": [p[1] for p in pairs],
    }
    targets: dict[str, list[int]] = {}
    for qid, doc_id, ord_ in conn.execute(targets_statement(GIVEN_TARGETS), params):
        if ord_ is None:
            raise InvalidCorpus(
                f"snapshot {snap.snapshot_id!r} has no document {doc_id!r}, a target of "
                f"question {qid!r}: it holds other documents than the corpus was built on",
                Hint(
                    f"drop it with `{_drop(snap.snapshot_id)}` and evaluate again (it is "
                    "loaded from the repository)",
                    "drop it with drop_snapshot() and evaluate again",
                ),
            )
        targets.setdefault(str(qid), []).append(int(ord_))
    return [
        StoredQuestion(q.id, q.text, q.repo, tuple(targets[q.id]))
        for q in sorted(questions, key=lambda q: q.id.encode("utf-8"))
    ]
