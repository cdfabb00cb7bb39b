"""A shard's credentials (README "More than one server"): every secret of its DSN goes
into the coordinator's user mapping, never into text a reader can select; no message
shows one, even for a DSN libpq cannot parse; and the password can come from a file,
stdin or libpq's own password file instead of the command line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo
from support import clusters
from support.cli import Cli
from support.corpus import numbered_jsonl
from support.database import Database, create_database, drop_database
from support.sessions import login_role

from riido_pg.server import migrate
from riido_pg.shards.secrets import mask_dsn_secrets, secret_keywords, split_credentials

SECRET = "TOPSECRET-4711"


@pytest.fixture(scope="module")
def shard(db: Database, server_dsn: str, template: str) -> Iterator[Database]:
    with db.connect() as conn:
        if not conn.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'postgres_fdw'"
        ).fetchone():
            pytest.skip("the test server has no postgres_fdw extension")
    created = create_database(server_dsn, "riido_t_secret_shard", template=template)
    try:
        yield created
    finally:
        drop_database(server_dsn, created.name)


def _dump(conn: psycopg.Connection[Any], query: str) -> str:
    return repr(conn.execute(query).fetchall())


def test_secrets_go_to_the_user_mapping_only(
    cli: Cli, db: Database, shard: Database, server_dsn: str, tmp_path: Path
) -> None:
    dsn = make_conninfo(shard.dsn, sslpassword=SECRET, password=SECRET + "p", sslmode="disable")
    added = cli(["shards", "add", "s8", dsn])
    assert (added.code, added.stdout, added.stderr) == (0, "added shard 's8'\n", "")
    with db.connect() as conn:  # the superuser sees the mapping's options
        options = conn.execute(
            "SELECT umoptions FROM pg_user_mappings WHERE srvname = 'riido_shard_s8'"
        ).fetchone()
        assert options is not None and f"sslpassword={SECRET}" in options[0]
        conninfo = conn.execute("SELECT conninfo FROM riido.shards").fetchone()
        assert conninfo is not None and "disable" in conninfo[0] and SECRET not in conninfo[0]
    # the shard answers with the credentials the mapping holds
    loaded = cli(["load", "sec", str(numbered_jsonl(tmp_path / "sec.jsonl", 3))])
    assert loaded.code == 0, loaded.stderr
    listed = cli(["shards", "list", "--format", "json"])
    assert listed.code == 0 and SECRET not in listed.stdout

    def grant(role: str) -> None:
        assert cli(["db", "grant-reader", role]).code == 0
        with db.connect() as conn:  # as README says a reader reaches the shards
            conn.execute(
                sql.SQL("GRANT USAGE ON FOREIGN SERVER riido_shard_s8 TO {}").format(
                    sql.Identifier(role)
                )
            )

    with login_role(db, server_dsn, grant) as reader, psycopg.connect(reader) as conn:
        seen = [
            _dump(conn, q)
            for q in (
                "SELECT * FROM riido.shards",
                "SELECT * FROM pg_user_mappings",
                "SELECT * FROM pg_foreign_server",
            )
        ]
        assert "riido_shard_s8" in seen[1] and "s8" in seen[0]
        assert not any(SECRET in text for text in seen), seen
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT * FROM pg_user_mapping")
    assert cli(["snapshots", "drop", "sec"]).code == 0
    assert cli(["shards", "remove", "s8"]).code == 0


@pytest.mark.parametrize(
    ("dsn", "leaks"),
    [
        ("postgresql://u:LEAK1@[::1/db", ["LEAK1"]),
        ("postgresql://u:LEAK2%zz@h/db", ["LEAK2"]),
        ("host=h password=LE AK5 dbname=x", ["LE AK5", "AK5"]),
        ("host=h sslpassword='LEAK6 dbname=x", ["LEAK6"]),
        ("postgresql://u@h/db?sslpassword=LEAK7%zz", ["LEAK7"]),
    ],
)
def test_no_message_shows_a_secret(cli: Cli, dsn: str, leaks: list[str]) -> None:
    added = cli(["shards", "add", "s7", dsn])
    assert added.code == 2 and added.stdout == "" and added.stderr.startswith("error: invalid")
    assert not any(leak in added.stderr for leak in leaks), added.stderr


def test_masking_keeps_what_is_not_secret() -> None:
    uri = "postgresql://alice:pw1234@[::1/db"
    message = f'end of string reached in URI: "{uri}"'
    assert mask_dsn_secrets(message, uri) == (
        'end of string reached in URI: "postgresql://alice:***@[::1/db"'
    )
    typo = "host=db1 porrt=5432 password=hunter22"
    assert mask_dsn_secrets('missing "=" after "porrt"', typo) == 'missing "=" after "porrt"'
    assert {"password", "sslpassword"} <= secret_keywords()
    assert split_credentials({"user": "u", "password": "p", "sslkey": "/k", "host": "h"}) == (
        {"user": "u", "password": "p"},
        {"sslkey": "/k", "host": "h"},
    )


@pytest.fixture(scope="module")
def guarded() -> Iterator[clusters.Cluster]:
    """A cluster where role ``pwuser`` must give its password (SCRAM), with three riido
    databases it owns."""
    if clusters.pg_bin() is None:
        pytest.skip("no initdb on this machine")
    with clusters.cluster() as node:
        with psycopg.connect(node.dsn(), autocommit=True) as conn:
            conn.execute("CREATE ROLE pwuser LOGIN SUPERUSER PASSWORD 'pw-Secret-1'")
            for name in ("p1", "p2", "p3"):
                conn.execute(
                    sql.SQL("CREATE DATABASE {} OWNER pwuser").format(sql.Identifier(name))
                )
                migrate.upgrade(node.dsn(name))
        hba = node.data / "pg_hba.conf"
        hba.write_text("host all pwuser 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        with psycopg.connect(node.dsn(), autocommit=True) as conn:
            conn.execute("SELECT pg_reload_conf()")
        yield node


def _pw_dsn(node: clusters.Cluster, dbname: str) -> str:
    return f"host=127.0.0.1 port={node.port} dbname={dbname} user=pwuser"


def test_the_password_from_a_file_or_stdin(
    cli: Cli, guarded: clusters.Cluster, tmp_path: Path
) -> None:
    env = {"PGPASSWORD": "", "PGPASSFILE": str(tmp_path / "none")}
    bare = cli(["shards", "add", "p1", _pw_dsn(guarded, "p1")], env=env)
    assert bare.code == 1 and "cannot add shard 'p1'" in bare.stderr
    secret = tmp_path / "pw"
    secret.write_text("pw-Secret-1\n")
    added = cli(
        ["shards", "add", "p1", _pw_dsn(guarded, "p1"), "--password-file", str(secret)],
        env=env,
    )
    assert (added.code, added.stdout) == (0, "added shard 'p1'\n"), added.stderr
    piped = cli(
        ["shards", "add", "p2", _pw_dsn(guarded, "p2"), "--password-file", "-"],
        env=env,
        input="pw-Secret-1\n",
    )
    assert (piped.code, piped.stdout) == (0, "added shard 'p2'\n"), piped.stderr
    src = numbered_jsonl(tmp_path / "docs.jsonl", 4)
    for shard in ("p1", "p2"):  # later commands need no password: the mapping has it
        loaded = cli(["load", f"on-{shard}", str(src), "--shard", shard], env=env)
        assert loaded.code == 0, loaded.stderr
        assert cli(["query", f"on-{shard}", "f"], env=env).code == 0
    both = cli(
        [
            "shards",
            "add",
            "p3",
            _pw_dsn(guarded, "p3") + " password=x",
            "--password-file",
            str(secret),
        ],
    )
    assert both.code == 2 and "not both" in both.stderr and "pw-Secret-1" not in both.stderr
    wrong = tmp_path / "wrong"
    wrong.write_text("not-it\n")
    denied = cli(
        ["shards", "add", "p3", _pw_dsn(guarded, "p3"), "--password-file", str(wrong)],
        env=env,
    )
    assert denied.code == 1 and "cannot add shard 'p3'" in denied.stderr
    assert "not-it" not in denied.stderr
    for shard in ("p1", "p2"):
        assert cli(["snapshots", "drop", f"on-{shard}"], env=env).code == 0
        assert cli(["shards", "remove", shard], env=env).code == 0


def test_the_password_from_libpq_password_file(
    cli: Cli, db: Database, guarded: clusters.Cluster, tmp_path: Path
) -> None:
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{guarded.port}:*:pwuser:pw-Secret-1\n")
    passfile.chmod(0o600)
    env = {"PGPASSWORD": "", "PGPASSFILE": str(passfile)}
    added = cli(["shards", "add", "p3", _pw_dsn(guarded, "p3")], env=env)
    assert (added.code, added.stdout) == (0, "added shard 'p3'\n"), added.stderr
    with db.connect() as conn:  # not stored: every client finds it in its own file
        options = conn.execute(
            "SELECT umoptions FROM pg_user_mappings WHERE srvname = 'riido_shard_p3'"
        ).fetchone()
        assert options is not None and not any(o.startswith("password=") for o in options[0])
    src = numbered_jsonl(tmp_path / "docs.jsonl", 4)
    assert cli(["load", "pf", str(src), "--shard", "p3"], env=env).code == 0
    assert cli(["query", "pf", "f"], env=env).code == 0
    without = cli(["query", "pf", "f"], env={"PGPASSWORD": "", "PGPASSFILE": str(tmp_path / "x")})
    assert without.code == 1 and without.stderr.startswith("error: shard 'p3' is unavailable")
    assert cli(["snapshots", "drop", "pf"], env=env).code == 0
    assert cli(["shards", "remove", "p3"], env=env).code == 0
