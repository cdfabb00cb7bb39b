"""Shards under running work (README "More than one server"): `shards remove` against a
load or move in flight, `snapshots move` onto a snapshot the shard already holds, a
move interrupted after it switched its readers, a shard lost during a move, two names
for one database, and `load --from-table` through a coordinator.

The shards are databases of the test server; each race is made deterministic by a
lock another session holds on the table the command needs next."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from support.corpus import numbered_jsonl
from support.database import Database, another_name, create_database, drop_database
from support.sessions import WAIT, table_locked
from support.shards import (
    Coordinator,
    finish,
    placements,
    scalar,
    spawned,
    wait_cancelled,
    wait_waiting,
)

from riido_pg import Document, load_snapshot


@pytest.fixture(scope="module")
def coord(db: Database, server_dsn: str, template: str) -> Iterator[Coordinator]:
    """The module's database as the coordinator of s1, s2 and s3 (copies of the
    session's template)."""
    with db.connect() as conn:
        if not conn.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'postgres_fdw'"
        ).fetchone():
            pytest.skip("the test server has no postgres_fdw extension")
    shards = {
        n: create_database(server_dsn, f"riido_t_race_{n}", template=template)
        for n in ("s1", "s2", "s3")
    }
    try:
        coordinator = Coordinator(db, shards)
        for name, shard in shards.items():
            added = coordinator.cli("shards", "add", name, shard.dsn)
            assert added.code == 0, added.stderr
        yield coordinator
    finally:
        for shard in shards.values():
            drop_database(server_dsn, shard.name)


def _state(shard: Database, snapshot_id: str) -> str | None:
    return scalar(shard, "SELECT state FROM riido.snapshots WHERE snapshot_id = %s", (snapshot_id,))


def test_remove_refuses_a_shard_a_load_is_writing(coord: Coordinator, tmp_path: Path) -> None:
    src = numbered_jsonl(tmp_path / "race.jsonl", 2_000)
    with (
        table_locked(coord.shards["s3"], "documents") as release,
        spawned(coord.db.dsn, "load", "race1", str(src), "--shard", "s3", "--fresh") as load,
    ):
        wait_waiting(coord.shards["s3"])  # placed, its 'loading' row written, held
        removed = coord.cli("shards", "remove", "s3")
        release.set()
        code, out, err = finish(load)
    assert removed.code == 2 and removed.stdout == "", removed.stdout
    assert "shard 's3' is in use: a load or move is running on it" in removed.stderr
    assert "'race1'" in removed.stderr
    assert (code, out) == (0, "loaded snapshot 'race1' (2000 documents)\n"), err
    assert coord.cli("query", "race1", "f_7", "--limit", "1").code == 0
    again = coord.cli("shards", "remove", "s3")
    assert again.code == 2 and "shard 's3' holds 1 snapshot(s) ('race1')" in again.stderr
    assert coord.cli("snapshots", "drop", "race1").code == 0


def test_remove_refuses_a_shard_a_move_is_copying_to(coord: Coordinator, tmp_path: Path) -> None:
    src = numbered_jsonl(tmp_path / "big.jsonl", 2_000)
    assert coord.cli("load", "big", str(src), "--shard", "s1").code == 0
    with (
        table_locked(coord.shards["s2"], "documents") as release,
        spawned(coord.db.dsn, "snapshots", "move", "big", "s2") as move,
    ):
        wait_waiting(coord.shards["s2"])  # copying
        to = coord.cli("shards", "remove", "s2")
        away = coord.cli("shards", "remove", "s1")
        release.set()
        code, out, err = finish(move)
    for removed, name in ((to, "s2"), (away, "s1")):
        assert removed.code == 2, removed.stdout
        assert f"shard {name!r} is in use: a load or move is running" in removed.stderr
    assert (code, out) == (0, "moved snapshot 'big' from shard 's1' to shard 's2'\n"), err
    assert placements(coord.db)["big"] == "s2"
    assert coord.cli("snapshots", "drop", "big").code == 0


