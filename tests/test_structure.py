"""structure_bm25: the body's two columns, the name field and the test and example
priors, each
recomputed here in Python (PostgreSQL supplies only its tokens, as in test_bm25);
the fields' SQL functions equal their Python twins; fields travel with the content
(a snapshot on a base ranks as its fresh copy); eval agrees with the SQL ranking."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.corpus import stdlib_functions
from support.database import Database

from riido_pg import load_snapshot, rank_snapshot
from riido_pg.documents import Document, DocumentStream
from riido_pg.evaluation import evaluate, store_corpus
from riido_pg.fields import (
    about_examples,
    about_tests,
    has_test_attribute,
    in_test_module,
    is_example_id,
    is_test_document,
    is_test_id,
    name_words,
    qualified_words,
)
from riido_pg.ranking.policies import (
    BM25,
    OUT_OF_SCOPE,
    STRUCTURE_BM25,
    STRUCTURE_EXAMPLE_PRIOR,
    STRUCTURE_LENGTH_PRIOR,
    STRUCTURE_NAME_MATCH,
    STRUCTURE_RECENT_PRIOR,
    STRUCTURE_TEST_PRIOR,
    STRUCTURE_W_IDENT,
    STRUCTURE_W_NAME,
    evaluated_policies,
)
from riido_pg.ranking.policy.structure import length_factors
from riido_pg.splitting import split_identifiers

K1, B = 1.2, 0.75
SCALE = float(1 << 40)
QUERIES = [
    "parse a quoted string",
    "read config file sections",
    "encode json object to string",
    "test that the decoder raises on bad input",
    "wrap text paragraphs to width",
    "fnmatch translate",
    "RawConfigParser readfp",
    "example of a shell pattern translated",
    "docs: translate a pattern in a Tests example",
    "the",
    "invoke the shlex split",
    "read a config file",
    "config parser read file",
]
#: Test documents: each tests a function of the stdlib corpus, in words the
#: implementation also uses.
TESTS = [
    Document(
        "tests/test_fnmatch.py:test_translate:1",
        "def test_translate():\n"
        "    # translate a shell pattern to a regular expression\n"
        "    assert fnmatch.translate('*.py') == r'(?s:.*\\.py)\\Z'  # regular expression",
    ),
    Document(
        "tests/test_textwrap.py:TestWrap.test_wrap:5",
        "def test_wrap(self):\n    # wrap text paragraphs to width, wrap text width\n"
        "    self.assertEqual(textwrap.wrap('text paragraphs', width=5), ['text'])",
    ),
    Document("shlex_test.go:TestSplit:3", "func TestSplit(t *testing.T) { split(shlex) }"),
]
#: Documentation and example code: it uses the words of the code it shows, and more.
EXAMPLES = [
    Document(
        "examples/demo.py:main:1",
        "def main():\n    # a shell pattern, translated\n    print(fnmatch.translate('*.py'))",
    ),
    Document(
        "docs/examples/tests/test_demo.py:test_wrap_demo:1",
        "def test_wrap_demo():\n    # wrap text paragraphs to width, wrap text width\n"
        "    assert textwrap.wrap('text paragraphs', width=5)",
    ),
    Document("docs/conf.py:setup:3", "def setup(app):\n    app.add_config_value('encode', 'json')"),
]


def _counts(conn: psycopg.Connection[Any], text: str) -> dict[str, int]:
    rows = conn.execute(
        "SELECT lexeme, cardinality(positions) FROM unnest(to_tsvector('english', %s))", (text,)
    ).fetchall()
    return {str(lex): int(n) for lex, n in rows}


def _units(docs: dict[str, dict[str, int]], query: set[str], b: float) -> dict[str, int]:
    """BM25 (README "Ranking") of every document, as the integer units of 2^-40 the
    SQL sums (each term's weight rounded to the nearest unit)."""
    n = len(docs)
    dl = {d: sum(t.values()) for d, t in docs.items()}
    avgdl = sum(dl.values()) / n if b else 1.0
    df: dict[str, int] = {}
    for terms in docs.values():
        for lex in terms:
            df[lex] = df.get(lex, 0) + 1
    out = {}
    for d, terms in docs.items():
        units = 0
        for lex in query:
            tf = terms.get(lex, 0)
            if tf:
                idf = math.log(1 + (n - df[lex] + 0.5) / (df[lex] + 0.5))
                w = idf * tf / (tf + K1 * (1 - b + b * dl[d] / avgdl))
                units += round(w * SCALE)
        out[d] = units
    return out


def _length_factor(conn: psycopg.Connection[Any], text: str) -> float:
    """The length prior: (1 + ln(1 + the raw column's length)) ^ its exponent, the
    length being the raw tsvector's positions (BM25's dl)."""
    dl = sum(_counts(conn, text).values())
    return (1 + math.log(1 + dl)) ** STRUCTURE_LENGTH_PRIOR


def _recent_ids(docs: list[Document]) -> frozenset[str]:
    """The documents the "st" snapshot holds as recently changed (as a load of a git
    revision would): every fourth, a test and an example among them."""
    return frozenset([d.id for d in docs[::4]] + [TESTS[2].id, EXAMPLES[2].id])


@pytest.fixture(scope="module")
def corpus(db: Database) -> list[Document]:
    docs = [*stdlib_functions(250), *TESTS, *EXAMPLES]
    recent = _recent_ids(docs)
    stream = DocumentStream(lambda: iter(docs), where="st", checked=False, recent=lambda: recent)
    with db.connect() as conn:
        load_snapshot(conn, "st", stream)
    return docs


def _expected(
    conn: psycopg.Connection[Any], docs: list[Document], query: str
) -> list[tuple[str, float, float, float, float]]:
    raw_q, ident_q = (set(_counts(conn, q)) for q in (query, split_identifiers(query)))
    raw = _units({d.id: _counts(conn, d.text) for d in docs}, raw_q, B)
    ident = _units({d.id: _counts(conn, split_identifiers(d.text)) for d in docs}, ident_q, B)
    name = _units({d.id: _counts(conn, name_words(d.id)) for d in docs}, ident_q, 0.0)
    words = split_identifiers(query).lower().split()
    about = any(w in {"test", "tests", "testing"} for w in words)
    about_ex = any(w in {"doc", "docs", "example", "examples"} for w in words)
    recent = _recent_ids(docs)
    rows = []
    for d in docs:
        r, i, n = (x[d.id] / SCALE for x in (raw, ident, name))
        score = r + STRUCTURE_W_IDENT * i + STRUCTURE_W_NAME * n
        score *= _length_factor(conn, d.text)
        qualified = set(_counts(conn, qualified_words(d.id)))
        if qualified and qualified <= ident_q:
            score *= STRUCTURE_NAME_MATCH
        prior = 1.0
        if is_test_document(d.id, d.text) and not about:
            prior = STRUCTURE_TEST_PRIOR
        if is_example_id(d.id) and not about_ex:
            prior = min(prior, STRUCTURE_EXAMPLE_PRIOR)
        if d.id in recent and prior == 1.0:  # a demoted kind is not lifted
            prior *= STRUCTURE_RECENT_PRIOR
        score *= prior
        rows.append((d.id, score, r, i, n))
    matched = sorted((x for x in rows if x[1] > 0), key=lambda x: (-x[1], x[0].encode()))
    zero = sorted((x for x in rows if x[1] <= 0), key=lambda x: x[0].encode())
    return matched + [(i, 0.0, r, d, n) for i, _, r, d, n in zero]


@pytest.mark.parametrize("query", QUERIES)
def test_each_field_and_the_score_match_the_python_reference(
    conn: psycopg.Connection[Any], corpus: list[Document], query: str
) -> None:
    got = rank_snapshot(conn, "st", query, policy=STRUCTURE_BM25)
    if query == "the":  # no identifier lexeme: the bm25 fallback, as every identifier policy
        assert got.policy == OUT_OF_SCOPE
        assert got.candidates == rank_snapshot(conn, "st", query).candidates
        return
    assert got.policy == STRUCTURE_BM25
    rows = [
        (c.id, c.score, c.bm25_score, c.identifier_bm25_score, c.name_bm25_score)
        for c in got.candidates
    ]
    want = _expected(conn, corpus, query)
    assert [r[0] for r in rows] == [w[0] for w in want]
    for r, w in zip(rows, want, strict=True):
        assert r[2:] == pytest.approx(w[2:], rel=1e-12, abs=0), r[0]  # per field
        assert r[1] == pytest.approx(w[1], rel=1e-12, abs=0), r[0]
    for k in (1, 5, 40):
        top = rank_snapshot(conn, "st", query, policy=STRUCTURE_BM25, limit=k)
        assert top.candidates == got.candidates[:k]


def test_the_name_field_matters(conn: psycopg.Connection[Any], corpus: list[Document]) -> None:
    """A query naming a function's path and name finds it first; some query reorders
    bm25's ranking."""
    first = rank_snapshot(conn, "st", "fnmatch translate", policy=STRUCTURE_BM25, limit=1)
    assert first.candidates[0].id.startswith("fnmatch.py:translate:")
    assert (first.candidates[0].to_dict()["name_bm25_score"] or 0) > 0


def test_a_test_does_not_outrank_its_implementation_unless_asked(
    conn: psycopg.Connection[Any], corpus: list[Document]
) -> None:
    query = "translate a shell pattern to a regular expression"
    test_id = TESTS[0].id
    plain = [c.id for c in rank_snapshot(conn, "st", query).candidates]
    structured = [c.id for c in rank_snapshot(conn, "st", query, policy=STRUCTURE_BM25).candidates]
    implementation = next(i for i in plain if i.startswith("fnmatch.py:translate:"))
    assert plain.index(test_id) < plain.index(implementation)  # bm25: the test above it
    assert structured.index(implementation) < structured.index(test_id)
    asked = rank_snapshot(conn, "st", f"test {query}", policy=STRUCTURE_BM25, limit=1)
    assert asked.candidates[0].id == test_id


def _stored_tests(conn: psycopg.Connection[Any], snapshot: str) -> list[str]:
    """The ids a snapshot's stored kind postings make tests, sorted."""
    rows = conn.execute(
        "SELECT d.doc_id FROM riido.postings AS p "
        "JOIN riido.snapshot_segments AS s USING (segment_id) "
        "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
        "AND d.doc_ord = ANY(p.doc_ords) "
        "WHERE s.snapshot_id = %s AND p.col = 'kind' AND p.lexeme = 'test'",
        (snapshot,),
    )
    return sorted(r[0] for r in rows)


def test_a_load_stores_the_kinds_of_the_python_rule(db: Database) -> None:
    """sql/segment_fields.sql writes the test rule out (migration 0016 runs it before
    riido.test_id exists): the kinds a load stores are those of is_test_id."""
    ids = sorted({i for i in _SAMPLE_IDS if i})
    with db.connect() as conn:
        load_snapshot(conn, "st-kinds", [Document(i, f"text {n}") for n, i in enumerate(ids)])
        stored = _stored_tests(conn, "st-kinds")
    assert stored == [i for i in ids if is_test_id(i)]
    assert any(in_test_module(i) for i in ids) and any(not is_test_id(i) for i in ids)


def test_a_rust_unit_test_module_is_a_test(db: Database) -> None:
    """A function of ``mod tests`` inside a source file gets the test prior (its kind
    is stored at load) unless the question is about tests."""
    implementation = Document(
        "src/uri/path.rs:PathAndQuery.from_shared:21",
        "pub fn from_shared(src: Bytes) -> Result<Self, InvalidUri> {\n"
        "    let mut query = NONE;\n    scan_path_and_query(&src)?\n}",
    )
    inline = Document(
        "src/uri/path.rs:tests.rejects_empty_string:641",
        "fn rejects_empty_string() {\n    // an empty path: from_shared rejects it\n"
        "    assert!(PathAndQuery::from_shared(Bytes::new()).is_err());\n}",
    )
    other = [
        Document(f"src/lib.rs:f{i}:{i}", f"fn f{i}() {{ encode header {i} }}") for i in range(20)
    ]
    query = "reject an empty path in from_shared"
    with db.connect() as conn:
        load_snapshot(conn, "st-rust", [implementation, inline, *other])
        assert _stored_tests(conn, "st-rust") == [inline.id]
        plain = [c.id for c in rank_snapshot(conn, "st-rust", query, policy=BM25).candidates]
        assert plain.index(inline.id) < plain.index(implementation.id)  # bm25: the test first
        structured = rank_snapshot(conn, "st-rust", query, policy=STRUCTURE_BM25, limit=1)
        assert structured.candidates[0].id == implementation.id
        asked = rank_snapshot(conn, "st-rust", f"test {query}", policy=STRUCTURE_BM25, limit=1)
        assert asked.candidates[0].id == inline.id


_ATTRIBUTED = [  # (text, whether its leading attributes make a Rust test)
    ("#[test]\nfn a() {}", True),
    ('    /// Checks a.\n    #[tokio::test(flavor = "multi_thread")]\n    async fn a() {}', True),
    ("#[rstest]\n#[case(1)]\nfn a(x: u8) {}", True),
    ("#[wasm_bindgen_test]\nfn a() {}", True),
    ("// a comment\n#[ test ]\nfn a() {}", True),
    ("#[inline]\n#[cfg(test)]\npub fn helper() {}", True),
    ("/* block */\n#[test] fn a() {}", True),
    ("fn a() {\n    #[test]\n    fn b() {}\n}", False),  # in the body: no
    ("#[inline]\npub fn latest() {}", False),
    ('#[cfg(feature = "test")]\nfn a() {}', False),
    ("#[test_case(1)]\nfn a() {}", False),  # its path ends in test_case
    ("#[cfg(not(test))]\nfn a() {}", False),
    ("/// #[test]\nfn a() {}", False),  # in a doc comment
    ("", False),
]


def test_rust_test_attributes() -> None:
    """A Rust function is a test when an attribute among its leading lines has a path
    ending in ``test`` or is ``#[cfg(test)]``; only for a ``.rs`` path."""
    for text, marked in _ATTRIBUTED:
        assert has_test_attribute(text) is marked, text
        assert is_test_document("src/header/map.rs:test_bounds:10", text) is marked, text
        assert not is_test_document("src/header/map.py:test_bounds:10", text), text
    assert is_test_document("src/uri/path.rs:tests.rejects_empty_string:641", "fn r() {}")
    assert is_test_document("tests/a.py:f:1", "def f(): pass")


def test_a_rust_test_attribute_makes_a_test(db: Database) -> None:
    """A ``#[test]`` function outside any test module (``src/header/map.rs:test_bounds``)
    is stored as a test at load, from its text, and gets the test prior unless the
    question is about tests; an attribute in the body or in a .py file does not count."""
    implementation = Document(
        "src/header/map.rs:HeaderMap.reserve:310",
        "pub fn reserve(&mut self, additional: usize) {\n    self.try_reserve(additional)\n}",
    )
    attributed = Document(
        "src/header/map.rs:test_bounds:4018",
        "#[test]\nfn test_bounds() {\n    // reserve the additional capacity\n"
        "    let mut map = HeaderMap::new();\n    map.reserve(additional);\n}",
    )
    body = Document("src/header/map.rs:outer:20", "fn outer() {\n    #[test]\n    fn inner() {}\n}")
    python = Document("src/a.py:f:1", "#[test]\ndef f(): pass")
    other = [
        Document(f"src/lib.rs:f{i}:{i}", f"fn f{i}() {{ encode header {i} }}") for i in range(20)
    ]
    query = "reserve additional capacity"
    with db.connect() as conn:
        docs = [implementation, attributed, body, python, *other]
        load_snapshot(conn, "st-attr", docs, fresh=True)
        assert _stored_tests(conn, "st-attr") == [attributed.id]
        plain = [c.id for c in rank_snapshot(conn, "st-attr", query, policy=BM25).candidates]
        assert plain.index(attributed.id) < plain.index(implementation.id)  # bm25: test first
        structured = rank_snapshot(conn, "st-attr", query, policy=STRUCTURE_BM25, limit=1)
        assert structured.candidates[0].id == implementation.id
        asked = rank_snapshot(conn, "st-attr", f"test {query}", policy=STRUCTURE_BM25, limit=1)
        assert asked.candidates[0].id == attributed.id


def test_example_code_does_not_outrank_the_code_it_shows_unless_asked(
    conn: psycopg.Connection[Any], corpus: list[Document]
) -> None:
    query = "translate a shell pattern to a regular expression"
    example_id = EXAMPLES[0].id
    plain = [c.id for c in rank_snapshot(conn, "st", query, policy=BM25).candidates]
    structured = [c.id for c in rank_snapshot(conn, "st", query, policy=STRUCTURE_BM25).candidates]
    implementation = next(i for i in structured if i.startswith("fnmatch.py:translate:"))
    assert plain.index(example_id) < plain.index(implementation)  # bm25: the example first
    assert structured[0] == implementation
    # asked about examples, the example is no longer demoted: it comes second, after
    # only the implementation, whose qualified name (translate) the question holds
    asked = rank_snapshot(conn, "st", f"example: {query}", policy=STRUCTURE_BM25, limit=2)
    assert [c.id for c in asked.candidates] == [implementation, example_id]
    assert structured.index(example_id) > 1


def test_which_questions_are_about_tests_or_examples() -> None:
    assert about_tests("Tests for the parser") and about_tests("fix pytest fixture")
    assert not about_tests("latest parser") and not about_tests("contest")
    assert about_examples("docs: fix the tutorial") and about_examples("Add an Example")
    assert not about_examples("doctest runner") and not about_examples("sampled values")
    assert not about_tests("docs example") and not about_examples("test runner")


def test_kinds() -> None:
    assert is_example_id("docs/conf.py:setup:1") and is_example_id("a/benchmarks/b.py:f:1")
    assert is_example_id("examples/app.go:main:1") and not is_example_id("example.py:f:1")
    assert not is_example_id("src/docs.py:f:1") and not is_example_id("docs")
    assert is_test_id("docs/examples/tests/test_demo.py:t:1")
    # Rust's unit tests: a container named test(s) or *_test(s) above the last part
    for inline in (
        "src/uri/path.rs:tests.rejects_empty_string:641",
        "src/header/value.rs:try_from_header_name_tests.it_converts:572",
        "src/method.rs:test.test_extension_method:462",
        "src/a.rs:outer.tests.inner.f:3#2",
        "lib.rs:unit_test.f:1",
    ):
        assert in_test_module(inline) and is_test_id(inline), inline
    for plain in (
        "src/header/map.rs:test_bounds:3876",  # no container: a name alone decides nothing
        "riido_pg/fields.py:test_path:1",
        "src/a.py:Tests.run:1",  # case counts
        "src/a.rs:contests.f:1",
        "src/a.rs:tests:1",
        "tests.f",  # no qualified name
        "src/a.rs:latest.f:1",
    ):
        assert not in_test_module(plain), plain


_SAMPLE_IDS = [
    "src/flask/json/__init__.py:jsonify:150",
    "tests/test_json.py:test_jsonify_basic_types:30",
    "pkg/parser_test.go:TestParse:1",
    "web/button.spec.jsx:render:2",
    "getHTTPResponseCode",
    "conftest.py:app:1",
    "a/testing/b.py",
    "docs/conf.py:setup:1",
    "examples//demo.py:main:1",
    "src/examples:x",
    "/benchmarks/b.py:run:1",
    "samples/",
    "click/testing.py:CliRunner.invoke:10",
    "x.test.ts:f:1",
    "ParserTests.cs:M:1",
    "src/uri/path.rs:tests.rejects_empty_string:641",
    "src/a.rs:outer.unit_tests.f:3#2",
    "src/a.rs:test_bounds:10",
    "a:b:tests.c",
    "",
]

names = st.text(
    alphabet=st.sampled_from("aAbBzZ09_-./:é $\n"), min_size=1, max_size=30
) | st.sampled_from(_SAMPLE_IDS)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ids=st.lists(names, min_size=1, max_size=20))
def test_the_sql_fields_equal_their_python_twins(
    conn: psycopg.Connection[Any], ids: list[str]
) -> None:
    rows = conn.execute(
        "SELECT riido.name_words(i), riido.test_id(i), "
        "riido.example_path(split_part(i, ':', 1)), riido.qualified_words(i) "
        "FROM unnest(%s::text[]) WITH ORDINALITY AS u(i, n) ORDER BY n",
        (ids,),
    ).fetchall()
    assert rows == [
        (name_words(i), is_test_id(i), is_example_id(i), qualified_words(i)) for i in ids
    ]


