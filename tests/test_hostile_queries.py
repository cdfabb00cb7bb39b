"""Queries are data (README "Limits and guarantees"): hypothesis property tests.

A query is handed to PostgreSQL only as a bound parameter and only through
``to_tsvector``, never parsed as a tsquery or formatted into SQL. So every query
either ranks -- every document of the snapshot exactly once, ranks dense from 1,
finite non-negative scores -- or, when it is not valid input (a NUL, a lone
surrogate, more than ``MAX_QUERY_BYTES`` of UTF-8), fails with the documented
one-line :class:`riido_pg.InvalidInput` (CLI: exit 2 and one ``error:`` line). No
query, under any policy, changes the database: the riido tables and catalog are
digested before and after each property run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from psycopg import sql

from riido_pg import (
    Document,
    HintsRequest,
    InvalidInput,
    Ranking,
    RiidoError,
    load_snapshot,
    rank_documents,
    rank_snapshot,
)
from riido_pg.cli.search import NO_WORDS, NO_WORDS_HINTED
from riido_pg.documents import MAX_QUERY_BYTES
from riido_pg.ranking import (
    BM25,
    EXTERNAL_HINTS_BASELINE_FIRST,
    IDENTIFIER_BM25,
    IDENTIFIER_BM25_AUXILIARY_FIRST,
    IDENTIFIER_BM25_BASELINE_FIRST,
    OUT_OF_SCOPE,
    policies,
)
from riido_pg.ranking.policies import MODEL_HINTS_BASELINE_FIRST, MODEL_OUT_OF_SCOPE

REGISTRY = {p.name: p for p in policies()}
POLICIES = tuple(p.name for p in policies())

SNAP = "hostile'; drop table riido.snapshots; --"
DOCS = [
    Document("cfg.read", "def read(path):\n    return open(path).read()"),
    Document("cfg.load", "def loadConfig(path):\n    return ReadConfig(path)"),
    Document("net.http", "func ServeHTTP(w http.ResponseWriter, r *http.Request) {}"),
    Document("'; drop table riido.documents; --", "DROP TABLE riido.documents; -- SELECT 1"),
    Document("%s", "printf('%s %(x)s {} {0} %%', $$body$$) -- psycopg placeholders"),
    Document("$$", "CREATE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql"),
    Document("back\\slash", "C:\\Users\\config\\read.txt \\x00 \\' E'\\n'"),
    Document("tsquery", "read & config | !write <-> parse <2> tok:* (a) :A"),
    Document("quotes", "say \"hello\" and 'bye' `tick`"),
    Document("unicode.\U0001d518\U0001d52b", "naïve café Ελληνικά русский 中文 日本語 한국어 🦀"),
    Document("rtl.\u202e", "שלום עולם مرحبا بالعالم \u202eevil\u202c"),
    Document("marks", "e\u0301 a\u0308 \u0915\u094d\u0937 \ue000 \U000f0000 \U0010fffd"),
    Document("blank", "   "),
]
IDS = sorted(d.id for d in DOCS)
#: external hints: a partial list, in an order unlike the baseline's
HINTS = ["marks", "%s", "cfg.load", "blank"]

# -- strategies ---------------------------------------------------------------------

#: tsquery operators, quotes, SQL, dollar quoting, backslashes, psycopg placeholders
SYNTAX = [
    "&",
    "|",
    "!",
    "<->",
    "<2>",
    ":*",
    "(",
    ")",
    ":A",
    ":AB*",
    "!!",
    "&&",
    "||",
    "'",
    '"',
    "''",
    "`",
    "'; drop table riido.documents; --",
    '"; DELETE FROM riido.snapshots',
    "$$",
    "$tag$",
    "$1",
    "\\",
    "\\'",
    "\\\\",
    "E'\\x00'",
    "\\x00",
    "\\u0000",
    "%s",
    "%(x)s",
    "%(snapshot_id)s",
    "{}",
    "{0}",
    "{snapshot_id}",
    "%",
    "%%",
    "%b",
    "--",
    "/*",
    "*/",
    ";",
    "::regclass",
    "pg_sleep(10)",
    "*",
    "?",
    "@@",
    "to_tsquery(",
]
#: not valid input: NUL and lone surrogates
INVALID = ["\x00", "\ud800", "\udfff", "\udcff"]
#: words, whitespace of every kind, format and private-use characters, emoji, a long word
OTHER = [
    "read",
    "config",
    "ReadConfig",
    "HTTPServer",
    "parse",
    "write",
    "drop",
    "table",
    "select",
    "\n",
    "\t",
    "\r\n",
    " ",
    "\u00a0",
    "\u2028",
    "\ufeff",
    "\u200d",
    "\u200f",
    "\u202e",
    "\ufffd",
    "\uffff",
    "\ue000",
    "\U0010ffff",
    "🦀",
    "👩‍💻",
    "\U0001d518",
    "e\u0301",
    "x" * 3000,
]
FRAGMENTS = SYNTAX + INVALID + OTHER
fragment = st.sampled_from(FRAGMENTS)
any_plane = st.text(
    st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=30
)
astral = st.text(
    st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF, exclude_categories=()),
    max_size=15,
)
private_use = st.text(st.characters(categories=["Co"]), min_size=1, max_size=8)
combining = st.text(st.characters(categories=["M"]), min_size=1, max_size=8)
rtl = st.text(st.characters(min_codepoint=0x0590, max_codepoint=0x08FF), min_size=1, max_size=15)
surrogate = st.characters(categories=["Cs"])
identifier = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True)
piece = st.one_of(
    fragment,
    fragment,
    fragment,
    identifier,
    any_plane,
    astral,
    private_use,
    combining,
    rtl,
    surrogate,
)
separator = st.sampled_from(["", "", " ", "  ", "\t", "\n"])
composed = st.lists(st.tuples(piece, separator), max_size=12).map(
    lambda parts: "".join(p + s for p, s in parts)
)
# tsquery syntax, SQL and placeholders between words, joined with and without spaces
syntax = st.lists(
    st.one_of(st.sampled_from(SYNTAX + INVALID), identifier), min_size=1, max_size=15
).flatmap(lambda xs: st.sampled_from([" ".join(xs), "".join(xs)]))
# a repeated unit: from a few bytes to several megabytes, around the limit and far past it
repeated = st.tuples(
    st.sampled_from(["read ", "x", "🦀", "é ", "a&b|", "ReadConfig ", "'; drop; --", "\x00"]),
    st.one_of(st.integers(1, 2**20), st.integers(MAX_QUERY_BYTES // 4 - 2, MAX_QUERY_BYTES + 2)),
).map(lambda t: t[0] * t[1])
QUERIES = st.one_of(syntax, syntax, composed, composed, repeated, any_plane)

MEGABYTE = ("read config & ReadConfig | '; drop table riido.documents; -- " * 20_000)[: 2**20]
JUST_UNDER = ("read config & ReadConfig | '; drop table riido.documents; -- " * 2_000)[
    : MAX_QUERY_BYTES - 1
]
HOSTILE_EXAMPLES = [
    "'; drop table riido.documents; --",
    "read & config | !write <-> parse <2> tok:* ( ) :A",
    "%s %(x)s {} {0} %% %(snapshot_id)s",
    "$$ $tag$ \\ \\' \\\\ E'\\x00'",
    "",
    "   ",
    "\x00",
    "read\x00config",
    "\ud800",
    "read \udfff",
    MEGABYTE,
    JUST_UNDER,
    "🦀" * (MAX_QUERY_BYTES // 4),
    "🦀" * (MAX_QUERY_BYTES // 4) + "x",
]

#: The policies that draw on the identifier column (and fall back outside its limits).
IDENTIFIER_POLICIES = tuple(p.name for p in REGISTRY.values() if p.identifier)


def expected_error(query: str) -> str | None:
    """The documented message for a query that is not valid input; None if valid."""
    if "\x00" in query:
        return "query contains a NUL character"
    try:
        size = len(query.encode("utf-8"))
    except UnicodeEncodeError as exc:
        if "\udc80" <= query[exc.start] <= "\udcff":  # invalid bytes from argv
            return "query is not valid UTF-8"
        return "query contains a lone surrogate (invalid unicode)"
    if size > MAX_QUERY_BYTES:
        return f"query is {size} bytes; the limit is {MAX_QUERY_BYTES}"
    return None


# -- the database must not change ---------------------------------------------------


def db_digest(conn: psycopg.Connection[Any]) -> dict[str, str]:
    """Row count and md5 of every table of schema riido, plus the catalog of the schema."""
    out: dict[str, str] = {}
    rels = conn.execute(
        "SELECT c.relname, c.relkind FROM pg_class AS c "
        "JOIN pg_namespace AS n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'riido' ORDER BY c.relname"
    ).fetchall()
    out["pg_class"] = repr(rels)
    out["pg_proc"] = repr(
        conn.execute(
            "SELECT p.oid::regprocedure::text FROM pg_proc AS p "
            "JOIN pg_namespace AS n ON n.oid = p.pronamespace WHERE n.nspname = 'riido' ORDER BY 1"
        ).fetchall()
    )
    out["schemas"] = repr(
        conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname !~ '^pg_(toast_)?temp_' ORDER BY 1"
        ).fetchall()
    )
    for name, kind in rels:
        if kind not in ("r", "p"):
            continue
        row = conn.execute(
            sql.SQL(
                "SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) "
                "FROM riido.{} AS t"
            ).format(sql.Identifier(name))
        ).fetchone()
        assert row is not None
        out[name] = f"{row[0]}:{row[1]}"
    return out


#: The learned hint source of model_hints_baseline_first (installed by the test extra).
MODEL_NAME = "wordllama-256"


def _model(policy: str) -> str | None:
    return MODEL_NAME if REGISTRY[policy].needs_model else None


@pytest.fixture(scope="module", autouse=True)
def snapshot(db: Any) -> None:
    from riido_pg.ranking.model_hints import model_named
    from riido_pg.storage.embeddings import embed_snapshot

    with db.connect() as conn:
        assert load_snapshot(conn, SNAP, DOCS).action == "created"
        embed_snapshot(conn, SNAP, model_named(MODEL_NAME))


@pytest.fixture(scope="module")
def hints_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hints") / "hints.json"
    path.write_text(json.dumps(HINTS))
    return path


# -- what a ranking must look like --------------------------------------------------


def _order_key(id_score: tuple[str, float]) -> tuple[float, bytes]:
    return (-id_score[1], id_score[0].encode("utf-8"))


def _positions_ok(ids: list[str], first: list[str], second: list[str]) -> None:
    """Interleave of ``first`` and ``second``, ``first`` first (README): the id at
    rank r of ``first`` appears by rank 2r - 1, the id at rank r of ``second`` by 2r."""
    position = {doc_id: rank for rank, doc_id in enumerate(ids, start=1)}
    for r, doc_id in enumerate(first, start=1):
        assert position[doc_id] <= min(len(ids), 2 * r - 1)
    for r, doc_id in enumerate(second, start=1):
        assert position[doc_id] <= min(len(ids), 2 * r)
    assert ids[0] == first[0]


def check_candidates(
    snapshot_id: str,
    label: str,
    candidates: Sequence[dict[str, Any]],
    policy: str,
    seen: dict[str, dict[str, float]],
) -> None:
    """One result (as result JSON) of ``policy`` for a valid query. ``seen`` collects the
    same query's ``bm25`` scores (key "raw") and ``identifier_bm25`` scores ("ident")
    as they become known, to check the combined policies against them."""
    assert snapshot_id == SNAP
    ids = [c["id"] for c in candidates]
    assert sorted(ids) == IDS, "every document exactly once"
    assert [c["rank"] for c in candidates] == list(range(1, len(IDS) + 1))
    for c in candidates:
        for key in ("bm25_score", "identifier_bm25_score", "fused_score"):
            if key in c:
                assert isinstance(c[key], float) and math.isfinite(c[key]) and c[key] >= 0, c
    raw = [(c["id"], c["bm25_score"]) for c in candidates]
    if policy in IDENTIFIER_POLICIES and REGISTRY[policy].needs_model:
        assert label in (policy, OUT_OF_SCOPE, REGISTRY[policy].fallback_label)
    elif policy in IDENTIFIER_POLICIES:
        assert label in (policy, OUT_OF_SCOPE)
    elif REGISTRY[policy].needs_model:
        assert label in (policy, MODEL_OUT_OF_SCOPE)
    else:
        assert label == policy
    # score descending, then id in byte order; zero scores last in id order
    if label in (BM25, OUT_OF_SCOPE, MODEL_OUT_OF_SCOPE):
        assert raw == sorted(raw, key=_order_key)
        seen.setdefault("raw", dict(raw))
    if label == IDENTIFIER_BM25:
        ident = [(c["id"], c["identifier_bm25_score"]) for c in candidates]
        assert ident == sorted(ident, key=_order_key)
        seen["ident"] = dict(ident)
    if "raw" in seen:
        assert dict(raw) == seen["raw"], "bm25_score is the raw-column score whatever the policy"
    if label in IDENTIFIER_POLICIES and "ident" in seen:
        assert {c["id"]: c["identifier_bm25_score"] for c in candidates} == seen["ident"]
    if label == OUT_OF_SCOPE:
        seen.pop("ident", None)
    base = [i for i, _ in sorted(seen.get("raw", {}).items(), key=_order_key)]
    hint = [i for i, _ in sorted(seen.get("ident", {}).items(), key=_order_key)]
    if label == IDENTIFIER_BM25_BASELINE_FIRST and base and hint:
        _positions_ok(ids, base, hint)
    if label == IDENTIFIER_BM25_AUXILIARY_FIRST and base and hint:
        _positions_ok(ids, hint, base)
    if label == EXTERNAL_HINTS_BASELINE_FIRST and base:
        _positions_ok(ids, base, HINTS)


def _rank_every_policy(conn: psycopg.Connection[Any], query: str, limit: int) -> None:
    error = expected_error(query)
    seen: dict[str, dict[str, float]] = {}
    full: list[dict[str, Any]] = []
    for policy in POLICIES:  # bm25 and identifier_bm25 come first
        hints = HINTS if policy == EXTERNAL_HINTS_BASELINE_FIRST else None
        for lim in (None, limit):
            try:
                ranking = rank_snapshot(
                    conn, SNAP, query, policy=policy, limit=lim, hints=hints, model=_model(policy)
                )
            except RiidoError as exc:
                assert isinstance(exc, InvalidInput), repr(exc)
                assert str(exc) == error, (str(exc), error)
                assert "\n" not in str(exc)
                continue
            finally:
                assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            assert error is None, f"{error!r} expected, but the query ranked"
            assert isinstance(ranking, Ranking) and ranking.status == "unverified"
            body = ranking.to_dict()
            if lim is not None:
                assert body["candidates"] == full[:lim], "--limit K is the first K"
                continue
            full = body["candidates"]
            check_candidates(body["snapshot_id"], body["policy"], full, policy, seen)


# -- library ------------------------------------------------------------------------


def test_library_queries_are_data(conn: psycopg.Connection[Any]) -> None:
    before = db_digest(conn)

    @settings(
        max_examples=150,  # each example ranks with every policy, whole and limited
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(query=QUERIES, limit=st.integers(1, len(IDS) + 1))
    def ranks_or_fails_cleanly(query: str, limit: int) -> None:
        _rank_every_policy(conn, query, limit)

    for query in HOSTILE_EXAMPLES:
        ranks_or_fails_cleanly = example(query=query, limit=2)(ranks_or_fails_cleanly)
    ranks_or_fails_cleanly()
    assert db_digest(conn) == before


def test_a_megabyte_query_is_rejected_with_the_documented_message(
    conn: psycopg.Connection[Any],
) -> None:
    size = len(MEGABYTE.encode())
    assert size == 2**20
    with pytest.raises(InvalidInput) as err:
        rank_snapshot(conn, SNAP, MEGABYTE)
    assert str(err.value) == f"query is {size} bytes; the limit is {MAX_QUERY_BYTES}"


@pytest.mark.parametrize("policy", IDENTIFIER_POLICIES)
def test_many_word_query_under_the_limit_falls_back_for_identifier_policies(
    conn: psycopg.Connection[Any], policy: str
) -> None:
    """~10,000 distinct lexemes: bm25 ranks them all; identifier hints are out of scope."""
    words = ["read", "config"]
    while len(" ".join(words).encode()) + len(f" w{len(words)}x") <= MAX_QUERY_BYTES:
        words.append(f"w{len(words)}x")
    query = " ".join(words)
    assert MAX_QUERY_BYTES - 16 < len(query.encode()) <= MAX_QUERY_BYTES
    base = rank_snapshot(conn, SNAP, query)
    ranking = rank_snapshot(conn, SNAP, query, policy=policy, model=_model(policy))
    assert ranking.policy == OUT_OF_SCOPE
    assert [c.to_dict() for c in ranking.candidates] == [c.to_dict() for c in base.candidates]
    assert base.candidates[0].bm25_score > 0


# -- command line -------------------------------------------------------------------


def as_argv(query: str) -> str:
    """What the CLI process sees when ``query`` is put on its command line: NULs cannot
    be, lone surrogates arrive as invalid UTF-8 bytes (decoded with surrogateescape),
    and one argument is cut below Linux's 128 KiB MAX_ARG_STRLEN."""
    data = query.replace("\x00", "").encode("utf-8", "surrogatepass")[:100_000]
    return data.decode("utf-8", "surrogateescape")


