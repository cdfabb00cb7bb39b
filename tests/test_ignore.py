"""gitignore matching (``riido_pg.extract.wildmatch``) against git's own answers.

Every comparison asks ``git check-ignore --no-index`` about the same tree on disk (a
throw-away repository, no user or system configuration), so the expected results are
git's, not written by hand. No database is needed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.gitrepos import git_env

from riido_pg.extract.ignore import compile_lines, ignore_file_lines
from riido_pg.extract.stats import ExtractStats
from riido_pg.extract.walk import DiskTree, walk
from riido_pg.extract.wildmatch import InvalidPattern, compile_pattern

CLASSES = "alnum alpha blank cntrl digit graph lower print punct space upper xdigit".split()


def git_ignored(root: Path, paths: list[bytes]) -> set[bytes]:
    """The paths git says are ignored (by the tree's ignore files, nothing else)."""
    env = git_env(root) | {"XDG_CONFIG_HOME": str(root)}
    proc = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "--no-index", "--stdin", "-z"],
        input=b"".join(p + b"\0" for p in paths),
        capture_output=True,
        env=env,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {p for p in proc.stdout.split(b"\0") if p}


def new_repo(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], env=git_env(root), check=True)
    (root / ".git" / "info" / "exclude").unlink(missing_ok=True)


def walked(root: Path) -> list[str]:
    stats = ExtractStats()
    entries = walk(DiskTree(str(root)), excludes=None, include_vendored=True, stats=stats)
    return [e.rel for e in entries]


# Pieces of patterns: every wildmatch feature, and the odd cases (a ** that is not
# between slashes, an escaped one, ]-first and [:-lookalike classes, ranges, spaces).
PIECES = [
    "a", "b", "x", "/", "/", "*", "**", "?", "[ab]", "[!a]", "[^b]", "[a-b]", "[]a]",
    "[[:alpha:]]", "[[:]", "\\*", "\\[", "\\!", "\\ ", " ", "!", "#", ".", "-",
]  # fmt: skip
SEGMENTS = ["a", "b", "ab", "ba", "x", "aa", "bab", "xa", "a b", "[a]", "]", "!a", "#b", "a.x"]

patterns = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join)
paths = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4).map("/".join)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    root_lines=st.lists(patterns, min_size=1, max_size=4),
    sub_lines=st.lists(patterns, max_size=3),
    files=st.lists(paths, min_size=1, max_size=12, unique=True),
)
def test_the_walk_keeps_what_git_keeps(
    root_lines: list[str], sub_lines: list[str], files: list[str]
) -> None:
    """A tree with a root ``.gitignore`` (and one in a subdirectory): the walk lists
    exactly the files git does not ignore, directories pruned as git prunes them."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        new_repo(root)
        made: list[str] = []
        for rel in files:
            target = root / (rel + ".f")
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.touch()
            except OSError:  # a name that is a file elsewhere in the list
                continue
            made.append(rel + ".f")
        (root / ".gitignore").write_text("\n".join(root_lines) + "\n", encoding="utf-8")
        made.append(".gitignore")
        subdirs = sorted({rel.rsplit("/", 1)[0] for rel in made if "/" in rel})
        if sub_lines and subdirs:
            (root / subdirs[0] / ".gitignore").write_text("\n".join(sub_lines) + "\n")
            made.append(subdirs[0] + "/.gitignore")
        # A path starting with ":" is pathspec magic to check-ignore: prefix "./".
        ignored = git_ignored(root, [b"./" + rel.encode() for rel in made])
        kept = sorted(rel for rel in made if b"./" + rel.encode() not in ignored)
        assert walked(root) == kept


@pytest.mark.parametrize(
    "pattern",
    [f"[[:{name}:]]z" for name in CLASSES]
    + ["?z", "*z", "[a-]z", "[]-a]z", "[!]]z", "[\\]]z", "[[:]z", "[[:x]z", "[a-c-e]z"]
    + ["[--/]z", "[+--]z", "[^a]z", "[\\-]z", "[!a-y]z", "\\az", "[\x80-\xff]z"],
)
def test_classes_byte_for_byte(tmp_path: Path, pattern: str) -> None:
    """Every byte a file name may hold (all but NUL and ``/``), against each class:
    the same answer as git's."""
    new_repo(tmp_path)
    (tmp_path / ".gitignore").write_bytes(pattern.encode("utf-8", "surrogateescape") + b"\n")
    names = [bytes([b]) + b"z" for b in range(1, 256) if b != ord("/")]
    expected = {n.removeprefix(b"./") for n in git_ignored(tmp_path, [b"./" + n for n in names])}
    compiled = compile_pattern(pattern)
    assert compiled is not None
    assert {n for n in names if compiled.matches(n, False)} == expected
    assert expected, "each pattern matches some byte"


