"""riido-pg for coding agents: an MCP server over stdio (``riido-pg mcp``).

:mod:`riido_pg.agents.answers` shapes what the tools answer (pure, sized for a
context window); :mod:`riido_pg.agents.server` declares the tools on the MCP SDK's
``MCPServer`` and answers them from one :class:`~riido_pg.api.Database`. Importing
this package does not import the SDK (the ``mcp`` extra): :func:`serve` does, and
says what to install when it is missing.
"""

from __future__ import annotations

from riido_pg.errors import RiidoError

__all__ = ["INSTALL", "SdkMissing", "serve"]

#: The command installing the MCP SDK: from PyPI, or in a checkout of riido-pg.
INSTALL = "pip install 'riido-pg[mcp]' (in a checkout of riido-pg: pip install '.[mcp]')"


class SdkMissing(RiidoError):
    """The MCP SDK (the ``mcp`` extra) is not installed."""


def serve(dsn: str | None = None) -> None:
    """Serve the tools over stdio until the client closes stdin, on the database
    ``dsn`` (else ``RIIDO_PG_DSN``, else the embedded server), connected on first use."""
    try:
        from riido_pg.agents.server import run
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != "mcp":
            raise
        raise SdkMissing(f"the mcp server needs the MCP SDK: {INSTALL}") from None
    run(dsn)