def no_words_note(policy: str) -> str:
    """The note of a query without searchable words: the order it states is the
    policy's (id order, or id order with the hints' suggestions interleaved)."""
    if policy == EXTERNAL_HINTS_BASELINE_FIRST:
        return f"note: {NO_WORDS_HINTED.format(source='hints file')}\n"
    if policy == MODEL_HINTS_BASELINE_FIRST:
        return f"note: {NO_WORDS_HINTED.format(source='model')}\n"
    return f"note: {NO_WORDS}\n"


def _check_cli(result: Any, query: str, policy: str) -> None:
    error = expected_error(query)
    assert "Traceback" not in result.stderr
    if error is not None:
        assert (result.code, result.stdout, result.stderr) == (2, "", f"error: {error}\n")
        return
    assert result.code == 0 and result.stderr in ("", no_words_note(policy)), result
    body = json.loads(result.stdout)
    if result.stderr:  # no searchable words: every document scores 0
        assert all(c["bm25_score"] == 0.0 for c in body["candidates"])
    assert body["status"] == "unverified"
    check_candidates(body["snapshot_id"], body["policy"], body["candidates"], policy, {})


def _policy_args(policy: str, hints_file: Path) -> list[str]:
    if policy == EXTERNAL_HINTS_BASELINE_FIRST:
        return ["--hints-file", str(hints_file)]
    if REGISTRY[policy].needs_model and REGISTRY[policy].flag is None:
        return ["--model", MODEL_NAME, "--model-ranking", str(REGISTRY[policy].model_ranking)]
    if REGISTRY[policy].needs_model:
        return ["--model", MODEL_NAME]
    return ["--policy", policy]


