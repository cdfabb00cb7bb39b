"""Ranking a snapshot under a policy (README "Ranking" and "Result JSON").

The ranking is a plan (:mod:`riido_pg.server.plans`), in one of two shapes:

* **one statement** (:func:`search_plan`): ``riido.search_ranked``, the body of the
  SQL function ``riido.search`` (docs/search-from-sql.md), which ranks inside the
  database and returns every field of the :class:`Ranking`. :func:`rank_snapshot`
  (and :mod:`riido_pg.aio`'s) runs it whenever it gives the same ranking
  (:func:`in_sql`: a policy it runs, with its parameters' installed values, at any
  limit);
* **composed** (:func:`snapshot_ranking_plan`, the reference implementation): the
  snapshot's row, the query's terms, :func:`~riido_pg.ranking.policies.resolve` for
  the policy that actually runs, its combiner's statements, then the ids and scores
  the result shows that the combiner did not read. It ranks everything else (other
  parameter values, the learned policies, a policy an
  application registered, the caller's documents of :func:`rank_documents`),
  answers the errors the one statement raises in its own words (:class:`Composed`),
  and tests/test_sql_search.py holds the two to the same rankings.

:func:`rank_snapshot` and :func:`rank_documents` run them on a psycopg connection;
:mod:`riido_pg.aio` runs the same plans on an asyncio one. With ``limit=K`` each list
is cut at K: the first K of an interleave draw at most K ids from either list, so the
result is exactly the first K of the full ranking.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from riido_pg.documents import MAX_LIMIT, RankRequest, check_query, check_snapshot_id
from riido_pg.errors import InvalidInput
from riido_pg.ranking import bm25, lists
from riido_pg.ranking.policies import (
    BM25,
    EXTERNAL_HINTS_BASELINE_FIRST,
    IDENTIFIER_BM25,
    IDENTIFIER_BM25_AUXILIARY_FIRST,
    IDENTIFIER_BM25_BASELINE_FIRST,
    IDENTIFIER_BM25_FUSED,
    IDENTIFIER_BM25_RRF,
    OUT_OF_SCOPE,
    STRUCTURE_BM25,
    Policy,
    check_hints,
    configure,
    get_policy,
    policy_params,
    resolve,
)
from riido_pg.ranking.policy.skeleton import (
    HINTS,
    IDENT,
    MODEL,
    NAME,
    RAW,
    Embedded,
    RankInput,
    Row,
)
from riido_pg.ranking.terms import terms_plan
from riido_pg.server.connect import Conn
from riido_pg.server.errors import one_statement, read_transaction, translated
from riido_pg.server.plans import Plan, Query, run
from riido_pg.storage.snapshots import DEFAULT_TEXT_CONFIG, Snapshot, snapshot_plan

__all__ = [
    "IN_SQL",
    "NO_WORDS",
    "SEARCH",
    "TEXT",
    "Candidate",
    "Composed",
    "RankOptions",
    "Ranking",
    "documents_ranking_plan",
    "in_sql",
    "rank_checked",
    "rank_composed",
    "rank_documents",
    "rank_documents_checked",
    "rank_snapshot",
    "ranking_plan",
    "search_plan",
    "search_texts_plan",
    "snapshot_ranking_plan",
]


#: What a ranking of a query without searchable words is (``Ranking.searchable`` false).
NO_WORDS = (
    "the query has no searchable words (empty, or only stop words for this text "
    "configuration): every document scores 0 and they follow in id order"
)


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    rank: int
    bm25_score: float
    identifier_bm25_score: float | None = None
    #: The score the policy ranks by when it has one of its own (a fusion), and its
    #: name in the JSON (``fused_score``, ``rrf_score``).
    score: float | None = None
    score_name: str | None = None
    #: The name field's BM25 score, for a policy that reads it (``structure_bm25``).
    name_bm25_score: float | None = None
    #: The learned score a policy placed it by (``model_structure_weighted``'s first
    #: M: ``weighted_score``), None elsewhere.
    weighted_score: float | None = None

    @property
    def fused_score(self) -> float | None:
        return self.score if self.score_name == "fused_score" else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "rank": self.rank, "bm25_score": self.bm25_score}
        if self.identifier_bm25_score is not None:
            out["identifier_bm25_score"] = self.identifier_bm25_score
        if self.score_name is not None:
            out[self.score_name] = self.score
        if self.name_bm25_score is not None:
            out["name_bm25_score"] = self.name_bm25_score
        if self.weighted_score is not None:
            out["weighted_score"] = self.weighted_score
        return out


@dataclass(frozen=True, slots=True)
class Ranking:
    snapshot_id: str
    policy: str
    candidates: list[Candidate] = field(default_factory=list)
    #: Always "unverified": candidates are suggestions the caller must check.
    status: str = "unverified"
    #: False when no word of the query survived the text search configuration (every
    #: document then scores 0 and follows in id order). Not part of the JSON.
    searchable: bool = True
    #: Candidates in the full ranking (every document of the snapshot), however many
    #: ``limit`` kept. Not part of the JSON.
    total: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "policy": self.policy,
            "status": self.status,
            "candidates": [c.to_dict() for c in self.candidates],
        }


@dataclass(frozen=True, slots=True)
class RankOptions:
    """A ranking's options, checked (:meth:`check`) before any database work: the
    policy with the parameter values the caller gave."""

    policy: Policy
    limit: int | None = None
    hints: Sequence[str] | None = None
    model: str | None = None

    @classmethod
    def check(
        cls,
        query: str,
        policy: str,
        limit: int | None,
        hints: Sequence[str] | None,
        params: Mapping[str, float] | None,
        model: str | None,
    ) -> RankOptions:
        check_query(query)
        chosen = get_policy(policy)
        check_hints(chosen, hints, model)
        if limit is not None and not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be from 1 to {MAX_LIMIT}")
        chosen = configure(chosen, params)
        if model is not None:
            from riido_pg.ranking.model_hints import model_named

            model_named(model)  # an unknown or uninstalled model fails before any work
        return cls(chosen, limit, hints, model)


def ranking_plan(snap: Snapshot, query: str, opts: RankOptions) -> Plan[Ranking]:
    """Rank ``query`` in a ready snapshot whose row is known."""
    target = snap.target
    terms = yield from terms_plan(query, snap.text_config)
    model: list[int] | None = None
    embedded: Embedded | None = None
    if opts.policy.needs_model:
        from riido_pg.ranking.model_hints import embedded_plan, hints_plan

        assert opts.model is not None
        embedded = yield from embedded_plan(snap, query, opts.model)
        if embedded is not None and MODEL in opts.policy.lists:
            model = yield from hints_plan(target, embedded, terms)
    policy, label = resolve(
        opts.policy, terms, embedded=embedded is not None or not opts.policy.needs_model
    )
    hints = None
    if HINTS in policy.lists:
        assert opts.hints is not None
        hints = yield from lists.hint_ords(target, opts.hints)
    rows = yield from policy.combiner.rank(
        RankInput(target, terms, opts.limit, hints, model, embedded)
    )
    shown = [RAW, IDENT] if policy.identifier else [RAW]
    by_ord = {r.doc_ord: r for r in rows}
    for col in shown:
        missing = [r.doc_ord for r in rows if getattr(r, col) is None]
        units = yield from lists.units_of(target, col, terms.of(col), missing)
        for o, u in units.items():
            setattr(by_ord[o], col, u)
    unnamed = [r.doc_ord for r in rows if r.doc_id is None]
    names = yield from lists.doc_ids(target, unnamed)
    candidates = [_candidate(r, rank, names, policy) for rank, r in enumerate(rows, start=1)]
    return Ranking(
        snap.snapshot_id, label, candidates, searchable=terms.searchable, total=snap.documents
    )


def _candidate(row: Row, rank: int, names: dict[int, str], policy: Policy) -> Candidate:
    name = policy.combiner.score_name
    return Candidate(
        row.doc_id if row.doc_id is not None else names[row.doc_ord],
        rank,
        bm25.score(row.raw or 0),
        bm25.score(row.ident or 0) if policy.identifier else None,
        row.score if name is not None else None,
        name,
        bm25.score(row.name or 0) if NAME in policy.lists else None,
        row.learned,
    )


#: The policies ``riido.search`` ranks (every one but the learned ones), in the
#: registry's order. The one list of them: the migration that installs sql/search.sql
#: writes it into ``riido.search_settings()`` (``policies``), which riido.search
#: checks a policy's name against.
IN_SQL = (
    BM25,
    IDENTIFIER_BM25,
    IDENTIFIER_BM25_BASELINE_FIRST,
    IDENTIFIER_BM25_AUXILIARY_FIRST,
    IDENTIFIER_BM25_FUSED,
    IDENTIFIER_BM25_RRF,
    STRUCTURE_BM25,
    EXTERNAL_HINTS_BASELINE_FIRST,
)

#: The one statement of a ranking in the database: ``riido.search``'s columns and
#: what else a :class:`Ranking` holds (the name field's score, the snapshot's document
#: count, whether the query has searchable words); ``false``: a snapshot placed on a
#: shard is no snapshot here (the composed path's answer; the shard router ranks on
#: the shard itself). ``{text}``: nothing, or :data:`TEXT`.
SEARCH = (
    "SELECT s.rank, s.id, s.bm25_score, s.identifier_bm25_score, s.policy, s.score, "
    "s.name_bm25_score, s.total, s.searchable{text} "
    "FROM riido.search_ranked(%(snapshot)s, %(query)s, %(k)s, %(policy)s, %(hints)s, false) "
    "AS s"
)
#: The stored text of each candidate, read in the ranking's statement (so it sees the
#: snapshot the ranking saw): the document of that id the snapshot holds.
TEXT = (
    ", (SELECT t.body FROM riido.snapshot_segments AS p "
    "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
    "JOIN riido.texts AS t ON t.key = d.text_key "
    "WHERE p.snapshot_id = %(snapshot)s AND d.doc_id = s.id "
    "AND NOT EXISTS (SELECT 1 FROM riido.snapshots AS x "
    "WHERE x.snapshot_id = %(snapshot)s AND d.doc_ord = ANY (x.removed)))"
)

#: What the one statement raises that the composed path answers instead: riido's own
#: errors (RI001 no snapshot, RI002 not ready, RI004 a hint naming no document, ...:
#: the composed path raises its :class:`~riido_pg.errors.RiidoError` with its words
#: and hints), and a database whose riido schema predates ``riido.search_ranked``'s
#: current signature, or has none (undefined function, schema or table).
_COMPOSE_ON = ("42883", "3F000", "42P01")


class Composed(Exception):
    """The one statement cannot answer this call as the Python API does: rank it
    the composed way (the reason: an SQLSTATE, or ``no documents``)."""


def in_sql(opts: RankOptions) -> bool:
    """Whether ``riido.search_ranked`` gives this call's ranking at no loss: a policy it
    runs, with the values of its parameters the registry declares (those the
    migration installed: ``riido.search_settings()``) and no model, at any limit (none:
    every document) -- since migration 0024 it is as fast as the composed path past
    the first hundreds of candidates too (docs/search-from-sql.md "Speed")."""
    if opts.policy.name not in IN_SQL or opts.model is not None:
        return False
    declared = get_policy(opts.policy.name)
    chosen = opts.policy.combiner
    return opts.policy is declared or (
        type(chosen) is type(declared.combiner) and chosen.values == declared.combiner.values
    )


def search_plan(snapshot_id: str, query: str, opts: RankOptions) -> Plan[Ranking]:
    """Rank ``query`` in the stored snapshot ``snapshot_id`` with one statement,
    :data:`SEARCH` (for options :func:`in_sql` accepts), or raise :class:`Composed`."""
    ranking, _ = yield from search_texts_plan(snapshot_id, query, opts, texts=False)
    return ranking


def search_texts_plan(
    snapshot_id: str, query: str, opts: RankOptions, *, texts: bool = True
) -> Plan[tuple[Ranking, dict[str, str]]]:
    """:func:`search_plan`, and with ``texts`` the stored text of each candidate, by
    id, read by the same statement (:data:`TEXT`)."""
    check_snapshot_id(snapshot_id)
    params = {
        "snapshot": snapshot_id,
        "query": query,
        "k": MAX_LIMIT if opts.limit is None else opts.limit,  # past the documents: all
        "policy": opts.policy.name,
        "hints": None if opts.hints is None else list(opts.hints),
    }
    try:
        result = yield Query(SEARCH.format(text=TEXT if texts else ""), params)
    except psycopg.Error as exc:
        state = exc.sqlstate or ""
        if state.startswith("RI") or state in _COMPOSE_ON:
            raise Composed(state) from exc
        raise
    if not result.rows:  # no row carries the label (no documents: no load writes that)
        raise Composed("no documents")
    label = str(result.rows[0][4])
    ran = get_policy(BM25) if label == OUT_OF_SCOPE else opts.policy
    name = ran.combiner.score_name
    candidates = [
        Candidate(str(i), int(r), float(raw), ident, score, name, named)
        for r, i, raw, ident, _, score, named, *_ in result.rows
    ]
    total, searchable = result.rows[0][7:9]
    ranking = Ranking(snapshot_id, label, candidates, searchable=bool(searchable), total=int(total))
    return ranking, {str(r[1]): str(r[9]) for r in result.rows} if texts else {}


#: Heavy queries hash and sort posting rows; 4MB spills them to disk.
WORK_MEM = "SET LOCAL work_mem = '32MB'"


def snapshot_ranking_plan(snapshot_id: str, query: str, opts: RankOptions) -> Plan[Ranking]:
    """Rank ``query`` in the stored snapshot ``snapshot_id`` (the caller opens the
    transaction; this sets it up when it is the transaction's first statement)."""
    snap = yield from snapshot_plan(snapshot_id)
    return (yield from ranking_plan(snap, query, opts))


def setup_plan() -> Plan[None]:
    """The settings a ranking's read transaction
    (:func:`~riido_pg.server.errors.read_transaction`) starts with."""
    yield Query(WORK_MEM)


@translated
def rank_snapshot(
    conn: Conn,
    snapshot_id: str,
    query: str,
    *,
    policy: str = BM25,
    limit: int | None = None,
    hints: Sequence[str] | None = None,
    fused_weight: float | None = None,
    model: str | None = None,
    params: Mapping[str, float] | None = None,
) -> Ranking:
    """Rank a stored snapshot. ``limit`` gives exactly the first K of the full ranking;
    ``params`` gives the policy's parameters other values (``fused_weight``: the
    fused policy's ``weight``); ``model`` names the learned hint source of
    ``model_hints_baseline_first`` (the snapshot must have been loaded with it).

    Runs as one statement (``riido.search_ranked``, when it ranks alike: the module
    docstring) or in one read-only repeatable-read transaction, so a concurrent
    ``replace`` is seen entirely or not at all (inside a caller's transaction: in a
    savepoint of that one).
    """
    given = policy_params(fused_weight, params)
    opts = RankOptions.check(query, policy, limit, hints, given, model)
    return rank_checked(conn, snapshot_id, query, opts)


@translated
def rank_checked(conn: Conn, snapshot_id: str, query: str, opts: RankOptions) -> Ranking:
    """:func:`rank_snapshot` with its options checked already (:meth:`RankOptions.check`,
    which the façade runs before it connects): one statement when it gives the same
    ranking (:func:`in_sql`), else (or when it raises :class:`Composed`) the composed
    path."""
    if in_sql(opts):
        try:
            with one_statement(conn):
                return run(conn, search_plan(snapshot_id, query, opts))
        except Composed:
            pass
    return rank_composed(conn, snapshot_id, query, opts)


@translated
def rank_composed(conn: Conn, snapshot_id: str, query: str, opts: RankOptions) -> Ranking:
    """The composed ranking (the reference implementation: the module docstring), in
    one read-only repeatable-read transaction."""
    with read_transaction(conn):
        run(conn, setup_plan())
        return run(conn, snapshot_ranking_plan(snapshot_id, query, opts))


@translated
def rank_documents(
    conn: Conn,
    request: RankRequest,
    *,
    policy: str = BM25,
    text_config: str = DEFAULT_TEXT_CONFIG,
    limit: int | None = None,
    hints: Sequence[str] | None = None,
    fused_weight: float | None = None,
    model: str | None = None,
    params: Mapping[str, float] | None = None,
) -> Ranking:
    """Rank the caller's documents without keeping them (a scratch snapshot; with a
    ``model``, the documents are embedded inside it too); arguments as
    :func:`rank_snapshot`'s."""
    given = policy_params(fused_weight, params)
    opts = RankOptions.check(request.query, policy, limit, hints, given, model)
    return rank_documents_checked(conn, request, text_config, opts)


@translated
def rank_documents_checked(
    conn: Conn, request: RankRequest, text_config: str, opts: RankOptions
) -> Ranking:
    """:func:`rank_documents` with its options checked already."""
    from riido_pg.storage.scratch import scratch_snapshot

    with scratch_snapshot(conn, request.documents, text_config) as snap:
        ranking = run(conn, documents_ranking_plan(snap, request, opts))
    return dataclasses.replace(ranking, snapshot_id=request.snapshot_id)


def documents_ranking_plan(
    snap: Snapshot, request: RankRequest, opts: RankOptions
) -> Plan[Ranking]:
    """Rank the request's query in the scratch snapshot of its documents (embedding
    them first under the policy's model, if it has one)."""
    if opts.model is not None:
        from riido_pg.ranking.model_hints import model_named
        from riido_pg.storage.scratch import embed_plan

        yield from embed_plan(snap, request.documents, model_named(opts.model))
    return (yield from ranking_plan(snap, request.query, opts))
