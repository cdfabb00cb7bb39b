"""Evaluating a stored corpus under every policy, in one pass.

:func:`evaluate` ranks every document for every question with a target, under each
policy that needs nothing per question, and keeps the rank of the question's first
target. It runs in one read-only repeatable-read transaction and reads only stored
data, so evaluating a directory and evaluating its snapshot id give the same output.
Scores come from the sparse engine (:mod:`riido_pg.evaluation.scoring`); each
policy's combiner ranks from them (through the protocols
:mod:`riido_pg.ranking.policy.skeleton` declares), after
:func:`~riido_pg.ranking.policies.resolve` has picked, per question, the policy that
actually runs — exactly as ``rank_snapshot`` does (``corpus.identifier_out_of_scope``
counts the identifier fallbacks).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, LiteralString

import numpy as np
import numpy.typing as npt
from psycopg import sql

from riido_pg.errors import ConflictingOptions, Hint, InvalidInput
from riido_pg.evaluation.corpora import StoredQuestion, corpus_info, load_questions
from riido_pg.evaluation.inspection import Inspected, tokens_of
from riido_pg.evaluation.learned import LearnedSide
from riido_pg.evaluation.learned import prepare as prepare_learned
from riido_pg.evaluation.result import Evaluation, QuestionResult
from riido_pg.evaluation.runfiles import DEFAULT_RUN_DEPTH, RunWriter
from riido_pg.evaluation.scoring import (
    Batch,
    ColumnWeights,
    Documents,
    change_places,
    documents,
    history_places,
    send_column_weights,
)
from riido_pg.ranking import bm25 as bm25_sql
from riido_pg.ranking.inputs import COLUMNS, NAME
from riido_pg.ranking.policies import (
    BM25,
    Policy,
    configure_each,
    evaluated_policies,
    get_policy,
    policy_params,
    resolve,
)
from riido_pg.ranking.terms import QueryTerms
from riido_pg.resources import sql_text
from riido_pg.server.connect import Conn
from riido_pg.server.errors import read_transaction, translated
from riido_pg.server.plans import Query
from riido_pg.splitting import split_identifiers
from riido_pg.storage.snapshots import Snapshot
from riido_pg.storage.staging import Progress

if TYPE_CHECKING:  # imported where used: see riido_pg.background
    import scipy.sparse as sp

BoolArray = npt.NDArray[np.bool_]

__all__ = [
    "BATCH_CELLS",
    "PROGRESS_PHASE",
    "EvalSetup",
    "Prepared",
    "check_policies",
    "choose",
    "evaluate",
    "measured_costs",
    "prepare",
    "rank_prepared",
]

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


@dataclass(frozen=True, slots=True)
class EvalSetup:
    """What an evaluation runs: its policies (checked, with the parameter values the
    caller gave), the run files' depth and the learned hint source."""

    policies: tuple[Policy, ...]
    depth: int
    model: str | None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.policies)

    @property
    def config(self) -> dict[str, float]:
        """The parameter values the output's ``config`` reports (each parameter
        declaring a ``config`` key, from the first policy evaluated that has it)."""
        out: dict[str, float] = {}
        for policy in self.policies:
            for param in policy.params:
                if param.config is not None and param.config not in out:
                    out[param.config] = policy.combiner.values[param.name]
        return out

    @property
    def reported_weight(self) -> float | None:
        """The weight the fused policy ran with (None when it did not run)."""
        return self.config.get("fused_weight")

    @property
    def params(self) -> dict[str, dict[str, float]]:
        """Each evaluated policy's parameter values (policies without any left out)."""
        return {
            p.name: dict(sorted(p.combiner.values.items()))
            for p in self.policies
            if p.combiner.values
        }


def choose(
    policies: Sequence[str] | None,
    *,
    fused_weight: float | None = None,
    run_depth: int,
    model: str | None,
    params: Mapping[str, float] | None = None,
) -> EvalSetup:
    """The checked settings of an evaluation (:func:`check_policies`, the parameter
    values, the depth). ``params`` gives each evaluated policy declaring a parameter
    that value (one at least must declare it); ``fused_weight`` is the fused
    policy's ``weight``."""
    chosen = tuple(get_policy(p) for p in check_policies(policies, model))
    configured = configure_each(chosen, policy_params(fused_weight, params))
    if run_depth < 1:
        raise InvalidInput("the run depth must be at least 1")
    return EvalSetup(configured, run_depth, model)


