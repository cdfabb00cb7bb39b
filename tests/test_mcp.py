"""``riido-pg mcp`` driven by the MCP SDK's own client over stdio, as an agent would:
the tools and their schemas, the same ids as ``rank_snapshot``, errors as tool errors
with the command line's message, a database restarted under a running server, and
100 calls in a row without the server's memory growing."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support import clusters
from support import database as test_db
from support.cli import cli_env, run_cli_process

from riido_pg import Database, rank_snapshot
from riido_pg.agents.answers import DEFAULT_POLICY, MAX_LIMIT
from riido_pg.extract import iter_functions
from riido_pg.server import migrate

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")
jsonschema = pytest.importorskip("jsonschema")

FIXTURES = Path(__file__).parent / "fixtures" / "extract"
QUERIES = ["parse the config file", "render a button", "http request handler", "sum of numbers"]
#: Growth of the server's resident memory allowed over 100 calls (allocator slack).
RSS_TOLERANCE_KB = 8 * 1024

Session = Callable[[Any], Awaitable[Any]]


def _serve(dsn: str, session: Session) -> Any:
    """Start ``python -m riido_pg mcp`` on ``dsn``, run ``session(client)``, stop it."""

    async def main() -> Any:
        params = mcp.StdioServerParameters(
            command=sys.executable, args=["-m", "riido_pg", "mcp"], env=cli_env(dsn)
        )
        async with mcp.Client(params, read_timeout_seconds=120) as client:
            return await session(client)

    return asyncio.run(main())


def _answer(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    assert len(result.content) == 1 and result.structured_content is None
    answer: dict[str, Any] = json.loads(result.content[0].text)
    return answer


def _cli_error(dsn: str, args: list[str]) -> str:
    """The message of the ``error:`` line the command line prints for ``args``."""
    run = run_cli_process(args, dsn=dsn)
    assert run.code != 0 and run.stderr.startswith("error: "), run.stderr
    return run.stderr.removeprefix("error: ").rstrip("\n")


@pytest.fixture(scope="module")
def loaded(db: test_db.Database) -> str:
    with Database.open(db.dsn) as facade:
        facade.load("fx", FIXTURES)
    return db.dsn


def test_tools_are_listed_with_valid_schemas(loaded: str) -> None:
    async def session(client: Any) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in _serve(loaded, session)}
    assert set(tools) == {"search", "snapshots"}
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.annotations.read_only_hint
    search = tools["search"].input_schema
    assert search["required"] == ["snapshot", "query"]
    assert search["properties"]["policy"]["default"] == DEFAULT_POLICY
    assert search["properties"]["limit"]["maximum"] == MAX_LIMIT
    assert DEFAULT_POLICY in tools["search"].description


def test_search_answers_the_ids_of_rank_snapshot(loaded: str) -> None:
    calls = [
        (q, policy, limit)
        for q in QUERIES
        for policy, limit in [
            (DEFAULT_POLICY, None),
            ("bm25", 5),
            ("identifier_bm25_rrf", MAX_LIMIT),
            ("identifier_bm25_baseline_first", 10),
        ]
    ]

    async def session(client: Any) -> Any:
        out = []
        for q, policy, limit in calls:
            args: dict[str, Any] = {"snapshot": "fx", "query": q, "policy": policy}
            if limit is not None:
                args["limit"] = limit
            out.append(_answer(await client.call_tool("search", args)))
        return out

    answers = _serve(loaded, session)
    functions = {f.id: f.metadata for f in iter_functions(FIXTURES)}
    with psycopg.connect(loaded) as conn:
        for (q, policy, limit), answer in zip(calls, answers, strict=True):
            ranking = rank_snapshot(conn, "fx", q, policy=policy, limit=limit or 10)
            assert [c["id"] for c in answer["candidates"]] == [c.id for c in ranking.candidates]
            assert [c["rank"] for c in answer["candidates"]] == [c.rank for c in ranking.candidates]
            assert answer["total"] == ranking.total == len(functions)
            assert answer["policy"] == ranking.policy
            for c in answer["candidates"]:
                meta = functions[c["id"]]
                assert (c["path"], c["start_line"]) == (meta["path"], meta["start_line"])
                assert c["start_line"] <= c["end_line"]
                assert len(c["snippet"].split("\n")) <= 3


def test_errors_are_tool_errors_with_the_cli_message(loaded: str) -> None:
    bad = [
        (["query", "nope", "x"], {"snapshot": "nope", "query": "x"}),
        (
            ["query", "fx", "x", "--policy", "nope"],
            {"snapshot": "fx", "query": "x", "policy": "nope"},
        ),
    ]
    expected = [_cli_error(loaded, args) for args, _ in bad]
    bad.append(([], {"snapshot": "fx\n", "query": "x"}))

    async def session(client: Any) -> Any:
        out = [await client.call_tool("search", args) for _, args in bad]
        out.append(await client.call_tool("search", {"snapshot": "fx", "query": "  "}))
        out.append(await client.call_tool("search", {"snapshot": "fx", "query": "render"}))
        return out

    *errors, empty, good = _serve(loaded, session)
    assert all(e.is_error for e in [*errors, empty])
    assert [e.content[0].text for e in errors[:2]] == expected
    assert "\n" not in errors[2].content[0].text  # an id with a newline, on one line
    assert empty.content[0].text.startswith("the query has no searchable words")
    assert _answer(good)["candidates"]  # the server lives on


def test_missing_sdk_is_one_error_line(loaded: str) -> None:
    import subprocess

    code = "import sys; sys.modules['mcp'] = None; from riido_pg.cli.main import main; main()"
    run = subprocess.run(
        [sys.executable, "-c", code, "mcp"],
        env=cli_env(loaded),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1
    assert run.stderr == (
        "error: the mcp server needs the MCP SDK: pip install 'riido-pg[mcp]' "
        "(in a checkout of riido-pg: pip install '.[mcp]')\n"
    )


@pytest.mark.skipif(clusters.pg_bin() is None, reason="no initdb on this machine")
def test_a_restarted_database_is_reconnected() -> None:
    with clusters.cluster() as node:
        dsn = node.dsn()
        migrate.upgrade(dsn)
        with Database.open(dsn) as facade:
            facade.load("fx", FIXTURES)
        args = {"snapshot": "fx", "query": "render a button"}

        async def session(client: Any) -> Any:
            before = _answer(await client.call_tool("search", args))
            node.stop()  # and back before the next call: that call answers
            node.start()
            quiet = _answer(await client.call_tool("search", args))
            node.stop()  # a call while it is down fails; the next one after it answers
            try:
                down = await client.call_tool("search", args)
                down_listing = await client.call_tool("snapshots", {})
                cli_down = _cli_error(dsn, ["query", "fx", "render a button"])
            finally:
                node.start()
            after = _answer(await client.call_tool("search", args))
            return before, quiet, down, down_listing, cli_down, after

        before, quiet, down, down_listing, cli_down, after = _serve(dsn, session)
    assert quiet == before
    assert down.is_error and down_listing.is_error
    assert down.content[0].text == down_listing.content[0].text == cli_down
    assert after == before
    assert before["candidates"]


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _server_pid() -> int:
    """The one ``riido_pg mcp`` child of this process."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            stat = (proc / "stat").read_text()
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue  # not a process, or gone
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"riido_pg" in cmdline and b"mcp" in cmdline:
            found.append(int(proc.name))
    assert len(found) == 1, found
    return found[0]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_hundred_calls_keep_memory_flat(loaded: str) -> None:
    async def session(client: Any) -> Any:
        async def calls(n: int) -> None:
            for i in range(n):
                q = QUERIES[i % len(QUERIES)]
                _answer(await client.call_tool("search", {"snapshot": "fx", "query": q}))

        await calls(20)  # warm: imports, plans, the allocator's arenas
        pid = _server_pid()
        start = _rss_kb(pid)
        await calls(100)
        return start, _rss_kb(pid)

    start, end = _serve(loaded, session)
    assert end - start < RSS_TOLERANCE_KB, (start, end)
