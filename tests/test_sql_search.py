"""Search from SQL (docs/search-from-sql.md): ``riido.search`` and the SQL splitter and
interleave it is built on give exactly what the Python API's composed path gives.

The composed path (``riido_pg.ranking.rank.rank_composed``: the Python splitter, the
statements of sql/rank*.sql, the interleave in Python) and the SQL functions are two
implementations of one ranking; these tests are the guard between them: the splitter
on generated identifiers, the interleave on every partial hint list of 1 to 7
candidates, every non-learned policy on a corpus of real functions (and on a snapshot
that removed documents from its base), the seed example through ``psql``, and every
bad input by its SQLSTATE. ``rank_snapshot`` itself ranks with the SQL function's one
statement whenever it can: the last section holds its every field to the composed
path's, its errors to the composed path's, and its calls to one statement.
"""

from __future__ import annotations

import importlib.util
import itertools
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import sql
from support.cli import run_cli
from support.corpus import stdlib_functions
from support.database import Database
from support.sessions import login_role

from riido_pg import Document, auxiliary_first, baseline_first, load_snapshot, rank_snapshot
from riido_pg.documents import MAX_QUERY_BYTES, DocumentStream
from riido_pg.errors import RiidoError
from riido_pg.ranking import OUT_OF_SCOPE, get_policy, policies
from riido_pg.ranking.interleave import iter_interleave
from riido_pg.ranking.rank import (
    IN_SQL,
    Ranking,
    RankOptions,
    in_sql,
    rank_composed,
    search_plan,
)
from riido_pg.ranking.texts import rank_with_texts, rank_with_texts_composed
from riido_pg.resources import migrations_dir
from riido_pg.server.plans import run
from riido_pg.splitting import split_identifiers

#: Every policy riido.search runs: all but the learned one.
SQL_POLICIES = [p.name for p in policies() if not p.needs_model]
QUERIES = (
    "parse the config file",
    "test parse the config",  # about tests: their prior lifted
    "read json value example",  # about examples
    "split words tests docs",  # about both
    "read json value",
    "split the line into words",
    "read a config file",  # qualified names it holds (read, before_read): the name match
    "the",
    "HTTPServer getValue",
    "",
    "zzzz unknown",
    "x" * 5000,  # one identifier word over the identifier byte limit: out of scope
    "'; DROP TABLE riido.snapshots; -- %s %(q)s $1 \\",  # quoting is no one's business
    "read & !config | json:* <-> (line)",  # tsquery syntax is plain text here
    "ΟΔΟΣ e\u0301 X\u0332ML İstanbul \U0010ffff parseJSON",
    " ".join(f"Word{i}" for i in range(300)),  # over 256 identifier lexemes: out of scope
)


@pytest.fixture(scope="module")
def corpus(db: Database) -> list[Document]:
    docs = [
        *stdlib_functions(300),
        # test and example code (the kinds structure_bm25's priors read), one of both
        Document("tests/test_config.py:test_parse_config", "def test_parse_config(): parse"),
        Document("examples/read_json.py:main", "def main(): read json value config file"),
        Document("docs/examples/test_words.py:split", "def split(line): words into the line"),
    ]
    with db.connect() as conn:
        load_snapshot(conn, "std", docs)
        # a snapshot on a base: some documents removed, some changed, one added
        kept = [d for i, d in enumerate(docs) if i % 5 != 0]
        changed = [
            Document(d.id, d.text + " parse config") if i % 7 == 0 else d
            for i, d in enumerate(kept)
        ]
        # ... and documents its revision changed recently (the recency prior's), among
        # them a test, an example and one on the base's segment
        std2 = [*changed, Document("zz:new:1", "def parse_json(line): pass")]
        recent = frozenset([d.id for d in std2[::6]] + [d.id for d in docs[-3:]])
        stream = DocumentStream(
            lambda: iter(std2), where="std2", checked=False, recent=lambda: recent
        )
        load_snapshot(conn, "std2", stream, base="std")
        assert conn.execute(
            "SELECT cardinality(recent) FROM riido.snapshots WHERE snapshot_id = 'std2'"
        ).fetchone() == (len(recent & {d.id for d in std2}),)
        load_snapshot(
            conn,
            "demo",
            [Document("a", "read"), Document("b", "config"), Document("c", "func ReadConfig() {}")],
        )
    return docs