@dataclass(slots=True)
class Prepared:
    """One snapshot's questions, read and ready to rank (:func:`prepare`)."""

    questions: list[StoredQuestion]
    terms: list[QueryTerms]
    docs: Documents
    columns: dict[str, ColumnWeights]
    learned: LearnedSide | None
    #: Every document id in place order (for run files; empty without them).
    doc_ids: list[str]
    #: Every document's length in characters, and its estimated tokens, by place.
    chars: npt.NDArray[np.int64]
    tokens: npt.NDArray[np.int64]
    #: Per document place: is it test code? documentation or example code? (None
    #: unless a policy reads the fields.)
    test_docs: BoolArray | None = None
    example_docs: BoolArray | None = None
    #: Per question, the documents whose qualified name's lexemes it holds, all of
    #: them and at least one (questions x places, 0/1; None unless a policy reads the
    #: fields).
    qualified: sp.csr_matrix | None = None
    #: Per document place, its raw-column length (None unless a policy reads the
    #: fields).
    lengths: npt.NDArray[np.int64] | None = None
    #: Per document place: did the snapshot's revision change it recently? (None
    #: unless a policy reads the fields.)
    recent_docs: BoolArray | None = None
    #: The snapshot's window of past commits, in window order: each commit's subject
    #: lexemes and the places of the documents it changed (None unless a policy reads
    #: the fields; empty for a snapshot without a window).
    window: tuple[list[list[str]], list[list[int]]] | None = None


def prepare(
    conn: Conn,
    snap: Snapshot,
    text_config: str,
    questions: list[StoredQuestion],
    chosen: EvalSetup,
    *,
    run_files: bool,
) -> Prepared:
    """Everything ranking ``questions`` (each with a target) in ``snap`` needs from
    the database, read in the caller's (read) transaction."""
    idents = [split_identifiers(q.text) for q in questions]
    lexemes = conn.execute(
        sql_text("eval_question_lexemes"),
        {"text_config": text_config, "raw": [q.text for q in questions], "ident": idents},
    ).fetchall()
    terms = [
        QueryTerms(list(raw), list(ident), ident_text)
        for (raw, ident), ident_text in zip(lexemes, idents, strict=True)
    ]
    docs = documents(conn, snap)
    learned = None
    if any(p.needs_model for p in chosen.policies):
        assert chosen.model is not None
        learned = prepare_learned(conn, snap, chosen.model, [q.text for q in questions], docs)
    fields = any(NAME in p.lists for p in chosen.policies)
    wanted = (*COLUMNS, NAME) if fields else COLUMNS
    with conn.pipeline():
        # every statement sent before any is read: the server runs each while this
        # process turns the rows of the ones before into arrays
        reading = {
            c: send_column_weights(conn, snap, c, [t.of(c) for t in terms], docs) for c in wanted
        }
        ids = _send_in_order(conn, snap, docs, "d.doc_id") if run_files else None
        sizes = _send_in_order(conn, snap, docs, "char_length(t.body)")
        kinds = (
            [_send_kind_docs(conn, snap, docs, k) for k in ("test", "example")] if fields else None
        )
        names = _send_qualified(conn, snap, text_config, docs, terms) if fields else None
        lens = _send_in_order(conn, snap, docs, "t.len_raw") if fields else None
        marked = _send_recent_docs(conn, snap, docs) if fields else None
        past = _send_window(conn, snap, docs) if fields else None
        columns = {c: read() for c, read in reading.items()}
        doc_ids = [str(i) for i in ids()] if ids is not None else []
        chars = np.asarray(sizes(), dtype=np.int64)
        tests, examples = (kinds[0](), kinds[1]()) if kinds is not None else (None, None)
        qualified = names() if names is not None else None
        lengths = np.asarray(lens(), dtype=np.int64) if lens is not None else None
        recent = marked() if marked is not None else None
        window = past() if past is not None else None
    return Prepared(
        questions,
        terms,
        docs,
        columns,
        learned,
        doc_ids,
        chars,
        tokens_of(chars),
        tests,
        examples,
        qualified,
        lengths,
        recent,
        window,
    )


