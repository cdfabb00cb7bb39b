"""``riido-pg mcp``: time per ``search`` call against ``rank_snapshot`` on one warm
connection, and the size in tokens of a default answer, on a real source tree.

Loads TREE (``riido-pg load`` of a source tree) into a fresh benchmark database, then
runs the questions in rounds, each round alternating:

* ``rank_snapshot``: the library on one warm connection, the default policy
  (``identifier_bm25_fused``), top 10 -- the ranking a ``search`` call answers;
* ``search`` (in-process): the server's tool code on one warm connection, no
  protocol: the ranking, the candidates' texts, the answer's JSON;
* ``search`` (MCP): a call through the SDK's client to one ``python -m riido_pg mcp``
  process over stdio, started once (its first call, which connects, is not timed).

Tokens: every default answer (the text an agent reads) is counted with the 32k
Llama BPE that ships in the ``wordllama`` package (the model extra, offline; its
vocabulary is smaller than those of today's coding agents' tokenizers, so it counts
more tokens on JSON and code: an upper estimate) and by the characters/4 rule.

    python bench/bench_mcp.py --tree /tmp/sqlalchemy    # a checkout of sqlalchemy
    python bench/bench_mcp.py --quick                    # riido_pg's own source
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    REPO,
    base_parser,
    bench_database,
    connect,
    markdown_table,
    percentile,
    summary_ms,
    write_results,
)

#: Questions a developer of an ORM and SQL toolkit asks of its code (the default
#: tree is sqlalchemy's); on another tree they are still questions, just less apt.
QUESTIONS = [
    "reflect foreign keys with duplicate source columns",
    "connection pool pre ping stale connections",
    "compile a select statement with limit and offset",
    "begin a nested transaction savepoint",
    "eager load a relationship with selectinload",
    "bulk insert many rows returning primary keys",
    "quote an identifier that is a reserved word",
    "convert a python enum to a database enum type",
    "detect a disconnect error from the driver",
    "render the create table ddl for a column default",
    "merge an object into the session",
    "cache key of a compiled statement",
    "async session execute a query",
    "parse a database url with a password",
    "identity map lookup by primary key",
    "cascade delete orphan on a relationship",
    "json column comparison operators",
    "server side cursor streaming results",
    "alembic style batch alter table for sqlite",
    "hybrid property expression on the class",
]


def _tokenizer() -> Any:
    """The Llama BPE of the model extra, or None without it (then: characters/4 only)."""
    from riido_pg.errors import RiidoError

    try:
        from tokenizers import Tokenizer

        from riido_pg.embedding.wordllama import wordllama_files

        return Tokenizer.from_file(str(wordllama_files()[1]))
    except (ImportError, RiidoError):
        return None


def _serve(dsn: str, rounds: int, questions: list[str]) -> dict[str, Any]:
    import mcp

    from riido_pg import rank_snapshot
    from riido_pg.agents.answers import DEFAULT_POLICY, MAX_LIMIT, MAX_SNIPPET
    from riido_pg.agents.server import Tools
    from riido_pg.api import Database

    conn = connect(dsn)
    tools = Tools(Database(conn))
    times: dict[str, list[float]] = {"rank": [], "tool": [], "mcp": []}
    texts: dict[str, list[str]] = {"default": [], "no snippet": [], "largest": []}

    async def session(client: Any) -> None:
        args = {"snapshot": "tree", "query": questions[0]}
        await client.call_tool("search", args)  # the server connects
        for q in questions:
            for name, extra in [
                ("default", {}),
                ("no snippet", {"snippet": 0}),
                ("largest", {"limit": MAX_LIMIT, "snippet": MAX_SNIPPET}),
            ]:
                r = await client.call_tool("search", {"snapshot": "tree", "query": q, **extra})
                assert not r.is_error, r.content[0].text
                texts[name].append(r.content[0].text)
        for _ in range(rounds):
            for q in questions:
                t = time.perf_counter()
                rank_snapshot(conn, "tree", q, policy=DEFAULT_POLICY, limit=10)
                times["rank"].append(time.perf_counter() - t)
                t = time.perf_counter()
                tools.search("tree", q, 10, DEFAULT_POLICY, 3)
                times["tool"].append(time.perf_counter() - t)
                t = time.perf_counter()
                r = await client.call_tool("search", {"snapshot": "tree", "query": q})
                times["mcp"].append(time.perf_counter() - t)
                assert not r.is_error

    env = {**os.environ, "RIIDO_PG_DSN": dsn}
    params = mcp.StdioServerParameters(
        command=sys.executable, args=["-m", "riido_pg", "mcp"], env=env
    )

    async def main() -> None:
        async with mcp.Client(params, read_timeout_seconds=600) as client:
            await session(client)

    asyncio.run(main())
    conn.close()
    return {"times": times, "texts": texts}


def main() -> None:
    p = base_parser(__doc__.split("\n\n", 1)[0])
    p.add_argument("--tree", type=Path, default=None, help="source tree (default riido_pg)")
    p.add_argument("--rounds", type=int, default=5, help="timed passes over the questions")
    args = p.parse_args()
    tree = args.tree or REPO / "riido_pg"
    rounds = 1 if args.quick else args.rounds
    questions = QUESTIONS[:4] if args.quick else QUESTIONS

    from riido_pg.api import Database

    with bench_database(args.dsn, "mcp", keep=args.keep) as dsn:
        t = time.perf_counter()
        with Database.open(dsn) as db:
            loaded = db.load("tree", tree)
        load_s = time.perf_counter() - t
        served = _serve(dsn, rounds, questions)

    load = os.getloadavg()[0]
    times = {k: summary_ms(v) for k, v in served["times"].items()}
    rank_p50 = times["rank"]["p50_ms"]
    rows = [
        [name, s["n"], s["p50_ms"], s["p95_ms"], round(s["p50_ms"] / rank_p50, 2)]
        for name, s in [
            ("rank_snapshot (warm connection)", times["rank"]),
            ("search, in-process (no protocol)", times["tool"]),
            ("search over MCP stdio", times["mcp"]),
        ]
    ]
    print(f"\n{tree}: {loaded.documents:,} functions, loaded in {load_s:.1f} s; load {load:.1f}")
    print(markdown_table(["call", "n", "p50 ms", "p95 ms", "p50 ratio"], rows))

    tokenizer = _tokenizer()
    sizes: dict[str, dict[str, float]] = {}
    token_rows = []
    for name, answers in served["texts"].items():
        counts = [len(tokenizer.encode(a).ids) if tokenizer else float("nan") for a in answers]
        chars = [len(a) for a in answers]
        sizes[name] = {
            "median_tokens": statistics.median(counts),
            "max_tokens": max(counts),
            "median_chars": statistics.median(chars),
            "median_chars_4": statistics.median(chars) / 4,
            "p95_tokens": percentile(counts, 95),
        }
        token_rows.append(
            [
                name,
                len(answers),
                sizes[name]["median_chars"],
                sizes[name]["median_tokens"],
                sizes[name]["max_tokens"],
                sizes[name]["median_chars_4"],
            ]
        )
    print()
    print(
        markdown_table(
            ["answer", "n", "median chars", "median tokens", "max tokens", "chars/4"],
            token_rows,
        )
    )
    write_results(
        "bench_mcp",
        {
            "tree": str(tree),
            "documents": loaded.documents,
            "load_s": load_s,
            "loadavg": load,
            "times": times,
            "sizes": sizes,
        },
        args.out,
    )


if __name__ == "__main__":
    main()
