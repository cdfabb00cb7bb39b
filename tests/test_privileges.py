"""Least privilege: a reader role made with `riido-pg db grant-reader` can query
snapshots and nothing else."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from support.cli import run_cli
from support.database import Database
from support.sessions import login_role

from riido_pg import Document, load_snapshot
from riido_pg.errors import PermissionDenied
from riido_pg.server.privileges import LOCK_FUNCTIONS
from riido_pg.storage import snapshots
from riido_pg.storage.texts import collect_garbage


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


# --- riido-pg's locks: a reader cannot take them ---------------------------------

TEXTS = (0x52494947, 0)  # riido_pg.storage.texts
MIGRATION = (0x52494944, 0)  # riido_pg.server.migrate
SHARD_NAMESPACE = 0x52494953  # riido_pg.shards.locks


def _riido_keys() -> list[tuple[int, int]]:
    """Every key riido-pg takes: the texts and migration locks, a snapshot's writer
    lock, a shard's lock."""
    digest = hashlib.blake2b(b"s1", digest_size=4).digest()
    shard = (SHARD_NAMESPACE, int.from_bytes(digest, "big") & 0x7FFFFFFF)
    return [TEXTS, MIGRATION, (0x52494944, snapshots._lock_key("pub")), shard]


def test_reader_cannot_take_riido_locks(reader: str, db: Database, tmp_path: Any) -> None:
    """The reader held the texts lock (``pg_advisory_lock(1380534599, 0)``): loads and
    hints failed after the lock timeout, a shared hold stopped the collector. Now every
    advisory-lock function and every row lock on riido's tables is refused to it, and
    the writers work while its session is open."""
    refused: list[str] = []
    with psycopg.connect(reader, autocommit=True) as conn:
        for signature in LOCK_FUNCTIONS:
            name = signature.split("(")[0]
            for key in _riido_keys():
                args = key if "," in signature else ((key[0] << 32) | key[1],)
                call = sql.SQL("SELECT pg_catalog.{}({})").format(
                    sql.Identifier(name), sql.SQL(", ").join([sql.Placeholder()] * len(args))
                )
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(call, args)
            refused.append(name)
        for mode in ("UPDATE", "NO KEY UPDATE", "SHARE", "KEY SHARE"):
            for table in ("snapshots", "texts", "documents"):
                statement = sql.SQL("SELECT 1 FROM riido.{} FOR {}").format(
                    sql.Identifier(table), sql.SQL(mode)
                )
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(statement)
        with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
            conn.execute("LOCK TABLE riido.texts IN ROW SHARE MODE")
        held = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'"
        ).fetchone()
        assert held == (0,)
        # the reader still reads, and the writers are not held up by it
        assert run_cli(["query", "pub", "read config"], dsn=reader).code == 0
        src = tmp_path / "d.jsonl"
        src.write_text('{"id": "x", "text": "read the log"}\n')
        loaded = run_cli(["load", "other", str(src)], dsn=db.dsn)
        assert loaded.code == 0, loaded
        hints = run_cli(
            ["hints"],
            dsn=db.dsn,
            input=json.dumps(
                {"snapshot_id": "s", "query": "q", "documents": [{"id": "a", "text": "q"}]}
            ),
        )
        assert hints.code == 0, hints
        assert run_cli(["snapshots", "drop", "other"], dsn=db.dsn).code == 0
        with db.connect() as writer:
            assert collect_garbage(writer)
    assert len(set(refused)) == 8
    assert db.count("texts") == 2  # the dropped snapshot's text was collected


def _writer(db: Database) -> Callable[[str], None]:
    def grant(role: str) -> None:
        with db.connect() as conn:
            for statement in (
                "GRANT USAGE, CREATE ON SCHEMA riido TO {}",
                "GRANT ALL ON ALL TABLES IN SCHEMA riido TO {}",
                "GRANT ALL ON ALL SEQUENCES IN SCHEMA riido TO {}",
            ):
                conn.execute(sql.SQL(statement).format(sql.Identifier(role)))

    return grant


def _loads(dsn: str, snapshot_id: str) -> Any:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return load_snapshot(conn, snapshot_id, [Document("w", "write the log")])