texts = st.text(alphabet=st.sampled_from("#[]():/*!_ \t\ntesfcgrk"), max_size=40) | st.sampled_from(
    [t for t, _ in _ATTRIBUTED]
)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(docs=st.lists(st.tuples(names, texts), min_size=1, max_size=20))
def test_the_sql_test_document_equals_its_python_twin(
    conn: psycopg.Connection[Any], docs: list[tuple[str, str]]
) -> None:
    ids = [i.replace("\x00", "") + (".rs" if n % 2 else "") for n, (i, _) in enumerate(docs)]
    bodies = [t for _, t in docs]
    rows = conn.execute(
        "SELECT riido.test_document(i, b) FROM unnest(%s::text[], %s::text[]) "
        "WITH ORDINALITY AS u(i, b, n) ORDER BY n",
        (ids, bodies),
    ).fetchall()
    assert [r[0] for r in rows] == [
        is_test_document(i, b) for i, b in zip(ids, bodies, strict=True)
    ]


_HOSTILE_TEXTS = [  # (text, marked): sizes a 1 MB source file allows, and malformed attributes
    ("//x\n" * 200_000 + "#[test]\nfn a() {}", True),  # 200,000 leading comment lines
    ("//x\n" * 200_000 + "fn a() {}", False),
    ("#[inline]\n" * 100_000 + "#[tokio::test]\nfn a() {}", True),
    ("#[" + "a" * 500_000, False),  # an attribute that never closes
    ("#[" + "a::" * 200_000 + "test]", True),  # a path of 200,000 parts
    ("#[" + "a::" * 200_000, False),
    (" \t" * 300_000 + "\n#[cfg(test)]", True),
    ("/*" * 300_000, False),
    ("#[test" + "\u00e9" * 100_000, False),
]