def _sql_rows(
    conn: psycopg.Connection[Any],
    snapshot: str,
    query: str,
    k: int,
    policy: str,
    hints: Sequence[str] | None = None,
) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT rank, id, bm25_score, identifier_bm25_score, policy, score "
        "FROM riido.search(%s, %s, %s, %s, %s)",
        (snapshot, query, k, policy, None if hints is None else list(hints)),
    ).fetchall()


def _python_rows(
    conn: psycopg.Connection[Any],
    snapshot: str,
    query: str,
    k: int,
    policy: str,
    hints: Sequence[str] | None = None,
) -> list[tuple[Any, ...]]:
    opts = RankOptions.check(query, policy, k, hints, None, None)
    ranking = rank_composed(conn, snapshot, query, opts)
    return [
        (c.rank, c.id, c.bm25_score, c.identifier_bm25_score, ranking.policy, c.score)
        for c in ranking.candidates
    ]


# --- the splitter ------------------------------------------------------------------

_PIECES = st.one_of(
    st.sampled_from(["HTTP", "Server", "IDs", "URLs", "get", "Value", "s", "S", "X", "utf8"]),
    st.from_regex(r"[A-Z]{1,4}s?[a-z]{0,5}[0-9]{0,3}", fullmatch=True),
    st.sampled_from(["_", "-", ".", " ", "::", "/", "\t", "\u00a0", "\u3000"]),
    st.sampled_from(["Σ", "ΟΔΟΣ", "ǅ", "İ", "ß", "ﬁ", "Ⅻ", "²", "٣", "ℂ", "Ⓐ", "ς"]),
    st.sampled_from(["\u0332", "\u0301", "e\u0301", "\u093f", "\u20dd", "\ufe0f"]),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=6),
    st.text(st.sampled_from("aAbB1_"), min_size=60, max_size=200),  # over-long words
)
IDENTIFIERS = st.lists(_PIECES, max_size=8).map("".join)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(IDENTIFIERS, min_size=1, max_size=40))
def test_sql_splitter_equals_python(conn: psycopg.Connection[Any], texts: list[str]) -> None:
    rows = conn.execute(
        "SELECT riido.split_identifiers(t) FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, i) "
        "ORDER BY i",
        (texts,),
    ).fetchall()
    assert [r[0] for r in rows] == [split_identifiers(t) for t in texts]


def test_sql_splitter_known_cases(conn: psycopg.Connection[Any]) -> None:
    cases = {
        "ReadConfig": "read config",
        "HTTPServer2": "http server 2",
        "userIDsFor": "user ids for",
        "utf8Decode": "utf 8 decode",
        "ΟΔΟΣ": "οδος",
        "": "",
        "__": "",
    }
    rows = conn.execute(
        "SELECT riido.split_identifiers(t) FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, i) "
        "ORDER BY i",
        (list(cases),),
    ).fetchall()
    assert [r[0] for r in rows] == list(cases.values())
    assert [split_identifiers(t) for t in cases] == list(cases.values())


# --- the interleave ----------------------------------------------------------------


def _baselines(n: int) -> list[list[int]]:
    ids = list(range(n))
    orders = [ids, ids[::-1]]
    if n >= 3:
        orders.append(ids[0::2] + ids[1::2])
    return orders


def _hint_lists(baseline: Sequence[int]) -> Iterator[tuple[int, ...]]:
    for k in range(len(baseline) + 1):
        yield from itertools.permutations(baseline, k)