@pytest.mark.parametrize(
    ("pattern", "matched", "not_matched"),
    [
        ("ab**/c", ["abx/y/c", "ab/c"], ["ab", "c"]),  # git compares the literal head apart
        ("a/**/b", ["a/b", "a/x/y/b"], ["ab", "x/a/b"]),
        ("**/b", ["b", "a/b", "a/x/b"], ["ab"]),
        ("a/**", ["a/b", "a/x/y"], ["a", "b/a/c"]),
        ("a**b", ["ab", "axb"], ["a/b", "ax/yb"]),
        ("a/**\\/b", ["a/x/b"], ["a/b"]),  # an escaped slash: no "zero directories"
        ("/a", ["a"], ["b/a"]),
        ("a/b", ["a/b"], ["x/a/b"]),
        ("*.py", ["x.py", "d/e/x.py"], ["x.pyc"]),
        ("x\\ ", ["x "], ["x"]),
    ],
)
def test_path_patterns_as_git_reads_them(
    tmp_path: Path, pattern: str, matched: list[str], not_matched: list[str]
) -> None:
    new_repo(tmp_path)
    (tmp_path / ".gitignore").write_text(pattern + "\n")
    raw = [p.encode() for p in matched + not_matched]
    assert git_ignored(tmp_path, raw) == set(raw[: len(matched)])  # the table is git's
    spec, bad = compile_lines([pattern])
    assert not bad
    assert [p for p in matched + not_matched if spec.decide(p, False)] == matched


@pytest.mark.parametrize("line", ["!", "a\\", "[ab", "x[[:nope:]]", "[a\\"])
def test_lines_git_never_matches_are_refused(tmp_path: Path, line: str) -> None:
    """Dropping them (and reporting them) changes nothing: git matches nothing with
    them either."""
    new_repo(tmp_path)
    (tmp_path / ".gitignore").write_text(line + "\n*.f\n!" + line + "\n")
    with pytest.raises(InvalidPattern):
        compile_pattern(line)
    raw = [b"a", b"[ab", b"ab", b"a\\", b"x.f"]
    assert git_ignored(tmp_path, raw) == {b"x.f"}


HOSTILE = "a/**/x*/**/x*/**/x*/**/x*/**/x*/**/x*/**/x*/**/x*/zzz\n"
HOSTILE_RUN = """
import sys
from riido_pg.extract import ExtractStats, iter_functions
stats = ExtractStats()
functions = list(iter_functions(sys.argv[1], stats=stats))
print(len(functions), stats.skipped_ignored)
"""


