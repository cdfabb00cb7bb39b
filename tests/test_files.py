"""Writing the files a user names (``riido_pg.files``, README "Command line"): a
device or FIFO is written to, a symlink's target is written, a regular file is
replaced whole only on success, and nothing else is touched."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from riido_pg.errors import OutputError
from riido_pg.files import check_output, output_dir, output_file, write_output


def test_a_new_file_gets_the_content_and_the_umask_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    old = os.umask(0o027)
    try:
        write_output(target, "hello\n")
    finally:
        os.umask(old)
    assert target.read_text() == "hello\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    target.chmod(0o604)
    write_output(target, b"new")
    assert (target.read_bytes(), stat.S_IMODE(target.stat().st_mode)) == (b"new", 0o604)


def test_an_error_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("keep\n")
    with pytest.raises(RuntimeError), output_file(target) as fh:
        fh.write(b"half")
        raise RuntimeError("boom")
    assert target.read_text() == "keep\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_a_symlink_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = real_dir / "data.jsonl"
    real.write_text("old")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    write_output(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"
    assert sorted(p.name for p in real_dir.iterdir()) == ["data.jsonl"]


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "made.jsonl")
    write_output(link, "x")
    assert link.is_symlink() and (tmp_path / "made.jsonl").read_text() == "x"


def test_links_planted_at_predictable_temporary_names_are_never_followed(
    tmp_path: Path,
) -> None:
    """The temporary file is made by mkstemp (O_EXCL, a random name): links planted
    where the old code put its temporary file (``.NAME.PID.tmp``) lead nowhere."""
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    shared = tmp_path / "shared"
    shared.mkdir()
    for pid in range(os.getpid(), os.getpid() + 50):
        (shared / f".out.jsonl.{pid}.tmp").symlink_to(outside)
    write_output(shared / "out.jsonl", "result")
    assert outside.read_text() == "precious"
    assert (shared / "out.jsonl").read_text() == "result"


def test_a_fifo_is_written_as_a_stream(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_output(fifo, "through the pipe\n")
    reader.join(10)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_dev_null_is_written_not_replaced() -> None:
    before = os.stat("/dev/null")
    write_output("/dev/null", "discarded")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_a_character_device_made_with_mknod_stays_a_device(tmp_path: Path) -> None:
    null = os.stat("/dev/null")
    device = tmp_path / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, null.st_rdev)
    write_output(device, "discarded")
    assert stat.S_ISCHR(device.stat().st_mode)
    assert device.stat().st_rdev == null.st_rdev
    assert [p.name for p in tmp_path.iterdir()] == ["null"]


def test_dash_is_stdout(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    write_output("-", "to stdout\n")
    assert capfdbinary.readouterr().out == b"to stdout\n"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing/dir/x.jsonl", "no such directory"),
        ("file.txt/x.jsonl", "not a directory"),
        (".", "is a directory"),
    ],
)
def test_paths_that_cannot_be_written_are_refused_before_any_work(
    tmp_path: Path, name: str, message: str
) -> None:
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(OutputError, match=message):
        check_output(tmp_path / name)
    with pytest.raises(OutputError, match=message), output_file(tmp_path / name):
        pytest.fail("the block must not run")
    assert not (tmp_path / "missing").exists()


def test_output_dir_creates_one_level_only(tmp_path: Path) -> None:
    assert output_dir(tmp_path / "runs").is_dir()
    with pytest.raises(OutputError, match="no such directory"):
        output_dir(tmp_path / "a" / "b")
    assert not (tmp_path / "a").exists()