def test_hostile_texts_are_judged_alike_in_python_and_sql(
    conn: psycopg.Connection[Any],
) -> None:
    """Huge or malformed leading lines neither hang nor mislead the test attribute rule:
    Python's ``re`` and PostgreSQL's regular expressions give the same answer."""
    doc_id = "src/lib.rs:a:1"
    for text, marked in _HOSTILE_TEXTS:
        assert has_test_attribute(text) is marked, text[:20]
        (got,) = conn.execute("SELECT riido.test_document(%s, %s)", (doc_id, text)).fetchone()  # type: ignore[misc]
        assert got is marked, text[:20]


def test_qualified_words() -> None:
    assert qualified_words("src/click/core.py:Context.invoke:740") == "context invoke"
    assert qualified_words("a.go:HTTPServer.Serve:7#2") == "http server serve"
    assert qualified_words("click:click/_compat.py:is_ascii_encoding:36") == "is ascii encoding"
    assert qualified_words("c12") == "" and qualified_words("a.py:f") == "f"
    assert qualified_words("a.py:12") == ""


def test_a_question_holding_a_qualified_name_lifts_it(
    conn: psycopg.Connection[Any], corpus: list[Document]
) -> None:
    """A document whose qualified name's words are all in the question
    (``configparser.py:read``) scores the sum of its fields times the length prior,
    the name match and (recently changed) the recency prior; one whose qualified name
    the question holds only in part is not lifted."""
    query = "read a config file"
    recent = _recent_ids(corpus)
    got = {c.id: c for c in rank_snapshot(conn, "st", query, policy=STRUCTURE_BM25).candidates}
    texts = {d.id: d.text for d in corpus}
    lifted = []
    for doc_id, c in got.items():
        assert c.score is not None
        fields = (c.bm25_score or 0) + STRUCTURE_W_IDENT * (c.identifier_bm25_score or 0)
        fields += STRUCTURE_W_NAME * (c.to_dict()["name_bm25_score"] or 0)
        fields *= _length_factor(conn, texts[doc_id])
        lexemes = set(_counts(conn, qualified_words(doc_id)))  # before_read: {read}
        held = bool(lexemes) and lexemes <= set(_counts(conn, query))
        factor = STRUCTURE_NAME_MATCH if held else 1.0
        factor *= STRUCTURE_RECENT_PRIOR if doc_id in recent else 1.0
        if not is_test_id(doc_id) and not is_example_id(doc_id):
            assert c.score == pytest.approx(fields * factor, rel=1e-12), doc_id
            lifted += [doc_id] if held else []
    assert lifted and all(got[i].score for i in lifted)


