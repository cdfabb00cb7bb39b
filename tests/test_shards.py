"""More than one server: a coordinator and three shards started by the tests (README
"More than one server"). Rankings and evaluations through the coordinator equal a
single server's for every policy; placement, listing, moving (with concurrent
readers), a shard that is down, a killed loader, `db upgrade`, and bad input."""

from __future__ import annotations

import json
import shlex
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from support import clusters
from support.cli import run_cli, spawn
from support.corpus import generated_corpus, stdlib_functions, write_jsonl
from support.database import Database
from support.sessions import WAIT

from riido_pg import Document, load_snapshot, rank_snapshot
from riido_pg.db import SCHEMA_REVISION
from riido_pg.ranking.policies import policies
from riido_pg.server import migrate
from riido_pg.shards import Router

REGISTRY = {p.name: p for p in policies()}

pytestmark = pytest.mark.skipif(clusters.pg_bin() is None, reason="no initdb on this machine")

QUERIES = ("parse the config file", "read json value", "split the line into words", "the")
SNAPS = ("alpha", "beta", "gamma")


@dataclass
class Shards:
    coordinator: Database
    single: Database
    dsns: dict[str, str]
    far: clusters.Cluster  # the cluster of shard s3 (stopped by the fault test)


def _new_db(dsn: str, name: str, *, migrated: bool = True) -> str:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    db_dsn = make_conninfo(dsn, dbname=name)
    if migrated:
        migrate.upgrade(db_dsn)
    return db_dsn


@pytest.fixture(scope="module")
def shards(db: Database) -> Iterator[Shards]:
    """The module's database as the coordinator of s1 and s2 (two databases of one
    cluster) and s3 (another cluster); a third database of the first cluster as the
    single server (the same PostgreSQL major as the shards, whatever the coordinator's)."""
    with db.connect() as conn:
        if not conn.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'postgres_fdw'"
        ).fetchone():
            pytest.skip("the test server has no postgres_fdw extension")
    with clusters.cluster() as near, clusters.cluster() as far:
        single = Database(_new_db(near.dsn(), "single"), "single")
        dsns = {
            "s1": _new_db(near.dsn(), "s1", migrated=False),
            "s2": _new_db(near.dsn(), "s2"),  # already migrated: registered as it is
            "s3": _new_db(far.dsn(), "s3", migrated=False),
        }
        for name, dsn in dsns.items():
            added = run_cli(["shards", "add", name, dsn], dsn=db.dsn)
            assert (added.code, added.stdout) == (0, f"added shard {name!r}\n"), added.stderr
        yield Shards(db, single, dsns, far)


def _docs(i: int) -> list[Document]:
    docs = stdlib_functions(400)
    return docs[i * 100 : i * 100 + 150 + 20 * i]


def _rank_all(conn: psycopg.Connection[Any] | Router, snap: str) -> list[dict[str, Any]]:
    out = []
    hints = [d.id for d in _docs(SNAPS.index(snap))[::7]]
    for policy in REGISTRY.values():
        for q in QUERIES:
            kwargs: dict[str, Any] = {"policy": policy.name, "limit": 25}
            if policy.needs_hints:
                kwargs["hints"] = hints
            if policy.needs_model:
                kwargs["model"] = "wordllama-256"

            def rank(
                c: psycopg.Connection[Any], q: str = q, kwargs: dict[str, Any] = kwargs
            ) -> Any:
                return rank_snapshot(c, snap, q, **kwargs).to_dict()

            out.append(conn.run(snap, rank) if isinstance(conn, Router) else rank(conn))
    return out


@pytest.fixture(scope="module")
def loaded(shards: Shards) -> Shards:
    """The three snapshots on the single server and through the coordinator (each
    embedded with wordllama-256 when it is installed)."""
    from riido_pg.ranking.model_hints import model_named
    from riido_pg.storage.embeddings import embed_snapshot

    model = model_named("wordllama-256")
    with shards.single.connect() as single, shards.coordinator.connect() as coord:
        router = Router(coord)
        for i, snap in enumerate(SNAPS):
            load_snapshot(single, snap, _docs(i))
            embed_snapshot(single, snap, model)
            conn = router.for_load(snap)
            load_snapshot(conn, snap, _docs(i))
            embed_snapshot(conn, snap, model)
        router.close()
    return shards


