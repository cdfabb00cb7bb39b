"""A ranking with the stored texts of its candidates, read in its transaction (what a
search answer shows of each candidate: its location and a few lines,
:mod:`riido_pg.agents`): in the one statement of the ranking when it runs in the
database (:func:`~riido_pg.ranking.rank.search_texts_plan`), else after the composed
ranking, in its read-only transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from riido_pg.ranking.rank import (
    Composed,
    Ranking,
    RankOptions,
    in_sql,
    ranking_plan,
    search_texts_plan,
    setup_plan,
)
from riido_pg.server.connect import Conn
from riido_pg.server.errors import one_statement, read_transaction, translated
from riido_pg.server.plans import Plan, Query, run
from riido_pg.storage.snapshots import Target, snapshot_plan

__all__ = ["Found", "rank_with_texts", "rank_with_texts_composed", "texts_plan"]


def texts_plan(target: Target, ids: Sequence[str]) -> Plan[dict[str, str]]:
    """The text of each of ``ids`` the snapshot holds (the others are left out)."""
    if not ids:
        return {}
    result = yield Query(
        "SELECT d.doc_id, t.body FROM riido.documents AS d "
        "JOIN riido.texts AS t ON t.key = d.text_key "
        "WHERE d.segment_id = ANY(%(segments)s::uuid[]) AND d.doc_id = ANY(%(ids)s::text[]) "
        "AND d.doc_ord NOT IN (SELECT unnest(s.removed) FROM riido.snapshots AS s "
        "WHERE s.snapshot_id = %(snapshot_id)s)",
        {
            "segments": list(target.segments),
            "ids": list(set(ids)),
            "snapshot_id": target.snapshot_id,
        },
    )
    return {str(r[0]): str(r[1]) for r in result.rows}


@dataclass(frozen=True, slots=True)
class Found:
    """A ranking and the stored text of each of its candidates, by id."""

    ranking: Ranking
    texts: dict[str, str]


def _found_plan(snapshot_id: str, query: str, opts: RankOptions) -> Plan[Found]:
    snap = yield from snapshot_plan(snapshot_id)
    ranking = yield from ranking_plan(snap, query, opts)
    texts = yield from texts_plan(snap.target, [c.id for c in ranking.candidates])
    return Found(ranking, texts)


@translated
def rank_with_texts(conn: Conn, snapshot_id: str, query: str, opts: RankOptions) -> Found:
    """:func:`~riido_pg.ranking.rank_checked` and its candidates' texts, read with the
    ranking: one statement when it gives the same ranking, else the composed path."""
    if in_sql(opts):
        try:
            with one_statement(conn):
                return Found(*run(conn, search_texts_plan(snapshot_id, query, opts)))
        except Composed:
            pass
    return rank_with_texts_composed(conn, snapshot_id, query, opts)


@translated
def rank_with_texts_composed(conn: Conn, snapshot_id: str, query: str, opts: RankOptions) -> Found:
    """The composed ranking and its candidates' texts, in its one read-only
    transaction (the reference)."""
    with read_transaction(conn):
        run(conn, setup_plan())
        return run(conn, _found_plan(snapshot_id, query, opts))
