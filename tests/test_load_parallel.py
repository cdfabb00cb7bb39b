"""Parallel loads (``--jobs 2``, README "Loading at size") stay atomic snapshots: a
killed loader, a terminated worker backend, a second loader, SIGINT and SIGTERM leave
nothing queryable and no orphaned shared texts, a re-run completes, and a parallel
``--replace`` is all-or-nothing for readers running during it (and a killed one keeps
the old snapshot whole). Loads of two other snapshots sharing new texts, run at once,
both complete.

Each load is caught at a chosen moment by a lock the test holds: on riido.segments
(the workers have committed texts, the new segment's row waits), on riido.text_pending (a
worker waits in its insert into riido.texts) or on riido.postings (the documents are
numbered in riido.load_stage and committed into the load's new segment, which no
snapshot holds yet, both columns' postings wait). The lock makes the moment
deterministic on any machine."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, suppress
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql
from support.cli import run_cli, spawn
from support.database import Database
from support.sessions import (
    WAIT,
    held_replace,
    login_role,
    table_locked,
    wait_for,
    wait_until,
)

from riido_pg import Document, load_snapshot, rank_snapshot
from riido_pg.errors import SnapshotNotFound
from riido_pg.sources import open_source
from riido_pg.storage import drop_snapshot, list_snapshots

N = 4_500  # three chunks (of 2,000)
JOBS = ["--jobs", "2"]
STOPS = {
    "sigint": (signal.SIGINT, 130, "error: interrupted\n"),
    "sigterm": (signal.SIGTERM, 143, "error: terminated\n"),
}
#: the statement each lock catches the load in (pg_stat_activity shows the first 1 kB
#: of a statement: the sql/ file's header comment names it)
WAITING_IN = {
    "segments": "-- insert_segment.sql%",
    "text_pending": "-- insert_texts.sql%",
    "postings": "-- segment_postings.sql%",
}
UNREFERENCED = (
    "SELECT count(*) FROM riido.texts AS t "
    "WHERE NOT EXISTS (SELECT 1 FROM riido.documents AS d WHERE d.text_key = t.key)"
)


def _source(tmp_path: Path, name: str, word: str, n: int = N) -> Path:
    path = tmp_path / name
    path.write_text(
        "".join(
            json.dumps({"id": f"doc{i:06d}", "text": f"def {word}_{i}(x): return {word} x {i}"})
            + "\n"
            for i in range(n)
        )
    )
    return path


#: A load waits for the test's lock as long as the test needs.
LOCK_WAIT = {"RIIDO_PG_LOCK_TIMEOUT_MS": "600000"}


def _spawn(db: Database, *args: str) -> AbstractContextManager[subprocess.Popen[bytes]]:
    """``riido-pg ARGS`` as a process (to be signalled or killed), for a ``with`` block."""
    return spawn(args, dsn=db.dsn, env=LOCK_WAIT)


def _scalar(db: Database, query: str, params: tuple[Any, ...] = ()) -> Any:
    with db.connect() as conn:
        row = conn.execute(query, params).fetchone()
    assert row is not None
    return row[0]


def _waiting(db: Database, statement: str) -> list[tuple[int, Any]]:
    """(pid, query_start) of the riido-pg backends waiting for a lock in ``statement``."""
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT pid, query_start FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = 'riido-pg' AND wait_event_type = 'Lock' AND query LIKE %s",
            (statement,),
        ).fetchall()
    return [(int(r[0]), r[1]) for r in rows]


def _wait_waiting(db: Database, statement: str, n: int = 1) -> list[tuple[int, Any]]:
    return wait_until(
        lambda: (found := _waiting(db, statement)) and len(found) >= n and found,
        f"{n} riido-pg backend(s) to wait in {statement}",
    )


def _wait_cancelled(db: Database, statement: str, caught: list[tuple[int, Any]]) -> None:
    """Until none of the ``caught`` statements still waits (its clean-up may wait next,
    in a statement of its own)."""
    wait_until(
        lambda: not set(caught) & set(_waiting(db, statement)),
        "the interrupted statement to be cancelled",
    )


def _loader_pid(db: Database) -> int:
    """The backend holding a snapshot writer lock: the loader's main session."""
    return int(
        wait_for(
            db,
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s "
            "AND objsubid = 2 AND granted "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            (0x52494944,),
        )
    )


