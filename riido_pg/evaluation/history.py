"""Evaluating history corpora: every question ranked in its own snapshot.

A history corpus (:mod:`riido_pg.corpora.history`) asks each question in the
snapshot of its commit's parent. :func:`evaluate_history` takes the snapshots (all
stored and ready) with their questions and ranks each snapshot's questions with the
batch code of a stored corpus (:func:`~riido_pg.evaluation.batch.prepare` and
:func:`~riido_pg.evaluation.batch.rank_prepared`): one read-only transaction per
snapshot, one snapshot in memory at a time, one run file per policy for all of
them. The result is one :class:`~riido_pg.evaluation.result.Evaluation`: metrics
over every question, per repository, against ``bm25`` and the control, exactly as
for a BEIR corpus.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from riido_pg.errors import ConflictingOptions, Hint, InvalidCorpus
from riido_pg.evaluation.batch import choose, measured_costs, prepare, rank_prepared
from riido_pg.evaluation.corpora import GivenQuestion, config_fields, given_questions
from riido_pg.evaluation.learned import LearnedSide
from riido_pg.evaluation.result import Evaluation, QuestionResult
from riido_pg.evaluation.runfiles import DEFAULT_RUN_DEPTH, RunWriter
from riido_pg.quoting import shell_command
from riido_pg.server.connect import Conn
from riido_pg.server.errors import read_transaction
from riido_pg.storage.snapshots import K1, B, get_snapshot
from riido_pg.storage.staging import Progress

__all__ = [
    "HistoryInfo",
    "HistorySource",
    "SnapshotQuestions",
    "evaluate_history",
    "other_config",
]


@dataclass(frozen=True, slots=True)
class SnapshotQuestions:
    """One snapshot of a history evaluation (on the connection holding it) and the
    questions ranked in it."""

    conn: Conn
    snapshot_id: str
    questions: tuple[GivenQuestion, ...]


@dataclass(frozen=True, slots=True)
class HistorySource:
    """One history corpus as the result describes it: its repository's name, the
    sha256 of its manifest (which holds its files' digests) and its snapshots."""

    repository: str
    sha256: str
    snapshots: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HistoryInfo:
    """What a history evaluation reports of its corpora (``corpus``, ``config``)."""

    sources: tuple[HistorySource, ...]
    #: Documents per snapshot evaluated.
    documents: dict[str, int]
    #: Questions per repository.
    questions: dict[str, int]
    text_config: str
    server_major: int
    k1: float = K1
    b: float = B

    def corpus_fields(self) -> dict[str, Any]:
        return {
            "kind": "history",
            "snapshots": len(self.documents),
            "corpora": [
                {
                    "repository": s.repository,
                    "sha256": s.sha256,
                    "questions": self.questions.get(s.repository, 0),
                    "snapshots": {sid: self.documents[sid] for sid in s.snapshots},
                }
                for s in self.sources
            ],
        }

    def config_fields(self) -> dict[str, Any]:
        return config_fields(self.text_config, self.k1, self.b, self.server_major)


def _server_major(conn: Conn) -> int:
    row = conn.execute("SELECT current_setting('server_version_num')::int / 10000").fetchone()
    assert row is not None
    return int(row[0])


_NO_VECTORS = np.zeros((0, 0), dtype=np.float32)


def evaluate_history(
    parts: Sequence[SnapshotQuestions],
    sources: Sequence[HistorySource],
    *,
    text_config: str,
    policies: Sequence[str] | None = None,
    progress: Progress | None = None,
    run_dir: Path | None = None,
    run_depth: int = DEFAULT_RUN_DEPTH,
    fused_weight: float | None = None,
    model: str | None = None,
    params: Mapping[str, float] | None = None,
) -> Evaluation:
    """Rank every part's questions in its snapshot (each ready, with
    ``text_config``; embedded with ``model`` when one is named) and report them as
    one evaluation. Arguments as :func:`~riido_pg.evaluation.evaluate`'s; run files
    hold the snapshots' questions in the order of ``parts``."""
    chosen = choose(
        policies, fused_weight=fused_weight, run_depth=run_depth, model=model, params=params
    )
    total = sum(len(p.questions) for p in parts)
    if total == 0:
        raise InvalidCorpus("the history corpora have no question")
    clock = {p.name: 0.0 for p in chosen.policies}
    results: list[QuestionResult] = []
    learned: list[LearnedSide] = []
    documents: dict[str, int] = {}
    major = 0
    with ExitStack() as stack:
        writer = RunWriter(stack, run_dir, chosen.names) if run_dir is not None else None
        for part in parts:
            with read_transaction(part.conn):
                snap = get_snapshot(part.conn, part.snapshot_id)
                if snap.text_config != text_config:
                    raise other_config(part.snapshot_id, snap.text_config, text_config)
                major = major or _server_major(part.conn)
                questions = given_questions(part.conn, snap, part.questions)
                ready = prepare(
                    part.conn, snap, text_config, questions, chosen, run_files=writer is not None
                )
            documents[part.snapshot_id] = snap.documents
            results.extend(
                rank_prepared(
                    ready, chosen, writer, clock, progress, done=len(results), total=total
                )
            )
            if ready.learned is not None:  # its costs, not its vectors: one snapshot's
                # vectors in memory at a time (each is documents × dimensions floats)
                learned.append(dataclasses.replace(ready.learned, vectors=_NO_VECTORS, queries=[]))
            del ready
    counts: dict[str, int] = {}
    for r in results:
        counts[r.repo] = counts.get(r.repo, 0) + 1
    info = HistoryInfo(tuple(sources), documents, counts, text_config, major)
    return Evaluation(
        info,
        chosen.names,
        sorted(results, key=lambda r: r.question_id.encode("utf-8")),
        0,
        writer.paths if writer is not None else [],
        fused_weight=chosen.reported_weight,
        params=chosen.params,
        model=learned[0].model if learned else None,
        costs=measured_costs(chosen, clock, len(results), learned),
    )


def other_config(snapshot_id: str, have: str, wanted: str) -> ConflictingOptions:
    """The error of a stored snapshot whose text configuration is not the one asked."""
    drop = shell_command("riido-pg", "snapshots", "drop", snapshot_id)
    return ConflictingOptions(
        f"snapshot {snapshot_id!r} uses text config {have!r}, not {wanted!r}",
        Hint(
            f"evaluate with --text-config {have}, or drop it with `{drop}` to load it "
            f"again with {wanted}",
            f"pass text_config={have!r}, or drop it with drop_snapshot() to load it again",
        ),
    )
