"""What a commit changed on its parent's side, read from ``git diff-tree`` as it
streams (issue 27, item 9): chunks of any size give the same old sides, and a file
over the extraction's size limit is diffed as binary, unread."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.gitrepos import Repo

from riido_pg.corpora.history import HistoryOptions, build, read_history_corpus
from riido_pg.corpora.history.diffs import (
    DIFF_OPTIONS,
    changed_old_sides,
    parse_diff,
    parse_diff_stream,
)
from riido_pg.extract.api import DEFAULT_MAX_FILE_BYTES
from riido_pg.extract.git import git_command, git_env, open_repository

PY = "def {name}(x):\n    return x + {n}\n"


def small_and_huge(path: Path) -> tuple[Repo, str, str]:
    """A repository whose last commit changes one small function, rewrites a file
    just over the size limit and renames, deletes and adds files."""
    r = Repo(path)
    r.write("app/small.py", PY.format(name="keep", n=1) + "\n\n" + PY.format(name="fix", n=2))
    r.write("app/gone.py", PY.format(name="gone", n=3))
    r.write("app/moved.py", "".join(PY.format(name=f"m{i}", n=i) + "\n" for i in range(30)))
    line = PY.format(name="filler", n=0) + "\n"
    huge = line * (DEFAULT_MAX_FILE_BYTES // len(line) + 2)
    r.write("big/huge.py", huge)
    parent = r.commit("Start with a small module and a huge one")
    r.write("app/small.py", PY.format(name="keep", n=1) + "\n\n" + PY.format(name="fix", n=9))
    r.write("big/huge.py", huge.replace("x + 0", "x - 0"))
    r.remove("app/gone.py")
    r.git("mv", "app/moved.py", "app/renamed.py")
    r.write("app/new.py", PY.format(name="new", n=4))
    commit = r.commit("Make fix add nine to its argument")
    return r, parent, commit


def test_a_file_over_the_size_limit_has_no_lines_and_the_others_are_read(
    tmp_path: Path,
) -> None:
    r, parent, commit = small_and_huge(tmp_path / "repo")
    sides = {s.path: s for s in changed_old_sides(open_repository(r.path), parent, commit)}
    assert sorted(sides) == ["app/gone.py", "app/moved.py", "app/small.py", "big/huge.py"]
    assert sides["big/huge.py"].lines == () and sides["big/huge.py"].insertions == ()
    assert sides["app/small.py"].lines == (6,)
    assert sides["app/gone.py"].lines == (1, 2)
    assert sides["app/moved.py"].lines == ()  # a pure rename
    # under a limit above its size, the huge file's every changed line counts
    wide = changed_old_sides(open_repository(r.path), parent, commit, 10 * DEFAULT_MAX_FILE_BYTES)
    assert len({s.path: s for s in wide}["big/huge.py"].lines) > 10_000
    out = tmp_path / "corpus"
    build(r.path, out, HistoryOptions())
    (question,) = read_history_corpus(out).questions
    assert question.targets == ("app/gone.py:gone:1", "app/small.py:fix:5")


@pytest.fixture(scope="module")
def diff(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """``git diff-tree``'s output over a commit that modifies, renames, deletes and
    changes a line longer than a kept line head."""
    r = Repo(tmp_path_factory.mktemp("diff") / "r")
    r.write("a.py", "".join(PY.format(name=f"f{i}", n=i) + "\n" for i in range(40)))
    r.write("b.py", PY.format(name="b", n=1))
    r.write("c.py", PY.format(name="c", n=1) * 3)
    r.write("long.py", "def long():\n    return '" + "x" * 3000 + "'\n")
    parent = r.commit("first")
    r.write("a.py", "".join(PY.format(name=f"f{i}", n=i * (i % 3)) + "\n" for i in range(40)))
    r.git("mv", "c.py", "d.py")
    r.remove("b.py")
    r.write("long.py", "def long():\n    return '" + "y" * 3000 + "'\n")
    commit = r.commit("second")
    return subprocess.run(
        git_command(r.path, *DIFF_OPTIONS, parent, commit),
        env=git_env(),
        capture_output=True,
        check=True,
    ).stdout


def test_the_diff_has_every_kind_of_old_side(diff: bytes) -> None:
    paths = {s.path: s for s in parse_diff(diff)}
    assert sorted(paths) == ["a.py", "b.py", "c.py", "long.py"]
    assert len(paths["a.py"].lines) == 26 and paths["long.py"].lines == (2,)
    assert paths["b.py"].lines == (1, 2) and paths["c.py"].lines == ()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_chunks_of_any_size_give_the_same_old_sides(diff: bytes, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(diff)), max_size=40)))
    chunks = [diff[a:b] for a, b in zip([0, *cuts], [*cuts, len(diff)], strict=True)]
    assert parse_diff_stream(iter(chunks)) == parse_diff(diff)
    assert parse_diff_stream(iter([diff[i : i + 1] for i in range(len(diff))])) == parse_diff(diff)
