"""Evaluating a stored corpus under every policy, in one pass.

:func:`evaluate` ranks every document for every question with a target, under each
policy of the registry (:mod:`riido_pg.ranking.policies`) that needs nothing per
question, and keeps the rank of the question's first target. It runs in one read-only
repeatable-read transaction and reads only stored data, so evaluating a directory and
evaluating its snapshot id give the same output. Scores come from the sparse engine
(:mod:`riido_pg.evaluation.scoring`); identifier policies fall back to ``bm25`` for a
question outside the identifier limits, as ``rank_snapshot`` does
(``corpus.identifier_out_of_scope`` counts them).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from itertools import islice
from pathlib import Path

import numpy as np

from riido_pg.errors import ConflictingOptions, Hint, InvalidInput
from riido_pg.evaluation.corpora import StoredQuestion, corpus_info, load_questions
from riido_pg.evaluation.learned import LearnedSide, prepare
from riido_pg.evaluation.metrics import first_target_rank
from riido_pg.evaluation.result import Evaluation, QuestionResult
from riido_pg.evaluation.runfiles import DEFAULT_RUN_DEPTH, RunWriter
from riido_pg.evaluation.scoring import Column, Firsts, column, firsts
from riido_pg.ranking.interleave import iter_interleave
from riido_pg.ranking.policies import (
    BM25,
    IDENT,
    MODEL,
    RAW,
    REGISTRY,
    Policy,
    check_weight,
    evaluated_policies,
    get_policy,
)
from riido_pg.ranking.terms import QueryTerms
from riido_pg.resources import sql_text
from riido_pg.server.connect import Conn
from riido_pg.server.errors import read_transaction, translated
from riido_pg.splitting import split_identifiers
from riido_pg.storage.loading import Progress

__all__ = ["BATCH_CELLS", "PROGRESS_PHASE", "check_policies", "evaluate"]

#: The batch's key for the fused scores (beside the columns' "raw" and "ident").
FUSED = "fused"
#: Question x document cells per batch: at most 2M stored scores (~25 MB) per column.
BATCH_CELLS = 1 << 21
PROGRESS_PHASE = "evaluating questions"


def check_policies(policies: Sequence[str] | None, model: str | None = None) -> tuple[str, ...]:
    """The policies to evaluate, deduplicated in table order (default: every policy
    that needs nothing per question; the model policy when a model is named)."""
    default = evaluated_policies(model=model is not None)
    if not policies:
        return default
    for name in policies:
        policy = get_policy(name)
        if not policy.evaluated:
            raise ConflictingOptions(
                f"eval does not run {name} (it needs hint ids per question); "
                "choose among " + ", ".join(default)
            )
        if policy.needs_model and model is None:
            raise ConflictingOptions(
                f"eval runs {name} only with a model", Hint("pass --model NAME", "pass model=NAME")
            )
    return tuple(p for p in default if p in policies)


@translated
def evaluate(
    conn: Conn,
    snapshot_id: str,
    *,
    policies: Sequence[str] | None = None,
    progress: Progress | None = None,
    run_dir: Path | None = None,
    run_depth: int = DEFAULT_RUN_DEPTH,
    fused_weight: float | None = None,
    model: str | None = None,
) -> Evaluation:
    """Evaluate a snapshot's stored questions under ``policies`` (default: all that
    need nothing per question). With ``run_dir``, also writes one TREC run file per
    policy (:mod:`riido_pg.evaluation.runfiles`). ``fused_weight`` overrides the
    fused policy's weight (recorded in the output). ``model`` adds the learned hint
    source's policy (the corpus must be embedded with it) and the cost of each
    policy, measured in this run."""
    chosen = check_policies(policies, model)
    fused = [REGISTRY[p] for p in chosen if REGISTRY[p].fused]
    weight = check_weight(fused[0], fused_weight) if fused else None
    if fused_weight is not None and not fused:
        raise ConflictingOptions("a fused weight needs a fused policy among those evaluated")
    if run_depth < 1:
        raise InvalidInput("the run depth must be at least 1")
    with read_transaction(conn):
        info = corpus_info(conn, snapshot_id)
        stored = load_questions(conn, snapshot_id)
        questions = [q for q in stored if q.targets]
        if not questions:
            raise InvalidInput(f"snapshot {snapshot_id!r} has no question with a target")
        idents = [split_identifiers(q.text) for q in questions]
        lexemes = conn.execute(
            sql_text("eval_question_lexemes"),
            {"text_config": info.text_config, "raw": [q.text for q in questions], "ident": idents},
        ).fetchall()
        terms = [
            QueryTerms(list(raw), list(ident), ident_text)
            for (raw, ident), ident_text in zip(lexemes, idents, strict=True)
        ]
        learned = None
        if any(REGISTRY[p].needs_model for p in chosen):
            assert model is not None
            learned = prepare(conn, snapshot_id, model, [q.text for q in questions])
        needed = {RAW} | {c for p in chosen for c in REGISTRY[p].lists}
        if learned is not None:
            needed.add(IDENT)  # the candidates: bm25's and identifier_bm25's first ones
        columns = {
            c: column(conn, snapshot_id, c, [t.of(c) for t in terms], info.documents)
            for c in (RAW, IDENT)
            if c in needed
        }
        doc_ids: list[str] = []
        if run_dir is not None:
            doc_ids = [
                str(r[0])
                for r in conn.execute(
                    "SELECT doc_id FROM riido.documents WHERE snapshot_id = %s ORDER BY doc_ord",
                    (snapshot_id,),
                )
            ]
    results: list[QuestionResult] = []
    run_files: list[Path] = []
    clock = dict.fromkeys(chosen, 0.0)
    with ExitStack() as stack:
        writer = RunWriter(stack, run_dir, chosen, doc_ids) if run_dir is not None else None
        batch = max(1, BATCH_CELLS // max(1, info.documents))
        total = len(questions)
        for start in range(0, total, batch):
            stop = min(total, start + batch)
            results.extend(
                _evaluate_batch(
                    questions[start:stop],
                    terms[start:stop],
                    columns,
                    start,
                    chosen,
                    writer,
                    run_depth,
                    weight,
                    learned,
                    clock,
                )
            )
            if progress:
                progress(PROGRESS_PHASE, stop, total)
        if writer is not None:
            run_files = writer.paths
    costs = None
    if model is not None:
        costs = _costs(chosen, clock, len(questions), learned)
        costs["process"] = {"peak_rss_mb": _peak_rss_mb()}
    return Evaluation(
        info,
        chosen,
        results,
        len(stored) - len(questions),
        run_files,
        fused_weight=weight,
        model=learned.model if learned is not None else None,
        costs=costs,
    )


def _peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM), in MiB; 0 where /proc is absent."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _costs(
    chosen: Sequence[str], clock: dict[str, float], questions: int, learned: LearnedSide | None
) -> dict[str, dict[str, float]]:
    """Each policy's cost in this run: milliseconds per question spent ranking it
    (the model's query embedding included), and for the model the load seconds and
    bytes its vectors added."""
    out: dict[str, dict[str, float]] = {}
    for name in chosen:
        seconds = clock[name]
        load_s, stored = 0.0, 0
        if REGISTRY[name].needs_model and learned is not None:
            seconds += learned.embed_seconds
            load_s, stored = learned.load_seconds, learned.stored_bytes
        out[name] = {
            "ms_per_question": 1000 * seconds / max(1, questions),
            "load_seconds": load_s,
            "stored_bytes": float(stored),
        }
    return out


def _evaluate_batch(
    questions: Sequence[StoredQuestion],
    terms: Sequence[QueryTerms],
    columns: dict[str, Column],
    start: int,
    policies: Sequence[str],
    writer: RunWriter | None,
    depth: int,
    weight: float | None,
    learned: LearnedSide | None = None,
    clock: dict[str, float] | None = None,
) -> Iterator[QuestionResult]:
    target_rows = np.fromiter(
        (i for i, q in enumerate(questions) for _ in q.targets), dtype=np.int64
    )
    target_ords = np.fromiter((t for q in questions for t in q.targets), dtype=np.int64)
    n_docs = int(columns[RAW].w.shape[1])
    stop = start + len(questions)
    clock = clock if clock is not None else {}
    scores = {c: col.q[start:stop] @ col.w for c, col in columns.items()}
    if weight is not None:  # the fused score, the very float8 sum of sql/rank_fused.sql
        began = time.perf_counter()
        fused = scores[RAW] + weight * scores[IDENT]
        fused.eliminate_zeros()  # a zero fused score ranks with the unmatched documents
        scores[FUSED] = fused.tocsr()
        fused_name = next(p for p in policies if REGISTRY[p].fused)
        clock[fused_name] = clock.get(fused_name, 0.0) + time.perf_counter() - began
    batch = {c: firsts(m, n_docs, target_rows, target_ords) for c, m in scores.items()}
    bm25 = REGISTRY[BM25]
    for i, (q, t) in enumerate(zip(questions, terms, strict=True)):
        in_scope = t.identifier_in_scope
        targets = set(q.targets)
        ranks: dict[str, int] = {}
        hints: list[int] | None = None
        for name in (BM25, *policies):
            began = time.perf_counter()
            policy = REGISTRY[name]
            if policy.identifier and not in_scope:
                policy = bm25  # rank_snapshot falls back to bm25 (the out-of-scope label)
            if policy.needs_model:
                assert learned is not None
                hints = learned.hints(start + i, batch[RAW], batch[IDENT], i)
                if hints is None:
                    policy = bm25  # the query embeds to nothing: the model fallback label
            ranks[name] = _first_target(policy, batch, i, targets, hints)
            clock[name] = clock.get(name, 0.0) + time.perf_counter() - began
        if writer is not None:
            _write_runs(writer, q.id, i, batch, in_scope, policies, depth, hints)
        yield QuestionResult(q.id, q.repo, ranks, in_scope)


def _first_target(
    policy: Policy,
    batch: dict[str, Firsts],
    i: int,
    targets: set[int],
    hints: list[int] | None = None,
) -> int:
    if policy.fused:
        return int(batch[FUSED].ranks[i])
    if len(policy.lists) == 1:
        return int(batch[policy.lists[0]].ranks[i])
    first, second = ((hints or []) if c == MODEL else batch[c].prefix(i) for c in policy.lists)
    return first_target_rank(iter_interleave(first, second), targets)


def _write_runs(
    writer: RunWriter,
    qid: str,
    i: int,
    batch: dict[str, Firsts],
    in_scope: bool,
    policies: Sequence[str],
    depth: int,
    hints: list[int] | None = None,
) -> None:
    orders: dict[str, list[int]] = {MODEL: hints or []}

    def order(c: str) -> list[int]:
        if c not in orders:
            orders[c] = batch[c].order(i, depth)
        return orders[c]

    for name in policies:
        policy = REGISTRY[name]
        if (policy.identifier and not in_scope) or (policy.needs_model and hints is None):
            policy = REGISTRY[BM25]
        if policy.fused:
            ranked = order(FUSED)
        elif len(policy.lists) == 1:
            ranked = order(policy.lists[0])
        else:
            a, b = (order(c) for c in policy.lists)
            ranked = list(islice(iter_interleave(a, b), depth))
        writer.write(name, qid, ranked)
