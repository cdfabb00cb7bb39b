"""A document's fields beside its body: its *name* and its *kinds*.

Both are read from the document id, which a segment's documents row keeps with the
text key (a Rust test attribute from the text that key names), so they travel with
the content (a snapshot on a base shares them with the
segments it shares). A function extracted from a source tree has the id
``PATH:QUALNAME:LINE``, so its name is its path and qualified name; any other id is
read the same way (``c12`` names ``c 12``).

A document has kind ``test`` when its path is a test path or its qualified name lies
in a test module (:func:`in_test_module`: Rust's ``mod tests`` inside a source file),
or it is a Rust function its attributes mark as a test (:func:`is_test_document`:
``#[test]``, ``#[tokio::test]``, ``#[cfg(test)]``, read from the text's leading
attributes), and kind ``example`` when
its path lies in a documentation, example, demo, sample or benchmark directory
(:func:`riido_pg.extract.paths.is_doc_or_example_path`); it may have both.

A document's *qualified name* is the last ``:``-separated part of its id once a
trailing ``:LINE`` (or ``:LINE#N``) is dropped: ``Context.invoke`` in
``src/click/core.py:Context.invoke:740``; an id without ``:`` has none.

These are the Python twins of the SQL functions ``riido.name_words``,
``riido.test_id`` (migration ``0022``; ``riido.test_path`` of migration ``0010``
for its path part), ``riido.test_document`` (migration ``0023``: ``riido.test_id``
or the Rust attribute rule), ``riido.example_path`` (migration ``0011``) and
``riido.qualified_words`` (migration ``0015``); every load applies
the first three in the database (``sql/segment_fields.sql``), the ranking the last;
the tests hold them equal.
"""

from __future__ import annotations

import re

from riido_pg.extract.paths import DOC_OR_EXAMPLE_DIRS, is_doc_or_example_path, is_test_path

__all__ = [
    "EXAMPLE_WORDS",
    "TEST_ATTRIBUTE",
    "TEST_WORDS",
    "about_examples",
    "about_tests",
    "has_test_attribute",
    "id_path",
    "in_test_module",
    "is_example_id",
    "is_test_document",
    "is_test_id",
    "name_words",
    "qualified_words",
]

_STEPS = (
    (re.compile(r":[0-9]+\Z"), ""),
    (re.compile(r"([a-z])([A-Z])"), r"\1 \2"),
    (re.compile(r"([A-Z])([A-Z][a-z])"), r"\1 \2"),
    (re.compile(r"([A-Za-z])([0-9])"), r"\1 \2"),
    (re.compile(r"([0-9])([A-Za-z])"), r"\1 \2"),
    (re.compile(r"[^A-Za-z0-9]+"), " "),
)

#: Query words that make a question about tests: the test rule leaves test documents
#: where their score puts them (README "Fields").
TEST_WORDS = frozenset({"test", "tests", "testing", "tested", "pytest", "unittest", "spec"})
#: Query words that make a question about documentation, examples or benchmarks: the
#: example rule leaves such documents where their score puts them.
#: (the directory names that make code an example, and two words more)
EXAMPLE_WORDS = DOC_OR_EXAMPLE_DIRS | {"tutorial", "bench"}


def _words(ident_text: str) -> list[str]:
    return ident_text.lower().split()


def about_tests(ident_text: str) -> bool:
    """Whether a question (its identifier-split text) asks about tests: one of its
    words, lowercased, is in :data:`TEST_WORDS`."""
    return any(w in TEST_WORDS for w in _words(ident_text))


def about_examples(ident_text: str) -> bool:
    """Whether a question (its identifier-split text) asks about documentation,
    examples or benchmarks: one of its words, lowercased, is in :data:`EXAMPLE_WORDS`."""
    return any(w in EXAMPLE_WORDS for w in _words(ident_text))


def name_words(doc_id: str) -> str:
    """The name field's text: a trailing ``:LINE`` dropped, a space at every case
    change (``getURLPath`` -> ``get URL Path``) and between letters and digits, every
    other character (ASCII letters and digits aside) a separator, lowercased."""
    out = doc_id
    for pattern, repl in _STEPS:
        out = pattern.sub(repl, out)
    return out.strip(" ").lower()