def _send_qualified(
    conn: Conn, snap: Snapshot, text_config: str, docs: Documents, terms: Sequence[QueryTerms]
) -> Callable[[], sp.csr_matrix]:
    """Per question, the documents whose qualified name has lexemes
    (:func:`riido_pg.fields.qualified_words` under ``text_config``) and every one of
    them among the question's identifier lexemes (``riido_pg.ranking.policy.structure``'s
    ``qualified``): a count of each document's lexemes the question holds, equal to
    their number. The statement is sent now; the call returned reads it."""
    statement = sql.SQL(
        "SELECT d.doc_ord, tsvector_to_array(to_tsvector({}::regconfig, "
        "riido.qualified_words(d.doc_id))) FROM riido.documents AS d "
        "WHERE d.segment_id = ANY(%s::uuid[])"
    ).format(sql.Literal(text_config))
    cursor = conn.execute(statement, (list(snap.segments),))
    return lambda: _qualified(cursor.fetchall(), docs, terms)


def _qualified(rows: list[Any], docs: Documents, terms: Sequence[QueryTerms]) -> sp.csr_matrix:
    import scipy.sparse as sp

    by_ord = {int(r[0]): list(r[1]) for r in rows}
    vocab: dict[str, int] = {}
    q_rows: list[int] = []
    q_cols: list[int] = []
    for i, t in enumerate(terms):
        for lex in set(t.ident):
            q_rows.append(i)
            q_cols.append(vocab.setdefault(lex, len(vocab)))
    d_rows: list[int] = []
    d_cols: list[int] = []
    sizes = np.zeros(docs.count, dtype=np.int64)
    for place, o in enumerate(docs.ords.tolist()):
        lexemes = by_ord.get(int(o), [])
        sizes[place] = len(lexemes)
        for lex in lexemes:
            if lex in vocab:
                d_rows.append(place)
                d_cols.append(vocab[lex])
    shape_q, shape_d = (len(terms), len(vocab)), (docs.count, len(vocab))
    q = sp.csr_matrix((np.ones(len(q_rows), dtype=np.int64), (q_rows, q_cols)), shape=shape_q)
    d = sp.csr_matrix((np.ones(len(d_rows), dtype=np.int64), (d_rows, d_cols)), shape=shape_d)
    counts = (q @ d.T).tocsr()
    counts.data = (counts.data == sizes[counts.indices]).astype(np.int64)
    counts.eliminate_zeros()
    return counts


def _send_mask(conn: Conn, query: Query, docs: Documents) -> Callable[[], BoolArray]:
    """Per document place: is it among the doc_ords ``query`` returns (one row, one
    array)? The statement is sent now; the call returned reads it."""
    cursor = conn.execute(query.statement, query.params)

    def read() -> BoolArray:
        row = cursor.fetchone()
        return docs.mask(row[0] if row is not None else [])

    return read


def _send_kind_docs(
    conn: Conn, snap: Snapshot, docs: Documents, kind: str
) -> Callable[[], BoolArray]:
    """Per document place: is it of this kind (the snapshot's kind postings)?"""
    return _send_mask(conn, bm25_sql.kind_ords(snap.target, kind), docs)


def _send_recent_docs(conn: Conn, snap: Snapshot, docs: Documents) -> Callable[[], BoolArray]:
    """Per document place: did the snapshot's revision change it recently
    (``riido.snapshots.recent``)?"""
    recent = Query(
        "SELECT s.recent FROM riido.snapshots AS s WHERE s.snapshot_id = %s", (snap.snapshot_id,)
    )
    return _send_mask(conn, recent, docs)


def _send_window(
    conn: Conn, snap: Snapshot, docs: Documents
) -> Callable[[], tuple[list[list[str]], list[list[int]]]]:
    """The snapshot's window (``riido.window_commits``) in window order: each past
    commit's subject lexemes and the places of the documents it changed."""
    cursor = conn.execute(
        "SELECT w.lexemes, w.doc_ords FROM riido.window_commits AS w "
        "WHERE w.snapshot_id = %s ORDER BY w.position",
        (snap.snapshot_id,),
    )

    def read() -> tuple[list[list[str]], list[list[int]]]:
        rows = cursor.fetchall()
        subjects = [list(r[0]) for r in rows]
        changed = [docs.place(list(r[1])).tolist() if r[1] else [] for r in rows]
        return subjects, changed

    return read


