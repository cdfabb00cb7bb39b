"""``Database.load``: any kind of source opened as documents, and stored (a table's rows
read inside the server), on the connection the snapshot's placement chose."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from riido_pg.documents import Document
from riido_pg.errors import InvalidInput
from riido_pg.sources import Kind, Table, TreeOptions, open_source, source_kind
from riido_pg.storage import LoadResult, Progress

if TYPE_CHECKING:
    from riido_pg.extract import ExtractStats
    from riido_pg.server.connect import Conn

__all__ = ["Source", "opened", "store"]

#: What :meth:`riido_pg.Database.load` accepts as a source.
Source = Path | str | Table | Iterable[Document]


def opened(
    source: Source, snapshot_id: str, tree: TreeOptions | None, progress: Progress | None
) -> tuple[Iterable[Document] | Table, ExtractStats | None]:
    """The source's documents (a table stays a :class:`Table`: it is read inside the
    server) and, for a source tree, the counts its extraction will fill in."""
    if isinstance(source, str | Path):
        path = Path(source)
        stats = None
        if source_kind(path, rev=tree.rev if tree is not None else None) is Kind.TREE:
            from riido_pg.extract import ExtractStats

            stats = ExtractStats()
        docs = open_source(path, snapshot_id=snapshot_id, tree=tree, stats=stats, progress=progress)
        return docs, stats
    if tree is not None:
        tree.check_source(
            f"{source.name} is a table"
            if isinstance(source, Table)
            else "the source is an iterable of documents"
        )
    return source, None


def store(
    conn: Conn,
    snapshot_id: str,
    docs: Iterable[Document] | Table,
    *,
    reader: Conn | None = None,
    **options: Any,
) -> LoadResult:
    """Load ``docs`` (or a table's rows) as ``snapshot_id`` on ``conn``; ``options`` are
    :func:`riido_pg.load_snapshot`'s. A table is read on ``reader`` (default ``conn``):
    through a coordinator, the coordinator's database holds the table while ``conn``
    is the snapshot's shard. A row the server cannot index is named with its table
    (``table app.functions: document 'f3' has a word of more than ...``)."""
    from riido_pg.storage import load_snapshot, load_snapshot_from_table

    if not isinstance(docs, Table):
        return load_snapshot(conn, snapshot_id, docs, **options)
    try:
        return load_snapshot_from_table(
            conn,
            snapshot_id,
            docs.name,
            docs.id_column,
            docs.text_column,
            source=reader,
            **options,
        )
    except InvalidInput as exc:
        if exc.message.startswith("document "):
            raise type(exc)(f"table {docs.name}: {exc.message}", exc.hint) from exc
        raise
