"""Loading a snapshot from a table already in the database (``load --from-table``).

The rows are read with ``COPY (SELECT id::text, text::text FROM table) TO STDOUT`` on
a second session of the same role, streamed into the load as they arrive (memory does
not grow with the table). The table is read where the user's DSN points: through a
coordinator (README "More than one server") that is the coordinator's database,
while the snapshot is written on its shard. The rows are checked exactly like file
input (the same errors, naming the row's id: a NULL id or text, a duplicate id, an
over-limit text).
Identifiers are composed with ``psycopg.sql.Identifier``; the reading role needs only
``SELECT`` on the table.

The text makes one round trip through the client: identifier splitting is the one
Python implementation (:func:`riido_pg.splitting.split_identifiers`), which PostgreSQL
cannot run, so the loader reads each text, splits it, and writes both back as any
load does (README "Loading from a table" has the measured cost); a text some snapshot
already holds is not sent back at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
from psycopg import sql

from riido_pg.documents import Document, DocumentStream, check_document
from riido_pg.errors import DatabaseError, InvalidInput
from riido_pg.server.connect import Conn
from riido_pg.server.errors import first_line, parallel, translate, translated
from riido_pg.storage.loading import LoadResult, Progress, load_snapshot
from riido_pg.storage.snapshots import DEFAULT_TEXT_CONFIG
from riido_pg.storage.workers import worker_connection

__all__ = ["SourceTable", "load_snapshot_from_table", "read_table"]


@dataclass(frozen=True, slots=True)
class SourceTable:
    schema: str
    name: str
    id_column: str
    text_column: str

    def __str__(self) -> str:
        return f"{self.schema}.{self.name}"


def _resolve(conn: Conn, table: str, id_column: str, text_column: str) -> SourceTable:
    schema, dot, name = table.partition(".")
    if not dot:
        schema, name = "", table
    if not name or (dot and not schema):
        raise InvalidInput(f"table {table!r}: expected SCHEMA.TABLE or TABLE")
    # an unqualified name is looked up on the search path, first schema first
    row = conn.execute(
        "SELECT n.nspname, c.relname, c.oid FROM pg_class AS c "
        "JOIN pg_namespace AS n ON n.oid = c.relnamespace "
        "WHERE c.relname = %s AND c.relkind IN ('r', 'v', 'm', 'p', 'f') "
        "AND CASE WHEN %s = '' THEN n.nspname = ANY(current_schemas(false)) "
        "ELSE n.nspname = %s END "
        "ORDER BY array_position(current_schemas(false), n.nspname::text) LIMIT 1",
        (name, schema, schema),
    ).fetchone()
    if row is None:
        if schema:
            raise InvalidInput(f"no table {table!r} (expected SCHEMA.TABLE, e.g. public.functions)")
        path = conn.execute("SELECT array_to_string(current_schemas(false), ', ')").fetchone()
        raise InvalidInput(
            f"no table {table!r} on the search path ({path[0] if path else ''}); "
            "name it as SCHEMA.TABLE"
        )
    found = {
        str(r[0])
        for r in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s AND attnum > 0 "
            "AND NOT attisdropped",
            (row[2],),
        )
    }
    for column in (id_column, text_column):
        if column not in found:
            raise InvalidInput(
                f"table {row[0]}.{row[1]} has no column {column!r}; it has "
                + ", ".join(sorted(found))
            )
    return SourceTable(str(row[0]), str(row[1]), id_column, text_column)


def read_table(
    conn: Conn, table: str, id_column: str, text_column: str, *, progress: Progress | None = None
) -> DocumentStream:
    """The rows of ``table`` as checked documents, streamed on a second session of
    the same role when iterated (``progress("rows", n, 0)`` as they arrive)."""
    source = _resolve(conn, table, id_column, text_column)
    query = sql.SQL("COPY (SELECT {}::text, {}::text FROM {}.{}) TO STDOUT").format(
        sql.Identifier(source.id_column),
        sql.Identifier(source.text_column),
        sql.Identifier(source.schema),
        sql.Identifier(source.name),
    )
    where = f"table {source}"

    def rows() -> Iterator[Document]:
        try:
            yield from read()
        except psycopg.Error as exc:
            mapped = translate(exc)
            if isinstance(mapped, DatabaseError):  # the table's own (a view dividing by 0)
                raise DatabaseError(f"{where}: {first_line(exc)}", mapped.hint) from exc
            raise

    def read() -> Iterator[Document]:
        n = 0
        with worker_connection(conn) as reader, reader.cursor().copy(query) as copy:
            for doc_id, text in copy.rows():
                if doc_id is None:
                    raise InvalidInput(f"{where}: a row has a NULL {source.id_column}")
                yield check_document(doc_id, text, where)
                n += 1
                if progress is not None and n % 10_000 == 0:
                    progress("rows", n, 0)
        if progress is not None:
            progress("rows", n, n)

    return DocumentStream(rows, where=where)


@translated(commits=parallel)
def load_snapshot_from_table(
    conn: Conn,
    snapshot_id: str,
    table: str,
    id_column: str,
    text_column: str,
    *,
    text_config: str = DEFAULT_TEXT_CONFIG,
    replace: bool = False,
    progress: Progress | None = None,
    jobs: int = 1,
    source: Conn | None = None,
    base: str | None = None,
    fresh: bool = False,
) -> LoadResult:
    """:func:`~riido_pg.storage.loading.load_snapshot` of the rows of ``table``, read on
    ``source`` (the database holding the table, e.g. a coordinator) and written
    through ``conn`` (the snapshot's server, e.g. its shard); ``source`` defaults to
    ``conn``."""
    docs = read_table(source or conn, table, id_column, text_column, progress=progress)
    return load_snapshot(
        conn,
        snapshot_id,
        docs,
        text_config=text_config,
        replace=replace,
        progress=progress,
        jobs=jobs,
        base=base,
        fresh=fresh,
    )