def rank_prepared(
    ready: Prepared,
    chosen: EvalSetup,
    writer: RunWriter | None,
    clock: dict[str, float],
    progress: Progress | None,
    *,
    done: int = 0,
    total: int | None = None,
) -> list[QuestionResult]:
    """Rank a snapshot's prepared questions under every chosen policy, in batches:
    each question's first-target ranks (and its run-file lines through ``writer``).
    Progress counts ``done`` questions before these, of ``total`` (default: these)."""
    questions, terms = ready.questions, ready.terms
    results: list[QuestionResult] = []
    if writer is not None:
        writer.begin((q.id for q in questions), ready.doc_ids)
    size = max(1, BATCH_CELLS // max(1, ready.docs.count))
    count = len(questions)
    for start in range(0, count, size):
        stop = min(count, start + size)
        results.extend(
            _evaluate_batch(
                questions[start:stop],
                terms[start:stop],
                ready,
                start,
                chosen,
                writer,
                clock,
            )
        )
        if progress:
            progress(PROGRESS_PHASE, done + stop, count if total is None else total)
    return results


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
    params: Mapping[str, float] | None = None,
) -> Evaluation:
    """Evaluate a snapshot's stored questions under ``policies`` (default: all that
    need nothing per question). With ``run_dir``, also writes one TREC run file per
    policy (:mod:`riido_pg.evaluation.runfiles`). ``params`` gives the evaluated
    policies' parameters other values (:func:`choose`); ``fused_weight`` overrides
    the fused policy's weight (recorded in the output). ``model`` adds the learned
    hint source's policy (the corpus must be embedded with it) and the cost of each
    policy, measured in this run."""
    chosen = choose(
        policies, fused_weight=fused_weight, run_depth=run_depth, model=model, params=params
    )
    with read_transaction(conn):
        info = corpus_info(conn, snapshot_id)
        stored = load_questions(conn, info.snapshot)
        questions = [q for q in stored if q.targets]
        if not questions:
            raise InvalidInput(f"snapshot {snapshot_id!r} has no question with a target")
        ready = prepare(
            conn, info.snapshot, info.text_config, questions, chosen, run_files=run_dir is not None
        )
    clock = {p.name: 0.0 for p in chosen.policies}
    with ExitStack() as stack:
        writer = RunWriter(stack, run_dir, chosen.names) if run_dir is not None else None
        results = rank_prepared(ready, chosen, writer, clock, progress)
    learned = [ready.learned] if ready.learned is not None else []
    return Evaluation(
        info,
        chosen.names,
        results,
        len(stored) - len(questions),
        writer.paths if writer is not None else [],
        fused_weight=chosen.reported_weight,
        params=chosen.params,
        model=ready.learned.model if ready.learned is not None else None,
        costs=measured_costs(chosen, clock, len(questions), learned),
    )


def _send_in_order(
    conn: Conn, snap: Snapshot, docs: Documents, value: LiteralString
) -> Callable[[], list[Any]]:
    """``value`` (of a document ``d`` and its text ``t``) of every document, in the
    documents' id order (run files name documents; inspection costs count texts).
    The statement is sent now; the call returned reads it."""
    statement = sql.SQL(
        "SELECT d.doc_ord, {} FROM riido.documents AS d "
        "JOIN riido.texts AS t ON t.key = d.text_key WHERE d.segment_id = ANY(%s::uuid[])"
    ).format(sql.SQL(value))
    cursor = conn.execute(statement, (list(snap.segments),))

    def read() -> list[Any]:
        by_ord = {int(r[0]): r[1] for r in cursor.fetchall()}
        return [by_ord[int(o)] for o in docs.ords]

    return read


