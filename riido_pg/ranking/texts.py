"""A ranking with the stored texts of its candidates, read in its transaction (what a
search answer shows of each candidate: its location and a few lines,
:mod:`riido_pg.agents`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from riido_pg.ranking.rank import Ranking, RankOptions, ranking_plan, setup_plan
from riido_pg.server.connect import Conn
from riido_pg.server.errors import read_transaction, translated
from riido_pg.server.plans import Plan, Query, run
from riido_pg.storage.snapshots import Target, snapshot_plan

__all__ = ["Found", "rank_with_texts", "texts_plan"]


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
    """:func:`~riido_pg.ranking.rank_checked` and its candidates' texts, in the one
    read-only transaction of the ranking."""
    with read_transaction(conn):
        run(conn, setup_plan())
        return run(conn, _found_plan(snapshot_id, query, opts))