def _wait_gone(db: Database) -> None:
    """Until no riido-pg backend is left (a killed client's backend rolls back first)."""
    wait_for(
        db,
        "SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE "
        "datname = current_database() AND application_name = 'riido-pg')",
    )


#: documents of segments no snapshot holds (a load's new segment before it publishes)
UNHELD = (
    "SELECT count(*) FROM riido.documents AS d WHERE NOT EXISTS "
    "(SELECT 1 FROM riido.snapshot_segments AS p WHERE p.segment_id = d.segment_id)"
)


def _wait_postings(db: Database) -> None:
    """Until both columns' postings wait (riido.postings locked) and the documents,
    written alongside them, are committed into the load's new segment."""
    _wait_waiting(db, WAITING_IN["postings"], n=2)
    wait_for(db, f"SELECT ({UNHELD}) = %s", (N,))


def _sigkill(db: Database, table: str, caught: Callable[[], object], *args: str) -> None:
    """Run ``riido-pg ARGS`` with ``table`` locked, SIGKILL it once ``caught()``
    returns, let the table go and wait until its backends have rolled back."""
    with table_locked(db, table) as release:
        try:
            with _spawn(db, *args) as proc:
                caught()
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=WAIT)
        finally:
            release.set()
    _wait_gone(db)


def _state(db: Database) -> dict[str, int]:
    """Row counts of every riido table, and of the texts no document references."""
    return {**db.counts(), "unreferenced": int(_scalar(db, UNREFERENCED))}


def _assert_clean(db: Database) -> None:
    """No text without a document, nothing pending, nothing staged."""
    assert (_scalar(db, UNREFERENCED), db.count("text_pending"), db.count("load_stage")) == (
        0,
        0,
        0,
    )


def _states(db: Database, snapshot: str) -> list[str]:
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT state FROM riido.snapshots WHERE snapshot_id = %s", (snapshot,)
        ).fetchall()
    return [r[0] for r in rows]


def _documents(db: Database, snapshot: str) -> int:
    """Documents the snapshot holds (its path's, less those it removed)."""
    return int(
        _scalar(
            db,
            "SELECT count(*) FROM riido.snapshot_segments AS p "
            "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
            "JOIN riido.snapshots AS s ON s.snapshot_id = p.snapshot_id "
            "WHERE p.snapshot_id = %s AND NOT d.doc_ord = ANY(s.removed)",
            (snapshot,),
        )
    )


def _rerun_completes(db: Database, snapshot: str, src: Path, word: str) -> None:
    again = run_cli(["load", snapshot, str(src), *JOBS], dsn=db.dsn)
    assert (again.code, again.stdout, again.stderr) == (
        0,
        f"loaded snapshot '{snapshot}' ({N} documents)\n",
        "",
    )
    assert _documents(db, snapshot) == N
    assert _states(db, snapshot) == ["ready"]
    query = run_cli(["query", snapshot, f"{word}_7", "--limit", "1"], dsn=db.dsn)
    assert query.code == 0, query.stderr
    assert [c["id"] for c in json.loads(query.stdout)["candidates"]] == ["doc000007"]
    _assert_clean(db)


# -- a killed loader ------------------------------------------------------------------


