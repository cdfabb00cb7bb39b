"""``mcp``: the MCP server over stdio, for coding agents (:mod:`riido_pg.agents`)."""

from __future__ import annotations

import typer

from riido_pg.cli.settings import settings

__all__ = ["mcp"]


def mcp(ctx: typer.Context) -> None:
    """Serve the search and snapshots tools to an agent over stdio (MCP).

    One process and one connection for the whole session; an MCP client starts it.
    Needs the mcp extra (pip install 'riido-pg[mcp]').
    """
    from riido_pg.api import serve_agents as serve

    serve(settings(ctx).dsn)