def test_name_words() -> None:
    assert name_words("src/flask/json/__init__.py:jsonify:150") == "src flask json init py jsonify"
    assert (
        name_words("pkg/http.go:HTTPServer.ServeHTTP2:7") == "pkg http go http server serve http 2"
    )
    assert name_words("c12") == "c 12"


def test_fields_travel_with_the_content(
    conn: psycopg.Connection[Any], corpus: list[Document]
) -> None:
    """A snapshot on a base (one document changed, one added, one gone) ranks exactly
    as its fresh copy, fields included."""
    docs = list(corpus)
    changed = Document(docs[3].id, docs[3].text + "\n# read config json")
    new = [*docs[:3], changed, *docs[5:], Document("tests/test_new.py:test_read:1", "read config")]
    load_snapshot(conn, "st-next", new, base="st")
    load_snapshot(conn, "st-fresh", new, fresh=True)
    row = conn.execute("SELECT base FROM riido.snapshots WHERE snapshot_id = 'st-next'").fetchone()
    assert row == ("st",)
    for query in [*QUERIES, "read config", "test read"]:
        a = rank_snapshot(conn, "st-next", query, policy=STRUCTURE_BM25).candidates
        b = rank_snapshot(conn, "st-fresh", query, policy=STRUCTURE_BM25).candidates
        assert a == b, query