@pytest.mark.parametrize("table", ["segments", "postings"])
def test_sigkill_of_a_parallel_loader_leaves_nothing_queryable(
    db: Database, tmp_path: Path, table: str
) -> None:
    snapshot, word = f"killed-{table}", f"kill{table[:3]}"
    src = _source(tmp_path, "big.jsonl", word)

    def caught() -> None:
        if table == "segments":  # mid-load: workers have committed texts
            wait_for(db, "SELECT count(*) FROM riido.text_pending WHERE token IS NOT NULL")
        else:
            _wait_postings(db)

    _sigkill(db, table, caught, "load", snapshot, str(src), *JOBS)
    assert _states(db, snapshot) == ["loading"]
    if table == "segments":
        # the dead load's texts are stored, unreferenced, and listed as pending
        assert _scalar(db, UNREFERENCED) > 0
        assert db.count("text_pending") > 0
    else:
        # the dead load's segment holds its documents, no postings, and no snapshot
        # holds it; its numbered documents stay staged until the collector runs
        assert _scalar(db, UNHELD) == N
        assert _documents(db, snapshot) == 0
        assert db.count("load_stage") == N
    query = run_cli(["query", snapshot, word], dsn=db.dsn)
    assert (query.code, query.stdout, query.stderr) == (
        1,
        "",
        f"error: snapshot '{snapshot}' was interrupted while loading; run the load again "
        f"or drop it with `riido-pg snapshots drop {snapshot}`\n",
    )
    _rerun_completes(db, snapshot, src, word)


# -- a terminated worker ------------------------------------------------------------


@pytest.mark.parametrize("table", ["text_pending", "postings"])
def test_terminating_one_worker_backend_fails_the_load(
    db: Database, tmp_path: Path, table: str
) -> None:
    snapshot, word = f"worker-{table}", f"work{table[:3]}"
    src = _source(tmp_path, "big.jsonl", word)
    before = _state(db)
    with table_locked(db, table) as release, _spawn(db, "load", snapshot, str(src), *JOBS) as proc:
        main = _loader_pid(db)
        waiting = _wait_waiting(db, WAITING_IN[table], n=2 if table == "postings" else 1)
        workers = [pid for pid, _ in waiting if pid != main]
        assert workers, (main, waiting)
        assert _scalar(db, "SELECT pg_terminate_backend(%s)", (workers[0],))
        release.set()  # the load's clean-up needs the table
        out, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 1, err
    assert out == b""
    assert err.decode().startswith("error: ") and err.decode().count("\n") == 1, err
    _wait_gone(db)
    assert _state(db) == before  # not even a 'loading' row, no texts left behind
    query = run_cli(["query", snapshot, word], dsn=db.dsn)
    assert (query.code, query.stderr) == (
        2,
        f"error: no snapshot '{snapshot}'; load one with `riido-pg load {snapshot} SOURCE`\n",
    )
    _rerun_completes(db, snapshot, src, word)


# -- a second loader ------------------------------------------------------------------


def test_a_second_loader_of_the_same_id_fails_at_once(db: Database, tmp_path: Path) -> None:
    snapshot, word = "busy", "busy"
    src = _source(tmp_path, "big.jsonl", word)
    with (
        table_locked(db, "postings") as release,
        _spawn(db, "load", snapshot, str(src), *JOBS) as first,
    ):
        _wait_waiting(db, WAITING_IN["postings"], n=2)
        query = run_cli(["query", snapshot, word], dsn=db.dsn)
        assert (query.code, query.stderr) == (
            1,
            f"error: snapshot '{snapshot}' is still loading; query it when the load finishes\n",
        )
        for jobs in ("1", "2"):
            started = time.monotonic()
            second = run_cli(["load", snapshot, str(src), "--jobs", jobs], dsn=db.dsn)
            elapsed = time.monotonic() - started
            assert (second.code, second.stdout, second.stderr) == (
                1,
                "",
                f"error: snapshot '{snapshot}' is being written by another process; "
                "try again when it finishes\n",
            ), jobs
            assert elapsed < 5  # no waiting for the first loader
        release.set()
        out, err = first.communicate(timeout=WAIT)
    assert (first.returncode, out, err) == (
        0,
        f"loaded snapshot '{snapshot}' ({N} documents)\n".encode(),
        b"",
    )
    assert _documents(db, snapshot) == N
    _assert_clean(db)