def _peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM), in MiB; 0 where /proc is absent."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def measured_costs(
    chosen: EvalSetup, clock: dict[str, float], questions: int, learned: Sequence[LearnedSide]
) -> dict[str, dict[str, float]] | None:
    """With a model: each policy's cost in this run, milliseconds per question spent
    ranking it (the model's query embedding included), and for the model the load
    seconds and bytes its vectors added (over every snapshot ranked, a text they
    share counted once), the snapshots, their documents and the texts embedding them
    computed (``embedded_*``); under "process", the run's peak memory. None without
    one."""
    if chosen.model is None:
        return None
    embed_s = sum(side.embed_seconds for side in learned)
    load_s = sum(side.load_seconds for side in learned)
    stored = sum(dict(kv for side in learned for kv in side.vector_bytes.items()).values())
    # what embedding the snapshots cost: texts embedded against documents served
    embedding = {
        "embedded_snapshots": float(len(learned)),
        "embedded_documents": float(sum(side.documents for side in learned)),
        "embedded_texts": float(sum(side.texts_embedded or 0 for side in learned)),
    }
    out: dict[str, dict[str, float]] = {}
    for policy in chosen.policies:
        seconds = clock[policy.name]
        if policy.needs_model:
            seconds += embed_s
        out[policy.name] = {
            "ms_per_question": 1000 * seconds / max(1, questions),
            "load_seconds": load_s if policy.needs_model else 0.0,
            "stored_bytes": float(stored) if policy.needs_model else 0.0,
            **(embedding if policy.needs_model else {}),
        }
    out["process"] = {"peak_rss_mb": _peak_rss_mb()}
    return out


def _evaluate_batch(
    questions: Sequence[StoredQuestion],
    terms: Sequence[QueryTerms],
    ready: Prepared,
    start: int,
    chosen: EvalSetup,
    writer: RunWriter | None,
    clock: dict[str, float],
) -> Iterator[QuestionResult]:
    docs, learned, policies = ready.docs, ready.learned, chosen.policies
    target_rows = np.fromiter(
        (i for i, q in enumerate(questions) for _ in q.targets), dtype=np.int64
    )
    target_ords = docs.place([t for q in questions for t in q.targets])
    stop = start + len(questions)
    scores = {c: col.scores(start, stop) for c, col in ready.columns.items()}
    batch = Batch(scores, docs.count, target_rows, target_ords)
    batch.chars, batch.tokens = ready.chars, ready.tokens
    if ready.test_docs is not None and ready.example_docs is not None:
        batch.test_docs = ready.test_docs
        batch.about_tests = np.fromiter((t.about_tests for t in terms), dtype=bool)
        batch.example_docs = ready.example_docs
        batch.about_examples = np.fromiter((t.about_examples for t in terms), dtype=bool)
    if ready.qualified is not None:
        batch.qualified = ready.qualified[start:stop]
    batch.lengths = ready.lengths
    batch.recent_docs = ready.recent_docs
    if ready.window is not None and ready.window[0]:
        batch.history = [history_places(t.ident, *ready.window) for t in terms]
        batch.change = change_places(ready.window[1])
    for policy in policies:
        began = time.perf_counter()
        policy.combiner.derive(batch)
        clock[policy.name] += time.perf_counter() - began
    bm25 = get_policy(BM25)
    if learned is not None:
        batch.hint_source = lambda row: learned.hints(start + row, batch, row)
        batch.vectors = learned.vectors
        batch.queries = learned.queries[start:stop]
    for i, (q, t) in enumerate(zip(questions, terms, strict=True)):
        embedded = learned is not None and learned.queries[start + i] is not None
        targets = set(docs.place(q.targets).tolist())
        ranks = {BM25: bm25.combiner.first_target(batch, i, targets)}
        ran: dict[str, Policy] = {}
        inspected: dict[str, Inspected] = {}
        for policy in policies:
            began = time.perf_counter()
            runs, _ = resolve(policy, t, embedded=embedded)
            ran[policy.name] = runs
            rank, cost = runs.combiner.first_target_cost(batch, i, targets)
            clock[policy.name] += time.perf_counter() - began
            ranks[policy.name], inspected[policy.name] = rank, cost
        if writer is not None:
            for name, runs in ran.items():
                writer.write(name, q.id, runs.combiner.run_order(batch, i, chosen.depth))
        yield QuestionResult(q.id, q.repo, ranks, t.identifier_in_scope, inspected)
