"""The README's fresh-machine commands are the ones CI runs."""

from __future__ import annotations

import re

from support import REPO


def _commands() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Fresh machine: two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section, flags=re.S)


def test_readme_gives_two_commands_and_ci_runs_the_test_command() -> None:
    main_job, test_command = _commands()
    assert "riido-pg hints --identifier-hints" in main_job
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command in ci
    assert main_job in ci
    assert "unset RIIDO_PG_DSN" in ci