# -- SIGINT and SIGTERM ---------------------------------------------------------------


@pytest.mark.parametrize(("stop", "table"), [("sigint", "text_pending"), ("sigterm", "postings")])
def test_signal_stops_a_parallel_load(db: Database, tmp_path: Path, stop: str, table: str) -> None:
    signum, code, line = STOPS[stop]
    snapshot = f"sig-{stop}-{table}"
    src = _source(tmp_path, "big.jsonl", f"sig{stop}")
    before = _state(db)
    with table_locked(db, table) as release, _spawn(db, "load", snapshot, str(src), *JOBS) as proc:
        caught = _wait_waiting(db, WAITING_IN[table], n=2 if table == "postings" else 1)
        proc.send_signal(signum)
        _wait_cancelled(db, WAITING_IN[table], caught)
        release.set()  # the clean-up may need the table
        out, err = proc.communicate(timeout=WAIT)
    assert (proc.returncode, out, err.decode()) == (code, b"", line), err.decode()
    _wait_gone(db)
    assert _state(db) == before  # no half snapshot, no orphaned texts or pending rows


# -- --replace with readers -----------------------------------------------------------


def test_parallel_replace_is_atomic_for_concurrent_readers(db: Database) -> None:
    old = [Document(f"o{i:05d}", f"alpha common {i}") for i in range(3_000)]
    # half of the new content shares texts with the old
    new = old[:1_500] + [Document(f"n{i:05d}", f"beta common {i}") for i in range(1_500)]
    query = "alpha common 7"
    with db.connect() as conn:
        load_snapshot(conn, "swap", old, jobs=2)
        load_snapshot(conn, "swap-new", new, jobs=2)
        before = [
            (c.id, c.bm25_score) for c in rank_snapshot(conn, "swap", query, limit=20).candidates
        ]
        after = [
            (c.id, c.bm25_score)
            for c in rank_snapshot(conn, "swap-new", query, limit=20).candidates
        ]
    assert before != after

    listed: list[list[str]] = []

    def classify(conn: Any) -> str:
        got = [
            (c.id, c.bm25_score) for c in rank_snapshot(conn, "swap", query, limit=20).candidates
        ]
        listed.append(sorted(s.snapshot_id for s in list_snapshots(conn)))
        return "old" if got == before else "new" if got == after else "mixed"

    def replace(conn: Any) -> Any:
        return load_snapshot(conn, "swap", new, replace=True, jobs=2, fresh=True)

    # the replace waits inside its last transaction, its new content written into a
    # segment no snapshot holds yet
    with held_replace(db, "swap", classify, replace) as held:
        assert _states(db, "swap") == ["ready"]
        assert _scalar(db, UNHELD) == len(new)
        shown = run_cli(["snapshots", "list", "--format", "json"], dsn=db.dsn)
        assert shown.code == 0, shown.stderr
        rows = {r["id"]: r["documents"] for r in json.loads(shown.stdout)}
        assert rows["swap"] == len(old) and rows["swap-new"] == len(new)
        assert "new" not in held.seen
    assert not held.reader_errors + held.replace_errors, held.reader_errors + held.replace_errors
    assert [r.action for r in held.results] == ["replaced"]
    assert "mixed" not in held.seen
    assert held.seen[0] == "old" and held.seen[-1] == "new"
    assert all(ids.count("swap") == 1 for ids in listed)
    assert _states(db, "swap") == ["ready"]
    _assert_clean(db)  # the old half's texts were collected
    with db.connect() as conn:
        assert (
            conn.execute(
                "SELECT count(*) FROM riido.texts WHERE body LIKE 'alpha common %%'"
            ).fetchone()
        ) == (1_500,)


# -- loads of other snapshots at once -------------------------------------------------


