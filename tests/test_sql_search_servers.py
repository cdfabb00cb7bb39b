"""riido.search on a shard coordinator (docs/search-from-sql.md "Shards"): a snapshot
placed on a shard is answered through the shard's foreign server when the coordinator
has the dblink extension, and otherwise refused with SQLSTATE RI005 naming the shard.
The Python API ranks on the shard itself, as before it called riido.search."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from support.cli import run_cli
from support.corpus import stdlib_functions
from support.database import Database, create_database, drop_database

from riido_pg import Database as Riido
from riido_pg import load_snapshot, rank_snapshot
from riido_pg.errors import SnapshotNotFound
from riido_pg.ranking.rank import RankOptions, rank_composed
from riido_pg.shards import Router

SEARCH = (
    "SELECT rank, id, bm25_score, identifier_bm25_score, policy, score "
    "FROM riido.search('far', 'parse the config file', 5, 'identifier_bm25_baseline_first')"
)


@pytest.fixture(scope="module")
def shard(db: Database, server_dsn: str, template: str) -> Iterator[Database]:
    """The module's database as the coordinator of one shard (another database of the
    test server) holding snapshot ``far``."""
    with db.connect() as conn:
        available = conn.execute(
            "SELECT count(*) FROM pg_available_extensions WHERE name IN ('postgres_fdw', 'dblink')"
        ).fetchone()
    if available is None or available[0] < 2:
        pytest.skip("the test server lacks postgres_fdw or dblink")
    far = create_database(server_dsn, "riido_t_sqlshard", template=template)
    try:
        added = run_cli(["shards", "add", "s1", far.dsn], dsn=db.dsn)
        assert added.code == 0, added.stderr
        with db.connect() as conn, Router(conn) as router:
            load_snapshot(router.for_load("far"), "far", stdlib_functions(120))
        yield far
    finally:
        with db.connect() as conn:
            conn.execute("DROP EXTENSION IF EXISTS dblink")
        removed = run_cli(["snapshots", "drop", "far"], dsn=db.dsn)
        assert removed.code == 0, removed.stderr
        run_cli(["shards", "remove", "s1"], dsn=db.dsn)
        drop_database(server_dsn, far.name)


def test_without_dblink_the_coordinator_names_the_shard(db: Database, shard: Database) -> None:
    with db.connect() as conn, pytest.raises(psycopg.Error) as caught:
        conn.execute(SEARCH)
    assert caught.value.sqlstate == "RI005"
    assert "snapshot 'far' is on shard 's1'" in str(caught.value)


def test_with_dblink_the_coordinator_answers_as_the_shard(db: Database, shard: Database) -> None:
    with shard.connect() as conn:
        direct: list[tuple[Any, ...]] = conn.execute(SEARCH).fetchall()
    assert len(direct) == 5
    with db.connect() as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS dblink")
        try:
            through = conn.execute(SEARCH).fetchall()
            with pytest.raises(psycopg.Error) as caught:
                conn.execute(
                    "SELECT * FROM riido.search('far', 'q', 5, 'external_hints_baseline_first', "
                    "ARRAY['nope'])"
                )
        finally:
            conn.execute("DROP EXTENSION dblink")
    assert through == direct
    # the shard's own error, with its SQLSTATE
    assert caught.value.sqlstate == "RI004"
    assert "e.g. 'nope'" in str(caught.value)


def test_the_python_api_through_the_coordinator(db: Database, shard: Database) -> None:
    """``Database.rank`` ranks on the shard's own server (its one statement there, the
    composed path's ranking); ``rank_snapshot`` on the coordinator's connection does
    not go through dblink: no snapshot there, as the composed path answers."""
    opts = RankOptions.check("parse the config file", "structure_bm25", 5, None, None, None)
    with shard.connect() as conn:
        want = rank_composed(conn, "far", "parse the config file", opts)
    with db.connect() as conn:
        with Riido(conn) as riido:
            got = riido.rank("far", "parse the config file", policy="structure_bm25", limit=5)
        assert got == want
        conn.execute("CREATE EXTENSION IF NOT EXISTS dblink")
        try:
            with pytest.raises(SnapshotNotFound) as caught:
                rank_snapshot(conn, "far", "parse the config file", limit=5)
            with pytest.raises(SnapshotNotFound) as composed:
                rank_composed(conn, "far", "parse the config file", opts)
        finally:
            conn.execute("DROP EXTENSION dblink")
    assert caught.value.message == composed.value.message == "no snapshot 'far'"
