"""What every command shares: the global options, the connection, progress, output.

Global options (``--dsn``, ``--debug``) are accepted before the subcommand (on the
app's callback) and after it (on each command that talks to a server); both land in
one :class:`Settings` object, click's context object for the whole run.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from riido_pg.db import Conn

if TYPE_CHECKING:
    from riido_pg.shards import Router

__all__ = [
    "DebugOption",
    "DsnOption",
    "Format",
    "HintsFile",
    "IdentifierHints",
    "LimitOpt",
    "ListFormatOption",
    "ModelOpt",
    "PolicyOpt",
    "Settings",
    "ShardOpt",
    "TextConfig",
    "connect",
    "connect_for_load",
    "embed",
    "emit_json",
    "finishes",
    "load_model",
    "note",
    "progress_bar",
    "routed",
    "select_policy",
    "settings",
]


@dataclass
class Settings:
    """The run's global options; ``signal`` is set when SIGTERM asked it to stop."""

    dsn: str | None = None
    debug: bool = False
    signal: int | None = None

    def update(self, dsn: str | None, debug: bool) -> Settings:
        if dsn:
            self.dsn = dsn
        if debug and not self.debug:
            self.debug = True
            logging.disable(logging.NOTSET)
            logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
        return self


def settings(ctx: typer.Context, dsn: str | None = None, debug: bool = False) -> Settings:
    """The run's Settings, updated with options given after the subcommand."""
    obj = ctx.find_object(Settings)
    if obj is None:  # invoked without riido_pg.cli.main (e.g. typer's test runner)
        obj = ctx.ensure_object(Settings)
    return obj.update(dsn, debug)


def connect(ctx: typer.Context, *, migrate: bool = True) -> Conn:
    from riido_pg.db import connect as open_connection

    return open_connection(settings(ctx).dsn, migrate=migrate)


@contextmanager
def routed(ctx: typer.Context) -> Iterator[Router]:
    """A router over the chosen server: it finds the server owning each snapshot."""
    from riido_pg.shards import Router

    with connect(ctx) as conn, Router(conn) as router:
        yield router


@contextmanager
def connect_for_load(ctx: typer.Context, snapshot_id: str, shard: str | None) -> Iterator[Conn]:
    """The writable connection a load of ``snapshot_id`` goes to (its shard, placed by
    the documented rule or ``--shard``; the server itself when it has no shards)."""
    with routed(ctx) as router:
        yield router.for_load(snapshot_id, shard)


ShardOpt = Annotated[
    str | None,
    typer.Option(
        "--shard",
        metavar="NAME",
        help="Place a new snapshot on this shard (default: the shard with the fewest documents).",
        show_default=False,
    ),
]


def emit_json(obj: object) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def note(message: str) -> None:
    """A remark on stderr that is not an error (the command still succeeds)."""
    sys.stderr.write(f"note: {message}\n")
    sys.stderr.flush()


#: Labels of the progress phases reported by the library.
PHASES = {
    "files": "reading files",
    "functions": "extracting functions",
    "rows": "reading rows",
    "documents": "reading documents, computing new tsvectors",
    "tsvectors": "computing new tsvectors",
    "embeddings": "embedding documents",
    "index": "building postings",
    "statistics": "updating planner statistics",
    "commits": "commits read",
    "questions": "questions found",
}


#: Phases that advance together: a load streaming its input, and ``corpus history``
#: reading commits while it finds questions.
STREAMED = frozenset({"files", "functions", "rows", "documents", "commits", "questions"})


def finishes(phase: str, earlier: str) -> bool:
    """Whether a new ``phase`` marks an ``earlier`` one finished: it does, unless both
    are streamed phases (:data:`STREAMED`), which run side by side."""
    return not (phase in STREAMED and earlier in STREAMED)


@contextmanager
def progress_bar() -> Iterator[Callable[[str, int, int], None] | None]:
    """A rich progress bar on stderr when it is a terminal; otherwise nothing.

    Every phase is a row with a spinner and its elapsed time, so a long phase shows it
    is alive; a phase reported with total 0 has no known size (a pulsing bar). A new
    phase completes the ones before it, except that the phases of a streamed input
    (:data:`STREAMED`) run side by side.
    """
    if not sys.stderr.isatty():
        yield None
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

        yield update


class Format(StrEnum):
    json = "json"
    table = "table"


DsnOption = Annotated[
    str | None,
    typer.Option(
        "--dsn",
        metavar="URL",
        help="PostgreSQL URL (env RIIDO_PG_DSN); default: the embedded server.",
        show_default=False,
    ),
]
DebugOption = Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")]
#: ``--format`` of a listing command (``snapshots list``, ``shards list``).
ListFormatOption = Annotated[Format, typer.Option("--format", help="table or json.")]
IdentifierHints = Annotated[
    bool,
    typer.Option(
        "--identifier-hints",
        help="Interleave identifier-split BM25 hints, baseline first "
        "(policy identifier_bm25_baseline_first).",
    ),
]
HintsFile = Annotated[
    Path | None,
    typer.Option(
        "--hints-file",
        metavar="F",
        help="JSON array of document ids in hint order, interleaved baseline first.",
        dir_okay=False,
        show_default=False,
    ),
]


def _policy_help() -> str:
    from riido_pg.ranking.policies import REGISTRY

    return "One of: " + ", ".join(REGISTRY) + " (default bm25)."


ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="NAME",
        help="A learned hint source (policy model_hints_baseline_first), e.g. wordllama-256.",
        show_default=False,
    ),
]
PolicyOpt = Annotated[
    str | None,
    typer.Option("--policy", metavar="POLICY", help=_policy_help(), show_default=False),
]
TextConfig = Annotated[
    str, typer.Option("--text-config", help="PostgreSQL text search configuration.")
]
LimitOpt = Annotated[
    int | None,
    typer.Option("--limit", min=1, metavar="K", help="Return only the first K candidates."),
]


def select_policy(
    identifier_hints: bool, hints_file: Path | None, policy: str | None, model: str | None = None
) -> tuple[str, list[str] | None]:
    """The policy the flags choose (the registry's rules) and the hint ids, if any; a
    model is loaded here, so an unknown or uninstalled one fails before any work."""
    from riido_pg.documents import parse_hints_file
    from riido_pg.ranking.policies import select_policy as select

    given = (
        ("--identifier-hints", identifier_hints),
        ("--hints-file", hints_file is not None),
        ("--model", model is not None),
    )
    flags = [flag for flag, on in given if on]
    chosen = select(policy, flags)
    if model is not None:
        load_model(model)
    hints = parse_hints_file(hints_file) if hints_file is not None else None
    return chosen.name, hints


def embed(
    conn: Conn,
    snapshot_id: str,
    model: str | None,
    progress: Callable[[str, int, int], None] | None,
) -> bool:
    """Embed the snapshot under ``model`` (when one is named and it is not done yet)."""
    if model is None:
        return False
    from riido_pg.ranking.model_hints import model_named
    from riido_pg.storage.embeddings import embed_snapshot

    return embed_snapshot(conn, snapshot_id, model_named(model), progress=progress)


def load_model(name: str) -> None:
    """Load the named model now (cached for the run), or fail with its error."""
    from riido_pg.ranking.model_hints import model_named

    model_named(name)