def _placements(db: Database) -> dict[str, str]:
    with db.connect() as conn:
        return dict(conn.execute("SELECT snapshot_id, shard FROM riido.placements").fetchall())


def test_new_snapshots_go_to_the_shard_with_fewest_documents(loaded: Shards) -> None:
    # alpha to s1 (all empty; ties: the first name), then beta to s2, gamma to s3
    assert _placements(loaded.coordinator) == {"alpha": "s1", "beta": "s2", "gamma": "s3"}
    with loaded.coordinator.connect() as conn:
        assert conn.execute("SELECT count(*) FROM riido.snapshots").fetchone() == (0,)


def test_every_policy_ranks_as_on_a_single_server(loaded: Shards) -> None:
    pytest.importorskip("wordllama")
    with loaded.single.connect() as single, loaded.coordinator.connect() as coord:
        with Router(coord) as router:
            for snap in SNAPS:
                assert _rank_all(router, snap) == _rank_all(single, snap)


def test_cli_through_the_coordinator_matches_a_single_server(
    loaded: Shards, tmp_path: Path
) -> None:
    args = ["query", "beta", "read the config", "--identifier-hints", "--limit", "10"]
    one, many = run_cli(args, dsn=loaded.single.dsn), run_cli(args, dsn=loaded.coordinator.dsn)
    assert (many.code, many.stdout) == (0, one.stdout) and one.code == 0
    # eval of a BEIR directory stores its snapshot on a shard and evaluates it there
    beir = generated_corpus(tmp_path / "beir", seed=3)
    ev = ["eval", str(beir), "--output", "-"]
    one, many = run_cli(ev, dsn=loaded.single.dsn), run_cli(ev, dsn=loaded.coordinator.dsn)
    assert (many.code, many.stdout) == (0, one.stdout), many.stderr
    snap = json.loads(one.stdout)["corpus"]["snapshot_id"]
    assert _placements(loaded.coordinator)[snap] in loaded.dsns
    again = run_cli(["eval", "--snapshot", snap, "--output", "-"], dsn=loaded.coordinator.dsn)
    assert (again.code, again.stdout) == (0, one.stdout)
    # moved with its questions and targets, it evaluates the same on its new shard
    other = next(s for s in sorted(loaded.dsns) if s != _placements(loaded.coordinator)[snap])
    moved = run_cli(["snapshots", "move", snap, other], dsn=loaded.coordinator.dsn)
    assert moved.code == 0, moved.stderr
    again = run_cli(["eval", "--snapshot", snap, "--output", "-"], dsn=loaded.coordinator.dsn)
    assert (again.code, again.stdout) == (0, one.stdout)
    assert run_cli(["snapshots", "drop", snap], dsn=loaded.coordinator.dsn).code == 0
    assert snap not in _placements(loaded.coordinator)


def test_lists_show_every_shard_and_no_credentials(loaded: Shards) -> None:
    listed = run_cli(["snapshots", "list", "--format", "json"], dsn=loaded.coordinator.dsn)
    rows = json.loads(listed.stdout)
    assert {r["id"]: r["shard"] for r in rows} == {"alpha": "s1", "beta": "s2", "gamma": "s3"}
    sizes = [len(_docs(i)) for i in range(3)]
    assert [r["documents"] for r in rows] == sizes
    table = run_cli(["snapshots", "list"], dsn=loaded.coordinator.dsn)
    assert table.code == 0 and "shard" in table.stdout and "s3" in table.stdout
    listing = run_cli(["shards", "list", "--format", "json"], dsn=loaded.coordinator.dsn)
    shards = json.loads(listing.stdout)
    assert [(s["name"], s["snapshots"], s["documents"]) for s in shards] == [
        (name, 1, n) for name, n in zip(("s1", "s2", "s3"), sizes, strict=True)
    ]
    assert all(s["bytes"] > 0 and s["host"] == "127.0.0.1" for s in shards)
    assert [s["dbname"] for s in shards] == ["s1", "s2", "s3"]