def test_eval_lists_it_and_agrees_with_the_sql_ranking(
    conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    assert STRUCTURE_BM25 in evaluated_policies()
    beir = tmp_path / "beir"
    beir.mkdir()
    import json

    docs = [*stdlib_functions(120), *TESTS, *EXAMPLES]
    (beir / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d.id, "text": d.text}) + "\n" for d in docs)
    )
    questions = {f"q{i}": q for i, q in enumerate(QUERIES[:-1])}
    (beir / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in questions.items())
    )
    (beir / "qrels").mkdir()
    targets = {k: docs[(7 * i) % len(docs)].id for i, k in enumerate(questions)}
    targets["q3"] = TESTS[0].id
    targets["q7"] = EXAMPLES[0].id
    targets["q8"] = TESTS[1].id
    (beir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{k}\t{v}\t1\n" for k, v in targets.items())
    )
    stored = store_corpus(conn, beir)
    result = evaluate(conn, stored.snapshot_id, policies=[BM25, STRUCTURE_BM25])
    assert len(result.results) == len(questions)
    for r in result.results:
        ranking = rank_snapshot(
            conn, stored.snapshot_id, questions[r.question_id], policy=STRUCTURE_BM25
        )
        first = next(c.rank for c in ranking.candidates if c.id == targets[r.question_id])
        assert r.ranks[STRUCTURE_BM25] == first, r.question_id


