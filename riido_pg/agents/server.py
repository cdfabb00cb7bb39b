"""The MCP server: the ``search`` and ``snapshots`` tools over one Database.

Built on the SDK's ``MCPServer`` (the ``mcp`` extra): each tool's JSON schema comes
from its typed arguments, its description is what an agent reads to use it. Tools
run one at a time (the SDK calls them from worker threads; one lock keeps the one
connection to one caller). A failure the user can fix is a tool error carrying the
command line's message; a call that finds the connection lost opens a new one and
tries once more, so a database that went away and came back answers the next call.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from riido_pg._version import __version__
from riido_pg.agents.answers import (
    DEFAULT_LIMIT,
    DEFAULT_POLICY,
    DEFAULT_SNIPPET,
    MAX_LIMIT,
    MAX_SNIPPET,
    search_answer,
    snapshots_answer,
)
from riido_pg.api.database import Database
from riido_pg.errors import DatabaseUnavailable, InvalidInput, RiidoError
from riido_pg.quoting import visible
from riido_pg.ranking.rank import NO_WORDS

__all__ = ["SEARCH", "SNAPSHOTS", "Tools", "build", "run"]

SEARCH = (
    "Search a stored snapshot of a code base for the functions that answer a question "
    "(BM25 over the functions' text and split identifiers, in PostgreSQL). Give "
    "`snapshot` (an id from the `snapshots` tool) and `query` (words of the question or "
    "identifiers). Answers the candidates in rank order, best first: `id`, `rank`, the "
    "scores, and for a function extracted from a source tree its `path`, `start_line` "
    "(the line of its name), `end_line` and `snippet` (its first lines from the name), "
    "plus `total`, how many candidates the snapshot ranked in all. Candidates are "
    f"suggestions to verify by reading the file. `limit`: candidates (default "
    f"{DEFAULT_LIMIT}, at most {MAX_LIMIT}); `snippet`: lines per candidate (default "
    f"{DEFAULT_SNIPPET}, 0 for none, at most {MAX_SNIPPET}); `policy`: the ranking "
    f"(default {DEFAULT_POLICY}, the best without hints; bm25, identifier_bm25, "
    "identifier_bm25_rrf, identifier_bm25_baseline_first and "
    "identifier_bm25_auxiliary_first also work)."
)
SNAPSHOTS = (
    "List what can be searched: every snapshot with its `id` (what `search` takes), "
    "`documents` (functions or documents it holds), `state` (`ready` to search, "
    "`loading`), `created` (ISO time) and `base` (the snapshot it was stored on, or "
    "null). Snapshots are loaded with the riido-pg command line, not from here."
)


def _reply(answer: dict[str, Any]) -> CallToolResult:
    """The answer as one compact JSON text (what the agent reads; not repeated as
    structured content, which would send it twice)."""
    text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)])


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


class Tools:
    """The tools' work on one :class:`Database`, one call at a time: each answers a
    result, or a tool error whose text is the message the command line prints after
    ``error:``."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._lock = threading.Lock()

    def _call(self, work: Callable[[], dict[str, Any]]) -> CallToolResult:
        with self._lock:
            try:
                try:
                    return _reply(work())
                except DatabaseUnavailable as exc:
                    if type(exc) is not DatabaseUnavailable:  # a refusal, not a lost link
                        raise
                    self.db.close()  # the retry opens a new connection
                    return _reply(work())
            except RiidoError as exc:
                return _error(visible(exc.render(cli=True)))

    def search(
        self, snapshot: str, query: str, limit: int, policy: str, snippet: int
    ) -> CallToolResult:
        def work() -> dict[str, Any]:
            found = self.db.search(snapshot, query, policy=policy, limit=limit)
            if not found.ranking.searchable:
                raise InvalidInput(NO_WORDS)
            return search_answer(found.ranking, found.texts, snippet)

        return self._call(work)

    def snapshots(self) -> CallToolResult:
        return self._call(lambda: snapshots_answer(self.db.snapshots()))


def build(db: Database) -> MCPServer:
    """The server, its tools answering from ``db``."""
    tools = Tools(db)
    server: MCPServer = MCPServer(
        "riido-pg",
        version=__version__,
        instructions="Code search over snapshots of source trees stored in PostgreSQL: "
        "list them with `snapshots`, then `search` one with a question.",
    )
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True)

    @server.tool(description=SEARCH, annotations=read_only)
    def search(
        snapshot: Annotated[str, Field(description="The snapshot's id.")],
        query: Annotated[str, Field(description="The question, in words or identifiers.")],
        limit: Annotated[
            int, Field(ge=1, le=MAX_LIMIT, description="Candidates to answer.")
        ] = DEFAULT_LIMIT,
        policy: Annotated[str, Field(description="The ranking policy.")] = DEFAULT_POLICY,
        snippet: Annotated[
            int, Field(ge=0, le=MAX_SNIPPET, description="Lines of text per candidate.")
        ] = DEFAULT_SNIPPET,
    ) -> CallToolResult:
        return tools.search(snapshot, query, limit, policy, snippet)

    @server.tool(description=SNAPSHOTS, annotations=read_only)
    def snapshots() -> CallToolResult:
        return tools.snapshots()

    return server


def run(dsn: str | None) -> None:
    """Serve over stdio until the client closes stdin."""
    with Database.open(dsn) as db:
        build(db).run("stdio")