def test_shards_add_bad_input_registers_nothing(loaded: Shards, tmp_path: Path) -> None:
    coord = loaded.coordinator

    def add(name: str, dsn: str) -> tuple[int, str]:
        result = run_cli(["shards", "add", name, dsn], dsn=coord.dsn)
        assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
        assert result.stderr.startswith("error: ")
        return result.code, result.stderr

    with clusters.cluster() as spare:
        down = make_conninfo(spare.dsn(), port=clusters._free_port())
        code, err = add("s4", down)
        assert code == 1 and "cannot add shard 's4'" in err
        code, err = add("s4", make_conninfo(spare.dsn(), user="nobody", password="hunter2"))
        assert code == 1 and "nobody" in err and "hunter2" not in err
        code, err = add("s1", spare.dsn())
        assert code == 2 and "shard 's1' exists" in err
        code, err = add("S 4", spare.dsn())
        assert code == 2 and "invalid shard name" in err
        code, err = add("s4", "host=127.0.0.1 port=notaport")
        assert code == 2 and "invalid" in err
        code, err = add("s4", coord.dsn)
        assert code == 2 and "the coordinator's own database" in err
        code, err = add("s4", "")
        assert code == 2 and "empty DSN" in err
        old = _new_db(spare.dsn(), "old", migrated=False)
        migrate.upgrade(old, "0005")
        code, err = add("s4", old)
        assert err == (
            "error: shard 's4' has an older riido schema than the coordinator: bring it to "
            "the coordinator's first (`riido-pg --dsn SHARD_DSN db upgrade`)\n"
        )
        assert code == 1
        with coord.connect() as conn:
            assert conn.execute("SELECT count(*) FROM riido.shards").fetchone() == (3,)
            servers = conn.execute("SELECT srvname FROM pg_foreign_server ORDER BY 1").fetchall()
            assert servers == [("riido_shard_s1",), ("riido_shard_s2",), ("riido_shard_s3",)]
        # a password goes to the user mapping, never to the catalog or the output
        assert add_ok(coord, "s4", make_conninfo(spare.dsn(), password="hunter2"))
        listed = run_cli(["shards", "list"], dsn=coord.dsn)
        assert listed.code == 0 and "s4" in listed.stdout and "hunter2" not in listed.stdout
        with coord.connect() as conn:
            row = conn.execute("SELECT conninfo FROM riido.shards WHERE name = 's4'").fetchone()
            assert row is not None and "hunter2" not in row[0] and "user" not in row[0]
        removed = run_cli(["shards", "remove", "s4"], dsn=coord.dsn)
        assert (removed.code, removed.stdout) == (0, "removed shard 's4'\n")
    src = _jsonl(tmp_path / "few.jsonl", 3)
    unknown = run_cli(["load", "delta", str(src), "--shard", "nope"], dsn=coord.dsn)
    assert unknown.code == 2 and "no shard 'nope'" in unknown.stderr
    assert run_cli(["shards", "remove", "nope"], dsn=coord.dsn).code == 2
    busy = run_cli(["shards", "remove", "s1"], dsn=coord.dsn)
    assert busy.code == 2 and "holds 1 snapshot" in busy.stderr
    assert "delta" not in _placements(coord)


def add_ok(coord: Database, name: str, dsn: str) -> bool:
    result = run_cli(["shards", "add", name, dsn], dsn=coord.dsn)
    return result.code == 0


