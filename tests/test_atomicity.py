"""Atomic snapshots: killed loaders leave nothing queryable, re-running completes the
load, a loading snapshot says so, concurrent loaders of one id fail fast, and
`--replace` is all-or-nothing for readers running during it."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_cli, spawn
from support.database import Database
from support.sessions import WAIT, readers, wait_for, wait_read

from riido_pg import Document, load_snapshot, rank_snapshot

N = 60_000


def _source(tmp_path: Path, name: str, n: int = N, word: str = "alpha") -> Path:
    path = tmp_path / name
    with path.open("w") as fh:
        for i in range(n):
            fh.write(
                json.dumps({"id": f"doc{i:06d}", "text": f"def {word}_{i}(x): return {word} x {i}"})
                + "\n"
            )
    return path


def _wait_writing(db: Database, snapshot: str) -> None:
    """Until the loader is inside its big write transaction."""
    wait_for(
        db,
        "SELECT EXISTS (SELECT 1 FROM riido.snapshots WHERE snapshot_id = %s "
        "AND state = 'loading')",
        (snapshot,),
    )
    wait_for(
        db,
        "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = 'riido-pg' AND state = 'active' "
        "AND (query LIKE 'COPY riido_stage%%' OR query LIKE '%%riido.documents%%' "
        "OR query LIKE '%%riido.postings%%'))",
        (),
    )


def _documents(db: Database, snapshot: str) -> int:
    with db.connect() as conn:
        row = conn.execute(
            "SELECT count(*) FROM riido.documents WHERE snapshot_id = %s", (snapshot,)
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("how", ["sigkill", "terminate_backend"])
def test_killed_loader_leaves_nothing_queryable_and_rerun_completes(
    db: Database, tmp_path: Path, how: str
) -> None:
    snapshot = f"killed-{how}"
    src = _source(tmp_path, "big.jsonl")
    with spawn(["load", snapshot, str(src)], dsn=db.dsn) as proc:
        _wait_writing(db, snapshot)
        if how == "sigkill":
            proc.send_signal(signal.SIGKILL)
        else:
            with db.connect() as conn:
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND application_name = 'riido-pg'"
                )
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
    again = run_cli(["load", snapshot, str(src)], dsn=db.dsn)
    assert again.code == 0, again.stderr
    assert _documents(db, snapshot) == N
    assert run_cli(["query", snapshot, "alpha", "--limit", "1"], dsn=db.dsn).code == 0


def test_loading_snapshot_and_concurrent_loader(db: Database, tmp_path: Path) -> None:
    src = _source(tmp_path, "big.jsonl")
    with spawn(["load", "busy", str(src)], dsn=db.dsn) as first:
        _wait_writing(db, "busy")
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
        _out, err = first.communicate(timeout=WAIT)
    assert first.returncode == 0, err
    assert _documents(db, "busy") == N


def test_replace_is_atomic_for_concurrent_readers(db: Database) -> None:
    old = [Document(f"o{i:05d}", f"alpha common {i}") for i in range(30_000)]
    new = [Document(f"n{i:05d}", f"beta common {i}") for i in range(30_000)]
    with db.connect() as conn:
        load_snapshot(conn, "swap", old)
        before = rank_snapshot(conn, "swap", "alpha common", limit=20).candidates
        load_snapshot(conn, "swap-new", new)
        after_expected = rank_snapshot(conn, "swap-new", "alpha common", limit=20).candidates

    seen: list[str] = []

    def reader(conn: Any) -> None:
        got = rank_snapshot(conn, "swap", "alpha common", limit=20).candidates
        if got == before:
            seen.append("old")
        elif [(c.id, c.bm25_score) for c in got] == [(c.id, c.bm25_score) for c in after_expected]:
            seen.append("new")
        else:
            seen.append("mixed")

    with readers(db, reader) as errors:
        wait_read(seen, errors, "old")
        with db.connect() as conn:
            assert load_snapshot(conn, "swap", new, replace=True).action == "replaced"
        # a few reads of the new content: a read begun before the swap has ended
        wait_read(seen, errors, "new", times=6)
    assert not errors, errors
    assert "mixed" not in seen
    assert seen[0] == "old" and seen[-1] == "new"
