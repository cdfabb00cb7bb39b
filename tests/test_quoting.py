"""riido_pg.quoting: a suggested command means exactly the user's input, and a name
printed for a person never drives the terminal."""

from __future__ import annotations

import shutil
import subprocess
import unicodedata
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from psycopg import sql

from riido_pg.quoting import shell_arg, shell_command, sql_ident, visible

#: Text a command line can carry: no NUL, no lone surrogate.
ARG = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=30,
)
HOSTILE = [
    "a b; rm -rf ~ #",
    "$(id)",
    "`id`",
    "x'; drop schema riido cascade; --",
    'say "hi"',
    "back\\slash",
    "nosnap\x1b[2J",
    "x\x1b]0;PWNED\x07\x1b[31mred\x1b[0m.py",
    "line\nbreak",
    "c1\x9bcontrol",
    "rtl\u202eevil",
    "-starts-with-dash",
    "",
    "probe_Alice",
]


def _hidden(c: str) -> bool:
    return unicodedata.category(c) in ("Cc", "Zl", "Zp") or c in "\u202e\u202a\u2066\u200f"


@given(ARG)
@example("x\x1b]0;PWNED\x07\x1b[31mred\x1b[0m.py")
def test_visible_shows_every_control_character_and_nothing_else_changes(text: str) -> None:
    shown = visible(text)
    assert not any(_hidden(c) for c in shown)
    if not any(_hidden(c) for c in text):
        assert shown == text
    assert "\n" not in shown and "\x1b" not in shown


def test_visible_examples() -> None:
    assert visible("x\x1b]0;T\x07.py") == "x\\x1b]0;T\\x07.py"
    assert visible("a\nb\tc\r") == "a\\nb\\tc\\r"
    assert visible("c1\x9b rtl\u202e") == "c1\\x9b rtl\\u202e"
    assert visible("back\\slash 日本 🦀") == "back\\slash 日本 🦀"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash to run the quoted words")
@settings(max_examples=150, deadline=None)
@given(st.lists(ARG, min_size=1, max_size=3))
def test_shell_arg_is_the_same_word_to_bash(words: list[str]) -> None:
    for hostile in HOSTILE:
        words.append(hostile)
    line = "printf '%s\\0' " + " ".join(shell_arg(w) for w in words)
    out = subprocess.run(["bash", "-c", line], capture_output=True, check=True).stdout
    assert out.decode("utf-8").split("\0")[:-1] == words
    for w in words:
        assert not any(_hidden(c) for c in shell_arg(w))


def test_shell_command_keeps_placeholders_and_quotes_the_rest() -> None:
    assert shell_command("riido-pg", "load", "a b; rm -rf ~ #", "SOURCE") == (
        "riido-pg load 'a b; rm -rf ~ #' SOURCE"
    )
    assert shell_command("riido-pg", "load", "$(id)", "SOURCE") == "riido-pg load '$(id)' SOURCE"
    assert shell_command("riido-pg", "load", "nosnap\x1b[2J", "SOURCE") == (
        "riido-pg load $'nosnap\\x1b[2J' SOURCE"
    )
    assert shell_command("riido-pg", "snapshots", "drop", "plain-id") == (
        "riido-pg snapshots drop plain-id"
    )


def test_sql_ident_examples() -> None:
    assert sql_ident("reader") == "reader"
    assert sql_ident("probe_Alice") == '"probe_Alice"'
    assert sql_ident("x; drop schema riido cascade; --") == '"x; drop schema riido cascade; --"'
    assert sql_ident("user") == '"user"'
    assert sql_ident('a"b') == '"a""b"'
    assert sql_ident("x\x1b[2J\\") == 'U&"x\\001B[2J\\005C"'


IDENT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=15,
).filter(lambda s: len(s.encode()) <= 63)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(IDENT)
@example("probe_Alice")
@example("select")
@example("x; drop schema riido cascade; --")
@example("nosnap\x1b[2J\\")
@example("\U0001f980\x9b")
def test_sql_ident_names_exactly_the_input(conn: psycopg.Connection[Any], name: str) -> None:
    quoted = sql_ident(name)
    cur = conn.execute(sql.SQL("SELECT 1 AS {}").format(sql.SQL(quoted)))
    assert cur.description is not None and cur.description[0].name == name
    assert not any(_hidden(c) for c in quoted)
    # never bare where PostgreSQL's own quote_ident would quote
    row = conn.execute("SELECT quote_ident(%s)", (name,)).fetchone()
    assert row is not None
    if quoted == name:
        assert row[0] == name
