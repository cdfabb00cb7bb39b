"""Atomic snapshots: killed loaders leave nothing queryable, re-running completes the
load, a loading snapshot says so, concurrent loaders of one id fail fast, and
`--replace` is all-or-nothing for readers running during it.

A load (the CLI's default --jobs) is caught inside its write by a lock the test holds
on riido.documents: it has staged and indexed its input and waits to write the
documents rows. The lock makes the moment deterministic on any machine."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_cli, spawn
from support.database import Database
from support.sessions import WAIT, held_replace, table_locked, wait_for, wait_read

from riido_pg import Document, load_snapshot, rank_snapshot

N = 4_500  # three chunks (of 2,000)
#: A load waits for the test's lock as long as the test needs.
LOCK_WAIT = {"RIIDO_PG_LOCK_TIMEOUT_MS": "600000"}


def _source(tmp_path: Path, name: str, n: int = N, word: str = "alpha") -> Path:
    path = tmp_path / name
    with path.open("w") as fh:
        for i in range(n):
            fh.write(
                json.dumps({"id": f"doc{i:06d}", "text": f"def {word}_{i}(x): return {word} x {i}"})
                + "\n"
            )
    return path


def _docs(n: int, word: str = "alpha") -> list[Document]:
    """The documents of ``_source``."""
    return [Document(f"doc{i:06d}", f"def {word}_{i}(x): return {word} x {i}") for i in range(n)]


def _wait_writing(db: Database) -> None:
    """Until the loader, its input read and its texts stored, waits for the test's lock
    on riido.segments (to compute its difference from a base, or to write its new
    segment)."""
    wait_for(
        db,
        "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = 'riido-pg' AND wait_event_type = 'Lock')",
    )


def _documents(db: Database, snapshot: str) -> int:
    """The documents the snapshot's segments hold for it (its base's, less those it
    removed, and its own): 0 when nothing of it is stored."""
    with db.connect() as conn:
        row = conn.execute(
            "SELECT count(*) FROM riido.snapshots AS s "
            "JOIN riido.snapshot_segments AS p USING (snapshot_id) "
            "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
            "WHERE s.snapshot_id = %s AND d.doc_ord <> ALL (s.removed)",
            (snapshot,),
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("how", ["sigkill", "sigkill on a base", "terminate_backend"])
def test_killed_loader_leaves_nothing_queryable_and_rerun_completes(
    db: Database, tmp_path: Path, how: str
) -> None:
    snapshot = f"killed-{how.replace(' ', '-')}"
    src = _source(tmp_path, "big.jsonl")
    base = None
    if how == "sigkill on a base":  # the same documents but twenty: the load's base
        base = f"{snapshot}-base"
        with db.connect() as conn:
            load_snapshot(conn, base, _docs(N - 20))
            expected = rank_snapshot(conn, base, "alpha 7", limit=20).to_dict()
    with (
        table_locked(db, "segments") as release,
        spawn(["load", snapshot, str(src)], dsn=db.dsn, env=LOCK_WAIT) as proc,
    ):
        _wait_writing(db)
        if how.startswith("sigkill"):
            proc.send_signal(signal.SIGKILL)
        else:
            with db.connect() as conn:
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND application_name = 'riido-pg'"
                )
        release.set()
        _, err = proc.communicate(timeout=WAIT)
    if how == "terminate_backend":
        assert proc.returncode == 1
        assert err.decode().startswith("error: ") and err.decode().count("\n") == 1
    # the backend of a killed client rolls back: wait until it is gone
    wait_for(
        db,
        "SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE "
        "datname = current_database() AND application_name = 'riido-pg')",
    )
    assert _documents(db, snapshot) == 0
    query = run_cli(["query", snapshot, "alpha"], dsn=db.dsn)
    assert query.code == 1
    assert query.stderr == (
        f"error: snapshot '{snapshot}' was interrupted while loading; run the load again "
        f"or drop it with `riido-pg snapshots drop {snapshot}`\n"
    )
    if base is not None:  # whole, and nothing of the killed load's difference is kept
        with db.connect() as conn:
            assert rank_snapshot(conn, base, "alpha 7", limit=20).to_dict() == expected
            orphans = conn.execute(
                "SELECT count(*) FROM riido.segments AS g WHERE NOT EXISTS (SELECT 1 FROM "
                "riido.snapshot_segments AS p WHERE p.segment_id = g.segment_id)"
            ).fetchone()
        assert orphans == (0,)
    again = run_cli(["load", snapshot, str(src)], dsn=db.dsn)
    assert again.code == 0, again.stderr
    assert _documents(db, snapshot) == N
    if base is not None:
        listed = json.loads(run_cli(["snapshots", "list", "--format", "json"], dsn=db.dsn).stdout)
        assert next(r for r in listed if r["id"] == snapshot)["base"] == base
    assert run_cli(["query", snapshot, "alpha", "--limit", "1"], dsn=db.dsn).code == 0


def test_loading_snapshot_and_concurrent_loader(db: Database, tmp_path: Path) -> None:
    src = _source(tmp_path, "big.jsonl")
    with (
        table_locked(db, "segments") as release,
        spawn(["load", "busy", str(src)], dsn=db.dsn, env=LOCK_WAIT) as first,
    ):
        _wait_writing(db)
        query = run_cli(["query", "busy", "alpha"], dsn=db.dsn)
        assert query.code == 1
        assert query.stderr == (
            "error: snapshot 'busy' is still loading; query it when the load finishes\n"
        )
        started = time.monotonic()
        second = run_cli(["load", "busy", str(src)], dsn=db.dsn)
        elapsed = time.monotonic() - started
        assert second.code == 1
        assert second.stderr == (
            "error: snapshot 'busy' is being written by another process; "
            "try again when it finishes\n"
        )
        assert elapsed < 5  # fails promptly, no waiting for the first loader
        release.set()
        _out, err = first.communicate(timeout=WAIT)
    assert first.returncode == 0, err
    assert _documents(db, "busy") == N


def test_replace_is_atomic_for_concurrent_readers(db: Database) -> None:
    """A replace on one connection, held (by a lock on the snapshot's row) after it
    deleted the old content and wrote the new, uncommitted: readers see the old
    content all along, then the new one, never a mix."""
    old = [Document(f"o{i:05d}", f"alpha common {i}") for i in range(3_000)]
    new = [Document(f"n{i:05d}", f"beta common {i}") for i in range(3_000)]
    with db.connect() as conn:
        load_snapshot(conn, "swap", old)
        before = rank_snapshot(conn, "swap", "alpha common", limit=20).candidates
        load_snapshot(conn, "swap-new", new)
        after_expected = rank_snapshot(conn, "swap-new", "alpha common", limit=20).candidates

    def classify(conn: Any) -> str:
        got = rank_snapshot(conn, "swap", "alpha common", limit=20).candidates
        if got == before:
            return "old"
        if [(c.id, c.bm25_score) for c in got] == [(c.id, c.bm25_score) for c in after_expected]:
            return "new"
        return "mixed"

    def replace(conn: Any) -> str:
        return load_snapshot(conn, "swap", new, replace=True).action

    # caught in its last statement, flipping the snapshot's row
    with held_replace(db, "swap", classify, replace, statement="UPDATE riido.snapshots") as held:
        # the replace's writes are in, not committed: the snapshot holds the old
        assert _documents(db, "swap") == len(old)
        # readers go on reading while the replace waits
        wait_read(held.seen, held.reader_errors, "old", times=held.seen.count("old") + 6)
        assert "new" not in held.seen
    assert not held.reader_errors + held.replace_errors, held.reader_errors + held.replace_errors
    assert held.results == ["replaced"]
    assert "mixed" not in held.seen
    assert held.seen[0] == "old" and held.seen[-1] == "new"
