"""A command's start-up: what it imports, and the values it coerces without pydantic.

typer 0.2x coerces every parameter's value through a pydantic ``TypeAdapter`` it builds
on first use, and importing pydantic for it was about a fifth of a command's fixed cost.
``riido_pg.cli.command`` coerces the common values itself (none given, a string, a
plain path, a ``parser=``) and leaves every other value to typer: these tests hold the
two to the same result, and the commands to not importing what they do not run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import typer.main

from riido_pg.cli import command
from riido_pg.cli.main import app

ROOT = Path(__file__).resolve().parent.parent

coercion = pytest.importorskip("typer._coercion", reason="typer before 0.2x: click's types")


def _parameters() -> list[tuple[str, Any, Any]]:
    """Every parameter of every command and group, ``--help`` included, with a context
    of its command: (path, parameter, context)."""
    found: list[tuple[str, Any, Any]] = []

    def walk(cmd: Any, path: str) -> None:
        ctx = cmd.make_context(path or "riido-pg", [], resilient_parsing=True)
        params = [*cmd.params, cmd.get_help_option(ctx)]
        found.extend((f"{path} {p.name}", p, ctx) for p in params if p is not None)
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            walk(sub, f"{path} {name}".strip())

    walk(typer.main.get_command(app), "")
    return found


PARAMETERS = _parameters()


def _values(tmp: Path) -> list[Any]:
    unreadable = tmp / "unreadable"
    unreadable.write_text("x")
    unreadable.chmod(0)
    return [
        None,
        "",
        "x",
        "5",
        "0",
        "-3",
        " 7 ",
        "1" * 120,
        "table",
        "json",
        "bm25",
        "a\x00b",
        str(ROOT / "README.md"),
        str(ROOT / "docs"),
        str(tmp / "not-there"),
        str(unreadable),
        "-",
        True,
        False,
        3,
        (),
        ("a",),
        ["a", "b"],
        ("x", str(ROOT / "README.md"), str(tmp / "not-there")),
        ("5", "x"),
        ("5", None),
        (str(unreadable),),
        "a",
    ]


def _outcome(coerce: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        value = coerce(value, param, ctx)
    except Exception as exc:
        return "raised", (type(exc).__name__, str(exc))
    shown = value.value if isinstance(value, Enum) else value
    return "returned", (type(value).__name__, repr(shown))


def test_every_parameter_of_every_command_is_coerced_as_typer_does(tmp_path: Path) -> None:
    """For each parameter and each probe value (none, strings, numbers, paths that
    exist, do not, or cannot be read, a NUL, tuples, lists): the same value of the same
    type, or the same error, as typer's own pydantic coercion."""
    assert len(PARAMETERS) > 100
    values = _values(tmp_path)
    direct_seen = 0
    for where, param, ctx in PARAMETERS:
        assert isinstance(param.get_runtime_param(), command._Direct), where
        typer_own = coercion.build_runtime_param(param.type_descriptor)
        for value in [*values, param.default]:
            if command._direct(param, value) is not command._TYPER:
                direct_seen += 1
            ours = _outcome(param.get_runtime_param().coerce, value, param, ctx)
            theirs = _outcome(typer_own.coerce, value, param, ctx)
            assert ours == theirs, (where, value)
    assert direct_seen > len(PARAMETERS) * 5  # most values never reach pydantic


def _imported(*argv: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run the command line with ``argv`` in a fresh interpreter; which of the heavy
    packages it imported, its exit code and its stderr."""
    code = (
        "import json, sys\n"
        "from riido_pg.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "    code = 0\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "heavy = ('pydantic', 'numpy', 'scipy', 'sqlalchemy', 'alembic', 'rich',\n"
        "         'tree_sitter', 'riido_pg.extract.api', 'riido_pg.evaluation')\n"
        "print(json.dumps({'code': code,\n"
        "                  'imported': sorted(m for m in heavy if m in sys.modules)}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["stderr"] = proc.stderr
    return result


def test_a_load_imports_none_of_what_it_does_not_run(tmp_path: Path) -> None:
    """``load`` of a file that is not there: the arguments parsed (a snapshot id, a
    path, a number through its parser, a string), the error said, exit 2, and
    neither pydantic nor numpy, scipy, SQLAlchemy, rich, tree-sitter, the extractor
    or the evaluation imported."""
    missing = tmp_path / "missing.jsonl"
    got = _imported("load", "snap", str(missing), "--jobs", "2", "--base", "snap@0")
    assert got["code"] == 2
    assert got["stderr"] == f"error: {missing}: no such file or directory\n"
    assert got["imported"] == []


def test_an_eval_imports_no_pydantic(tmp_path: Path) -> None:
    """``eval`` of a directory that is no corpus: its list of paths and of policies,
    an output file that exists and a run directory that does not, coerced without
    pydantic, and the error said as before."""
    (tmp_path / "out.json").write_text("{}")
    got = _imported(
        "eval",
        str(tmp_path),
        "--policy",
        "bm25",
        "--policy",
        "identifier_bm25",
        "--output",
        str(tmp_path / "out.json"),
        "--run-dir",
        str(tmp_path / "runs"),
    )
    assert got["code"] == 2
    assert got["stderr"].startswith(f"error: {tmp_path}")
    assert "pydantic" not in got["imported"]


def test_a_usage_error_is_worded_as_before() -> None:
    """A bad ``--limit`` is left to typer (its parser's error, reported typer's way):
    the same one error line and exit 2. ``--help`` prints the help without pydantic."""
    got = _imported("query", "snap", "read", "--limit", "x")
    assert got["code"] == 2
    assert got["stderr"] == (
        "error: --limit must be a whole number of at least 1, not 'x' "
        "(see `riido-pg query --help`)\n"
    )
    helped = _imported("load", "--help")
    assert helped["code"] == 0
    assert "pydantic" not in helped["imported"]
