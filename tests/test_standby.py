"""Hot standbys (README "More than one server"): `query`, `snapshots list` and
`eval --snapshot` answer on a streaming-replication standby started by the test
(`pg_basebackup -R`); `load` there fails with one clear line; a multi-host DSN with
`target_session_attrs` / `load_balance_hosts` sends reads to the standby and loads to
the primary."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo
from support import clusters
from support.cli import EXAMPLE, run_cli
from support.corpus import generated_corpus
from support.sessions import wait_until

from riido_pg.server import migrate

pytestmark = pytest.mark.skipif(clusters.pg_bin() is None, reason="no initdb on this machine")


def _both(dsn: str, standby: clusters.Cluster) -> tuple[str, str]:
    """A primary DSN and the standby's for the same database."""
    return dsn, make_conninfo(dsn, port=str(standby.port))


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """(primary DSN, standby DSN, stored eval snapshot id), the snapshot `demo` loaded
    and `demo2` stored on it."""
    beir = generated_corpus(tmp_path_factory.mktemp("beir") / "c", seed=5)
    with clusters.cluster() as primary:
        with psycopg.connect(primary.dsn(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE riido")
        dsn = primary.dsn("riido")
        migrate.upgrade(dsn)
        assert run_cli(["load", "demo", str(beir / "corpus.jsonl")], dsn=dsn).code == 0
        # demo2: demo's documents but the first five, stored on demo
        lines = (beir / "corpus.jsonl").read_text().splitlines(keepends=True)
        (beir / "demo2.jsonl").write_text("".join(lines[5:]))
        demo2 = ["load", "demo2", str(beir / "demo2.jsonl"), "--base", "demo"]
        assert run_cli(demo2, dsn=dsn).code == 0
        stored = run_cli(["eval", str(beir), "--output", "-"], dsn=dsn)
        snap = json.loads(stored.stdout)["corpus"]["snapshot_id"]
        with clusters.standby_of(primary) as standby:
            yield (*_both(dsn, standby), snap)


def _on_standby(standby: str, query: str, params: tuple[str, ...], what: str) -> None:
    """Until ``query`` finds a row on the standby (the primary's change replayed)."""
    with psycopg.connect(standby, autocommit=True) as conn:
        wait_until(lambda: conn.execute(query, params).fetchone(), what, every=0.05)


def _replayed(standby: str, snapshot: str) -> None:
    _on_standby(
        standby,
        "SELECT 1 FROM riido.snapshots WHERE snapshot_id = %s AND state = 'ready'",
        (snapshot,),
        f"{snapshot} to reach the standby",
    )


def test_reads_work_on_a_standby(pair: tuple[str, str, str]) -> None:
    primary, standby, snap = pair
    _replayed(standby, snap)
    with psycopg.connect(standby) as conn:
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
    for args in (
        ["query", "demo", "read the config file", "--identifier-hints", "--limit", "5"],
        ["query", "demo", "parse json", "--policy", "identifier_bm25_fused"],
        ["query", "demo2", "read the config file", "--identifier-hints", "--limit", "5"],
        ["query", "demo2", "parse json", "--policy", "identifier_bm25_rrf"],
        ["snapshots", "list", "--format", "json"],
        ["eval", "--snapshot", snap, "--output", "-"],
    ):
        on_primary = run_cli(args, dsn=primary)
        on_standby = run_cli(args, dsn=standby)
        assert on_standby.code == 0, on_standby.stderr
        assert on_standby.stdout == on_primary.stdout


def test_search_from_sql_works_on_a_standby(pair: tuple[str, str, str]) -> None:
    """riido.search (docs/search-from-sql.md) reads only: the standby answers it as the
    primary does, on a snapshot and on one stored on a base."""
    primary, standby, _ = pair
    _replayed(standby, "demo2")
    search = (
        "SELECT rank, id, bm25_score, policy FROM riido.search(%s, 'read the config file', "
        "5, 'identifier_bm25_baseline_first')"
    )
    for snapshot in ("demo", "demo2"):
        with psycopg.connect(primary) as p, psycopg.connect(standby) as s:
            want = p.execute(search, (snapshot,)).fetchall()
            assert s.execute(search, (snapshot,)).fetchall() == want
        assert len(want) == 5


def test_load_on_a_standby_fails_clearly(pair: tuple[str, str, str], tmp_path: Path) -> None:
    _, standby, _ = pair
    src = tmp_path / "docs.jsonl"
    src.write_text(json.dumps({"id": "a", "text": "read config"}) + "\n")
    for args, stdin in (
        (["load", "other", str(src)], None),
        (["snapshots", "drop", "demo"], None),
        (["hints"], EXAMPLE),
    ):
        refused = run_cli(args, dsn=standby, input=stdin)
        assert refused.code == 1 and refused.stdout == ""
        assert refused.stderr.count("\n") == 1 and "read-only hot standby" in refused.stderr


def test_multi_host_dsn_reads_from_the_standby_and_loads_on_the_primary(
    pair: tuple[str, str, str], tmp_path: Path
) -> None:
    primary, standby, _ = pair
    p, s = (psycopg.conninfo.conninfo_to_dict(d)["port"] for d in (primary, standby))
    both = make_conninfo(primary, host="127.0.0.1,127.0.0.1", port=f"{s},{p}")
    writer = make_conninfo(both, target_session_attrs="read-write")
    reader = make_conninfo(both, target_session_attrs="prefer-standby", load_balance_hosts="random")
    with psycopg.connect(reader) as conn:
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
    src = tmp_path / "docs.jsonl"
    src.write_text(json.dumps({"id": "a", "text": "read config"}) + "\n")
    loaded = run_cli(["load", "multi", str(src)], dsn=writer)
    assert loaded.code == 0, loaded.stderr
    _replayed(standby, "multi")
    q = run_cli(["query", "multi", "config"], dsn=reader)
    assert q.code == 0 and json.loads(q.stdout)["candidates"][0]["id"] == "a"


def test_a_snapshot_loading_on_the_primary_is_not_ready_on_the_standby(
    pair: tuple[str, str, str],
) -> None:
    primary, standby, _ = pair
    with psycopg.connect(primary, autocommit=True) as conn:  # a load's first transaction
        conn.execute(
            "INSERT INTO riido.snapshots (snapshot_id, text_config, state, document_count, "
            "content_digest, k1, b) VALUES ('half', 'english', 'loading', 1, 'x', 1.2, 0.75)"
        )
    _on_standby(
        standby,
        "SELECT 1 FROM riido.snapshots WHERE snapshot_id = %s",
        ("half",),
        "the loading row to reach the standby",
    )
    q = run_cli(["query", "half", "config"], dsn=standby)
    assert q.code == 1 and "not ready on this standby" in q.stderr