@pytest.mark.parametrize("n", range(1, 8))
def test_sql_interleave_equals_python_exhaustively(conn: psycopg.Connection[Any], n: int) -> None:
    for baseline in _baselines(n):
        hints = [list(h) for h in _hint_lists(baseline)]
        rows = conn.execute(
            "SELECT riido.baseline_first(%(b)s::int[], h), riido.auxiliary_first(%(b)s::int[], h) "
            "FROM unnest(%(h)s::text[]) WITH ORDINALITY AS u(t, i) "
            "CROSS JOIN LATERAL (SELECT string_to_array(u.t, ',')::int[] AS h) AS x ORDER BY i",
            {"b": baseline, "h": [",".join(map(str, h)) for h in hints]},
        ).fetchall()
        assert len(rows) == len(hints)
        rank = {item: r for r, item in enumerate(baseline, start=1)}
        for (bf, af), h in zip(rows, hints, strict=True):
            assert bf == baseline_first(baseline, h), (baseline, h)
            assert af == auxiliary_first(baseline, h), (baseline, h)
            at = {item: r for r, item in enumerate(bf, start=1)}
            assert all(at[item] <= min(n, 2 * r - 1) for item, r in rank.items())


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.one_of(
            st.lists(st.integers(0, 9), max_size=10),
            st.lists(st.integers(0, 150), min_size=40, max_size=120),  # past the short path
        ),
        min_size=2,
        max_size=40,
    ),
    st.one_of(st.integers(0, 12), st.just(300)),
)
def test_sql_interleave_of_any_lists_and_a_limit(
    conn: psycopg.Connection[Any], lists: list[list[int]], limit: int
) -> None:
    """Lists with repeats, ids only one list holds, short and long lists, and a cut at
    ``limit``."""
    pairs = list(itertools.pairwise(lists))
    rows = conn.execute(
        "SELECT riido.interleave(string_to_array(a, ',')::int[], string_to_array(b, ',')::int[], "
        "%(k)s) FROM unnest(%(a)s::text[], %(b)s::text[]) WITH ORDINALITY AS u(a, b, i) "
        "ORDER BY i",
        {
            "a": [",".join(map(str, a)) for a, _ in pairs],
            "b": [",".join(map(str, b)) for _, b in pairs],
            "k": limit,
        },
    ).fetchall()
    expected = [list(itertools.islice(iter_interleave(a, b), limit)) for a, b in pairs]
    assert [r[0] for r in rows] == expected


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("SELECT riido.baseline_first(ARRAY[1, 2], ARRAY[3])", "hint '3' is not in the baseline"),
        ("SELECT riido.auxiliary_first(ARRAY[1, 2], ARRAY[2, 0])", "hint '0' is not in"),
        ("SELECT riido.baseline_first(ARRAY[1, 2, 1], ARRAY[1])", "baseline has duplicate ids"),
        (
            "SELECT riido.baseline_first(array_agg(g), ARRAY[70]) FROM generate_series(1, 69) g",
            "hint '70' is not in the baseline",
        ),
        (
            "SELECT riido.baseline_first(array_agg(g % 68), '{}') FROM generate_series(1, 69) g",
            "baseline has duplicate ids",
        ),
    ],
)
def test_sql_interleave_refuses_what_python_refuses(
    conn: psycopg.Connection[Any], statement: str, message: str
) -> None:
    with pytest.raises(psycopg.Error) as caught:
        conn.execute(statement)  # type: ignore[arg-type]
    assert caught.value.sqlstate == "22023"
    assert message in str(caught.value)


# --- rankings ----------------------------------------------------------------------


@pytest.mark.parametrize("policy", SQL_POLICIES)
@pytest.mark.parametrize("snapshot", ["std", "std2"])
def test_every_policy_ranks_as_the_python_api(
    conn: psycopg.Connection[Any], corpus: list[Document], snapshot: str, policy: str
) -> None:
    hints = [d.id for d in corpus[1::9] if not d.id.startswith(tuple(x.id for x in corpus[::5]))]
    use = hints if policy == "external_hints_baseline_first" else None
    for query in QUERIES:
        for k in (1, 10, 1000):  # 1000: every document, the zero-score tail included
            got = _sql_rows(conn, snapshot, query, k, policy, use)
            want = _python_rows(conn, snapshot, query, k, policy, use)
            assert got == want, (snapshot, policy, query, k)


def test_the_out_of_scope_label(conn: psycopg.Connection[Any], corpus: list[Document]) -> None:
    rows = _sql_rows(conn, "std", "x" * 5000, 3, "identifier_bm25_baseline_first")
    assert {r[4] for r in rows} == {OUT_OF_SCOPE}
    assert all(r[3] is None for r in rows)


