"""The README and docs/ stay true: the README's fresh-machine commands are the ones CI
runs, every page is linked and every relative link resolves inside the repository, and
every fenced ``python`` block of README.md and docs/*.md runs as written.

A page's Python blocks run in order in one namespace, on this module's test database:
each ``"postgresql://…"`` literal (the example's DSN) is replaced by the test
database's DSN, and ``RIIDO_PG_DSN`` names it too. A line ``expression  # value`` (or
``print(expression)  # value``) whose comment is a Python literal also checks that the
expression equals it. The scale-out example runs its ``Router`` over a database with no
shards, where every snapshot is the coordinator's (the tests in test_shards.py run the
router against real shards).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support import REPO
from support.database import Database

import riido_pg

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
#: Every page a reader is sent to from the README.
PAGES = [README, *DOCS, REPO / "bench" / "README.md"]

_FENCE = re.compile(r"^( *)```([^\n`]*)\n(.*?)^\1```[ \t]*$", re.S | re.M)
_EXAMPLE_DSN = re.compile(r"""(["'])postgresql://[^"'\s]*\1""")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _fences(page: Path) -> list[tuple[str, int, str]]:
    """``(info string, line of the fence, dedented body)`` of each fenced block."""
    text = page.read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        indent = len(m.group(1))
        body = "".join(line[indent:] for line in m.group(3).splitlines(keepends=True))
        out.append((m.group(2).strip(), text.count("\n", 0, m.start()) + 1, body))
    return out


def python_blocks(page: Path) -> list[tuple[int, str]]:
    return [(line, body) for info, line, body in _fences(page) if info == "python"]


def _commands() -> list[str]:
    readme = README.read_text(encoding="utf-8")
    section = readme.split("## Fresh machine: two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section, flags=re.S)


def test_readme_gives_two_commands_and_ci_runs_the_test_command() -> None:
    example, test_command = _commands()
    assert "riido-pg hints --identifier-hints" in example
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command in ci
    assert example in ci
    assert "unset RIIDO_PG_DSN" in ci


def test_every_python_fence_is_found() -> None:
    """No block escapes the runner: every fence that opens with ```py… is a ```python
    block the runner reads, and the README has at least one."""
    for page in [README, *DOCS]:
        text = page.read_text(encoding="utf-8")
        openings = re.findall(r"^ *```(py\w*)", text, flags=re.M)
        assert set(openings) <= {"python"}, (page.name, openings)
        assert len(openings) == len(python_blocks(page)), page.name
    assert python_blocks(README)


def test_examples_connect_in_autocommit() -> None:
    """riido-pg opens its own transactions: no example hands it a connection that is
    not in autocommit mode (but for a SQLAlchemy engine's ``creator=``, whose
    connections SQLAlchemy's transactions manage)."""
    for page in [README, *DOCS]:
        for line, body in python_blocks(page):
            tree = ast.parse(body)
            managed = {
                id(inner)
                for node in ast.walk(tree)
                if isinstance(node, ast.keyword) and node.arg == "creator"
                for inner in ast.walk(node.value)
            }
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and id(node) not in managed
                    and isinstance(node.func, ast.Attribute)
                    and ast.unparse(node.func) == "psycopg.connect"
                ):
                    autocommit = [k for k in node.keywords if k.arg == "autocommit"]
                    assert autocommit and ast.unparse(autocommit[0].value) == "True", (
                        f"{page.name}:{line + node.lineno}: psycopg.connect without autocommit"
                    )


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    for _, _, body in _fences(page):  # a '# comment' inside a block is no heading
        text = text.replace(body, "")
    return {_slug(m) for m in re.findall(r"^#{1,6} +(.+?) *$", text, flags=re.M)}


def test_links_resolve_inside_the_repository() -> None:
    for page in PAGES:
        for target in _LINK.findall(page.read_text(encoding="utf-8")):
            assert not re.match(r"[a-z]+:", target), f"{page.name}: {target} leaves the repository"
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            assert dest.is_relative_to(REPO), f"{page.name}: {target} leaves the repository"
            assert dest.exists(), f"{page.name}: {target} does not exist"
            if anchor and dest.suffix == ".md":
                assert anchor in _anchors(dest), f"{page.name}: no heading for #{anchor}"


def test_every_page_is_linked_from_the_readme() -> None:
    readme = README.read_text(encoding="utf-8")
    linked = {(REPO / t.partition("#")[0]).resolve() for t in _LINK.findall(readme)}
    for page in PAGES[1:]:
        assert page.resolve() in linked, f"README.md does not link {page.relative_to(REPO)}"


def test_pages_cite_no_issue_tracker() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"\bissues?\s+#?\d+|/issues/\d+|\.\./shared", text, re.I), page


class Checks:
    """The ``__checked`` of a namespace: asserts a value and records where it did."""

    def __init__(self) -> None:
        self.done: set[str] = set()

    def __call__(self, value: Any, expected: Any, where: str) -> Any:
        assert value == expected, f"{where}: {value!r} != {expected!r}"
        self.done.add(where)
        return value


def with_checks(source: str, where: str, first_line: int = 0) -> tuple[str, list[str]]:
    """``source`` with each ``expression  # literal`` line (``print`` of one argument
    included) turned into a check that the expression equals the literal, and the
    places of those checks: ``where`` and the line (``first_line`` + the line in
    ``source``)."""
    comments = {
        tok.start[0]: tok.string[1:].strip()
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    }
    lines = source.splitlines()
    places = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Expr) or node.lineno != node.end_lineno:
            continue
        comment = comments.get(node.lineno)
        try:
            ast.literal_eval(comment or "")
        except (ValueError, SyntaxError):
            continue
        value = node.value
        printed = (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "print"
            and len(value.args) == 1
            and not value.keywords
        )
        inner = value.args[0] if printed and isinstance(value, ast.Call) else value
        expr = ast.get_source_segment(source, inner)
        place = f"{where}:{first_line + node.lineno}"
        places.append(place)
        check = f"__checked({expr}, {comment}, {place!r})"
        line = lines[node.lineno - 1]
        lines[node.lineno - 1] = line[: node.col_offset] + (f"print({check})" if printed else check)
    return "\n".join(lines) + "\n", places


