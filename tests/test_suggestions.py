"""Every message that suggests a command built from user input quotes that input: the
suggested shell command is the user's words as single arguments, the suggested SQL
names exactly the user's role, and control characters are shown, never sent."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from support.cli import Cli

import riido_pg
from riido_pg import Database, Document, RiidoError
from riido_pg.quoting import shell_arg

PACKAGE = Path(riido_pg.__file__).parent
#: Functions whose result is safe inside a suggestion (``q``: the embedded server's
#: shlex.quote of its own data directory, riido_pg.server.embedded.messages).
QUOTERS = {"shell_command", "shell_arg", "sql_ident", "_drop", "q"}
#: Values inside a suggested command that no user chose: process ids, the system
#: user (the embedded server's account), the command's own path, the null device, the
#: embedded server's distribution name.
NOT_INPUT = {
    "info.pid",
    "listed",
    "owner().name",
    "account.name",
    "SERVER_USER",
    "ctx.command_path",
    "os.devnull",
    "DISTRIBUTION",
}
HOSTILE = [
    "a b; rm -rf ~ #",
    "$(id)",
    "`id`",
    "x'; drop schema riido cascade; --",
]
#: Snapshot ids with control characters: refused before any suggestion is made.
CONTROL = ["nosnap\x1b[2J", "new\nline"]


def _quoting(value: ast.expr, safe: set[str]) -> bool:
    """Whether ``value`` is a quoting call, or a variable assigned from one."""
    if isinstance(value, ast.Call):
        return getattr(value.func, "id", "") in QUOTERS
    return isinstance(value, ast.Name) and value.id in safe


def _in_commands(node: ast.JoinedStr) -> list[ast.expr]:
    """The values an f-string interpolates inside a suggested command: between
    backticks, or after ``CREATE ROLE``."""
    inside = sql_role = False
    found = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            inside ^= part.value.count("`") % 2 == 1
            sql_role |= "CREATE ROLE" in part.value
        elif isinstance(part, ast.FormattedValue) and (inside or sql_role):
            found.append(part.value)
    return found


def _quoted_names(func: ast.AST) -> set[str]:
    """Variables of ``func`` assigned from a quoting call."""
    names = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            callee = node.value.func
            if isinstance(callee, ast.Name) and callee.id in QUOTERS:
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def test_every_suggestion_in_the_source_quotes_what_it_interpolates() -> None:
    unquoted = []
    quoted = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            safe = _quoted_names(func)
            for node in ast.walk(func):
                if not isinstance(node, ast.JoinedStr):
                    continue
                for value in _in_commands(node):
                    if _quoting(value, safe):
                        quoted += 1
                    elif ast.unparse(value) not in NOT_INPUT:
                        unquoted.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert quoted >= 8  # the check sees the suggestions it means to
    assert unquoted == []


def _command(message: str) -> list[str]:
    """The backticked command a message suggests, as bash splits it into arguments."""
    line = re.search(r"`(riido-pg .*)`", message)
    assert line is not None, message
    out = subprocess.run(
        ["bash", "-c", "printf '%s\\0' " + line.group(1)], capture_output=True, check=True
    ).stdout
    return out.decode().split("\0")[:-1]


@pytest.mark.parametrize("snapshot", HOSTILE)
def test_no_snapshot_suggests_loading_exactly_that_id(conn: Any, snapshot: str) -> None:
    with pytest.raises(RiidoError) as info:
        Database(conn).rank(snapshot, "read")
    said = info.value.render(cli=True)
    assert _command(said) == ["riido-pg", "load", snapshot, "SOURCE"]
    assert "\x1b" not in said and "\n" not in said.replace("\\n", "")
    assert str(info.value) == f"no snapshot {snapshot!r}; load one with load_snapshot()"


@pytest.mark.parametrize("snapshot", CONTROL)
def test_a_snapshot_id_with_control_characters_is_refused_and_shown(
    conn: Any, snapshot: str
) -> None:
    with pytest.raises(RiidoError) as info:
        Database(conn).rank(snapshot, "read")
    said = info.value.render(cli=True)
    assert said.startswith("snapshot id contains a control character (\\x")
    assert "\x1b" not in said and "\n" not in said and "riido-pg" not in said


@pytest.mark.parametrize("snapshot", HOSTILE)
def test_an_interrupted_load_suggests_dropping_exactly_that_id(conn: Any, snapshot: str) -> None:
    conn.execute(
        "INSERT INTO riido.snapshots (snapshot_id, text_config, state, document_count, "
        "content_digest, k1, b) VALUES (%s, 'english', 'loading', 0, '', 1.2, 0.75)",
        (snapshot,),
    )
    try:
        with pytest.raises(RiidoError) as info:
            Database(conn).rank(snapshot, "read")
        said = info.value.render(cli=True)
        assert _command(said) == ["riido-pg", "snapshots", "drop", snapshot]
        assert "\x1b" not in said and "\n" not in said
    finally:
        conn.execute("DELETE FROM riido.snapshots WHERE snapshot_id = %s", (snapshot,))


def test_missing_embeddings_suggest_loading_exactly_that_id(conn: Any) -> None:
    pytest.importorskip("tokenizers", reason="needs the model extra: pip install '.[model]'")
    snapshot = HOSTILE[0]
    riido_pg.load_snapshot(conn, snapshot, [Document("a", "read config")])
    with pytest.raises(RiidoError) as info:
        Database(conn).rank(
            snapshot, "read config", policy="model_hints_baseline_first", model="wordllama-256"
        )
    said = info.value.render(cli=True)
    assert _command(said) == ["riido-pg", "load", snapshot, "SOURCE", "--model", "wordllama-256"]
    assert "riido-pg" not in str(info.value)  # Python terms for a Python caller


@pytest.mark.parametrize(
    "role", ["x; drop schema riido cascade; --", "probe_Alice", "user", "r\x1b[2J", 'q"uote']
)
def test_no_role_suggests_sql_that_creates_exactly_that_role(conn: Any, role: str) -> None:
    with pytest.raises(RiidoError) as info:
        Database(conn).grant_reader(role)
    said = info.value.render(cli=True)
    assert "\x1b" not in said
    statement = said.split("e.g. ", 1)[1]
    assert statement.startswith("CREATE ROLE ") and statement.endswith(" LOGIN")
    with conn.transaction():  # create it, look, then undo
        conn.execute(sql.SQL(statement))
        row = conn.execute("SELECT count(*) FROM pg_roles WHERE rolname = %s", (role,))
        assert row.fetchone() == (1,)
        raise psycopg.Rollback
    assert conn.execute("SELECT to_regnamespace('riido') IS NOT NULL").fetchone() == (True,)
    row = conn.execute("SELECT count(*) FROM pg_roles WHERE rolname = %s", (role,))
    assert row.fetchone() == (0,)


def test_cli_error_lines_quote_and_show_the_id(cli: Cli, tmp_path: Path) -> None:
    result = cli(["query", "nosnap; rm -rf ~", "x"])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        "error: no snapshot 'nosnap; rm -rf ~'; load one with "
        "`riido-pg load 'nosnap; rm -rf ~' SOURCE`\n"
    )
    result = cli(["query", "nosnap\x1b[2J", "x"])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        "error: snapshot id contains a control character (\\x1b at byte 6); "
        "use printable characters\n"
    )
    missing = tmp_path / "a b; rm -rf ~ #"
    result = cli(["eval", str(missing)])
    assert result.code == 2
    # a path that does not exist is not offered as a snapshot id: the general form is
    assert "--snapshot SNAPSHOT" in result.stderr
    assert f"--snapshot {shell_arg(str(missing))}" not in result.stderr
