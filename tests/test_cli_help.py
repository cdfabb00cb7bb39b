"""The command line's help and usage errors: one placeholder style, one message style,
shared options on every command, the closest real command for a typo. No server: each
run is the CLI in this process (support.cli.run_cli)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from hypothesis import example, given
from hypothesis import strategies as st
from support.cli import run_cli

from riido_pg.cli.main import LOCAL, app


def _commands() -> Iterator[tuple[str, ...]]:
    def walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        subs = getattr(command, "commands", None)
        if subs is None:
            yield path
            return
        for name, sub in subs.items():
            yield from walk(sub, (*path, name))

    yield from walk(typer.main.get_command(app), ())


COMMANDS = sorted(_commands())
#: What a validation library or typer shows that riido-pg does not: type labels,
#: ranges, braces around required arguments.
INTERNALS = re.compile(
    r"<(str|int|float|path|file|directory|text)\b|<\w+\|\w+>|\[x[<>]=|<=x|\{[A-Z_]+\}"
)
#: A server nothing connects to: every usage error is found before a connection.
NOWHERE = "postgresql://nobody@127.0.0.1:1/never-connected"


def test_every_command_is_listed() -> None:
    assert (
        ("query",) in COMMANDS and ("db", "stop") in COMMANDS and ("corpus", "docproxy") in COMMANDS
    )
    assert len(COMMANDS) >= 17


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_has_one_placeholder_style_and_the_shared_options(path: tuple[str, ...]) -> None:
    result = run_cli([*path, "--help"], dsn=None)
    assert (result.code, result.stderr) == (0, ""), result.stderr
    help_text = result.stdout
    assert not INTERNALS.search(help_text), help_text
    assert "--debug" in help_text  # everywhere, extract, corpus docproxy and db stop too
    assert ("--dsn URL" in help_text) == (path not in LOCAL)
    usage = help_text.split("\n", 1)[0]
    # a placeholder that takes several values ends in "..." (eval DIR...)
    assert re.fullmatch(r"Usage: riido-pg [a-z -]+ \[OPTIONS\]( \[?[A-Z_]+(\.\.\.)?\]?)*", usage), (
        usage
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["query", "s", "q", "--format", "yaml"],
            "error: --format must be table or json, not 'yaml' (see `riido-pg query --help`)\n",
        ),
        (
            ["query", "s", "q", "--limit", "0"],
            "error: --limit must be a whole number of at least 1, not '0' "
            "(see `riido-pg query --help`)\n",
        ),
        (
            ["hints", "--limit", "ten"],
            "error: --limit must be a whole number of at least 1, not 'ten' "
            "(see `riido-pg hints --help`)\n",
        ),
        (
            ["load", "s", "x.jsonl", "--jobs", "65"],
            "error: --jobs must be a whole number from 1 to 64, not '65' "
            "(see `riido-pg load --help`)\n",
        ),
        (
            ["snapshots", "list", "--format", "xml"],
            "error: --format must be table or json, not 'xml' "
            "(see `riido-pg snapshots list --help`)\n",
        ),
        (
            ["eval", "--run-depth", "-3", "d"],
            "error: --run-depth must be a whole number of at least 1, not '-3' "
            "(see `riido-pg eval --help`)\n",
        ),
        (["query"], "error: missing argument 'SNAPSHOT' (see `riido-pg query --help`)\n"),
        (
            ["serach", "x"],
            "error: no such command 'serach'; did you mean 'query'? (see `riido-pg --help`)\n",
        ),
        (
            ["qeury"],
            "error: no such command 'qeury'; did you mean 'query'? (see `riido-pg --help`)\n",
        ),
        (["xyzzy"], "error: no such command 'xyzzy' (see `riido-pg --help`)\n"),
        (
            ["snapshots", "lst"],
            "error: no such command 'lst'; did you mean 'list'? "
            "(see `riido-pg snapshots --help`)\n",
        ),
        (
            ["load", "s"],
            "error: nothing to load: give a SOURCE (a file, a BEIR directory or a source "
            "tree) or --from-table TABLE\n",
        ),
        (
            ["load", "s", "x.jsonl", "--from-table", "t"],
            "error: give a SOURCE or --from-table TABLE, not both\n",
        ),
    ],
)
def test_usage_errors_in_one_style(args: list[str], message: str) -> None:
    result = run_cli(args, dsn=NOWHERE)
    assert (result.code, result.stdout, result.stderr) == (2, "", message)
    for internal in ("Value error", "Input should be", "Invalid value for"):
        assert internal not in result.stderr


def test_policy_help_lists_what_can_be_chosen_there() -> None:
    from riido_pg.ranking.policies import evaluated_policies

    query_help = " ".join(run_cli(["query", "--help"], dsn=None).stdout.split())
    listed = query_help.split("--policy POLICY", 1)[1].split("--limit", 1)[0]
    # the two that need their own flag are not offered on --policy alone
    assert "external_hints_baseline_first" not in listed
    assert "model_hints_baseline_first" not in listed
    assert "identifier_bm25_fused" in listed and "bm25" in listed
    eval_help = " ".join(run_cli(["eval", "--help"], dsn=None).stdout.split())
    offered = eval_help.split("--policy POLICY", 1)[1].split("--text-config", 1)[0]
    for name in evaluated_policies(model=True):
        assert name in offered
    assert "external_hints_baseline_first" not in offered


@given(st.text(max_size=12))
@example("²")
@example("٣")
@example(" 7 ")
@example("-0")
def test_whole_numbers_parse_or_say_what_was_expected(text: str) -> None:
    from riido_pg.cli.errors import OptionError
    from riido_pg.cli.options import whole_number

    for low, high in ((1, None), (1, 64)):
        try:
            number = whole_number("--n", low=low, high=high)(text)
        except OptionError as exc:
            assert exc.format_message().startswith("--n must be a whole number ")
            assert exc.format_message().endswith(f", not {text!r}")
            continue
        assert re.fullmatch(r"-?[0-9]+", text.strip())
        assert number == int(text) and number >= low and (high is None or number <= high)


TOP_COMMANDS = """\
Commands:
  hints      Rank the documents given as JSON on stdin; keeps nothing.
  load       Store documents as an immutable snapshot.
  query      Rank a stored snapshot for a question.
  extract    Write each function of a source tree as a JSON line.
  eval       Evaluate policies on a corpus: Recall@1, Recall@10, MRR.
  mcp        Serve search to coding agents over stdio (MCP).
  snapshots  List, drop or move stored snapshots.
  shards     Spread snapshots over other PostgreSQL databases.
  corpus     Build evaluation corpora.
  db         Schema migrations and the embedded server.
"""
GROUPS = sorted({path[:-1] for path in COMMANDS})


def test_the_top_level_help_lists_each_command_in_one_whole_line() -> None:
    """`riido-pg --help` cut descriptions (`Shards: other PostgreSQL databases this one
    (the...`)."""
    result = run_cli(["--help"], dsn=None, env={"COLUMNS": "80"})
    assert result.code == 0 and result.stdout.endswith("\n\n" + TOP_COMMANDS), result.stdout


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: " ".join(g) or "riido-pg")
@pytest.mark.parametrize("columns", ["80", "100"])
def test_every_command_list_has_whole_lines_that_fit(group: tuple[str, ...], columns: str) -> None:
    result = run_cli([*group, "--help"], dsn=None, env={"COLUMNS": columns})
    listed = result.stdout.split("Commands:\n", 1)[1].splitlines()
    assert listed and all(len(line) <= 78 for line in listed), listed
    assert not any(line.endswith("...") for line in listed), listed
    command: Any = typer.main.get_command(app)
    for name in group:
        command = command.commands[name]
    assert [line.split()[0] for line in listed] == list(command.commands)  # one line each
    assert all(re.fullmatch(r"  [a-z-]+ +[A-Z].*\.", line) for line in listed), listed
