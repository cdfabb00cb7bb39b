"""The progress bar of long commands (``load``, ``eval``, ``corpus history``) on a
terminal.

Each phase the library reports is a row saying what the user gets (``indexing
words``, ``building the index``), with its count, its rate and its clock.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["OUTER", "PHASES", "STREAMED", "finishes", "progress_bar", "progress_reporter"]


#: Labels of the progress phases reported by the library.
PHASES = {
    "files": "reading files",
    "functions": "extracting functions",
    "rows": "reading rows",
    "documents": "reading documents, indexing their words",
    "tsvectors": "indexing words",
    "embeddings": "embedding new texts",
    "index": "building the index",
    "statistics": "updating statistics",
    "commits": "commits read",
    "past_commits": "reading past commits",
    "questions": "questions found",
    "snapshots": "loading snapshots",
    "embedded_snapshots": "embedding snapshots",
}


#: Phases that advance together: a load streaming its input, and ``corpus history``
#: reading commits while it finds questions.
STREAMED = frozenset({"files", "functions", "rows", "documents", "commits", "questions"})


#: Phases that count what other phases run inside of (the snapshots an ``eval`` of
#: history corpora loads, each load's phases in turn): no phase finishes them.
OUTER = frozenset({"snapshots", "embedded_snapshots"})


def finishes(phase: str, earlier: str) -> bool:
    """Whether a new ``phase`` marks an ``earlier`` one finished: it does, unless both
    are streamed phases (:data:`STREAMED`), which run side by side, or ``earlier`` is
    an outer phase (:data:`OUTER`)."""
    return not (phase in STREAMED and earlier in STREAMED) and earlier not in OUTER


Update = Callable[[str, int, int], None]
Note = Callable[[str], None]


@contextmanager
def progress_bar() -> Iterator[Update | None]:
    """A rich progress bar on stderr when it is a terminal; otherwise nothing
    (:func:`progress_reporter`'s bar)."""
    with progress_reporter() as (update, _):
        yield update


def _write_line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


@contextmanager
def progress_reporter() -> Iterator[tuple[Update | None, Note]]:
    """A rich progress bar on stderr when it is a terminal (else None), and a
    function writing a line on stderr (above the bar when there is one).

    Every phase is a row with a spinner and its elapsed time, so a long phase shows it
    is alive; a phase reported with total 0 has no known size (a pulsing bar). A new
    phase completes the ones before it, except that the phases of a streamed input
    (:data:`STREAMED`) run side by side.
    """
    if not sys.stderr.isatty():
        yield None, _write_line
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        SpinnerColumn,
        Task,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    class Rate(ProgressColumn):
        """Items per second of a counted phase (documents, rows, functions)."""

        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            shown = task.fields.get("counted") and speed and task.completed > 1
            return Text(f"{speed:,.0f}/s" if shown else "")

    with Progress(
        SpinnerColumn(finished_text="✓"),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                # a streamed load reads, extracts and indexes at once: those phases
                # advance together; a later phase completes every one before it
                for name, earlier in tasks.items():
                    if not finishes(phase, name):
                        continue
                    task = bar.tasks[earlier]
                    if not task.finished:
                        bar.update(
                            earlier, total=task.completed or 1, completed=task.completed or 1
                        )
                tasks[phase] = bar.add_task(
                    PHASES.get(phase, phase), total=total or None, counted=phase in STREAMED
                )
            bar.update(tasks[phase], completed=done, total=total or None)

        def note(line: str) -> None:
            bar.console.print(line, markup=False, highlight=False)

        yield update, note