@pytest.mark.parametrize("jobs", [(1, 1), (2, 2), (1, 2)], ids=["1-1", "2-2", "1-2"])
def test_concurrent_loads_sharing_new_texts_both_complete(
    db: Database, jobs: tuple[int, int]
) -> None:
    """Two snapshots (say two commits of one repository) loaded at once, with texts
    neither finds stored, in opposite orders: both loads complete, nothing is left."""
    tag = f"{jobs[0]}{jobs[1]}"
    first = [f"def shared_alpha_{tag}_{i}(x): return {i}" for i in range(1_000)]
    second = [f"def shared_beta_{tag}_{i}(x): return {i}" for i in range(3_000)]
    x = [Document(f"x{i:05d}", t) for i, t in enumerate(first + second)]
    y = [Document(f"y{i:05d}", t) for i, t in enumerate(second + first)]
    before = _state(db)
    results: dict[str, Any] = {}

    def load(name: str, docs: list[Document], n: int) -> None:
        try:
            with db.connect(application_name="riido-pg") as conn:
                results[name] = load_snapshot(conn, name, docs, jobs=n).action
        except Exception as exc:  # compared below
            results[name] = f"{type(exc).__name__}: {exc}"

    threads = [
        threading.Thread(target=load, args=(f"cx-{tag}", x, jobs[0])),
        threading.Thread(target=load, args=(f"cy-{tag}", y, jobs[1])),
    ]
    # both loads wait at their first insert of texts, then go at once
    with table_locked(db, "text_pending") as release:
        for t in threads:
            t.start()
        _wait_waiting(db, WAITING_IN["text_pending"], n=2)
        release.set()
        for t in threads:
            t.join(timeout=WAIT)
    try:
        assert results == {f"cx-{tag}": "created", f"cy-{tag}": "created"}
        _assert_clean(db)
    finally:
        with db.connect() as conn:
            for name in results:
                with suppress(SnapshotNotFound):
                    drop_snapshot(conn, name)
    assert _state(db) == before


@pytest.mark.parametrize("rerun_jobs", ["1"])
def test_sigkill_of_a_parallel_replace_keeps_the_old_snapshot(
    db: Database, tmp_path: Path, rerun_jobs: str
) -> None:
    snapshot = f"kept-{rerun_jobs}"
    old = _source(tmp_path, "old.jsonl", f"old{rerun_jobs}", n=2_000)
    new = _source(tmp_path, "new.jsonl", f"new{rerun_jobs}")
    with db.connect() as conn:
        load_snapshot(conn, snapshot, open_source(old), jobs=2)
        ranked = rank_snapshot(conn, snapshot, f"old{rerun_jobs}_7")
    _sigkill(
        db,
        "postings",
        lambda: _wait_postings(db),
        *("load", snapshot, str(new), "--replace", "--fresh", *JOBS),
    )
    # the new content waits in a segment no snapshot holds; the old snapshot is whole
    assert _states(db, snapshot) == ["ready"]
    assert _documents(db, snapshot) == 2_000
    assert _scalar(db, UNHELD) == N
    with db.connect() as conn:
        assert rank_snapshot(conn, snapshot, f"old{rerun_jobs}_7") == ranked
        listed = [s.snapshot_id for s in list_snapshots(conn)]
    assert listed.count(snapshot) == 1
    rerun = run_cli(["load", snapshot, str(new), "--replace", "--jobs", rerun_jobs], dsn=db.dsn)
    assert (rerun.code, rerun.stdout, rerun.stderr) == (
        0,
        f"replaced snapshot '{snapshot}' ({N} documents)\n",
        "",
    )
    assert _states(db, snapshot) == ["ready"]
    assert _documents(db, snapshot) == N
    _assert_clean(db)
    with db.connect() as conn:
        drop_snapshot(conn, snapshot)
    assert _states(db, snapshot) == []
    _assert_clean(db)


# -- a server that refuses the workers ------------------------------------------------