def test_roles_that_write_keep_the_locks(db: Database, server_dsn: str) -> None:
    """A role that writes riido when ``grant-reader`` runs may still take the locks; one
    made a writer later is refused them with one clear error until a superuser runs
    ``grant-reader`` again."""
    with login_role(db, server_dsn, _writer(db)) as writer:
        with login_role(db, server_dsn, lambda role: None) as reader:
            role = conninfo_to_dict(reader)["user"]
            assert run_cli(["db", "grant-reader", str(role)], dsn=db.dsn).code == 0
            assert _loads(writer, "by_writer").documents == 1
            with login_role(db, server_dsn, _writer(db)) as later:
                with pytest.raises(PermissionDenied, match="advisory") as caught:
                    _loads(later, "by_later")
                assert caught.value.render(cli=True).endswith(
                    "only the roles that write riido may take advisory locks here; connect as "
                    "one (a role made a writer after `riido-pg db grant-reader` ran gets them "
                    "when a superuser runs it again)"
                )
                assert run_cli(["db", "grant-reader", str(role)], dsn=db.dsn).code == 0
                assert _loads(later, "by_later").documents == 1


def test_grant_reader_needs_a_superuser_while_everyone_may_lock(
    db: Database, server_dsn: str
) -> None:
    """Only a superuser may revoke the lock functions from PUBLIC: an owner of riido's
    tables that is not one is refused and grants nothing, until a superuser has made
    a reader once."""

    def admin_rights(role: str) -> None:
        with db.connect() as conn:
            for grant in (
                "GRANT USAGE ON SCHEMA riido TO {} WITH GRANT OPTION",
                "GRANT SELECT ON ALL TABLES IN SCHEMA riido TO {} WITH GRANT OPTION",
            ):
                conn.execute(sql.SQL(grant).format(sql.Identifier(role)))

    with (
        login_role(db, server_dsn, admin_rights) as admin,
        login_role(db, server_dsn, lambda role: None) as first,
        login_role(db, server_dsn, lambda role: None) as second,
    ):
        admin_role = str(conninfo_to_dict(admin)["user"])
        try:
            first_role = str(conninfo_to_dict(first)["user"])
            with psycopg.connect(db.dsn, autocommit=True) as conn:
                functions = sql.SQL(", ").join(sql.SQL(f"pg_catalog.{f}") for f in LOCK_FUNCTIONS)
                conn.execute(sql.SQL("GRANT EXECUTE ON FUNCTION {} TO PUBLIC").format(functions))
                public = conn.execute(
                    "SELECT has_function_privilege('public', 'pg_advisory_lock(bigint)', 'EXECUTE')"
                ).fetchone()
            assert public == (True,)  # as in a database no reader was made in yet
            refused = run_cli(["db", "grant-reader", first_role], dsn=admin)
            assert refused.code == 1
            assert refused.stderr == (
                f"error: cannot keep role {first_role!r} from riido-pg's locks: every role "
                "may take advisory locks here, and only a superuser may revoke that from "
                f"PUBLIC; nothing was granted; run `riido-pg db grant-reader {first_role}` as a "
                "superuser\n"
            )
            with (
                psycopg.connect(first) as conn,
                pytest.raises(psycopg.errors.InsufficientPrivilege),
            ):
                conn.execute("SELECT count(*) FROM riido.snapshots")
            assert run_cli(["db", "grant-reader", first_role], dsn=db.dsn).code == 0
            second_role = str(conninfo_to_dict(second)["user"])
            assert run_cli(["db", "grant-reader", second_role], dsn=admin).code == 0
            with psycopg.connect(second, autocommit=True) as conn:
                count = conn.execute("SELECT count(*) FROM riido.snapshots").fetchone()
                assert count == (db.count("snapshots"),)
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute("SELECT pg_advisory_lock(1380534599, 0)")
        finally:  # what the admin granted goes before the roles do
            with db.connect() as conn:
                conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(admin_role)))


def test_a_role_that_writes_or_may_lock_cannot_be_made_a_reader(
    db: Database, server_dsn: str
) -> None:
    with login_role(db, server_dsn, _writer(db)) as writer:
        role = str(conninfo_to_dict(writer)["user"])
        result = run_cli(["db", "grant-reader", role], dsn=db.dsn)
        assert (result.code, result.stderr) == (
            2,
            f"error: role {role!r} writes riido (itself or through a role it belongs to); a "
            "reader must not; choose a role that writes nothing, or revoke its write privileges "
            "first\n",
        )
    with login_role(db, server_dsn, lambda role: None) as granted:
        role = str(conninfo_to_dict(granted)["user"])
        with db.connect() as conn:
            conn.execute(
                sql.SQL(
                    "GRANT EXECUTE ON FUNCTION pg_catalog.pg_advisory_lock(bigint) TO {}"
                ).format(sql.Identifier(role))
            )
        result = run_cli(["db", "grant-reader", role], dsn=db.dsn)
        assert result.code == 1
        assert result.stderr.startswith(
            f"error: role {role!r} may still take advisory locks (it may execute "
            "pg_advisory_lock(bigint)"
        )
        with psycopg.connect(granted) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT count(*) FROM riido.snapshots")  # nothing was granted