def test_remove_refuses_a_shard_with_an_interrupted_load(coord: Coordinator) -> None:
    with coord.db.connect() as conn:
        conn.execute("INSERT INTO riido.placements (snapshot_id, shard) VALUES ('half', 's3')")
    with coord.shards["s3"].connect() as conn:  # what a killed loader leaves
        conn.execute(
            "INSERT INTO riido.snapshots (snapshot_id, text_config, state, document_count, "
            "content_digest, k1, b) VALUES ('half', 'english', 'loading', 0, '', 1.2, 0.75)"
        )
    removed = coord.cli("shards", "remove", "s3")
    assert removed.code == 2 and "holds 1 snapshot(s) ('half' (loading))" in removed.stderr
    assert coord.cli("snapshots", "drop", "half").code == 0
    assert _state(coord.shards["s3"], "half") is None and "half" not in placements(coord.db)


def test_move_never_overwrites_a_ready_snapshot_unasked(coord: Coordinator, tmp_path: Path) -> None:
    with coord.shards["s2"].connect() as conn:  # loaded on the shard directly
        load_snapshot(conn, "dup", [Document("mine", "def kept(): pass")])
    digest = scalar(coord.shards["s2"], "SELECT content_digest FROM riido.snapshots")
    src = numbered_jsonl(tmp_path / "dup.jsonl", 30)
    assert coord.cli("load", "dup", str(src), "--shard", "s1").code == 0
    refused = coord.cli("snapshots", "move", "dup", "s2")
    assert refused.code == 2 and refused.stdout == ""
    assert "shard 's2' already holds a ready snapshot 'dup'" in refused.stderr
    assert "--replace" in refused.stderr and refused.stderr.count("\n") == 1
    with coord.shards["s2"].connect() as conn:
        row = conn.execute("SELECT content_digest, document_count, state FROM riido.snapshots")
        assert row.fetchall() == [(digest, 1, "ready")]
    assert placements(coord.db)["dup"] == "s1" and _state(coord.shards["s1"], "dup") == "ready"
    replaced = coord.cli("snapshots", "move", "dup", "s2", "--replace")
    assert replaced.code == 0, replaced.stderr
    count = scalar(coord.shards["s2"], "SELECT document_count FROM riido.snapshots")
    assert count == 30 and _state(coord.shards["s1"], "dup") is None
    # a copy an interrupted move left (never ready) is replaced without asking
    with coord.shards["s3"].connect() as conn:
        conn.execute(
            "INSERT INTO riido.snapshots (snapshot_id, text_config, state, document_count, "
            "content_digest, k1, b) VALUES ('dup', 'english', 'loading', 0, '', 1.2, 0.75)"
        )
    assert coord.cli("snapshots", "move", "dup", "s3").code == 0
    assert _state(coord.shards["s3"], "dup") == "ready"
    assert coord.cli("snapshots", "drop", "dup").code == 0


def test_an_interrupt_after_the_switch_finishes_the_move(
    coord: Coordinator, tmp_path: Path
) -> None:
    src = numbered_jsonl(tmp_path / "cut.jsonl", 2_000, "cut")
    assert coord.cli("load", "cut", str(src), "--shard", "s1").code == 0
    # reading is allowed, deleting waits: the move copies, switches, then waits in its
    # clean-up (dropping the old copy on s1 deletes its path rows), where it gets a
    # real SIGINT
    with (
        table_locked(coord.shards["s1"], "snapshot_segments", "SHARE") as release,
        spawned(coord.db.dsn, "snapshots", "move", "cut", "s2") as move,
    ):
        wait_waiting(coord.shards["s1"], "DELETE%")
        assert placements(coord.db)["cut"] == "s2"
        move.send_signal(signal.SIGINT)
        code, out, err = finish(move)
        release.set()
    assert (code, out) == (0, "moved snapshot 'cut' from shard 's1' to shard 's2'\n"), err
    assert err.startswith("note: removing the old copy on shard 's1' was cut short")
    assert "the next load, move or drop on shard 's1' removes it" in err
    assert _state(coord.shards["s1"], "cut") == "loading"  # unplaced, unread
    listed = json.loads(coord.cli("snapshots", "list", "--format", "json").stdout)
    assert [(r["id"], r["shard"]) for r in listed if r["id"] == "cut"] == [("cut", "s2")]
    assert coord.cli("query", "cut", "cut_5", "--limit", "1").code == 0
    # the next load on s1 removes it
    other = numbered_jsonl(tmp_path / "o.jsonl", 5)
    assert coord.cli("load", "other", str(other), "--shard", "s1").code == 0
    assert _state(coord.shards["s1"], "cut") is None
    for snap in ("cut", "other"):
        assert coord.cli("snapshots", "drop", snap).code == 0