def test_with_checks_checks_literal_comments_only() -> None:
    source = "x = [1]  # [2]\nx  # [1]\nprint(len(x))  # 1\nprint(x)  # the list\n"
    checks = Checks()
    checked, places = with_checks(source, "t")
    exec(checked, {"__checked": checks})
    assert places == ["t:2", "t:3"] and checks.done == set(places)
    with pytest.raises(AssertionError, match=r"t:2: \[1\] != \[2\]"):
        exec(with_checks("x = [1]\nx  # [2]\n", "t")[0], {"__checked": checks})


@pytest.mark.parametrize(
    "page", [p for p in [README, *DOCS] if python_blocks(p)], ids=lambda p: p.name
)
def test_python_blocks_run_as_written(
    page: Path, db: Database, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RIIDO_PG_DSN", db.dsn)
    with psycopg.connect(db.dsn, autocommit=True) as conn:  # each page starts empty
        for snap in riido_pg.list_snapshots(conn):
            riido_pg.drop_snapshot(conn, snap.snapshot_id)
    checks = Checks()
    namespace: dict[str, Any] = {"__name__": "__docs__", "__checked": checks}
    places: list[str] = []
    for line, body in python_blocks(page):
        where = str(page.relative_to(REPO))
        checked, more = with_checks(body, where, line)
        places += more
        # padded so that a traceback's line numbers are the page's
        source = "\n" * line + _EXAMPLE_DSN.sub(lambda _: repr(db.dsn), checked)
        exec(compile(source, where, "exec"), namespace)
    assert capsys.readouterr().out, f"{page.name}: the examples printed nothing"
    assert checks.done == set(places), f"checks never reached: {set(places) - checks.done}"
