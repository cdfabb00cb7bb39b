"""``shards add|list|remove``: the coordinator's shard catalog."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from riido_pg.cli.options import Format, ListFormatOpt
from riido_pg.cli.output import emit_json
from riido_pg.cli.settings import database, settings

__all__ = ["app"]

app = typer.Typer(
    help="Shards: other PostgreSQL databases this one (the coordinator) spreads snapshots over.",
    no_args_is_help=True,
)

NameArg = Annotated[str, typer.Argument(metavar="NAME", help="The shard's name.")]


@app.command("add", short_help="Register a shard and migrate its schema.")
def shards_add(
    ctx: typer.Context,
    name: NameArg,
    shard_dsn: Annotated[
        str, typer.Argument(metavar="SHARD_DSN", help="The shard database's PostgreSQL URL.")
    ],
    password_file: Annotated[
        Path | None,
        typer.Option(
            "--password-file",
            metavar="FILE",
            help="Read the shard's password from the first line of FILE ('-': stdin) "
            "instead of the DSN, which others can see in the process list.",
            show_default=False,
            dir_okay=False,
            allow_dash=True,
        ),
    ] = None,
) -> None:
    """Register a shard (a postgres_fdw server and user mapping; its schema is migrated)."""
    password = _read_password(password_file) if password_file is not None else None
    with database(ctx) as db:
        db.add_shard(name, shard_dsn, password=password)
        settings(ctx).finish(f"shard {name!r} is added")
    typer.echo(f"added shard {name!r}")


def _read_password(path: Path) -> str:
    """The first line of ``path`` ('-': stdin), without its line ending."""
    from riido_pg import ConflictingOptions, InvalidInput

    if str(path) == "-":
        if sys.stdin.isatty():
            raise ConflictingOptions("--password-file - reads the password on stdin; pipe it in")
        text = sys.stdin.readline()
    else:
        try:
            with path.open(encoding="utf-8") as fh:
                text = fh.readline()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise InvalidInput(f"cannot read the password file {path}: {reason}") from exc
    password = text.rstrip("\r\n")
    if not password:
        raise InvalidInput(f"the password file {path} is empty (its first line is the password)")
    return password


@app.command("list", short_help="List shards and their sizes (never credentials).")
def shards_list(
    ctx: typer.Context,
    fmt: ListFormatOpt = Format.table,
) -> None:
    """List shards: host, database, snapshots, documents, bytes (never credentials)."""
    with database(ctx) as db:
        shards = db.shards()
    if fmt is Format.json:
        emit_json([asdict(s) for s in shards])
        return
    from riido_pg.cli.tables import print_shards

    print_shards(shards)


@app.command("remove")
def shards_remove(ctx: typer.Context, name: NameArg) -> None:
    """Unregister a shard that holds no snapshot."""
    with database(ctx) as db:
        db.remove_shard(name)
        settings(ctx).finish(f"shard {name!r} is removed")
    typer.echo(f"removed shard {name!r}")
