"""``riido-pg corpus history``: a corpus of commit subjects → changed functions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from riido_pg.api import visible
from riido_pg.cli.extract import ExcludeOpt, LangOpt, NoTestsOpt
from riido_pg.cli.options import whole_number
from riido_pg.cli.progress import progress_bar

__all__ = ["corpus_history"]


def corpus_history(
    repository: Annotated[
        Path,
        typer.Argument(
            metavar="REPO",
            help="A local git repository (its work tree's top, or a bare repository); "
            "only it is read, nothing is fetched.",
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            metavar="DIR",
            help="The corpus directory to write (new or empty; its parent must exist).",
            file_okay=False,
            show_default=False,
        ),
    ],
    max_questions: Annotated[
        int,
        typer.Option(
            "--max", metavar="N", parser=whole_number("--max"), help="Questions to write at most."
        ),
    ] = 200,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="REV",
            help="Stop at this revision (it and its ancestors are not read).",
            show_default=False,
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            metavar="REV",
            help="Start at this revision and read older commits (default: HEAD).",
            show_default=False,
        ),
    ] = None,
    lang: LangOpt = None,
    exclude: ExcludeOpt = None,
    no_tests: NoTestsOpt = False,
    max_targets: Annotated[
        int,
        typer.Option(
            "--max-targets",
            metavar="K",
            parser=whole_number("--max-targets"),
            help="Skip a commit that changed more than K functions.",
        ),
    ] = 4,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            metavar="NAME",
            help="The repository's label in question and snapshot ids (default: its "
            "directory's name).",
            show_default=False,
        ),
    ] = None,
    replace: Annotated[
        bool,
        typer.Option("--replace", help="Replace the history corpus already in DIR."),
    ] = False,
) -> None:
    """Questions from a repository's history: each commit's subject, ranked in its
    parent's tree, whose targets are the functions the commit changed."""
    from riido_pg.api import HistoryOptions
    from riido_pg.api import build_history_corpus as build

    options = HistoryOptions(
        max_questions=max_questions,
        max_targets=max_targets,
        since=since,
        until=until,
        langs=lang or None,
        excludes=exclude or (),
        no_tests=no_tests,
        name=name,
    )
    with progress_bar() as progress:  # commits read, questions found of N
        stats = build(repository, output, options, replace=replace, progress=progress)
    typer.echo(f"wrote {visible(str(output))}: {stats.describe()}")
