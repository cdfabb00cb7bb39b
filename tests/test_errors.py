"""Library callers get the same typed errors as the CLI: database failures are
translated once, inside the library (riido_pg.server.errors)."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from support.database import Database, create_database, drop_database
from support.sessions import login_role, table_locked

from riido_pg import (
    DatabaseUnavailable,
    Document,
    InvalidDsn,
    InvalidInput,
    PermissionDenied,
    QueryTimeout,
    RiidoError,
    SchemaMissing,
    drop_snapshot,
    list_snapshots,
    load_snapshot,
    rank_snapshot,
)
from riido_pg.db import connect
from riido_pg.server.privileges import grant_reader

DOCS = [
    Document(f"d{i:04d}", f"def read_config_{i}(path): return parse(path) {i}") for i in range(3000)
]


@pytest.fixture(scope="module", autouse=True)
def snapshot(db: Database) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "err", DOCS)


def test_statement_timeout_is_query_timeout(db: Database) -> None:
    with db.connect() as conn:
        conn.execute("SET statement_timeout = 1")
        with pytest.raises(QueryTimeout, match="statement timeout"):
            for _ in range(20):  # 1 ms: one of these runs past it on any machine
                rank_snapshot(conn, "err", "read config path parse return def")
        conn.execute("SET statement_timeout = 0")
        assert rank_snapshot(conn, "err", "read", limit=1).candidates


def test_lock_timeout_is_query_timeout(db: Database) -> None:
    with table_locked(db, "documents"), db.connect() as conn:
        conn.execute("SET lock_timeout = 200")
        with pytest.raises(QueryTimeout, match="lock"):
            rank_snapshot(conn, "err", "read")
    with table_locked(db, "snapshots"), db.connect() as conn:
        conn.execute("SET lock_timeout = 200")
        with pytest.raises(QueryTimeout, match="lock"):
            drop_snapshot(conn, "err")
    with db.connect() as conn:  # nothing was dropped
        assert rank_snapshot(conn, "err", "read", limit=1).candidates


@pytest.fixture
def bare_db(server_dsn: str) -> Iterator[Database]:
    database = create_database(server_dsn, "riido_t_bare", migrated=False)
    yield database
    drop_database(server_dsn, database.name)


def test_missing_schema_is_schema_missing(bare_db: Database) -> None:
    with bare_db.connect() as conn:
        with pytest.raises(SchemaMissing, match="riido-pg --dsn URL db upgrade"):
            load_snapshot(conn, "x", [Document("a", "read")])
        with pytest.raises(SchemaMissing, match="riido-pg --dsn URL db upgrade"):
            rank_snapshot(conn, "x", "read")
        with pytest.raises(SchemaMissing, match="riido-pg --dsn URL db upgrade"):
            list_snapshots(conn)
    with pytest.raises(SchemaMissing) as named:  # the DSN given, in the command to run
        connect(bare_db.dsn)
    command = f"riido-pg --dsn {shlex.quote(bare_db.dsn)} db upgrade"
    assert str(named.value) == f"the database has no riido schema: create it with `{command}`"


@pytest.fixture
def reader_dsn(db: Database, server_dsn: str) -> Iterator[str]:
    def grant(role: str) -> None:
        with db.connect() as conn:
            grant_reader(conn, role)

    with login_role(db, server_dsn, grant) as dsn:
        yield dsn


def test_permission_denied(reader_dsn: str) -> None:
    with psycopg.connect(reader_dsn, autocommit=True) as conn:
        assert rank_snapshot(conn, "err", "read", limit=1).candidates
        with pytest.raises(PermissionDenied, match="permission denied"):
            load_snapshot(conn, "mine", [Document("a", "read")])
        with pytest.raises(PermissionDenied):
            drop_snapshot(conn, "err")
    assert issubclass(PermissionDenied, DatabaseUnavailable)  # exit 1, an environment failure


def test_unreachable_server_is_database_unavailable() -> None:
    with pytest.raises(DatabaseUnavailable, match="cannot connect to PostgreSQL"):
        connect("postgresql://nobody@127.0.0.1:1/nothing")


@pytest.mark.parametrize("dsn", ["postgresql://x@:bad", "nonsense", "host=127.0.0.1 port=abc"])
def test_malformed_dsn_is_invalid_input(dsn: str) -> None:
    with pytest.raises(InvalidDsn, match="invalid DSN") as info:
        connect(dsn)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("dsn", ["postgresql://x@:bad", "nonsense"])
def test_cli_malformed_dsn_is_one_line_exit_2(dsn: str, cli: Any) -> None:
    result = cli(["snapshots", "list", "--dsn", dsn])
    assert result.code == 2 and result.stdout == ""
    assert result.stderr.startswith("error: invalid DSN: ") and result.stderr.count("\n") == 1


def test_limit_message_names_no_cli_flag(conn: Any) -> None:
    with pytest.raises(InvalidInput, match=r"^limit must be from 1 to 9223372036854775807$"):
        rank_snapshot(conn, "err", "read", limit=0)


def _error_classes() -> list[type[RiidoError]]:
    import riido_pg.embedding.errors as embedding_errors
    import riido_pg.errors as errors

    found = []
    for module in (errors, embedding_errors):
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type) and issubclass(obj, RiidoError):
                found.append(obj)
    return found


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda c: c.__name__)
def test_exit_codes_come_from_the_cli_table_by_class(cls: type[RiidoError]) -> None:
    from riido_pg.cli.errors import exit_code

    err = cls("something")
    assert not hasattr(err, "exit_code")  # the library knows no exit codes
    assert exit_code(err) == (2 if issubclass(cls, InvalidInput) else 1)


def test_a_hint_is_rendered_in_the_callers_terms() -> None:
    from riido_pg import Hint, SnapshotExists

    err = SnapshotExists(
        "snapshot 'x' exists with different content",
        Hint("pass --replace to replace it", "pass replace=True to replace it"),
    )
    assert str(err) == "snapshot 'x' exists with different content; pass replace=True to replace it"
    assert err.render(cli=True) == (
        "snapshot 'x' exists with different content; pass --replace to replace it"
    )
    assert err.message == "snapshot 'x' exists with different content"
    bare = SnapshotExists("plain", Hint(cli="only for the command line"))
    assert str(bare) == "plain" and bare.render(cli=True) == "plain; only for the command line"
    import pickle

    again = pickle.loads(pickle.dumps(err))
    assert (type(again), again.message, again.hint) == (SnapshotExists, err.message, err.hint)


def test_every_database_error_is_a_riido_error(conn: Any) -> None:
    from riido_pg.errors import DatabaseError
    from riido_pg.server.errors import translated

    @translated
    def bad(c: Any) -> None:
        c.execute("SELECT 1 / 0")

    with pytest.raises(DatabaseError, match=r"^database error: division by zero$") as info:
        bad(conn)
    assert isinstance(info.value.__cause__, psycopg.errors.DivisionByZero)
    assert info.value.render(cli=True).endswith("; rerun with --debug for details")
