"""``db upgrade|downgrade|current|grant-reader|stop``: the schema and the server."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from riido_pg.api import visible
from riido_pg.cli.settings import database, settings

__all__ = ["app"]

app = typer.Typer(help="Schema migrations and the embedded server.", no_args_is_help=True)


def _dsn(ctx: typer.Context) -> str:
    from riido_pg import db

    return db.resolve_dsn(settings(ctx).dsn)[0]


@app.command("upgrade", short_help="Migrate the schema up, and every shard's.")
def db_upgrade(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(metavar="REV", help="Target revision.")] = "head",
) -> None:
    """Migrate the schema up (default: to the newest revision), and every shard's."""
    from riido_pg.api import schema_revision, schema_target, upgrade_schema

    url = _dsn(ctx)
    target = schema_target(url, revision)
    upgrade_schema(url, revision)
    at = schema_revision(url)
    past = f" (already past {revision}; `riido-pg db downgrade` goes down)" if at != target else ""
    typer.echo(f"schema at {at or 'base'}{past}")
    if at is None or at < "0007":  # no shard catalog below 0007
        return
    with database(ctx, migrate=False) as db:
        for name, rev in db.upgrade_shards(revision):
            typer.echo(f"shard {name!r}: schema at {rev or 'base'}")


@app.command("downgrade")
def db_downgrade(
    ctx: typer.Context,
    revision: Annotated[
        str,
        typer.Argument(
            metavar="REV", help="Target revision: base (removes everything) or a revision id."
        ),
    ],
    yes: Annotated[
        bool, typer.Option("--yes", help="Delete the data the downgrade drops without asking.")
    ] = False,
) -> None:
    """Migrate the schema down to REV. A downgrade that deletes data (snapshots,
    evaluation corpora, model embeddings, the shard catalog) says what it deletes and
    needs --yes, or a yes at the prompt on a terminal."""
    from riido_pg import Hint, NotConfirmed
    from riido_pg.api import downgrade_schema, schema_data_loss, schema_revision, schema_target

    url = _dsn(ctx)
    target = schema_target(url, revision)
    if not yes:
        loss = schema_data_loss(url, revision)
        if loss:
            what = f"downgrading to {revision} would delete {loss.describe()}"
            if not sys.stdin.isatty():
                raise NotConfirmed(what, Hint(cli="pass --yes to go ahead"))
            typer.confirm(f"{what}. Go ahead?", default=False, abort=True)
    downgrade_schema(url, revision)
    at = schema_revision(url)
    below = f" (already below {revision}; `riido-pg db upgrade` goes up)" if at != target else ""
    typer.echo(f"schema at {at or 'base'}{below}")


@app.command("current", short_help="Print the schema revision ('base': none).")
def db_current(ctx: typer.Context) -> None:
    """Print the schema revision of the database ('base' when there is none)."""
    from riido_pg.api import schema_revision

    typer.echo(schema_revision(_dsn(ctx)) or "base")


@app.command("grant-reader", short_help="Let ROLE query snapshots and nothing else.")
def db_grant_reader(
    ctx: typer.Context,
    role: Annotated[
        str, typer.Argument(metavar="ROLE", help="An existing role to make a read-only reader.")
    ],
) -> None:
    """Let ROLE query snapshots and nothing else (no load, drop, hints or DDL).

    Run it as a superuser: it keeps every role but those that write riido from taking
    advisory locks in this database, so a reader cannot stop the writers. ROLE can
    read every source text loaded.
    """
    with database(ctx) as db:
        db.grant_reader(role)
    typer.echo(f"role {role!r} can now query snapshots (read-only)")


#: Accepted only to be refused with a reason: db stop never stops a named server. (It
#: is a command that needs no server, so it has no shared --dsn: riido_pg.cli.main.)
_RefusedDsn = Annotated[str | None, typer.Option("--dsn", metavar="URL", hidden=True)]


@app.command("stop", short_help="Stop the embedded server (it starts on demand).")
def db_stop(ctx: typer.Context, dsn: _RefusedDsn = None) -> None:
    """Stop the embedded server (it starts again on the next command). It is the only
    server this stops: a server RIIDO_PG_DSN names is never affected, and --dsn is
    refused."""
    from riido_pg import ConflictingOptions
    from riido_pg.api import DSN_SETTING, stop_embedded

    # the global --dsn also takes RIIDO_PG_DSN: only a --dsn on the command line is refused
    source = ctx.find_root().get_parameter_source("dsn")
    if dsn is not None or (source is not None and source.name == "COMMANDLINE"):
        raise ConflictingOptions(
            "db stop stops only the embedded server, never the one --dsn names; run it "
            "without --dsn (and stop that server with its own tools)"
        )
    done = stop_embedded()
    state = "stopped the embedded server" if done.running else "the embedded server"
    line = f"{state} at {visible(str(done.home))}" + ("" if done.running else " is not running")
    if DSN_SETTING.raw() is not None:
        line += " (RIIDO_PG_DSN names another server, which is not affected)"
    typer.echo(line)