def test_a_server_refusing_the_workers_stores_nothing(
    db: Database, server_dsn: str, tmp_path: Path
) -> None:
    """A role limited to 2 connections cannot open 4 workers: one error line saying
    the server refused them and what to do, exit 1, and not even a 'loading' row."""

    def grant(role: str) -> None:
        with db.connect() as conn:
            ident = sql.Identifier(role)
            conn.execute(sql.SQL("ALTER ROLE {} CONNECTION LIMIT 2").format(ident))
            conn.execute(sql.SQL("GRANT USAGE ON SCHEMA riido TO {}").format(ident))
            conn.execute(sql.SQL("GRANT ALL ON ALL TABLES IN SCHEMA riido TO {}").format(ident))

    src = _source(tmp_path, "few.jsonl", "lim", n=50)
    before = _state(db)
    with login_role(db, server_dsn, grant) as dsn:
        result = run_cli(["load", "lim2", str(src), "--jobs", "4"], dsn=dsn)
        assert (result.code, result.stdout) == (1, ""), result.stderr
        assert result.stderr.startswith("error: the server refused more connections (")
        assert result.stderr.endswith(
            "a load with 4 workers needs 5 sessions; nothing was stored; load with --jobs 1\n"
        ), result.stderr
        assert _state(db) == before
        again = run_cli(["load", "lim2", str(src), "--jobs", "1"], dsn=dsn)
        assert again.code == 0, again.stderr


# -- an interrupt after the load is published ------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_interrupt_after_publishing_reports_the_load(
    db: Database, tmp_path: Path, jobs: str
) -> None:
    """SIGINT while the load updates planner statistics (the snapshot is published):
    the load is reported as done, a note says what was cut short, exit 0."""
    snapshot, word = f"tidy-{jobs}", f"tidy{jobs}"
    src = _source(tmp_path, "tidy.jsonl", word)
    # ANALYZE waits behind this lock; the load's own inserts do not
    with (
        table_locked(db, "documents", "SHARE UPDATE EXCLUSIVE") as release,
        _spawn(db, "load", snapshot, str(src), "--jobs", jobs) as proc,
    ):
        wait_for(
            db,
            "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = 'riido-pg' AND wait_event_type = 'Lock' "
            "AND query LIKE 'ANALYZE%%')",
        )
        assert _states(db, snapshot) == ["ready"]
        proc.send_signal(signal.SIGINT)
        release.set()
        out, err = proc.communicate(timeout=WAIT)
    assert (proc.returncode, out.decode()) == (0, f"loaded snapshot '{snapshot}' ({N} documents)\n")
    assert err.decode() == (
        "note: updating statistics and collecting unused rows were cut short "
        "(interrupted); the next load or drop finishes them\n"
    )
    assert _documents(db, snapshot) == N


def test_a_parallel_load_leaves_no_dead_space_in_the_staging_tables(db: Database) -> None:
    """The numbered documents and pending keys a parallel load deleted do not stay as
    dead space (riido_pg.storage.loading._reclaim): the staging tables are back to the
    size they had before it."""
    tables = ("load_stage", "text_pending")
    sizes = sql.SQL(", ").join(
        sql.SQL("pg_relation_size({})").format(sql.Literal(f"riido.{t}")) for t in tables
    )
    with db.connect() as conn:
        conn.execute(
            sql.SQL("VACUUM {}").format(
                sql.SQL(", ").join(sql.Identifier("riido", t) for t in tables)
            )
        )
        before = conn.execute(sql.SQL("SELECT {}").format(sizes)).fetchone()
        docs = [Document(f"st{i:05d}", f"def stage_{i}(x): return x + {i}") for i in range(N)]
        load_snapshot(conn, "stage-space", docs, jobs=2)
        after = conn.execute(sql.SQL("SELECT {}").format(sizes)).fetchone()
        drop_snapshot(conn, "stage-space")
    assert after == before