def test_a_snapshot_on_a_base_goes_and_moves_with_what_it_needs(
    loaded: Shards, tmp_path: Path
) -> None:
    coord = loaded.coordinator.dsn
    first = [{"id": d.id, "text": d.text} for d in _docs(0)[:120]]
    second = [*first[10:], {"id": "new.parse", "text": "def parse_config(path): pass"}]
    one = write_jsonl(tmp_path / "one.jsonl", first)
    two = write_jsonl(tmp_path / "two.jsonl", second)
    assert run_cli(["load", "hist@1", str(one), "--shard", "s2"], dsn=coord).code == 0
    loaded_two = run_cli(["load", "hist@2", str(two), "--base", "hist@1"], dsn=coord)
    assert loaded_two.code == 0, loaded_two.stderr
    assert _placements(loaded.coordinator)["hist@2"] == "s2"  # where its base is
    listed = run_cli(["snapshots", "list", "--format", "json"], dsn=coord)
    row = next(r for r in json.loads(listed.stdout) if r["id"] == "hist@2")
    assert (row["base"], row["added"], row["removed"]) == ("hist@1", 1, 10)
    fresh = run_cli(["load", "hist@2", str(two), "--fresh"], dsn=loaded.single.dsn)
    assert fresh.code == 0, fresh.stderr
    query = ["query", "hist@2", "parse the config", "--identifier-hints", "--limit", "20"]
    expected = run_cli(query, dsn=loaded.single.dsn).stdout
    assert run_cli(query, dsn=coord).stdout == expected
    # moved, it takes its base's documents along; its base's drop leaves it whole
    assert run_cli(["snapshots", "move", "hist@2", "s1"], dsn=coord).code == 0
    assert run_cli(query, dsn=coord).stdout == expected
    assert run_cli(["snapshots", "drop", "hist@1"], dsn=coord).code == 0
    assert run_cli(query, dsn=coord).stdout == expected
    assert run_cli(["snapshots", "move", "hist@2", "s2"], dsn=coord).code == 0
    assert run_cli(query, dsn=coord).stdout == expected
    for dsn in (coord, loaded.single.dsn):
        assert run_cli(["snapshots", "drop", "hist@2"], dsn=dsn).code == 0
    with psycopg.connect(loaded.dsns["s2"]) as conn:  # nothing of either is left there
        assert conn.execute(
            "SELECT count(*) FROM riido.documents AS d JOIN riido.segments AS g "
            "USING (segment_id) WHERE NOT EXISTS (SELECT 1 FROM riido.snapshot_segments "
            "AS p WHERE p.segment_id = g.segment_id)"
        ).fetchone() == (0,)


def test_move_with_concurrent_readers(loaded: Shards) -> None:
    expected = {}
    with loaded.single.connect() as single:
        for q in QUERIES:
            expected[q] = rank_snapshot(single, "alpha", q, limit=30).to_dict()
    errors: list[BaseException] = []
    seen = 0
    stop = threading.Event()

    def read() -> None:
        nonlocal seen
        with loaded.coordinator.connect() as coord, Router(coord) as router:
            while not stop.is_set():
                for q in QUERIES:
                    try:
                        got = router.run(
                            "alpha", lambda c, q=q: rank_snapshot(c, "alpha", q, limit=30).to_dict()
                        )
                    except BaseException as exc:
                        errors.append(exc)
                        return
                    if got != expected[q]:
                        errors.append(AssertionError(f"differs for {q!r}"))
                        return
                    seen += 1

    readers = [threading.Thread(target=read) for _ in range(3)]
    for t in readers:
        t.start()
    try:
        for target in ("s2", "s3", "s1", "s2"):
            moved = run_cli(["snapshots", "move", "alpha", target], dsn=loaded.coordinator.dsn)
            assert moved.code == 0 and f"to shard {target!r}" in moved.stdout, moved.stderr
            assert _placements(loaded.coordinator)["alpha"] == target
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert not errors, errors[0]
    assert seen > 20
    for name, dsn in loaded.dsns.items():  # one copy, on s2
        with psycopg.connect(dsn) as conn:
            row = conn.execute("SELECT count(*) FROM riido.snapshots WHERE snapshot_id = 'alpha'")
            assert row.fetchone() == ((1,) if name == "s2" else (0,))
        with psycopg.connect(dsn) as conn:  # texts moved with it, none left behind
            assert conn.execute(
                "SELECT count(*) FROM riido.texts AS t WHERE NOT EXISTS "
                "(SELECT 1 FROM riido.documents AS d WHERE d.text_key = t.key)"
            ).fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM riido.text_pending").fetchone() == (0,)
    same = run_cli(["snapshots", "move", "alpha", "s2"], dsn=loaded.coordinator.dsn)
    assert same.code == 2 and "already on shard 's2'" in same.stderr
    back = run_cli(["snapshots", "move", "alpha", "s1"], dsn=loaded.coordinator.dsn)
    assert back.code == 0
    pytest.importorskip("wordllama")  # the embeddings moved too: every policy still agrees
    with loaded.single.connect() as single, loaded.coordinator.connect() as coord:
        with Router(coord) as router:
            assert _rank_all(router, "alpha") == _rank_all(single, "alpha")


