"""SQL fragments that more than one statement composes, each built once here.

* :data:`REMOVED_ORDS`: the doc_ords a snapshot removed from its path
  (``riido.snapshots.removed``), one row each, for ``%(snapshot_id)s``;
* :data:`HELD`: ``sql/snapshot_documents.sql``, the CTE ``held`` of the documents a
  snapshot holds (its path's documents less :data:`REMOVED_ORDS`).
"""

from __future__ import annotations

from psycopg import sql

from riido_pg.resources import sql_template

__all__ = ["HELD", "REMOVED_ORDS"]

REMOVED_ORDS = sql.SQL(
    "SELECT unnest(s.removed) AS doc_ord FROM riido.snapshots AS s "
    "WHERE s.snapshot_id = %(snapshot_id)s"
)

HELD = sql.SQL(sql_template("snapshot_documents")).format(removed=REMOVED_ORDS)