CLI_EXAMPLES = [
    "'; drop table riido.documents; --",
    "-x --limit 0 read & config <-> :*",
    '%s %(x)s {} $$ \\ "',
    "read \udcff config",
    "\ud800",
    "🦀" * (MAX_QUERY_BYTES // 4),
    "x" * (MAX_QUERY_BYTES + 1),
]


def test_cli_query_queries_are_data(db: Any, cli: Any, hints_file: Path) -> None:
    with db.connect() as conn:
        before = db_digest(conn)

    @settings(
        max_examples=20,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(query=QUERIES.map(as_argv), policy=st.sampled_from(POLICIES))
    def ranks_or_exits_2(query: str, policy: str) -> None:
        # `--` ends the options: a query may begin with "-"
        result = cli(["query", *_policy_args(policy, hints_file), "--all", "--", SNAP, query])
        _check_cli(result, query, policy)

    for i, query in enumerate(CLI_EXAMPLES):
        ranks_or_exits_2 = example(query=as_argv(query), policy=POLICIES[i % len(POLICIES)])(
            ranks_or_exits_2
        )
    ranks_or_exits_2()
    with db.connect() as conn:
        assert db_digest(conn) == before


def test_cli_hints_queries_are_data(db: Any, cli: Any, hints_file: Path) -> None:
    documents = [{"id": d.id, "text": d.text} for d in DOCS]
    with db.connect() as conn:
        before = db_digest(conn)

    @settings(
        max_examples=15,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(query=QUERIES, policy=st.sampled_from(POLICIES))
    def ranks_or_exits_2(query: str, policy: str) -> None:
        # json.dumps escapes NUL as \u0000 and a lone surrogate as \ud800: both reach the parser
        request = json.dumps({"snapshot_id": SNAP, "query": query, "documents": documents})
        result = cli(["hints", *_policy_args(policy, hints_file)], input=request.encode())
        _check_cli(result, query, policy)

    for i, query in enumerate([*CLI_EXAMPLES, "\x00", "read\x00config", MEGABYTE]):
        ranks_or_exits_2 = example(query=query, policy=POLICIES[i % len(POLICIES)])(
            ranks_or_exits_2
        )
    ranks_or_exits_2()
    with db.connect() as conn:
        assert db_digest(conn) == before


def test_cli_query_beginning_with_a_dash_needs_double_dash(cli: Any) -> None:
    result = cli(["query", SNAP, "-read"])
    assert result.code == 2 and result.stdout == ""
    assert result.stderr == "error: no such option: -r (see `riido-pg query --help`)\n"
    result = cli(["query", "--", SNAP, "-read"])
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["candidates"][0]["id"] == "cfg.read"


def test_cli_table_format_with_hostile_queries(cli: Any) -> None:
    for query, stderr in (
        ("'; drop table riido.documents; --", ""),
        ("[bold]read[/bold] [/]", ""),
        ("%s {} $$", f"note: {NO_WORDS}\n"),  # no searchable words: said on stderr
    ):
        result = cli(["query", "--format", "table", "--", SNAP, query])
        assert (result.code, result.stderr) == (0, stderr), result
        assert "'; drop table riido.documents; --" in result.stdout


def test_cli_no_words_note_states_the_order_the_candidates_are_in(
    cli: Any, hints_file: Path
) -> None:
    ids = sorted(d.id for d in DOCS)
    for policy in POLICIES:
        result = cli(["query", *_policy_args(policy, hints_file), "--all", "--", SNAP, "!!!???"])
        assert (result.code, result.stderr) == (0, no_words_note(policy)), (policy, result)
        got = [c["id"] for c in json.loads(result.stdout)["candidates"]]
        assert sorted(got) == ids and got[0] == ids[0], policy
        if result.stderr == f"note: {NO_WORDS}\n":
            assert got == ids, policy  # said "in id order": it is
        else:
            assert got != ids, policy  # the suggestions moved some: not said to be


MARKUP_IDS = ["[/]", "[bold]b[/bold]", "[link=https://example.com]c"]


def test_cli_table_format_prints_markup_like_ids_verbatim(db: Any, cli: Any) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "markup", [Document(i, "read config") for i in MARKUP_IDS])
    result = cli(["query", "--format", "table", "markup", "read"])
    assert (result.code, result.stderr) == (0, ""), result
    for doc_id in MARKUP_IDS:
        assert doc_id in result.stdout


@pytest.mark.parametrize("query", ["read\x00config", "read \ud800", "x" * (MAX_QUERY_BYTES + 1)])
def test_library_rank_documents_validates_the_query(
    conn: psycopg.Connection[Any], query: str
) -> None:
    request = HintsRequest(SNAP, query, DOCS)
    with pytest.raises(InvalidInput) as err:
        rank_documents(conn, request)
    assert str(err.value) == expected_error(query)