def test_a_backtracking_pattern_does_not_stall_extraction(tmp_path: Path) -> None:
    """The issue's ``.gitignore`` of nested ``**/x*`` over a file 55 directories deep:
    main took minutes (pathspec's regular expression backtracked); the run must end,
    in a subprocess given ample time, with git's answer."""
    (tmp_path / ".gitignore").write_text(HOSTILE, encoding="utf-8")
    deep = tmp_path.joinpath("a", *["x"] * 55)
    deep.mkdir(parents=True)
    (deep / "f.py").write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    (deep / "zzz").write_text("ignored\n")
    proc = subprocess.run(
        [sys.executable, "-c", HOSTILE_RUN, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.stdout.split() == ["2", "1"]
    # git's own matcher backtracks too: ask it about the same tree 12 levels deep.
    new_repo(tmp_path)
    rel = b"a/" + b"x/" * 11
    assert git_ignored(tmp_path, [rel + b"f.py", rel + b"zzz"]) == {rel + b"zzz"}
    spec, _ = compile_lines(HOSTILE.splitlines())
    assert [spec.decide(p.decode(), False) for p in (rel + b"f.py", rel + b"zzz")] == [None, True]


#: An ignore file whose lines ``str.splitlines`` would cut elsewhere than git does: a
#: byte order mark, ``\v``, ``\f``, a bare ``\r``, ``\x1c`` and U+2028 inside lines,
#: ``\r\n`` and ``\r\r\n`` endings, a NUL (git's pattern ends there), a last line with no
#: newline.
ODD_LINES = (
    b"\xef\xbb\xbfbom.f\n"
    b"v\x0bv.f\nf\x0cf.f\nr\rr.f\ns\x1cs.f\nu\xe2\x80\xa8u.f\n"
    b"crlf.f\r\ndouble.f\r\r\nnul.f\0tail\nlast.f\r"
)
ODD_FILES = [
    "bom.f", "\ufeffbom.f", "v", "v.f", "v\vv.f", "f", "f.f", "f\ff.f", "r", "r.f",
    "r\rr.f", "s", "s.f", "s\x1cs.f", "u", "u.f", "u\u2028u.f", "crlf.f", "crlf.f\r",
    "double.f", "double.f\r", "nul.f", "last.f", "kept.f",
]  # fmt: skip


def test_ignore_files_are_split_into_lines_as_git_splits_them(tmp_path: Path) -> None:
    """The walk of a directory and of a revision keep exactly what ``git check-ignore
    --no-index`` keeps (main split with ``str.splitlines``: ``v``, ``f``, ``r`` … were
    ignored and ``bom.f``, ``crlf.f`` were not, nor ``v\\vv.f``)."""
    from support.gitrepos import Repo

    from riido_pg.extract.gittree import open_revision

    repo = Repo(tmp_path / "repo")
    for name in ODD_FILES:
        repo.write(name, b"x")
    repo.write(".gitignore", ODD_LINES)
    made = sorted([*ODD_FILES, ".gitignore"])
    ignored = git_ignored(repo.path, [b"./" + rel.encode() for rel in made])
    kept = [rel for rel in made if b"./" + rel.encode() not in ignored]
    assert "bom.f" not in kept and "v\vv.f" not in kept and "crlf.f" not in kept
    assert "v" in kept and "r.f" in kept and "crlf.f\r" in kept and "double.f\r" not in kept
    assert "nul.f" not in kept
    assert walked(repo.path) == kept
    repo.commit("odd ignore file")
    stats = ExtractStats()
    with open_revision(repo.path, "HEAD") as tree:
        entries = walk(tree, excludes=None, include_vendored=True, stats=stats)
        assert [e.rel for e in entries] == kept


def git_buffer_lines(data: bytes) -> list[bytes]:
    """The lines of ``add_patterns_from_buffer`` (git's dir.c), transliterated: the
    byte order mark skipped, a newline added when the last is missing, each line up to
    a ``\\n`` less one ``\\r`` before it, read as a C string."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data and data[-1:] != b"\n":
        data += b"\n"
    lines, entry = [], 0
    for i, byte in enumerate(data):
        if byte == ord("\n"):
            end = i - (i > entry and data[i - 1] == ord("\r"))
            lines.append(data[entry:end].split(b"\0", 1)[0])
            entry = i + 1
    return lines


@given(st.lists(st.sampled_from([b"a", b"\n", b"\r", b"\0", b"\xef\xbb\xbf", b"\v", b"\xff"])))
def test_ignore_file_lines_are_git_buffer_lines(pieces: list[bytes]) -> None:
    data = b"".join(pieces)
    expected = [line.decode("utf-8", "replace") for line in git_buffer_lines(data)]
    assert ignore_file_lines(data) == expected
