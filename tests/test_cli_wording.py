"""What the command line says when input is hostile or wrong: names from untrusted trees
never drive the terminal, a table is found on the search path, and a failure while
reading a table names the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from psycopg import sql
from support.cli import Cli
from support.database import Database

ESCAPES = "x\x1b]0;PWNED\x07\x1b[31mred\x1b[0m"


def test_a_hostile_file_name_is_shown_not_sent(cli: Cli, db: Database, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / f"{ESCAPES}.py").write_text("def read_config(path):\n    return open(path)\n")
    (tree / "new\nline.py").write_text("def write_config(path):\n    pass\n")
    loaded = cli(["load", "hostile-tree", str(tree)])
    assert loaded.code == 0, loaded.stderr
    assert "\x1b" not in loaded.stdout + loaded.stderr
    table = cli(["query", "hostile-tree", "read config", "--format", "table"])
    assert table.code == 0, table.stderr
    assert "\x1b" not in table.stdout and "\x07" not in table.stdout
    assert "x\\x1b]0;PWNED\\x07\\x1b[31mred\\x1b[0m.py:read_config:1" in table.stdout
    assert "new\\nline.py:write_config:1" in table.stdout  # one row, not two
    body = json.loads(cli(["query", "hostile-tree", "read config"]).stdout)
    assert f"{ESCAPES}.py:read_config:1" in {c["id"] for c in body["candidates"]}  # JSON as is


def test_a_hostile_snapshot_id_is_shown_not_sent(cli: Cli, db: Database) -> None:
    """A snapshot id with control characters is refused; one stored before that rule (or
    by hand) is still listed, its characters shown, never sent."""
    with db.connect() as conn:
        conn.execute(
            "INSERT INTO riido.snapshots (snapshot_id, text_config, state, document_count, "
            "content_digest, k1, b) VALUES (%s, 'english', 'ready', 0, '', 1.2, 0.75)",
            (f"snap{ESCAPES}",),
        )
    listed = cli(["snapshots", "list"])
    assert listed.code == 0, listed.stderr
    assert "\x1b" not in listed.stdout and "snapx\\x1b]0;PWNED" in listed.stdout
    for args in (["snapshots", "drop", f"snap{ESCAPES}"], ["query", f"snap{ESCAPES}", "read"]):
        refused = cli(args)
        assert (refused.code, refused.stdout) == (2, "")
        assert refused.stderr == (
            "error: snapshot id contains a control character (\\x1b at byte 5); "
            "use printable characters\n"
        )


@pytest.fixture(scope="module")
def tables(db: Database) -> None:
    with db.connect() as conn:
        conn.execute("CREATE SCHEMA extra")
        conn.execute("CREATE TABLE extra.fns AS SELECT 'f1' AS id, 'read config' AS text")
        conn.execute(
            "CREATE VIEW public.breaks AS SELECT i::text AS id, (1 / (i - 50))::text AS text "
            "FROM generate_series(1, 100) AS i"
        )
        conn.execute("CREATE TABLE public.longword (id text, text text)")
        conn.execute(
            "INSERT INTO public.longword VALUES ('ok', 'read'), ('w3k', %s)", ("x" * 3000,)
        )
        name = conn.execute("SELECT current_database()").fetchone()
        assert name is not None
        conn.execute(
            sql.SQL("ALTER DATABASE {} SET search_path = public, extra").format(
                sql.Identifier(name[0])
            )
        )


def test_an_unqualified_table_is_found_on_the_search_path(cli: Cli, tables: None) -> None:
    result = cli(["load", "from-path", "--from-table", "fns"])
    assert (result.code, result.stdout) == (0, "loaded snapshot 'from-path' (1 document)\n")
    missing = cli(["load", "from-path", "--from-table", "nope"])
    assert (missing.code, missing.stderr) == (
        2,
        "error: no table 'nope' on the search path (public, extra); name it as SCHEMA.TABLE\n",
    )


def test_a_view_that_fails_mid_read_is_named(cli: Cli, db: Database, tables: None) -> None:
    before = db.counts()
    result = cli(["load", "broken-view", "--from-table", "breaks"])
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == (
        "error: table public.breaks: division by zero; rerun with --debug for details\n"
    )
    assert db.counts() == before


def test_a_word_too_long_to_index_names_the_table(cli: Cli, db: Database, tables: None) -> None:
    before = db.counts()
    result = cli(["load", "long-word", "--from-table", "public.longword"])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        "error: table public.longword: document 'w3k' has a word of more than 2047 bytes, "
        "which PostgreSQL cannot index\n"
    )
    assert db.counts() == before


def test_a_model_without_its_extra_names_both_install_commands() -> None:
    from riido_pg.embedding.registry import MODELS

    install = MODELS["wordllama-256"].install
    assert "pip install 'riido-pg[model]'" in install and "pip install '.[model]'" in install