def _delivered(pid: int) -> bool:
    """Whether the process has no signal pending (the kernel handed it over)."""
    status = Path(f"/proc/{pid}/status").read_text()
    pending = [
        line.split()[1] for line in status.splitlines() if line.startswith(("SigPnd", "ShdPnd"))
    ]
    return all(int(mask, 16) == 0 for mask in pending)


def test_an_interrupt_during_the_switch_is_held_back(coord: Coordinator, tmp_path: Path) -> None:
    src = numbered_jsonl(tmp_path / "flip.jsonl", 500, "flip")
    for snap in ("flip", "x"):
        assert coord.cli("load", snap, str(src), "--shard", "s1").code == 0
    # the placement flip waits; a SIGINT then must not split ready-copy, flip and the
    # marking of the old copy: the move completes, the interrupt cuts its clean-up
    with (
        table_locked(coord.db, "placements", "SHARE") as release,
        spawned(coord.db.dsn, "snapshots", "move", "flip", "s2") as move,
    ):
        wait_waiting(coord.db, "INSERT INTO riido.placements%")
        move.send_signal(signal.SIGINT)
        deadline = time.monotonic() + WAIT
        while not _delivered(move.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        release.set()
        code, out, err = finish(move)
    assert (code, out) == (0, "moved snapshot 'flip' from shard 's1' to shard 's2'\n"), err
    assert "cut short (interrupted)" in err
    assert placements(coord.db)["flip"] == "s2" and _state(coord.shards["s2"], "flip") == "ready"
    assert _state(coord.shards["s1"], "flip") == "loading"
    # a drop on s1 removes it (as does a load or move there)
    assert coord.cli("snapshots", "drop", "x").code == 0
    assert _state(coord.shards["s1"], "flip") is None
    assert coord.cli("snapshots", "drop", "flip").code == 0


def test_a_shard_lost_during_a_move_is_named(coord: Coordinator, tmp_path: Path) -> None:
    src = numbered_jsonl(tmp_path / "lost.jsonl", 500)
    assert coord.cli("load", "lost", str(src), "--shard", "s1").code == 0
    with (
        table_locked(coord.shards["s3"], "documents") as release,
        spawned(coord.db.dsn, "snapshots", "move", "lost", "s3") as move,
    ):
        pid, _ = wait_waiting(coord.shards["s3"])  # copying
        scalar(coord.shards["s3"], "SELECT pg_terminate_backend(%s)", (pid,))
        code, out, err = finish(move)
        release.set()
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert err.startswith("error: shard 's3' is unavailable: lost the database connection")
    assert placements(coord.db)["lost"] == "s1" and _state(coord.shards["s1"], "lost") == "ready"
    assert _state(coord.shards["s3"], "lost") is None
    assert coord.cli("snapshots", "drop", "lost").code == 0


def test_two_names_for_one_database_are_refused(coord: Coordinator) -> None:
    dsn = coord.shards["s1"].dsn
    aliases = [
        dsn,
        another_name(dsn),
        make_conninfo(dsn, application_name="other"),
    ]
    where = "SELECT system_identifier, current_database() FROM pg_control_system()"
    server = scalar(coord.db, "SELECT system_identifier FROM pg_control_system()")
    for alias in aliases:  # each reaches the server under test, whatever else listens
        with psycopg.connect(alias) as other:
            assert other.execute(where).fetchone() == (server, coord.shards["s1"].name)
        added = coord.cli("shards", "add", "s9", alias)
        assert added.code == 2 and added.stdout == "", (alias, added.stdout)
        assert "is the database of shard 's1'" in added.stderr
    own = coord.cli("shards", "add", "s9", another_name(coord.db.dsn))
    assert own.code == 2 and "the coordinator's own database" in own.stderr
    assert "s9" not in {r[0] for r in _shard_rows(coord.db)}
    assert conninfo_to_dict(dsn)["dbname"] == coord.shards["s1"].name


def _shard_rows(db: Database) -> list[tuple[str]]:
    with db.connect() as conn:
        return conn.execute("SELECT name FROM riido.shards").fetchall()


def test_from_table_reads_the_coordinator_table(coord: Coordinator, tmp_path: Path) -> None:
    table = "CREATE TABLE public.functions (id text PRIMARY KEY, text text)"
    with coord.db.connect() as conn:
        conn.execute(table)
        for i in range(5):
            conn.execute("INSERT INTO public.functions VALUES (%s, %s)", (f"c{i}", f"coord {i}"))
    with coord.shards["s2"].connect() as conn:  # a same-named table on the shard
        conn.execute(table)
        conn.execute("INSERT INTO public.functions VALUES ('s0', 'shard row')")
    for snap, shard in (("ft1", ["--shard", "s2"]), ("ft2", [])):
        loaded = coord.cli("load", snap, "--from-table", "public.functions", "--fresh", *shard)
        assert (loaded.code, loaded.stdout) == (0, f"loaded snapshot {snap!r} (5 documents)\n")
        ranked = json.loads(coord.cli("query", snap, "coord").stdout)
        assert sorted(c["id"] for c in ranked["candidates"]) == [f"c{i}" for i in range(5)]
    assert placements(coord.db)["ft1"] == "s2"
    missing = coord.cli("load", "ft3", "--from-table", "public.nope", "--shard", "s2")
    assert missing.code == 2 and "no table 'public.nope'" in missing.stderr
    assert "ft3" not in placements(coord.db)
    for snap in ("ft1", "ft2"):
        assert coord.cli("snapshots", "drop", snap).code == 0


def test_a_failed_load_leaves_no_placement(coord: Coordinator, tmp_path: Path) -> None:
    src = numbered_jsonl(tmp_path / "new.jsonl", 2_000)
    with (
        table_locked(coord.shards["s2"], "documents") as release,
        spawned(coord.db.dsn, "load", "new5", str(src), "--shard", "s2", "--jobs", "1") as load,
    ):
        caught = wait_waiting(coord.shards["s2"])
        load.send_signal(signal.SIGINT)
        wait_cancelled(coord.shards["s2"], caught)
        release.set()  # its clean-up deletes what it wrote
        code, _, err = finish(load)
    assert (code, err) == (130, "error: interrupted\n")
    assert "new5" not in placements(coord.db) and _state(coord.shards["s2"], "new5") is None
    again = coord.cli("load", "new5", str(src), "--shard", "s1")
    assert again.code == 0 and placements(coord.db)["new5"] == "s1", again.stderr
    # a placement whose shard never got the snapshot (a killed loader's) is no home
    with coord.db.connect() as conn:
        conn.execute("INSERT INTO riido.placements (snapshot_id, shard) VALUES ('new6', 's2')")
    stale = coord.cli("load", "new6", str(src), "--shard", "s1")
    assert stale.code == 0 and "move" not in stale.stderr, stale.stderr
    assert placements(coord.db)["new6"] == "s1"
    for snap in ("new5", "new6"):
        assert coord.cli("snapshots", "drop", snap).code == 0
