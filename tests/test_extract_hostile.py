"""Hostile trees: every bad entry is skipped and counted, none raises.

Built in tmp_path. Tests run as root in CI, where ``chmod 000`` stops nothing:
permission failures are then simulated by making ``os.open``/``os.scandir``
raise PermissionError for one path, and the real ``chmod`` tests are skipped.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from riido_pg.extract import ExtractStats, Function, iter_functions

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def run(root: Path, **kwargs: Any) -> tuple[list[Function], ExtractStats]:
    stats = ExtractStats()
    functions = list(iter_functions(root, stats=stats, **kwargs))
    assert_counts_add_up(stats)
    return functions, stats


def assert_counts_add_up(stats: ExtractStats) -> None:
    assert stats.files_seen == (
        stats.files_extracted
        + stats.skipped_unsupported
        + stats.skipped_binary
        + stats.skipped_too_large
        + stats.skipped_unreadable
        + stats.skipped_undecodable
    )


def good(root: Path) -> None:
    (root / "good.py").write_text("def ok(): pass\n", encoding="utf-8")


def names(functions: list[Function]) -> list[str]:
    return [f.metadata["qualname"] for f in functions]


def test_symlink_loops_are_not_followed(tmp_path: Path) -> None:
    good(tmp_path)
    (tmp_path / "self").symlink_to(".")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to("..", target_is_directory=True)
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    (tmp_path / "alias.py").symlink_to("good.py")
    functions, stats = run(tmp_path)
    assert names(functions) == ["ok"]
    assert stats.skipped_symlinks == 5
    assert stats.problems == []


def test_symlinks_out_of_the_root_are_not_followed(tmp_path: Path) -> None:
    good(tmp_path)
    (tmp_path / "etc").symlink_to("/etc", target_is_directory=True)
    (tmp_path / "passwd.py").symlink_to("/etc/passwd")
    (tmp_path / "dangling.py").symlink_to("/nonexistent/x.py")
    functions, stats = run(tmp_path)
    assert names(functions) == ["ok"]
    assert stats.skipped_symlinks == 3


def test_root_may_be_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    good(tmp_path / "real")
    (tmp_path / "link").symlink_to("real", target_is_directory=True)
    functions, _ = run(tmp_path / "link")
    assert [f.id for f in functions] == ["good.py:ok:1"]


def test_huge_sparse_file_is_too_large(tmp_path: Path) -> None:
    good(tmp_path)
    with (tmp_path / "huge.py").open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    functions, stats = run(tmp_path)
    assert names(functions) == ["ok"]
    assert stats.skipped_too_large == 1
    assert stats.problems == [("huge.py", "52428800 bytes; the limit is 1000000")]


def test_size_limit_is_a_parameter(tmp_path: Path) -> None:
    good(tmp_path)
    (tmp_path / "long.py").write_text("def f():\n" + "    x = 1\n" * 20, encoding="utf-8")
    functions, stats = run(tmp_path, max_file_bytes=100)
    assert names(functions) == ["ok"]
    assert stats.skipped_too_large == 1


def test_binary_files(tmp_path: Path) -> None:
    good(tmp_path)
    (tmp_path / "early.py").write_bytes(b"\x00\x01\x02def f(): pass\n")
    (tmp_path / "late.py").write_bytes(b"def g(): pass\n" + b"#" * 20_000 + b"\x00")
    functions, stats = run(tmp_path)
    assert names(functions) == ["ok"]
    assert stats.skipped_binary == 2
    assert ("late.py", "contains a nul byte") in stats.problems


def test_invalid_utf8_content_is_skipped_and_reported(tmp_path: Path) -> None:
    good(tmp_path)
    (tmp_path / "latin1.py").write_bytes(b"# caf\xe9\ndef f(): pass\n")
    functions, stats = run(tmp_path)
    assert names(functions) == ["ok"]
    assert stats.skipped_undecodable == 1
    assert stats.problems == [("latin1.py", "invalid utf-8 at byte 5")]


def test_invalid_utf8_file_name(tmp_path: Path) -> None:
    good(tmp_path)
    fd = os.open(os.fsencode(tmp_path) + b"/bad\xffname.py", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"def f(): pass\n")
    os.close(fd)
    functions, stats = run(tmp_path)
    assert names(functions) == ["ok"]
    assert stats.skipped_undecodable == 1
    assert stats.problems == [("bad\ufffdname.py", "file name is not valid utf-8")]


def test_file_vanishing_mid_walk(tmp_path: Path) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(f"def {name[0]}(): pass\n", encoding="utf-8")

    def on_file(rel: str) -> None:
        if rel == "a.py":
            (tmp_path / "b.py").unlink()  # a later file
        if rel == "c.py":
            (tmp_path / "c.py").unlink()  # the file itself, just before it is read

    functions, stats = run(tmp_path, on_file=on_file)
    assert names(functions) == ["a"]
    assert stats.skipped_unreadable == 2
    assert stats.problems == [("b.py", "vanished"), ("c.py", "vanished")]


def test_fifo_and_directory_named_like_a_file(tmp_path: Path) -> None:
    good(tmp_path)
    os.mkfifo(tmp_path / "pipe.py")  # would block a plain open()
    (tmp_path / "dir.py").mkdir()
    (tmp_path / "dir.py" / "inner.py").write_text("def inner(): pass\n", encoding="utf-8")
    functions, stats = run(tmp_path)
    assert names(functions) == ["inner", "ok"]
    assert stats.skipped_unreadable == 1
    assert stats.problems == [("pipe.py", "not a regular file")]


def _raise_for(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def fake(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fsdecode(path).endswith(name):
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return real(path, *args, **kwargs)

    return fake


def test_permission_denied_simulated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good(tmp_path)
    (tmp_path / "locked.py").write_text("def locked(): pass\n", encoding="utf-8")
    (tmp_path / "closed").mkdir()
    (tmp_path / "closed" / "x.py").write_text("def hidden(): pass\n", encoding="utf-8")
    (tmp_path / "closed" / ".gitignore").write_text("y.py\n", encoding="utf-8")
    monkeypatch.setattr(os, "open", _raise_for("locked.py", os.open))
    monkeypatch.setattr(os, "scandir", _raise_for("closed", os.scandir))
    functions, stats = run(tmp_path)
    assert names(functions) == ["ok"]
    assert stats.skipped_unreadable == 1
    assert stats.dirs_unreadable == 1
    assert stats.problems == [
        ("closed", "directory not read: permission denied"),
        ("locked.py", "permission denied"),
    ]


@pytest.mark.skipif(IS_ROOT, reason="root reads files whatever their mode")
def test_permission_denied_for_real(tmp_path: Path) -> None:
    good(tmp_path)
    locked = tmp_path / "locked.py"
    locked.write_text("def locked(): pass\n", encoding="utf-8")
    closed = tmp_path / "closed"
    closed.mkdir()
    locked.chmod(0)
    closed.chmod(0)
    try:
        functions, stats = run(tmp_path)
    finally:
        closed.chmod(0o755)
        locked.chmod(0o644)
    assert names(functions) == ["ok"]
    assert (stats.skipped_unreadable, stats.dirs_unreadable) == (1, 1)


def test_unreadable_root_is_an_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from riido_pg.errors import InvalidInput

    monkeypatch.setattr(os, "scandir", _raise_for(tmp_path.name, os.scandir))
    with pytest.raises(InvalidInput, match=r"cannot list .*: permission denied"):
        list(iter_functions(tmp_path))


def test_everything_at_once(tmp_path: Path) -> None:
    """All of the above in one tree, twice: same output, every id unique."""
    good(tmp_path)
    (tmp_path / "loop").symlink_to(".")
    (tmp_path / "etc").symlink_to("/etc")
    with (tmp_path / "huge.js").open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    (tmp_path / "bad.go").write_bytes(b"package x\n// \xff\nfunc F() {}\n")
    (tmp_path / "bin.c").write_bytes(b"int main() {}\x00")
    os.mkfifo(tmp_path / "pipe.rs")
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    (tmp_path / "dup.ts").write_text("function f() {}; function f() {}\n", encoding="utf-8")
    first, stats = run(tmp_path)
    second, _ = run(tmp_path)
    assert [f.to_json_line() for f in first] == [f.to_json_line() for f in second]
    assert len({f.id for f in first}) == len(first) == 3
    assert stats.describe() == (
        "3 functions in the 2 files read; skipped: 1 file in another language, "
        "1 binary file, 1 file too large, 1 unreadable file, 1 file not utf-8, 2 symlinks"
    )
