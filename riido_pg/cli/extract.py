"""``riido-pg extract DIR``: a source tree as JSON Lines, one function each."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from riido_pg import InvalidInput
from riido_pg.cli.output import note

if TYPE_CHECKING:
    from riido_pg.api import ExtractStats

__all__ = [
    "ExcludeOpt",
    "IncludeVendoredOpt",
    "LangOpt",
    "NoTestsOpt",
    "RevOpt",
    "extract",
    "tree_notes",
]

#: Functions with words too long to index named in the note (``--debug``: all).
SHOWN_UNINDEXABLE = 3

LangOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--lang",
        metavar="LANG",
        help="Only this language; repeat for several (default: every supported one).",
        show_default=False,
    ),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        metavar="GLOB",
        help="Leave out paths matching this gitignore-style pattern; repeatable.",
        show_default=False,
    ),
]
RevOpt = Annotated[
    str | None,
    typer.Option(
        "--rev",
        metavar="REV",
        help="Read the tree of this git revision of the repository at DIR, without "
        "checking it out (a branch, tag or commit).",
        show_default=False,
    ),
]
IncludeVendoredOpt = Annotated[
    bool,
    typer.Option(
        "--include-vendored",
        help="Also read node_modules, vendor, third_party, dist, build, minified files.",
    ),
]
NoTestsOpt = Annotated[
    bool,
    typer.Option(
        "--no-tests",
        help="Leave out test code: directories named test, tests, testing, testdata, "
        "__tests__ or spec, files such as test_*.py, *_test.go, *.test.ts, *.spec.js, "
        "FooTest.java, and Rust tests in other files (mod tests, #[test]).",
    ),
]


def tree_notes(stats: ExtractStats, *, debug: bool = False) -> None:
    """The ``note:`` lines after reading a source tree (``extract``, ``load DIR``): what
    was found, and how many functions came from test paths and how to leave them out;
    then which functions had words too long to index (a few of them); with ``debug``,
    every file or function left out, with its reason."""
    line = stats.describe()
    if stats.test_functions or stats.inline_tests:
        parts = [f"{stats.test_functions} of them in test files"] if stats.test_functions else []
        if stats.inline_tests:
            inline = f"{stats.inline_tests} {'test' if stats.inline_tests == 1 else 'tests'}"
            parts.append(f"{inline} {'in' if parts else 'of them in'} other files")
        line += f"; {' and '.join(parts)} (--no-tests leaves them out)"
    note(line)
    ids = stats.unindexable_ids
    if ids:
        shown = ", ".join(ids[:SHOWN_UNINDEXABLE])
        if len(ids) > SHOWN_UNINDEXABLE:
            shown += f" and {len(ids) - SHOWN_UNINDEXABLE} more"
        hint = "" if debug else " (--debug lists them all)"
        note(f"left out, with words too long to index: {shown}{hint}")
    if debug:
        for path, reason in stats.problems:
            note(f"{path}: {reason}")


def extract(
    ctx: typer.Context,
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="The source tree to read (only this tree).")
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            metavar="FILE",
            help="Write the JSON Lines to FILE instead of stdout ('-': stdout); a regular "
            "file is replaced whole when done, a device or FIFO written to, a link's "
            "target written.",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    lang: LangOpt = None,
    exclude: ExcludeOpt = None,
    include_vendored: IncludeVendoredOpt = False,
    no_tests: NoTestsOpt = False,
    rev: RevOpt = None,
) -> None:
    """Write one JSON line {"id","text","metadata"} per function or method in DIR."""
    from riido_pg.api import (
        STDOUT,
        ExtractStats,
        check_output,
        iter_functions,
        output_file,
        write_jsonl,
    )
    from riido_pg.cli.settings import settings

    target = STDOUT if output is None else output
    check_output(target)  # a bad path costs no extraction
    stats = ExtractStats()
    functions = iter_functions(
        directory,
        langs=lang or None,
        excludes=exclude or (),
        include_vendored=include_vendored,
        no_tests=no_tests,
        stats=stats,
        rev=rev,
    )
    with output_file(target) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
        try:
            write_jsonl(functions, text)
        finally:  # an error half-way leaves the stream (stdout) open, as it was
            text.flush()
            text.detach()
        if stats.functions == 0:  # inside the block: an existing file stays as it was
            raise InvalidInput(stats.no_functions(directory))
    tree_notes(stats, debug=settings(ctx).debug)
