"""Looking documents of a snapshot up by ord or by id, as plans (I/O-free: see
:mod:`riido_pg.server.plans`).

A snapshot's documents live in the segments of its path, numbered by ``doc_ord``
across the path (README "Snapshots on a base"): an ord names one document of the
path, and an id names one document of the snapshot (the path's other documents of
that id, if any, are ones the snapshot removed).
"""

from __future__ import annotations

from collections.abc import Sequence

from psycopg import sql

from riido_pg.errors import InvalidInput
from riido_pg.ranking import bm25
from riido_pg.server.plans import Plan, Query
from riido_pg.storage.fragments import HELD
from riido_pg.storage.snapshots import Target

__all__ = ["doc_ids", "hint_ords", "units_of"]


def doc_ids(target: Target, ords: Sequence[int]) -> Plan[dict[int, str]]:
    """The document id of each of ``ords``."""
    if not ords:
        return {}
    result = yield Query(
        sql.SQL("SELECT t.doc_ord, ({}) FROM unnest(%(ords)s::int[]) AS t(doc_ord)").format(
            bm25.DOC_ID
        ),
        {"ords": list(ords), "segments": list(target.segments)},
    )
    return {int(r[0]): str(r[1]) for r in result.rows}


def hint_ords(target: Target, hints: Sequence[str]) -> Plan[list[int]]:
    """The doc_ords of the hint ids, in hint order; InvalidInput naming an unknown id."""
    result = yield Query(
        sql.SQL(
            "WITH {held} SELECT h.doc_id, h.doc_ord FROM held AS h "
            "WHERE h.doc_id = ANY(%(ids)s::text[])"
        ).format(held=HELD),
        {"ids": list(set(hints)), "snapshot_id": target.snapshot_id},
    )
    by_id = {str(r[0]): int(r[1]) for r in result.rows}
    missing = [h for h in hints if h not in by_id]
    if missing:
        raise InvalidInput(
            f"hints name {len(missing)} document(s) not in snapshot "
            f"{target.snapshot_id!r}, e.g. {missing[0]!r}"
        )
    return [by_id[h] for h in hints]


def units_of(
    target: Target, col: str, lexemes: Sequence[str], ords: Sequence[int]
) -> Plan[dict[int, int]]:
    """One column's score units of each of ``ords`` (0 when unmatched)."""
    if not ords:
        return {}
    result = yield bm25.scores(target, col, lexemes, ords)
    return {int(r[0]): int(r[1]) for r in result.rows}
