"""The embedded default (README): no DSN, a fresh RIIDO_PG_HOME, the main-job example
works, the server listens on a Unix socket only, and `db stop` stops it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import EXAMPLE
from support.cli import run_cli_process as run_cli  # the embedded server: real processes


@pytest.mark.slow
def test_example_on_a_fresh_embedded_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"RIIDO_PG_HOME": str(home)}
    try:
        first = run_cli(["hints", "--identifier-hints"], dsn=None, input=EXAMPLE, env=env)
        assert first.code == 0, first.stderr
        assert [c["id"] for c in json.loads(first.stdout)["candidates"]] == ["a", "c", "b"]
        plain = run_cli(["hints"], dsn=None, input=EXAMPLE, env=env)
        assert [c["id"] for c in json.loads(plain.stdout)["candidates"]] == ["a", "b", "c"]
        pgdata = home / "pgdata"
        assert (pgdata / "PG_VERSION").is_file()
        conf = (pgdata / "postmaster.pid").read_text().splitlines()
        # line 6 of postmaster.pid: listen addresses; empty means no TCP socket
        assert conf[5].strip() == ""
        assert run_cli(["db", "current"], dsn=None, env=env).stdout.strip() != "base"
    finally:
        stopped = run_cli(["db", "stop"], dsn=None, env=env)
    assert stopped.code == 0
    assert not (home / "pgdata" / "postmaster.pid").exists()


def test_unusable_home_is_an_environment_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = run_cli(
        ["hints"], dsn=None, input=EXAMPLE, env={"RIIDO_PG_HOME": str(blocker / "home")}
    )
    assert result.code == 1
    assert result.stderr.startswith("error: cannot create riido-pg home ")
    assert "set RIIDO_PG_HOME" in result.stderr
    assert os.path.exists(blocker)
