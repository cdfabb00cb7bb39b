"""A query's searchable words: its distinct lexemes for each column.

The query goes through the snapshot's text search configuration exactly as the
documents did: the raw text for ``tsv_raw``, its identifier-split form for
``tsv_ident`` (``sql/query_lexemes.sql``).
"""

from __future__ import annotations

from dataclasses import dataclass

from riido_pg.fields import about_examples as _about_examples
from riido_pg.fields import about_tests as _about_tests
from riido_pg.resources import sql_text
from riido_pg.server.connect import Conn
from riido_pg.server.plans import Plan, Query, run
from riido_pg.splitting import split_identifiers

__all__ = [
    "MAX_IDENTIFIER_QUERY_BYTES",
    "MAX_IDENTIFIER_QUERY_LEXEMES",
    "QueryTerms",
    "query_terms",
    "terms_plan",
]

#: Identifier hints are out of scope (the bm25 fallback) past this many distinct
#: identifier-split query lexemes ...
MAX_IDENTIFIER_QUERY_LEXEMES = 256
#: ... or past this many bytes of identifier-split query.
MAX_IDENTIFIER_QUERY_BYTES = 4_096


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """A query's distinct lexemes for each column."""

    raw: list[str]
    ident: list[str]
    ident_text: str

    @property
    def identifier_in_scope(self) -> bool:
        return (
            0 < len(self.ident) <= MAX_IDENTIFIER_QUERY_LEXEMES
            and len(self.ident_text.encode("utf-8")) <= MAX_IDENTIFIER_QUERY_BYTES
        )

    @property
    def searchable(self) -> bool:
        """Whether any word of the query survives the text search configuration."""
        return bool(self.raw or self.ident)

    @property
    def about_tests(self) -> bool:
        """Whether the question asks about tests (:func:`riido_pg.fields.about_tests`
        of its identifier-split form)."""
        return _about_tests(self.ident_text)

    @property
    def about_examples(self) -> bool:
        """Whether the question asks about documentation, examples or benchmarks
        (:func:`riido_pg.fields.about_examples` of its identifier-split form)."""
        return _about_examples(self.ident_text)

    def of(self, column: str) -> list[str]:
        """The lexemes of one column (``raw``, ``ident``, or ``name``: the name field
        is searched with the identifier-split query)."""
        if column == "raw":
            return self.raw
        if column in ("ident", "name"):
            return self.ident
        raise ValueError(f"no column {column!r}")


def terms_plan(query: str, text_config: str) -> Plan[QueryTerms]:
    """The query's distinct lexemes for each column under ``text_config``."""
    ident_text = split_identifiers(query)
    result = yield Query(
        sql_text("query_lexemes"),
        {"text_config": text_config, "raw": query, "ident": ident_text},
    )
    raw, ident = result.one()
    return QueryTerms(list(raw), list(ident), ident_text)


def query_terms(conn: Conn, query: str, text_config: str) -> QueryTerms:
    """:func:`terms_plan` on a connection."""
    return run(conn, terms_plan(query, text_config))
