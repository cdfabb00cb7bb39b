"""The ``riido-pg`` command line: a thin layer over the library.

Every failure a user can fix arrives here as a :class:`riido_pg.errors.RiidoError`
and leaves as one ``error: ...`` line on stderr with exit code 2 (bad input, usage)
or 1 (environment). ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from riido_pg import __version__
from riido_pg.errors import ConflictingOptions, DatabaseUnavailable, QueryTimeout, RiidoError

app = typer.Typer(
    name="riido-pg",
    help="BM25 code search in PostgreSQL, with opt-in baseline-first identifier hints.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
snapshots_app = typer.Typer(help="List or drop stored snapshots.", no_args_is_help=True)
db_app = typer.Typer(help="Schema migrations and the embedded server.", no_args_is_help=True)
app.add_typer(snapshots_app, name="snapshots")
app.add_typer(db_app, name="db")
from riido_pg.cli_eval import register as _register_eval  # noqa: E402

_register_eval(app)

_state: dict[str, Any] = {"dsn": None, "debug": False}


class Format(StrEnum):
    json = "json"
    table = "table"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"riido-pg {__version__}")
        raise typer.Exit()


@app.callback()
def _global(
    dsn: Annotated[
        str | None,
        typer.Option(
            "--dsn",
            envvar="RIIDO_PG_DSN",
            help="PostgreSQL URL; default: the embedded server.",
            show_envvar=True,
        ),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    _state["dsn"] = dsn or None
    _state["debug"] = debug


@contextmanager
def _db_errors() -> Iterator[None]:
    """Turn database failures into RiidoErrors with one-line messages."""
    import psycopg

    try:
        yield
    except psycopg.errors.QueryCanceled as exc:
        raise QueryTimeout(
            "statement ran past the statement timeout; raise RIIDO_PG_STATEMENT_TIMEOUT_MS "
            "(milliseconds) or narrow the work"
        ) from exc
    except psycopg.errors.LockNotAvailable as exc:
        raise QueryTimeout(
            "waited too long for a lock held by another session; try again, or raise "
            "RIIDO_PG_LOCK_TIMEOUT_MS"
        ) from exc
    except psycopg.errors.InsufficientPrivilege as exc:
        raise DatabaseUnavailable(
            f"permission denied: {exc.diag.message_primary}; connect as a role that may do this"
        ) from exc
    except psycopg.OperationalError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DatabaseUnavailable(f"lost the database connection: {first}") from exc


def _connect(migrate: bool = True) -> Any:
    from riido_pg.db import connect

    return connect(_state["dsn"], migrate=migrate)


def _emit_json(obj: object) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def _resolve_policy(
    identifier_hints: bool, hints_file: Path | None, policy: str | None
) -> tuple[str, list[str] | None]:
    from riido_pg.documents import parse_hints_file
    from riido_pg.ranking import (
        BM25,
        EXTERNAL_HINTS_BASELINE_FIRST,
        IDENTIFIER_BM25_BASELINE_FIRST,
    )

    if identifier_hints and hints_file is not None:
        raise ConflictingOptions("--identifier-hints and --hints-file cannot be used together")
    if identifier_hints:
        if policy not in (None, IDENTIFIER_BM25_BASELINE_FIRST):
            raise ConflictingOptions(
                f"--identifier-hints means {IDENTIFIER_BM25_BASELINE_FIRST}; "
                f"it cannot be used with --policy {policy}"
            )
        return IDENTIFIER_BM25_BASELINE_FIRST, None
    if hints_file is not None:
        if policy not in (None, EXTERNAL_HINTS_BASELINE_FIRST):
            raise ConflictingOptions(
                f"--hints-file means {EXTERNAL_HINTS_BASELINE_FIRST}; "
                f"it cannot be used with --policy {policy}"
            )
        return EXTERNAL_HINTS_BASELINE_FIRST, parse_hints_file(hints_file)
    if policy == EXTERNAL_HINTS_BASELINE_FIRST:
        raise ConflictingOptions(f"--policy {policy} needs --hints-file F")
    return policy or BM25, None


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
        help="JSON array of document ids in hint order, interleaved baseline first.",
        dir_okay=False,
    ),
]
PolicyOpt = Annotated[
    str | None,
    typer.Option(
        "--policy",
        help="bm25 (default), identifier_bm25, "
        "identifier_bm25_baseline_first, identifier_bm25_auxiliary_first, "
        "external_hints_baseline_first.",
    ),
]
TextConfig = Annotated[
    str, typer.Option("--text-config", help="PostgreSQL text search configuration.")
]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", min=1, help="Return only the first K candidates.")
]


@app.command()
def hints(
    identifier_hints: IdentifierHints = False,
    hints_file: HintsFile = None,
    policy: PolicyOpt = None,
    text_config: TextConfig = "english",
    limit: LimitOpt = None,
) -> None:
    """Rank the documents given as JSON on stdin; keeps nothing.

    stdin: {"snapshot_id": ..., "query": ..., "documents": [{"id": ..., "text": ...}]}
    """
    from riido_pg.documents import parse_request
    from riido_pg.ranking import rank_documents

    chosen, hint_ids = _resolve_policy(identifier_hints, hints_file, policy)
    if sys.stdin.isatty():
        raise ConflictingOptions("hints reads a JSON request on stdin; pipe one in")
    from riido_pg.documents import MAX_REQUEST_BYTES

    # read one byte past the limit, never more: parse_request reports the overflow
    request = parse_request(sys.stdin.buffer.read(MAX_REQUEST_BYTES + 1))
    with _db_errors():
        conn = _connect()
        with conn:
            ranking = rank_documents(
                conn, request, policy=chosen, text_config=text_config, limit=limit, hints=hint_ids
            )
    _emit_json(ranking.to_dict())


@app.command()
def load(
    snapshot_id: Annotated[str, typer.Argument(help="Id of the snapshot to create.")],
    source: Annotated[
        Path,
        typer.Argument(help="A .json request file, a .jsonl file of {id,text}, or a BEIR dir."),
    ],
    text_config: TextConfig = "english",
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace an existing snapshot with this content.")
    ] = False,
) -> None:
    """Store documents as an immutable snapshot."""
    from riido_pg.documents import read_source
    from riido_pg.store import load_snapshot

    docs = read_source(source)
    with _db_errors(), _progress() as progress:
        conn = _connect()
        with conn:
            result = load_snapshot(
                conn,
                snapshot_id,
                docs,
                text_config=text_config,
                replace=replace,
                progress=progress,
            )
    verb = {"created": "loaded", "replaced": "replaced", "unchanged": "unchanged:"}[result.action]
    typer.echo(f"{verb} snapshot {result.snapshot_id!r} ({result.documents} documents)")


@contextmanager
def _progress() -> Iterator[Any]:
    """A rich progress bar on stderr when it is a terminal; otherwise nothing."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                label = {"documents": "staging documents", "index": "indexing columns"}.get(
                    phase, phase
                )
                tasks[phase] = bar.add_task(label, total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield update


@app.command()
def query(
    snapshot_id: Annotated[str, typer.Argument(help="Snapshot to rank.")],
    query_text: Annotated[str, typer.Argument(metavar="QUERY", help="The question.")],
    identifier_hints: IdentifierHints = False,
    hints_file: HintsFile = None,
    policy: PolicyOpt = None,
    limit: LimitOpt = None,
    fmt: Annotated[Format, typer.Option("--format", help="json or table.")] = Format.json,
) -> None:
    """Rank a stored snapshot for a question."""
    from riido_pg.ranking import rank_snapshot

    chosen, hint_ids = _resolve_policy(identifier_hints, hints_file, policy)
    with _db_errors():
        conn = _connect()
        with conn:
            ranking = rank_snapshot(
                conn, snapshot_id, query_text, policy=chosen, limit=limit, hints=hint_ids
            )
    if fmt is Format.json:
        _emit_json(ranking.to_dict())
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    table = Table(title=escape(f"{ranking.snapshot_id} · {ranking.policy} · {ranking.status}"))
    table.add_column("rank", justify="right")
    table.add_column("id")
    table.add_column("bm25_score", justify="right")
    with_ident = any(c.identifier_bm25_score is not None for c in ranking.candidates)
    if with_ident:
        table.add_column("identifier_bm25_score", justify="right")
    for c in ranking.candidates:
        row: list[str | Text] = [str(c.rank), Text(c.id), f"{c.bm25_score:.6f}"]
        if with_ident:
            row.append(f"{c.identifier_bm25_score or 0.0:.6f}")
        table.add_row(*row)
    Console(soft_wrap=True).print(table)


@snapshots_app.command("list")
def snapshots_list(
    fmt: Annotated[Format, typer.Option("--format", help="table or json.")] = Format.table,
) -> None:
    """List snapshots: id, documents, text config, state, created."""
    from riido_pg.store import list_snapshots

    with _db_errors():
        conn = _connect()
        with conn:
            snaps = list_snapshots(conn)
    if fmt is Format.json:
        _emit_json(
            [
                {
                    "id": s.snapshot_id,
                    "documents": s.documents,
                    "text_config": s.text_config,
                    "state": s.state,
                    "created": s.created_at.isoformat(),
                }
                for s in snaps
            ]
        )
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table()
    for name in ("id", "documents", "text config", "state", "created"):
        table.add_column(name, justify="right" if name == "documents" else "left")
    for s in snaps:
        table.add_row(
            Text(s.snapshot_id),
            str(s.documents),
            s.text_config,
            s.state,
            s.created_at.isoformat(timespec="seconds"),
        )
    Console(soft_wrap=True).print(table)


@snapshots_app.command("drop")
def snapshots_drop(snapshot_id: Annotated[str, typer.Argument(help="Snapshot to remove.")]) -> None:
    """Remove a snapshot."""
    from riido_pg.store import drop_snapshot

    with _db_errors():
        conn = _connect()
        with conn:
            drop_snapshot(conn, snapshot_id)
    typer.echo(f"dropped snapshot {snapshot_id!r}")


def _dsn_for_migrations() -> str:
    from riido_pg.db import resolve_dsn

    return resolve_dsn(_state["dsn"])[0]


@db_app.command("upgrade")
def db_upgrade(
    revision: Annotated[str, typer.Argument(help="Target revision.")] = "head",
) -> None:
    """Migrate the schema up (default: to the newest revision)."""
    from riido_pg import migrate

    with _db_errors():
        migrate.upgrade(_dsn_for_migrations(), revision)
        typer.echo(f"schema at {migrate.current(_dsn_for_migrations()) or 'base'}")


@db_app.command("downgrade")
def db_downgrade(
    revision: Annotated[str, typer.Argument(help="Target revision; 'base' removes everything.")],
) -> None:
    """Migrate the schema down to REV."""
    from riido_pg import migrate

    with _db_errors():
        migrate.downgrade(_dsn_for_migrations(), revision)
        typer.echo(f"schema at {migrate.current(_dsn_for_migrations()) or 'base'}")


@db_app.command("current")
def db_current() -> None:
    """Print the schema revision of the database ('base' when there is none)."""
    from riido_pg import migrate

    with _db_errors():
        typer.echo(migrate.current(_dsn_for_migrations()) or "base")


@db_app.command("grant-reader")
def db_grant_reader(
    role: Annotated[str, typer.Argument(help="An existing role to make a read-only reader.")],
) -> None:
    """Let ROLE query snapshots and nothing else (no load, drop, hints or DDL)."""
    from riido_pg.privileges import grant_reader

    with _db_errors():
        conn = _connect()
        with conn:
            grant_reader(conn, role)
    typer.echo(f"role {role!r} can now query snapshots (read-only)")


@db_app.command("stop")
def db_stop() -> None:
    """Stop the embedded server (it starts again on the next command)."""
    from riido_pg.embedded import stop_embedded

    typer.echo(
        "stopped the embedded server" if stop_embedded() else "the embedded server is not running"
    )


def _fail(message: str, code: int) -> NoReturn:
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(code)


def _mro_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def hoist_global_options(args: list[str]) -> list[str]:
    """Move the global ``--dsn URL``/``--dsn=URL`` and ``--debug`` to the front, so they
    work after the subcommand too (``riido-pg query --dsn URL ...``). Nothing after a
    ``--`` separator is touched."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i:])
            break
        if arg == "--dsn" and i + 1 < len(args):
            front += args[i : i + 2]
            i += 2
            continue
        if arg.startswith("--dsn=") or arg == "--debug":
            front.append(arg)
        else:
            rest.append(arg)
        i += 1
    return front + rest


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``riido-pg`` script and ``python -m riido_pg``."""
    command = typer.main.get_command(app)
    args = hoist_global_options(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    import logging

    if debug:
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    else:
        # libraries log failures we already report as one error line
        logging.disable(logging.CRITICAL)
    try:
        command.main(args=args, prog_name="riido-pg", standalone_mode=False)
    except RiidoError as exc:
        if debug:
            raise
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except BrokenPipeError:
        raise SystemExit(1) from None
    except Exception as exc:
        # click's exceptions (typer vendors click in newer releases: match by name)
        names = _mro_names(exc)
        if "Exit" in names and hasattr(exc, "exit_code"):
            raise SystemExit(exc.exit_code) from None
        if "NoArgsIsHelpError" in names:
            ctx = getattr(exc, "ctx", None)
            if ctx is not None:
                sys.stderr.write(ctx.get_help() + "\n")
            raise SystemExit(2) from None
        if "UsageError" in names and not debug:
            ctx = getattr(exc, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            _fail(f"{exc.format_message()}{hint}", 2)  # type: ignore[attr-defined]
        if "ClickException" in names and not debug:
            _fail(exc.format_message(), int(getattr(exc, "exit_code", 1)))  # type: ignore[attr-defined]
        if "Abort" in names:
            _fail("aborted", 1)
        if debug:
            raise
        import psycopg

        if isinstance(exc, psycopg.Error):
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            _fail(f"database error: {first} (rerun with --debug for details)", 1)
        _fail(f"unexpected {type(exc).__name__}: {exc} (rerun with --debug for a traceback)", 1)