_LINE = re.compile(r":[0-9]+(#[0-9]+)?\Z")
#: A container named ``test`` or ``tests``, or ending in ``_test`` or ``_tests``,
#: somewhere above a qualified name's last part.
_TEST_MODULE = re.compile(r"(?:\A|\.)(?:[A-Za-z0-9_]*_)?tests?\.")


def _qualified_name(doc_id: str) -> str:
    head = _LINE.sub("", doc_id)
    return head.rsplit(":", 1)[1] if ":" in head else ""


def qualified_words(doc_id: str) -> str:
    """The words of a document's qualified name (:func:`name_words` of it), or ``""``
    when its id has none: ``src/click/core.py:Context.invoke:740`` -> ``context
    invoke``."""
    qualified = _qualified_name(doc_id)
    return name_words(qualified) if qualified else ""


def in_test_module(doc_id: str) -> bool:
    """Whether a document's qualified name lies in a test module: a container above
    its last part is named ``test`` or ``tests`` or ends in ``_test`` or ``_tests``
    (case counts), as Rust's unit tests live in ``#[cfg(test)] mod tests`` inside the
    source file they test: ``src/uri/path.rs:tests.rejects_empty_string:641``, not
    ``src/a.rs:test_bounds:10`` (no container) nor ``src/a.py:Tests.run:1``."""
    return _TEST_MODULE.search(_qualified_name(doc_id)) is not None


def id_path(doc_id: str) -> str:
    """The path part of an id: everything before its first ``:``."""
    return doc_id.split(":", 1)[0]


def is_test_id(doc_id: str) -> bool:
    """Whether a document is test code: its id's path part is a test path, or its
    qualified name lies in a test module (:func:`in_test_module`)."""
    return is_test_path(id_path(doc_id)) or in_test_module(doc_id)


#: A Rust function's test attribute, as a regular expression that Python's ``re`` and
#: PostgreSQL (``riido.test_document``, migration 0023) read alike: among the text's
#: leading lines (blank, comment or attribute lines, before the first line of code),
#: a line opening with an attribute whose path ends in ``test`` (``#[test]``,
#: ``#[tokio::test(flavor = "multi_thread")]``, ``#[rstest]``,
#: ``#[wasm_bindgen_test]``) or with ``#[cfg(test)]``.
TEST_ATTRIBUTE = (
    r"^(?:[ \t]*(?://|/\*|\*|#!?\[)[^\n]*\n|[ \t]*\n)*"
    r"[ \t]*#\[[ \t]*(?:(?:[A-Za-z_][A-Za-z0-9_]*[ \t]*::[ \t]*)*[A-Za-z0-9_]*test[ \t]*[](]"
    r"|cfg[ \t]*\([ \t]*test[ \t]*\)[ \t]*\])"
)
_TEST_ATTRIBUTE = re.compile(TEST_ATTRIBUTE)


def has_test_attribute(text: str) -> bool:
    """Whether a Rust function's text carries a test attribute among its leading
    lines (:data:`TEST_ATTRIBUTE`): ``#[test]``, any attribute path ending in
    ``test`` (``#[tokio::test]``, ``#[rstest]``), or ``#[cfg(test)]``; an attribute
    inside the body (below the first line of code) does not count."""
    return _TEST_ATTRIBUTE.match(text) is not None


def is_test_document(doc_id: str, text: str) -> bool:
    """Whether a document is test code: :func:`is_test_id`, or its id's path part
    ends in ``.rs`` and its text carries a test attribute (:func:`has_test_attribute`:
    Rust's ``#[test]`` functions outside any test module)."""
    if is_test_id(doc_id):
        return True
    return id_path(doc_id).endswith(".rs") and has_test_attribute(text)


def is_example_id(doc_id: str) -> bool:
    """Whether a document is documentation, example, demo, sample or benchmark code:
    its id's path part lies in such a directory."""
    return is_doc_or_example_path(id_path(doc_id))
