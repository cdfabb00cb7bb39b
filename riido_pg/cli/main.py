"""The ``riido-pg`` command line: a thin layer over the library.

Each command parses its arguments, makes one call to the :class:`riido_pg.Database`
façade and renders what it returns. Every failure a user can fix arrives here as a
:class:`riido_pg.errors.RiidoError` and leaves as one ``error: ...`` line on stderr,
with the exit code of its class (:mod:`riido_pg.cli.errors`); click's usage errors
are worded the same way. SIGINT exits 130 and SIGTERM 143, each with one ``error:``
line, after the interrupted work is rolled back; once the work is done and kept
(:meth:`~riido_pg.cli.settings.Settings.finish`) a first signal only adds a ``note:``
(exit 0), and once the run is over signals are ignored, so the process never dies by
one after it printed its result. ``--debug`` shows the traceback.
"""

from __future__ import annotations

import logging
import signal
import sys
from types import FrameType
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperCommand

from riido_pg import RiidoError, __version__
from riido_pg.cli import database, load, search, shards, snapshots
from riido_pg.cli.command import Command, DebugOption, Group, LocalCommand
from riido_pg.cli.errors import SIGNALS, exit_code, fail, message, usage_message
from riido_pg.cli.evaluate import corpus_app, eval_command
from riido_pg.cli.extract import extract
from riido_pg.cli.mcp import mcp
from riido_pg.cli.output import note
from riido_pg.cli.settings import Settings, settings

__all__ = ["app", "main"]

app = typer.Typer(
    name="riido-pg",
    help="BM25 code search in PostgreSQL, with opt-in baseline-first identifier hints.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=Group,
)
app.command()(search.hints)
app.command()(load.load)
app.command()(search.query)
# the command list of `riido-pg --help` shows one short line a command: these
# would otherwise be their help's first sentence, cut at 80 columns
app.command(short_help="Write each function of a source tree as a JSON line.")(extract)
app.command("eval", short_help="Evaluate policies on a corpus: Recall@1, Recall@10, MRR.")(
    eval_command
)
app.command(short_help="Serve search to coding agents over stdio (MCP).")(mcp)
app.add_typer(snapshots.app, name="snapshots")
app.add_typer(
    shards.app, name="shards", short_help="Spread snapshots over other PostgreSQL databases."
)
app.add_typer(corpus_app, name="corpus")
app.add_typer(database.app, name="db")

#: Commands that need no server: they take --debug but not --dsn.
LOCAL = {("extract",), ("corpus", "docproxy"), ("corpus", "history"), ("db", "stop")}


def _shape(group: typer.Typer, path: tuple[str, ...] = ()) -> None:
    """Give every command the shared options and every group the plain style."""
    for info in group.registered_commands:
        name = info.name or (info.callback.__name__ if info.callback else "")
        if info.cls in (None, TyperCommand):
            info.cls = LocalCommand if (*path, name) in LOCAL else Command
    for sub in group.registered_groups:
        sub.cls = Group
        if sub.typer_instance is not None:
            sub.typer_instance.info.cls = Group
            _shape(sub.typer_instance, (*path, sub.name or ""))


_shape(app)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"riido-pg {__version__}")
        raise typer.Exit()


@app.callback()
def _global(
    ctx: typer.Context,
    dsn: Annotated[
        str | None,
        typer.Option(
            "--dsn",
            metavar="URL",
            envvar="RIIDO_PG_DSN",
            help="PostgreSQL URL; default: the embedded server.",
            show_envvar=True,
        ),
    ] = None,
    debug: DebugOption = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    settings(ctx, dsn, debug)


def _on_sigterm(run: Settings) -> None:
    def handler(signum: int, frame: FrameType | None) -> None:
        run.signal = signum
        # psycopg cancels the running statement on KeyboardInterrupt, as on Ctrl-C;
        # every transaction then rolls back on the way out
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def _stopped(run: Settings) -> NoReturn:
    code, text = SIGNALS[signal.Signals(run.signal or signal.SIGINT)]
    fail(text if run.finished is None else f"{text}; {run.finished}", code)


def _usage(exc: Any) -> NoReturn:
    ctx = getattr(exc, "ctx", None)
    text = exc.format_message()
    if ctx is not None and text == ctx.get_help():  # no arguments: the help
        sys.stderr.write(text + "\n")
        raise SystemExit(2) from None
    fail(usage_message(exc), exc.exit_code)


def _traceback(exc: BaseException) -> NoReturn:
    """``--debug``: the traceback as the interpreter prints it, exit 1, with control
    characters in it (a file name's, a DSN's) shown as escapes, never sent to the
    terminal."""
    import traceback

    from riido_pg.api import visible

    text = "".join(traceback.format_exception(exc))
    sys.stderr.write("\n".join(visible(line) for line in text.split("\n")))
    sys.stderr.flush()
    raise SystemExit(1) from None


def main(argv: list[str] | None = None) -> None:
    """Run the ``riido-pg`` command line (:func:`riido_pg.cli.main` imports this module
    and calls it)."""
    run = Settings()
    try:
        _main(run, argv)
    finally:
        # the run is over, only the interpreter's exit is left: a signal now would kill
        # the process bare (exit -2 after `loaded snapshot ...`), whatever it said
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)
    if run.late is not None:  # the work is done and said so: exit 0
        note(f"{SIGNALS[signal.Signals(run.late)][1]} after the work was done; {run.finished}")


def _main(run: Settings, argv: list[str] | None) -> None:
    try:  # a ^C from here on is exit 130, also before the command runs
        # libraries log failures we already report as one error line (--debug turns it on)
        logging.disable(logging.CRITICAL)
        _on_sigterm(run)
        command = typer.main.get_command(app)
        code = command.main(
            args=sys.argv[1:] if argv is None else argv,
            prog_name="riido-pg",
            standalone_mode=False,
            obj=run,
        )
    except RiidoError as exc:
        if run.debug:
            _traceback(exc)
        fail(message(exc), exit_code(exc))
    except KeyboardInterrupt:
        _stopped(run)
    except BrokenPipeError:
        raise SystemExit(1) from None
    except typer.Abort:
        fail("aborted", 1)
    except typer.TyperException as exc:  # click's usage and parameter errors
        _usage(exc)
    except Exception as exc:
        if run.debug:
            _traceback(exc)
        import psycopg

        if isinstance(exc, psycopg.Error):  # outside the library's boundary: a bug
            from riido_pg.api import translate_database_error

            fail(message(translate_database_error(exc)), 1)
        fail(f"unexpected {type(exc).__name__}: {exc} (rerun with --debug for a traceback)", 1)
    # typer returns the code of a typer.Exit; 130 is its word for KeyboardInterrupt
    if code == 130:
        _stopped(run)
    if isinstance(code, int) and code:
        raise SystemExit(code)