def test_the_seed_example_through_psql(db: Database, corpus: list[Document]) -> None:
    psql = shutil.which("psql")
    if psql is None:
        pytest.skip("no psql on this machine")
    out = subprocess.run(
        [
            psql,
            db.dsn,
            "-X",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            "SELECT id, policy FROM riido.search('demo', 'read config', 10, "
            "'identifier_bm25_baseline_first')",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert out.split() == [f"{i}|identifier_bm25_baseline_first" for i in "acb"]
    plain = subprocess.run(
        [
            psql,
            db.dsn,
            "-X",
            "-A",
            "-t",
            "-c",
            "SELECT id FROM riido.search('demo', 'read config')",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert plain.split() == ["a", "b", "c"]


# --- bad input ---------------------------------------------------------------------

BAD = [
    ("SELECT * FROM riido.search('nope', 'q')", "RI001", "no snapshot 'nope'"),
    ("SELECT * FROM riido.search(NULL, 'q')", "22004", "must not be NULL"),
    ("SELECT * FROM riido.search('demo', NULL)", "22004", "must not be NULL"),
    ("SELECT * FROM riido.search('demo', 'q', NULL)", "22004", "must not be NULL"),
    ("SELECT * FROM riido.search('demo', 'q', 10, NULL)", "22004", "must not be NULL"),
    ("SELECT * FROM riido.search('demo', 'q', 0)", "2201W", "k must be at least 1"),
    ("SELECT * FROM riido.search('demo', 'q', -3)", "2201W", "k must be at least 1"),
    ("SELECT * FROM riido.search('demo', 'q', 10, 'bm26')", "RI003", "unknown policy 'bm26'"),
    (
        "SELECT * FROM riido.search('demo', 'q', 10, 'bm25_identifier_input_out_of_scope')",
        "RI003",
        "result label",
    ),
    (
        "SELECT * FROM riido.search('demo', 'q', 10, 'model_hints_baseline_first')",
        "RI003",
        "learned model",
    ),
    (
        "SELECT * FROM riido.search('demo', 'q', 10, 'model_structure_weighted')",
        "RI003",
        "learned model",
    ),
    (
        "SELECT * FROM riido.search('demo', 'q', 10, 'structure_bm25_model_input_out_of_scope')",
        "RI003",
        "result label",
    ),
    (
        "SELECT * FROM riido.search('demo', 'q', 10, 'external_hints_baseline_first')",
        "RI004",
        "needs a list of hint ids",
    ),
    (
        "SELECT * FROM riido.search('demo', 'q', 10, 'bm25', ARRAY['a'])",
        "RI004",
        "hints cannot be used",
    ),
    (
        "SELECT * FROM riido.search('demo', 'q', 10, 'external_hints_baseline_first', "
        "ARRAY['a', 'zz'])",
        "RI004",
        "e.g. 'zz'",
    ),
]


@pytest.mark.parametrize(("statement", "sqlstate", "message"), BAD)
def test_bad_input_raises_one_sql_error(
    conn: psycopg.Connection[Any],
    corpus: list[Document],
    statement: str,
    sqlstate: str,
    message: str,
) -> None:
    with pytest.raises(psycopg.Error) as caught:
        conn.execute(statement)  # type: ignore[arg-type]
    assert caught.value.sqlstate == sqlstate
    assert message in str(caught.value)


def test_the_policies_riido_search_ranks_are_the_registrys(
    conn: psycopg.Connection[Any], corpus: list[Document]
) -> None:
    """One list of them: riido.search checks a name against the list the migration
    wrote from IN_SQL (riido.search_settings()), which the Python API sends to the
    database; and it is the registry's policies but the learned ones, in its order."""
    row = conn.execute("SELECT policies FROM riido.search_settings()").fetchone()
    assert row is not None and row[0] == list(IN_SQL) == SQL_POLICIES
    with pytest.raises(psycopg.Error) as caught:
        conn.execute("SELECT * FROM riido.search('demo', 'q', 10, 'bm26')")
    assert caught.value.diag.message_primary == (
        "riido.search: unknown policy 'bm26'; choose one of " + ", ".join(SQL_POLICIES)
    )


def test_an_over_long_query(conn: psycopg.Connection[Any], corpus: list[Document]) -> None:
    with pytest.raises(psycopg.Error) as caught:
        conn.execute("SELECT * FROM riido.search('demo', %s)", ("q" * (MAX_QUERY_BYTES + 1),))
    assert caught.value.sqlstate == "54000"
    assert f"the limit is {MAX_QUERY_BYTES}" in str(caught.value)
    rows = conn.execute("SELECT id FROM riido.search('demo', %s)", ("q" * MAX_QUERY_BYTES,))
    assert [r[0] for r in rows] == ["a", "b", "c"]


def test_a_snapshot_still_loading(conn: psycopg.Connection[Any], corpus: list[Document]) -> None:
    with conn.transaction(force_rollback=True):
        conn.execute(
            "INSERT INTO riido.snapshots (snapshot_id, text_config, state, document_count, "
            "content_digest, k1, b) VALUES ('half', 'english', 'loading', 0, '', 1.2, 0.75)"
        )
        with pytest.raises(psycopg.Error) as caught, conn.transaction():
            conn.execute("SELECT * FROM riido.search('half', 'q')")
    assert caught.value.sqlstate == "RI002"
    assert "not ready" in str(caught.value)


# --- the reader role ---------------------------------------------------------------


@pytest.fixture
def reader(db: Database, server_dsn: str, corpus: list[Document]) -> Iterator[str]:
    def grant(role: str) -> None:
        granted = run_cli(["db", "grant-reader", role], dsn=db.dsn)
        assert granted.code == 0, granted.stderr

    with login_role(db, server_dsn, grant) as dsn:
        yield dsn


def test_the_reader_role_can_search_and_nothing_more(reader: str) -> None:
    with psycopg.connect(reader, autocommit=True) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM riido.search('demo', 'read config')")]
        assert ids == ["a", "b", "c"]
        for statement in (
            "DELETE FROM riido.snapshots",
            "UPDATE riido.split_chars SET cls = 'a'",
            "CREATE FUNCTION riido.mine() RETURNS int LANGUAGE sql AS 'SELECT 1'",
            "CREATE OR REPLACE FUNCTION riido.split_identifiers(input text) RETURNS text "
            "LANGUAGE sql AS 'SELECT input'",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)  # type: ignore[arg-type]


def test_search_is_read_only(db: Database, corpus: list[Document]) -> None:
    """It runs in a read-only transaction, as on a hot standby."""
    with db.connect() as conn:
        conn.execute("SET default_transaction_read_only = on")
        with conn.transaction():
            ids = [
                r[0]
                for r in conn.execute(
                    sql.SQL("SELECT id FROM riido.search({}, {}, 3, {})").format(
                        sql.Literal("std"),
                        sql.Literal("parse config"),
                        sql.Literal("identifier_bm25_rrf"),
                    )
                )
            ]
    assert len(ids) == 3


def test_the_newest_migration_installing_search_installs_this_package() -> None:
    """A change to sql/search.sql or to the constants it is installed with comes with a
    migration that installs them again (an upgraded database keeps what its last
    migration installed): the newest migration with an ``INSTALLS`` digest records the
    package's own."""
    installing = []
    for path in sorted((migrations_dir() / "versions").glob("[0-9]*.py")):
        spec = importlib.util.spec_from_file_location(f"riido_migration_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if hasattr(module, "INSTALLS"):
            installing.append(module)
    assert installing, "no migration installs riido.search"
    newest = installing[-1]
    assert newest.INSTALLS == newest.digest(), (
        f"sql/search.sql or its settings changed since migration {newest.revision}: add a "
        "migration that installs them again and records the new digest in INSTALLS"
    )


# --- the Python API through the one statement --------------------------------------


def _both(
    conn: psycopg.Connection[Any],
    snapshot: str,
    query: str,
    policy: str,
    limit: int | None,
    hints: Sequence[str] | None = None,
    params: dict[str, float] | None = None,
) -> tuple[Ranking, Ranking]:
    """``rank_snapshot``'s ranking and the composed path's, for the same call."""
    opts = RankOptions.check(query, policy, limit, hints, params, None)
    api = rank_snapshot(
        conn, snapshot, query, policy=policy, limit=limit, hints=hints, params=params
    )
    return api, rank_composed(conn, snapshot, query, opts)


@pytest.mark.parametrize("policy", SQL_POLICIES)
@pytest.mark.parametrize("snapshot", ["std", "std2"])
def test_rank_snapshot_gives_the_composed_ranking_field_by_field(
    conn: psycopg.Connection[Any], corpus: list[Document], snapshot: str, policy: str
) -> None:
    """Every field of the Ranking and of each Candidate (the policy label, the
    out-of-scope fallback, the scores' names, structure_bm25's name scores, the
    snapshot's size, whether the query has searchable words): rank_snapshot's, which
    is the one statement at every limit, also past the first hundreds and for none
    (every document)."""
    hints = [d.id for d in corpus[1::9] if not d.id.startswith(tuple(x.id for x in corpus[::5]))]
    use = hints if policy == "external_hints_baseline_first" else None
    for query in QUERIES:
        for limit in (1, 10, 101, 500, None):
            api, composed = _both(conn, snapshot, query, policy, limit, use)
            assert api == composed, (snapshot, policy, query, limit)
            assert api.to_dict() == composed.to_dict()
            opts = RankOptions.check(query, policy, limit, use, None, None)
            assert run(conn, search_plan(snapshot, query, opts)) == api  # the statement's
    api, _ = _both(conn, snapshot, "the", policy, 3, use)
    assert not api.searchable  # a stop word alone
    kept = len(corpus[1::5]) + len(corpus[2::5]) + len(corpus[3::5]) + len(corpus[4::5])
    assert api.total == (len(corpus) if snapshot == "std" else kept + 1)  # std2 added one


def test_in_sql_takes_what_the_database_ranks_alike() -> None:
    def opts(
        policy: str, params: dict[str, float] | None = None, limit: int | None = 10
    ) -> RankOptions:
        hints = ["a"] if policy == "external_hints_baseline_first" else None
        return RankOptions.check("q", policy, limit, hints, params, None)

    assert all(in_sql(opts(p)) for p in SQL_POLICIES)
    assert all(in_sql(opts(p, limit=500)) for p in SQL_POLICIES)  # past the first hundreds
    assert all(in_sql(opts(p, limit=None)) for p in SQL_POLICIES)  # every document
    assert in_sql(opts("identifier_bm25_fused", {"weight": 4.0}))  # the installed value
    assert not in_sql(opts("identifier_bm25_fused", {"weight": 2.0}))
    assert not in_sql(opts("structure_bm25", {"w_name": 1.0}))
    for learned in ("model_hints_baseline_first", "model_structure_weighted"):
        assert not in_sql(RankOptions(get_policy(learned), 10, None, "any"))


def test_other_parameter_values_rank_the_composed_way(
    conn: psycopg.Connection[Any], corpus: list[Document]
) -> None:
    for policy, params in (
        ("identifier_bm25_fused", {"weight": 0.5}),
        ("identifier_bm25_rrf", {"k": 5.0}),
        ("structure_bm25", {"w_name": 1.0, "test_prior": 1.0}),
    ):
        api, composed = _both(conn, "std", "read a config file", policy, 10, params=params)
        assert api == composed
        default, _ = _both(conn, "std", "read a config file", policy, 10)
        assert [c.score for c in api.candidates] != [c.score for c in default.candidates]


@contextmanager
def _traced(conn: psycopg.Connection[Any], path: Path) -> Iterator[None]:
    """libpq's trace of what the client sends, written to ``path``."""
    with path.open("w") as out:
        conn.pgconn.trace(out.fileno())
        conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            yield
        finally:
            conn.pgconn.untrace()


def _round_trips(path: Path) -> list[str]:
    """The statements a trace sent, one per round trip (a simple Query, or a Sync
    after the extended protocol's Parse/Bind/Execute)."""
    sent = [line.split("\t") for line in path.read_text().splitlines()]
    trips, text = [], ""
    for fields in sent:
        if fields[0] != "F" or len(fields) < 3:
            continue
        kind = fields[2]
        if kind in ("Parse", "Query"):
            text = fields[3]
        if kind in ("Query", "Sync"):
            trips.append(text)
    return trips


def test_rank_snapshot_is_one_statement(
    conn: psycopg.Connection[Any], corpus: list[Document], tmp_path: Path
) -> None:
    trace = tmp_path / "trace"
    conn.prepare_threshold = None  # psycopg prepares a statement run often in a trip of its own
    for policy in SQL_POLICIES:
        hints = ["a"] if policy == "external_hints_baseline_first" else None
        with _traced(conn, trace):
            ranking = rank_snapshot(
                conn, "demo", "read config", policy=policy, limit=2, hints=hints
            )
        trips = _round_trips(trace)
        assert len(trips) == 1 and "riido.search_ranked" in trips[0], (policy, trips)
        assert len(ranking.candidates) == 2
        for limit in (500, None):  # at every limit, every document too
            with _traced(conn, trace):
                rank_snapshot(conn, "demo", "read config", policy=policy, limit=limit, hints=hints)
            trips = _round_trips(trace)
            assert len(trips) == 1 and "riido.search_ranked" in trips[0], (policy, limit)
        with _traced(conn, trace):  # a search answer's texts too (riido-pg mcp)
            found = rank_with_texts(
                conn,
                "demo",
                "read config",
                RankOptions.check("read config", policy, 2, hints, None, None),
            )
        assert len(_round_trips(trace)) == 1 and len(found.texts) == 2
    with _traced(conn, trace):  # the reference: its transaction and its statements
        rank_composed(
            conn,
            "demo",
            "read config",
            RankOptions.check("read config", "bm25", 2, None, None, None),
        )
    assert len(_round_trips(trace)) > 3


def test_rank_snapshot_raises_the_composed_paths_errors(
    conn: psycopg.Connection[Any], corpus: list[Document]
) -> None:
    """An error of the one statement is answered by the composed path: the same
    RiidoError, words and hint (outside and inside the caller's transaction)."""

    def error(call: Any) -> tuple[type[BaseException], str, Any]:
        with pytest.raises(RiidoError) as caught:
            call()
        return type(caught.value), caught.value.message, caught.value.hint

    def check(snapshot: str, policy: str = "bm25", hints: list[str] | None = None) -> None:
        opts = RankOptions.check("q", policy, 10, hints, None, None)
        api = error(
            lambda: rank_snapshot(conn, snapshot, "q", policy=policy, limit=10, hints=hints)
        )
        assert api == error(lambda: rank_composed(conn, snapshot, "q", opts))

    check("nope")
    check("demo", "external_hints_baseline_first", ["a", "zz", "yy"])
    with conn.transaction(force_rollback=True):
        conn.execute(
            "INSERT INTO riido.snapshots (snapshot_id, text_config, state, document_count, "
            "content_digest, k1, b) VALUES ('half', 'english', 'loading', 0, '', 1.2, 0.75)"
        )
        check("half")
        check("nope")
        # the caller's transaction is still usable
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_a_database_without_the_function_ranks_the_composed_way(
    conn: psycopg.Connection[Any], corpus: list[Document]
) -> None:
    """A schema older than riido.search_ranked's current signature: the same ranking."""
    want = rank_snapshot(conn, "std", "parse the config file", policy="structure_bm25", limit=5)
    with conn.transaction(force_rollback=True):
        conn.execute(
            "DROP FUNCTION riido.search_ranked(text, text, bigint, text, text[], boolean) CASCADE"
        )
        got = rank_snapshot(conn, "std", "parse the config file", policy="structure_bm25", limit=5)
    assert got == want


@pytest.mark.parametrize("policy", ["bm25", "identifier_bm25_baseline_first", "structure_bm25"])
def test_the_texts_of_a_search_answer_are_read_by_its_statement(
    conn: psycopg.Connection[Any], corpus: list[Document], policy: str
) -> None:
    """What ``riido-pg mcp`` answers (a ranking and its candidates' texts): the same
    Found as the composed path's, the snapshot's own text of a document its base holds
    in another version (std2 changed some)."""
    for snapshot in ("std", "std2"):
        for query in ("parse the config file", "read json value", "the", "HTTPServer getValue"):
            opts = RankOptions.check(query, policy, 20, None, None, None)
            got = rank_with_texts(conn, snapshot, query, opts)
            assert got == rank_with_texts_composed(conn, snapshot, query, opts)
            assert set(got.texts) == {c.id for c in got.ranking.candidates}
    opts = RankOptions.check("parse config", policy, 300, None, None, None)
    texts = rank_with_texts(conn, "std2", "parse config", opts).texts
    assert any(t.endswith(" parse config") for t in texts.values())