def test_migration_0010_builds_the_fields_of_stored_snapshots(db: Database) -> None:
    """Down to 0009 (no fields), up again: the upgrade builds every stored segment's
    name and kind postings, so snapshots rank as before, a snapshot on a base too."""
    from riido_pg.server import migrate

    docs = [*stdlib_functions(60), *TESTS, *EXAMPLES]
    with db.connect() as conn:
        load_snapshot(conn, "mig-f", docs)
        load_snapshot(conn, "mig-g", [*docs[1:], Document("glob.py:glob:1", "glob")], base="mig-f")

        def rankings(c: psycopg.Connection[Any]) -> dict[str, Any]:
            return {
                (s, q): rank_snapshot(c, s, q, policy=STRUCTURE_BM25).candidates
                for s in ("mig-f", "mig-g")
                for q in (
                    "translate a shell pattern",
                    "glob",
                    "test translate",
                    "translate a shell pattern",
                    "example translate pattern",
                )
            }

        before = rankings(conn)
    migrate.downgrade(db.dsn, "0009")
    with psycopg.connect(db.dsn) as conn:
        row = conn.execute("SELECT count(*) FROM riido.postings WHERE col IN ('name', 'kind')")
        assert row.fetchone() == (0,)
    migrate.upgrade(db.dsn)
    with db.connect() as conn:
        assert rankings(conn) == before


