"""The README and docs/ stay true: the README's fresh-machine commands are the ones CI
runs, every page is linked and every relative link resolves inside the repository, and
every fenced ``python`` block of README.md and docs/*.md runs as pasted.

Each Python block runs alone, in a fresh interpreter (``python FILE``), as on a machine
with no server: no ``RIIDO_PG_DSN`` (whatever ``RIIDO_PG_TEST_DSN`` says), so
``riido_pg.db.connect()`` and ``Database.open()`` start the embedded default. The blocks
of one run share one embedded home (one server start), emptied of snapshots before each
block, so that no block leans on what another stored. A block meant for another server
would read it from ``RIIDO_PG_DSN``, as ``riido_pg.db.connect()`` does: set there, it
is the server every block of a page uses. A line ``expression  # value`` (or
``print(expression)  # value``) whose comment is a Python literal also checks that the
expression equals it. The scale-out example runs its ``Router`` over a server with no
shards, where every snapshot is the coordinator's (the tests in test_shards.py run the
router against real shards).
"""

from __future__ import annotations

import ast
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support import REPO

import riido_pg

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
#: Every page a reader is sent to from the README.
PAGES = [README, *DOCS, REPO / "bench" / "README.md"]

_FENCE = re.compile(r"^( *)```([^\n`]*)\n(.*?)^\1```[ \t]*$", re.S | re.M)
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
    # the suite passes both ways: CI runs it on the embedded default too
    assert "\nenv -u RIIDO_PG_TEST_DSN .venv/bin/pytest\n" in ci


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


#: Words a newcomer may not know, and what the README's paragraph of their first use
#: must hold: the words that say what it is, and a link to where it is told in full.
TERMS = {
    "MRR": ("mean reciprocal rank", "](docs/evaluation.md#metrics)"),
    "BEIR": ("information-retrieval benchmarks", "](docs/evaluation.md#evaluation-input)"),
    "RRF": ("reciprocal rank fusion", "](docs/evaluation.md#rrfs-k)"),
    "hot standbys": ("streaming replication", "](docs/scale-out.md#hot-standbys)"),
    "CoSQA": ("real web queries", "](docs/evaluation.md#results)"),
    "docproxy": ("docstrings", "](docs/evaluation.md#the-documentation-proxy-corpus)"),
    "bm25s": ("BM25 library", ""),
}


@pytest.mark.parametrize("term", TERMS)
def test_the_readme_says_what_a_term_is_where_it_first_uses_it(term: str) -> None:
    text = README.read_text(encoding="utf-8")
    for _, _, body in _fences(README):
        text = text.replace(body, "")
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    first = next(p for p in paragraphs if re.search(rf"(?<![\w`]){re.escape(term)}(?!\w)", p))
    for needed in TERMS[term]:
        assert needed in first, f"{term}: {needed!r} is not where it is first used:\n{first}"


class Checks:
    """The ``__checked`` of a namespace: asserts a value and records where it did."""

    def __init__(self) -> None:
        self.done: set[str] = set()

    def __call__(self, value: Any, expected: Any, where: str) -> Any:
        assert value == expected, f"{where}: {value!r} != {expected!r}"
        self.done.add(where)
        return value


#: What a block's interpreter runs first: the ``__checked`` of :func:`with_checks`, which
#: reports each check that held on stderr (after :data:`_CHECKED`).
_CHECKED = "checked-by-test-readme: "
_PRELUDE = f"""\
def __checked(value, expected, where):
    assert value == expected, f"{{where}}: {{value!r}} != {{expected!r}}"
    import sys
    print({_CHECKED!r} + where, file=sys.stderr, flush=True)
    return value
"""


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


BLOCKS = [(page, line, body) for page in [README, *DOCS] for line, body in python_blocks(page)]


@pytest.fixture(scope="module")
def embedded_home() -> Iterator[tuple[dict[str, str], str]]:
    """The environment of a block's interpreter (no ``RIIDO_PG_*`` but a scratch
    ``RIIDO_PG_HOME``, shared by this module's blocks) and its embedded server's DSN;
    the server is stopped and the home removed afterwards."""
    # not under pytest's tmp dir (conftest.py says why)
    home = Path(tempfile.mkdtemp(prefix="riido-pg-docs-")) / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIIDO_PG_")}
    env["RIIDO_PG_HOME"] = str(home)
    started = _python(
        "import riido_pg\nriido_pg.db.connect().close()\nprint(riido_pg.db.resolve_dsn(None)[0])",
        env,
    )
    assert started.returncode == 0, started.stderr
    try:
        yield env, started.stdout.strip()
    finally:
        stopped = subprocess.run(
            [sys.executable, "-m", "riido_pg", "db", "stop"], env=env, capture_output=True
        )
        shutil.rmtree(home.parent, ignore_errors=True)
        assert stopped.returncode == 0, stopped.stderr


def _python(source: str, env: dict[str, str], path: Path | None = None) -> Any:
    """``python -c SOURCE`` (or ``python PATH`` holding it), in a fresh interpreter."""
    if path is None:
        args = [sys.executable, "-c", source]
    else:
        path.write_text(source, encoding="utf-8")
        args = [sys.executable, str(path)]
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)


def test_every_block_is_run() -> None:
    assert {page for page, _, _ in BLOCKS} == {
        README,
        REPO / "docs" / "specification.md",
        REPO / "docs" / "scale-out.md",
    }
    assert len(BLOCKS) == sum(len(python_blocks(p)) for p in [README, *DOCS])


@pytest.mark.parametrize(
    ("page", "line", "body"), BLOCKS, ids=[f"{p.name}:{line}" for p, line, _ in BLOCKS]
)
def test_python_block_runs_as_pasted(
    page: Path,
    line: int,
    body: str,
    embedded_home: tuple[dict[str, str], str],
    tmp_path: Path,
) -> None:
    env, dsn = embedded_home
    with psycopg.connect(dsn, autocommit=True) as conn:  # as on a fresh machine
        for snap in riido_pg.list_snapshots(conn):
            riido_pg.drop_snapshot(conn, snap.snapshot_id)
    where = str(page.relative_to(REPO))
    checked, places = with_checks(body, where, line)
    # padded so that a traceback's line numbers are the page's
    source = _PRELUDE + "\n" * (line - _PRELUDE.count("\n")) + checked
    ran = _python(source, env, tmp_path / f"{page.stem}_{line}.py")
    assert ran.returncode == 0, f"{where}:{line}:\n{ran.stderr}"
    done = {x.removeprefix(_CHECKED) for x in ran.stderr.splitlines() if x.startswith(_CHECKED)}
    assert done == set(places), f"checks never reached: {set(places) - done}"
    assert ran.stdout or places, f"{where}:{line}: the block shows nothing"
