"""Least privilege: a reader role made with `riido-pg db grant-reader` can query
snapshots and nothing else."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from support.cli import run_cli
from support.database import Database
from support.sessions import login_role

from riido_pg import Document, load_snapshot


@pytest.fixture
def reader(db: Database, server_dsn: str) -> Iterator[str]:
    with db.connect() as conn:
        load_snapshot(conn, "pub", [Document("a", "read config"), Document("b", "write log")])

    def grant(role: str) -> None:
        granted = run_cli(["db", "grant-reader", role], dsn=db.dsn)
        assert (granted.code, granted.stdout) == (
            0,
            f"role {role!r} can now query snapshots (read-only)\n",
        )

    with login_role(db, server_dsn, grant) as dsn:
        yield dsn


def test_reader_can_query_and_list(reader: str) -> None:
    result = run_cli(["query", "pub", "read config"], dsn=reader)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["candidates"][0]["id"] == "a"
    listed = run_cli(["snapshots", "list", "--format", "json"], dsn=reader)
    assert [r["id"] for r in json.loads(listed.stdout)] == ["pub"]


def test_reader_cannot_write_drop_or_run_ddl(reader: str, db: Database, tmp_path: Any) -> None:
    src = tmp_path / "d.jsonl"
    src.write_text('{"id": "x", "text": "y"}\n')
    for args in (["load", "mine", str(src)], ["snapshots", "drop", "pub"]):
        result = run_cli(args, dsn=reader)
        assert result.code == 1, (args, result)
        assert result.stderr.startswith("error: permission denied"), result.stderr
        assert result.stderr.count("\n") == 1
    hints = run_cli(
        ["hints"],
        dsn=reader,
        input=json.dumps(
            {"snapshot_id": "s", "query": "q", "documents": [{"id": "a", "text": "q"}]}
        ),
    )
    assert hints.code == 1 and hints.stderr.startswith("error: permission denied")
    with psycopg.connect(reader, autocommit=True) as conn:
        for stmt in (
            "CREATE TABLE riido.evil (x int)",
            "DELETE FROM riido.documents",
            "UPDATE riido.snapshots SET state = 'loading'",
            "TRUNCATE riido.postings",
            "DROP TABLE riido.postings",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(stmt)
    assert db.count("documents") == 2
    assert db.count("snapshots") == 1


def test_grant_reader_unknown_role(db: Database) -> None:
    result = run_cli(["db", "grant-reader", "no_such_role_x"], dsn=db.dsn)
    assert result.code == 2
    assert result.stderr == (
        "error: no role 'no_such_role_x'; create it first, e.g. CREATE ROLE no_such_role_x LOGIN\n"
    )


def test_no_security_definer_functions(conn: Any) -> None:
    rows = conn.execute(
        "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = 'riido' AND p.prosecdef"
    ).fetchall()
    assert rows == []