def test_a_shard_down_names_it_and_the_others_answer(loaded: Shards) -> None:
    coord = loaded.coordinator.dsn
    loaded.far.stop()
    try:
        down = run_cli(["query", "gamma", "read json"], dsn=coord)
        assert down.code == 1 and down.stdout == ""
        assert down.stderr.count("\n") == 1 and down.stderr.startswith("error: shard 's3'")
        up = run_cli(["query", "beta", "read json", "--limit", "3"], dsn=coord)
        assert up.code == 0 and len(json.loads(up.stdout)["candidates"]) == 3
        listed = run_cli(["snapshots", "list", "--format", "json"], dsn=coord)
        assert listed.code == 1 and "shard 's3'" in listed.stderr
        assert [r["id"] for r in json.loads(listed.stdout)] == ["alpha", "beta"]
        shards = json.loads(run_cli(["shards", "list", "--format", "json"], dsn=coord).stdout)
        assert [s["snapshots"] for s in shards] == [1, 1, None]
    finally:
        loaded.far.start()
    back = run_cli(["query", "gamma", "read json", "--limit", "3"], dsn=coord)  # no repair
    assert back.code == 0, back.stderr


def _jsonl(path: Path, n: int) -> Path:
    return write_jsonl(
        path, ({"id": f"doc{i:06d}", "text": f"def f_{i}(x): return x {i}"} for i in range(n))
    )


def test_a_killed_loader_on_a_shard_leaves_nothing_queryable(
    loaded: Shards, tmp_path: Path
) -> None:
    src = _jsonl(tmp_path / "big.jsonl", 60_000)
    deadline = time.monotonic() + WAIT
    with (
        spawn(["load", "delta", str(src), "--shard", "s2"], dsn=loaded.coordinator.dsn) as proc,
        psycopg.connect(loaded.dsns["s2"], autocommit=True) as shard,
    ):
        while time.monotonic() < deadline:
            row = shard.execute("SELECT state FROM riido.snapshots WHERE snapshot_id = 'delta'")
            if row.fetchone() == ("loading",):
                break
            time.sleep(0.02)
        else:
            raise AssertionError("the load never started")
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        shard.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'riido-pg' AND pid <> pg_backend_pid()"
        )
    coord = loaded.coordinator.dsn
    listed = json.loads(run_cli(["snapshots", "list", "--format", "json"], dsn=coord).stdout)
    assert "delta" not in [r["id"] for r in listed]
    q = run_cli(["query", "delta", "f"], dsn=coord)
    assert q.code == 1 and "interrupted" in q.stderr
    for _ in range(int(WAIT / 0.1)):  # the killed backend may take a moment to release its lock
        again = run_cli(["load", "delta", str(src)], dsn=coord)
        if "being written" not in again.stderr:
            break
        time.sleep(0.1)
    assert again.code == 0 and again.stdout.startswith("loaded snapshot 'delta'"), again.stderr
    assert _placements(loaded.coordinator)["delta"] == "s2"
    assert run_cli(["snapshots", "drop", "delta"], dsn=coord).code == 0
    assert "delta" not in _placements(loaded.coordinator)


def test_db_upgrade_upgrades_the_shards(loaded: Shards) -> None:
    migrate.downgrade(loaded.dsns["s3"], "-1")  # one revision back
    stale = run_cli(["query", "gamma", "read"], dsn=loaded.coordinator.dsn)
    assert stale.code == 1 and stale.stderr.startswith("error: shard 's3'")
    said, command, end = stale.stderr.split("`")
    assert said == "error: shard 's3': the database has an older riido schema: run " and end == "\n"
    words = shlex.split(command)  # db upgrade with the shard's own DSN
    assert words[:2] == ["riido-pg", "--dsn"] and words[3:] == ["db", "upgrade"]
    assert conninfo_to_dict(words[2]) == conninfo_to_dict(loaded.dsns["s3"])
    up = run_cli(["db", "upgrade"], dsn=loaded.coordinator.dsn)
    assert up.code == 0 and f"shard 's3': schema at {SCHEMA_REVISION}" in up.stdout, up.stderr
    assert run_cli(["query", "gamma", "read"], dsn=loaded.coordinator.dsn).code == 0
