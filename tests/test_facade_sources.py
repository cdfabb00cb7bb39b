"""The :class:`riido_pg.Database` façade does what ``load`` and ``snapshots move`` do
(README "Python API"): a source tree at a git revision and without its tests, a table
read on the coordinator while the snapshot goes to a shard, a move's result, and a
load that holds nothing once it returns."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support.cli import Cli
from support.database import Database as ModuleDb
from support.database import create_database, drop_database
from support.gitrepos import Repo
from support.shards import placements, scalar

from riido_pg import (
    ConflictingOptions,
    Database,
    Document,
    InvalidInput,
    SnapshotExists,
    Table,
    TreeOptions,
    load_snapshot,
)
from riido_pg.shards import MovedSnapshot


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """Two commits: the first has test code, the second adds a function."""
    r = Repo(tmp_path_factory.mktemp("facade") / "app")
    r.write("src/app.py", "def app(): pass\n")
    r.write("tests/test_app.py", "def test_app(): pass\n")
    r.commit("Start the app")
    r.write("src/app.py", "def app(): pass\n\n\ndef later(): pass\n")
    r.commit("Add later")
    return r


def _ids(conn: psycopg.Connection[Any], snapshot_id: str) -> list[str]:
    ranking = Database(conn).rank(snapshot_id, "app later test")
    return sorted(c.id for c in ranking.candidates)


def test_a_tree_at_a_revision_without_its_tests(
    conn: psycopg.Connection[Any], cli: Cli, repo: Repo
) -> None:
    first = repo.git("rev-parse", "HEAD~1")
    loaded = Database(conn).load("app@first", repo.path, tree=TreeOptions(rev=first, no_tests=True))
    assert (loaded.action, loaded.documents) == ("created", 1)
    assert loaded.stats is not None and loaded.stats.tests.entries == 1
    assert _ids(conn, "app@first") == ["src/app.py:app:1"]
    everything = Database(conn).load("app@first-all", repo.path, tree=TreeOptions(rev=first))
    assert everything.documents == 2 and everything.stats is not None
    assert everything.stats.test_functions == 1
    head = Database(conn).load("app@head", repo.path, tree=TreeOptions(rev="HEAD", no_tests=True))
    assert _ids(conn, "app@head") == ["src/app.py:app:1", "src/app.py:later:4"]
    # the command line stores the same documents: loading them again changes nothing
    again = cli(["load", "app@head", str(repo.path), "--rev", "HEAD", "--no-tests"])
    assert again.stdout == "unchanged: snapshot 'app@head' (2 documents)\n", again.stderr
    assert head.action == "created"


def test_tree_options_are_checked_before_anything_is_stored(
    conn: psycopg.Connection[Any], db: ModuleDb, repo: Repo, tmp_path: Path
) -> None:
    before = db.counts()
    with pytest.raises(InvalidInput, match="no commit named 'nope'"):
        Database(conn).load("x", repo.path, tree=TreeOptions(rev="nope"))
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(InvalidInput, match="not a git repository"):
        Database(conn).load("x", plain, tree=TreeOptions(rev="HEAD"))
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text(json.dumps({"id": "a", "text": "read"}) + "\n")
    for options in (TreeOptions(rev="HEAD"), TreeOptions(no_tests=True), TreeOptions(window=False)):
        with pytest.raises(ConflictingOptions) as caught:
            Database(conn).load("x", jsonl, tree=options)
        assert "no_tests, rev and window apply to a source tree only" in str(caught.value)
        assert "--no-tests, --rev and --no-window" in caught.value.render(cli=True)
    # one check of the tree options for every source (issue 32): the same words
    with pytest.raises(ConflictingOptions, match=r"public\.nope is a table, not a source tree"):
        Database(conn).load("x", Table("public.nope"), tree=TreeOptions(rev="HEAD"))
    assert db.counts() == before


@pytest.fixture(scope="module")
def coordinator(db: ModuleDb, server_dsn: str, template: str) -> Iterator[dict[str, ModuleDb]]:
    """The module's database as the coordinator of shards s1 and s2 (copies of the
    session's template), with a table public.functions on it and another, of the same
    name, on s2."""
    with db.connect() as conn:
        if not conn.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'postgres_fdw'"
        ).fetchone():
            pytest.skip("the test server has no postgres_fdw extension")
    shards = {
        n: create_database(server_dsn, f"riido_t_facade_{n}", template=template)
        for n in ("s1", "s2")
    }
    table = "CREATE TABLE public.functions (id text PRIMARY KEY, text text)"
    try:
        with db.connect() as conn:
            for name, shard in shards.items():
                Database(conn).add_shard(name, shard.dsn)
            conn.execute(table)
            for i in range(4):
                conn.execute("INSERT INTO public.functions VALUES (%s, %s)", (f"c{i}", f"row {i}"))
        with shards["s2"].connect() as conn:
            conn.execute(table)
            conn.execute("INSERT INTO public.functions VALUES ('s0', 'shard row')")
        yield shards
    finally:
        for shard in shards.values():
            drop_database(server_dsn, shard.name)


def test_a_table_is_read_on_the_coordinator(db: ModuleDb, coordinator: dict[str, ModuleDb]) -> None:
    with db.connect() as conn, Database(conn) as facade:
        loaded = facade.load("from-table", Table("public.functions"), shard="s2")
        assert (loaded.action, loaded.documents) == ("created", 4)
        ranked = facade.rank("from-table", "row")
        assert sorted(c.id for c in ranked.candidates) == ["c0", "c1", "c2", "c3"]
        assert placements(db)["from-table"] == "s2"
        # the load is over when it returns: another session may drop it and remove
        # the shard it used while this façade (and its connection) stays open
        facade.load("gone-soon", [Document("a", "read")], shard="s1")
        with db.connect() as other, Database(other) as second:
            second.drop("from-table")
            second.drop("gone-soon")
            second.remove_shard("s1")
        assert "s1" not in {s.name for s in facade.shards()}
        facade.add_shard("s1", coordinator["s1"].dsn)


def test_an_evaluation_holds_its_corpus_no_longer_than_it_runs(
    db: ModuleDb, coordinator: dict[str, ModuleDb], tmp_path: Path
) -> None:
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    corpus = [{"_id": "a", "text": "read the config"}, {"_id": "b", "text": "write data"}]
    (beir / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (beir / "queries.jsonl").write_text(json.dumps({"_id": "q", "text": "read config"}) + "\n")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\ta\t1\n")
    with db.connect() as conn, Database(conn) as facade:
        done = facade.evaluate(beir, policies=["bm25"])
        assert done.stored == "stored" and done.snapshot_id in placements(db)
        with db.connect() as other, Database(other) as second:
            second.drop(done.snapshot_id)  # not busy: the evaluation is over
        assert done.snapshot_id not in placements(db)


def test_move_returns_what_moved_and_asks_before_overwriting(
    db: ModuleDb, coordinator: dict[str, ModuleDb]
) -> None:
    with coordinator["s2"].connect() as shard:  # loaded on the shard directly
        load_snapshot(shard, "moved", [Document("theirs", "def kept(): pass")])
    with db.connect() as conn, Database(conn) as facade:
        facade.load("moved", [Document(f"d{i}", f"read {i}") for i in range(3)], shard="s1")
        with pytest.raises(SnapshotExists) as caught:
            facade.move("moved", "s2")
        assert str(caught.value).endswith(
            "move with replace=True to overwrite it, or drop it on that shard first"
        )
        assert placements(db)["moved"] == "s1"
        moved = facade.move("moved", "s2", replace=True)
        assert moved == MovedSnapshot("moved", "s1", "s2", None)
        count = "SELECT document_count FROM riido.snapshots WHERE snapshot_id = 'moved'"
        assert scalar(coordinator["s2"], count) == 3
        assert scalar(coordinator["s1"], count) is None
        facade.drop("moved")


def test_a_password_is_given_once(db: ModuleDb, coordinator: dict[str, ModuleDb]) -> None:
    with db.connect() as conn, pytest.raises(ConflictingOptions, match="has a password"):
        Database(conn).add_shard("s9", coordinator["s1"].dsn + " password=x", password="y")
