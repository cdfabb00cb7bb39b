"""`load --from-table` and load_snapshot_from_table: documents read from a table in
the same database, checked like file input, one atomic load."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from psycopg import sql
from support.cli import run_cli
from support.database import Database
from support.sessions import login_role

from riido_pg import Document, PermissionDenied, load_snapshot, load_snapshot_from_table
from riido_pg.errors import InvalidInput


@pytest.fixture(scope="module", autouse=True)
def source(db: Database) -> None:
    with db.connect() as conn:
        conn.execute("CREATE SCHEMA app")
        conn.execute("CREATE TABLE app.functions (fid text, body text, extra int)")
        conn.execute(
            "INSERT INTO app.functions SELECT 'f' || g, "
            "'def read_config_' || g || '(path): return open(path)', g "
            "FROM generate_series(1, 300) AS g"
        )


def test_from_table_equals_the_same_documents_from_a_file(conn: Any, db: Database) -> None:
    result = load_snapshot_from_table(conn, "from-table", "app.functions", "fid", "body")
    assert (result.action, result.documents) == ("created", 300)
    rows = conn.execute("SELECT fid, body FROM app.functions").fetchall()
    load_snapshot(conn, "from-list", [Document(i, t) for i, t in rows])
    digests = conn.execute(
        "SELECT snapshot_id, content_digest FROM riido.snapshots "
        "WHERE snapshot_id IN ('from-table', 'from-list') ORDER BY 1"
    ).fetchall()
    assert digests[0][1] == digests[1][1]  # the same content, whatever the source
    again = load_snapshot_from_table(conn, "from-table", "app.functions", "fid", "body")
    assert again.action == "unchanged"


def test_cli_from_table(cli: Any) -> None:
    result = cli(
        ["load", "cli-table", "--from-table", "app.functions", "--id-column", "fid",
         "--text-column", "body", "--fresh"]
    )  # fmt: skip
    assert (result.code, result.stdout) == (0, "loaded snapshot 'cli-table' (300 documents)\n")
    ranked = json.loads(cli(["query", "cli-table", "read config", "--limit", "1"]).stdout)
    assert ranked["candidates"][0]["id"].startswith("f")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from-table", "app.nope"], "error: no table 'app.nope' (expected SCHEMA.TABLE, e.g. "
         "public.functions)\n"),
        (["--from-table", "app.functions", "--id-column", "fid", "--text-column", "nope"],
         "error: table app.functions has no column 'nope'; it has body, extra, fid\n"),
    ],
)  # fmt: skip
def test_missing_table_or_column_exit_2(
    cli: Any, db: Database, args: list[str], message: str
) -> None:
    before = db.counts()
    result = cli(["load", "bad", *args])
    assert (result.code, result.stdout, result.stderr) == (2, "", message)
    assert db.counts() == before


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ((None, "x"), "table app.bad_rows: a row has a NULL fid"),
        (("f1", None), "table app.bad_rows: document 'f1' has no \"text\""),
        (("f2", "dup"), "table app.bad_rows: duplicate document id 'f2'"),
        (
            ("big", "x" * 1_000_001),
            "table app.bad_rows: document 'big' is 1000001 bytes; the limit is 1000000",
        ),
    ],
)
def test_bad_rows_get_the_file_input_errors(
    conn: Any, db: Database, row: tuple[str | None, str | None], message: str
) -> None:
    conn.execute("DROP TABLE IF EXISTS app.bad_rows")
    conn.execute("CREATE TABLE app.bad_rows AS SELECT * FROM app.functions WHERE false")
    conn.execute("INSERT INTO app.bad_rows VALUES ('f2', 'first', 0), (%s, %s, 0)", row)
    before = db.counts()
    with pytest.raises(InvalidInput) as info:
        load_snapshot_from_table(conn, "bad-rows", "app.bad_rows", "fid", "body")
    assert str(info.value) == message
    assert db.counts() == before


@pytest.fixture
def loader_without_select(db: Database, server_dsn: str) -> Iterator[str]:
    """A role that may write riido's tables but not read app.functions."""

    def grant(role: str) -> None:
        with db.connect() as conn:
            conn.execute(
                sql.SQL("GRANT USAGE ON SCHEMA riido, app TO {}").format(sql.Identifier(role))
            )
            conn.execute(
                sql.SQL("GRANT ALL ON ALL TABLES IN SCHEMA riido TO {}").format(
                    sql.Identifier(role)
                )
            )

    with login_role(db, server_dsn, grant) as dsn:
        yield dsn


def test_a_table_the_role_cannot_read(loader_without_select: str) -> None:
    import psycopg

    with psycopg.connect(loader_without_select, autocommit=True) as conn:
        with pytest.raises(PermissionDenied, match="permission denied"):
            load_snapshot_from_table(conn, "denied", "app.functions", "fid", "body")
    result = run_cli(
        ["load", "denied", "--from-table", "app.functions", "--id-column", "fid",
         "--text-column", "body"],
        dsn=loader_without_select,
    )  # fmt: skip
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr.startswith("error: permission denied: ") and result.stderr.count("\n") == 1