@pytest.mark.parametrize("query", ["read a config file", "config parser read file"])
def test_a_limit_keeps_the_name_match_exact(
    conn: psycopg.Connection[Any], corpus: list[Document], query: str
) -> None:
    """With a limit the name match is looked at only for documents that may reach the
    first k with it; every k still gives exactly the full ranking's first k."""
    full = rank_snapshot(conn, "st", query, policy=STRUCTURE_BM25).candidates
    for k in range(1, 25):
        assert (
            rank_snapshot(conn, "st", query, policy=STRUCTURE_BM25, limit=k).candidates
            == (full[:k])
        ), k


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.integers(min_value=0, max_value=2_000_000), min_size=1, max_size=40),
    st.sampled_from([0.05, 0.1, 0.25, 1.0, 2.5]),
)
def test_the_length_factors_equal_postgresqls(
    conn: psycopg.Connection[Any], lengths: list[int], exponent: float
) -> None:
    """The evaluation's length prior (one factor per distinct length) is, bit for bit,
    PostgreSQL's power(1 + ln(1 + len), e) in float8, in the order of the lengths."""
    got = length_factors(np.asarray(lengths, dtype=np.int64), exponent)
    want = conn.execute(
        "SELECT power(1::float8 + ln(1::float8 + n::float8), %s::float8) "
        "FROM unnest(%s::int8[]) WITH ORDINALITY AS u(n, o) ORDER BY o",
        (exponent, lengths),
    ).fetchall()
    assert got.tolist() == [w for (w,) in want]


def test_the_length_prior_lifts_the_longer_of_two_equal_matches(db: Database) -> None:
    """Two functions matching a question alike, one with more (unmatched) words: BM25
    alone ranks the shorter first; the length prior, enough to outweigh the length
    normalisation here, puts the longer first, and 0 keeps BM25's order."""
    short = Document("a.py:parse_header:1", "def parse_header(line): return split(line)")
    long = Document(
        "b.py:parse_header:1",
        "def parse_header(line):\n" + "    value = other(value, more, words, here)\n" * 12,
    )
    filler = [Document(f"c.py:f{i}:1", f"def f{i}(x): return unrelated_{i}(x)") for i in range(20)]
    with db.connect() as c:
        load_snapshot(c, "st-length", [short, long, *filler])
        ranked = [x.id for x in rank_snapshot(c, "st-length", "parse header").candidates][:2]
        assert ranked == [short.id, long.id]
        for exponent, first in ((0.0, short.id), (3.0, long.id)):
            got = rank_snapshot(
                c,
                "st-length",
                "parse header",
                policy=STRUCTURE_BM25,
                params={"length_prior": exponent},
            )
            assert got.candidates[0].id == first, exponent
