"""Which commit subjects are questions, and the question's text (rules version 4).

A question is a commit's subject (git's ``%s``: the message's first paragraph on
one line) cleaned of what is not about the change, when what is left is a sentence
about code. Cleaning, in this order:

1. whitespace is folded to single spaces;
2. CI directives are removed anywhere: ``[skip ci]``, ``[ci skip]``, ``[no ci]``,
   ``[skip actions]`` and the like, ``***NO_CI***``;
3. a leading backport tag (``[3.12]``, ``[backport 2.0]``) and a leading tracker key
   (``ABC-123:``, ``[ABC-123]``, ``gh-1234:``, ``bpo-1234:``) are removed;
4. issue and pull request references are removed: a leading ``Fixed #12 --``,
   ``Refs #12, #13:`` (any of fix/fixes/fixed/close(s/d)/resolve(s/d)/ref(s)/see,
   with ``--``, ``-``, ``:`` or nothing after), ``(#1234)``, ``(gh-12, #13)``,
   ``(fixes #12)``, ``fixes #12`` / ``closes owner/repo#12`` anywhere, bare
   ``#1234``, ``owner/repo#12``, ``gh-1234``, ``bpo-1234``, ``!123``;
5. a Conventional Commits type is removed and its scope kept: ``fix(parser): x``
   becomes ``parser: x``, ``feat!: x`` becomes ``x``;
6. whitespace is folded again and stray separators (``-``, ``:``, ``,``) at the
   ends are trimmed;
7. what is left is cut at the longest a question may be
   (:data:`~riido_pg.documents.MAX_QUERY_BYTES` of UTF-8, on a character's boundary):
   a longer subject could never be asked with ``riido-pg query``.

A subject is left out, with the first reason that applies (checked on the subject
as written for the first three, on the cleaned text for the rest):

* ``merge``: a commit with several parents, or a subject starting ``Merge``;
* ``revert``: starting ``Revert`` or ``Reapply``;
* ``fixup``: starting ``fixup!``, ``squash!`` or ``amend!``;
* ``release``: a release, version or dependency bump: a first word release(d/s) /
  releasing, ``bump`` in any form anywhere, a subject starting with a version number,
  ``version`` followed by a number, ``prepare``/``preparing`` … release or a version,
  ``update`` … ``from <version> to <version>``, or the Conventional Commits types
  ``release``, ``deps`` and ``chore(deps)``/``build(deps)``;
* ``changelog``: ``changelog``, ``change log``, ``CHANGES.rst``/``.md``/``.txt``,
  ``release note(s)``, ``what's new``, ``news entry``, ``newsfragment``;
* ``typo``: ``typo(s)``, ``spelling``, ``misspell…``, ``grammar``;
* ``format``: formatting, style or lint work: a first word format(ted/ting),
  reformat…, restyle…, lint…, style…, the type ``style``, ``formatting``, ``lint``
  in any form, a subject about whitespace (starting ``whitespace``, or
  fix/remove/clean up/strip/tidy … whitespace), ``code style``/``coding style``,
  ``pep8``/``pep 8``, trailing spaces, or a formatter or linter named (black, isort,
  prettier, rustfmt, cargo fmt, gofmt, clang-format, yapf, autopep8, flake8, pylint, eslint, clippy,
  pre-commit, ruff);
* ``too_short``: fewer than :data:`MIN_WORDS` words (a word holds a letter) left.

Matching is case-insensitive. The rules are versioned (:data:`RULES_VERSION`): a
corpus records the version it was built with, and any change of rule (here or in
:mod:`riido_pg.corpora.history.targets`) raises it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from riido_pg.documents import MAX_QUERY_BYTES

__all__ = ["MIN_WORDS", "RULES_VERSION", "Verdict", "clean_subject", "judge_subject"]

#: Version of the question and target rules; a corpus records it. 2: test, docs and
#: example paths are the ones ``riido_pg.extract.paths`` names. 3: a function
#: ``riido_pg.fields.is_test_document`` calls a test (a test module ``*_tests``, a Rust
#: test attribute) is not a target either.
RULES_VERSION = 4
#: Fewest words (tokens with a letter) a question keeps after cleaning.
MIN_WORDS = 3

_I = re.IGNORECASE
_WS = re.compile(r"\s+")
_CI = re.compile(
    r"\[\s*(?:skip|no)[ -](?:ci|actions|travis|appveyor|azurepipelines|build)\s*\]"
    r"|\[\s*(?:ci|actions|travis)[ -]skip\s*\]|\*\*\*NO_CI\*\*\*",
    _I,
)
_LEADING_TAG = re.compile(
    r"^(?:\[\s*(?:v?\d+(?:\.\d+)*|backport[^\]]*)\s*\]\s*"
    r"|\[[A-Z][A-Z0-9]+-\d+\]\s*:?\s*|[A-Z][A-Z0-9]+-\d+\s*:\s*"
    r"|(?:gh|bpo)-\d+\s*:\s*)+",
    _I,
)
_REF = r"(?:[\w.-]+/[\w.-]+)?(?:#|gh-|bpo-|!)\d+"
_KEYWORD = r"(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?|refs?|see)"
_LEADING_REF = re.compile(rf"^{_KEYWORD}\s+{_REF}(?:\s*(?:,|and)\s*{_REF})*\s*(?:--|—|-|:)?\s*", _I)
_PAREN_REF = re.compile(
    rf"\(\s*(?:{_KEYWORD}\s+)?{_REF}(?:\s*(?:,|and|;)\s*(?:{_KEYWORD}\s+)?{_REF})*\s*\)", _I
)
_KEYWORD_REF = re.compile(rf"\b{_KEYWORD}:?\s+{_REF}(?:\s*(?:,|and)\s*{_REF})*", _I)
_BARE_REF = re.compile(rf"(?<![\w/]){_REF}\b", _I)
_CONVENTIONAL = re.compile(
    r"^(feat|fix|chore|docs?|style|refactor|perf|tests?|build|ci|revert|release|deps)"
    r"(?:\(([^)]*)\))?!?:\s*",
    _I,
)
_EDGES = re.compile(r"^[\s\-:,;—]+|[\s\-:,;—]+$")
_WORD = re.compile(r"\w*[^\W\d_]\w*")

_RAW_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("merge", re.compile(r"^merge\b", _I)),
    ("revert", re.compile(r'^"?(?:revert|reapply)\b', _I)),
    ("fixup", re.compile(r"^(?:fixup|squash|amend)!", _I)),
)
_CLEAN_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "release",
        re.compile(
            r"^(?:releas(?:e[ds]?|ing))\b|\bbump(?:s|ed|ing)?\b|^v?\d+(?:\.\d+)+\b"
            r"|\bversion\s+v?\d|^(?:prepare|preparing|prep)\b.*\b(?:release|v?\d+\.\d+)"
            r"|^(?:update|upgrade)[sd]?\b.*\bfrom\s+v?\d[\w.-]*\s+to\s+v?\d",
            _I,
        ),
    ),
    (
        "changelog",
        re.compile(
            r"\bchange ?log|\bchanges\.(?:rst|md|txt)\b|\brelease[ -]notes?\b"
            r"|\bwhat'?s new\b|\bnews entry\b|\bnewsfragment",
            _I,
        ),
    ),
    ("typo", re.compile(r"\btypos?\b|\bspelling\b|\bmisspell|\bgrammar\b", _I)),
    (
        "format",
        re.compile(
            r"^(?:format(?:ted|ting|s)?|reformat\w*|restyl\w*|lint\w*|style[sd]?)\b"
            r"|\bformatting\b|\blint(?:s|ed|ing|er|ers)?\b|^white ?spaces?\b"
            r"|^(?:fix(?:e[sd])?|remove[sd]?|clean(?:ed)?(?: up)?|strip(?:ped)?|tidy)\s+"
            r"(?:(?:up|some|the|extra|stray|trailing)\s+)*white ?spaces?\b"
            r"|\bcod(?:e|ing) style\b|\bpep ?-?8\b|\btrailing (?:white)?spaces?\b"
            r"|\b(?:black|isort|prettier|rustfmt|cargo fmt|gofmt|clang-format|yapf|autopep8"
            r"|flake8|pylint|eslint|clippy|pre-commit|ruff)\b",
            _I,
        ),
    ),
)
_TYPE_REASONS = {"release": "release", "deps": "release", "style": "format", "revert": "revert"}


@dataclass(frozen=True, slots=True)
class Verdict:
    """A subject's cleaned text and, when it is left out, why (else None)."""

    text: str
    reason: str | None


def _fold(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _conventional(text: str) -> tuple[str, str | None]:
    """The text without its Conventional Commits type (scope kept), and the type."""
    match = _CONVENTIONAL.match(text)
    if match is None:
        return text, None
    kind, scope = match.group(1).lower(), (match.group(2) or "").strip()
    if scope.lower() == "deps":
        kind = "deps"
    rest = text[match.end() :]
    return (f"{scope}: {rest}" if scope and kind != "deps" else rest), kind


def _clean(subject: str) -> tuple[str, str | None]:
    """Cleaning steps 1-7: the question text, and the Conventional Commits type."""
    text = _fold(subject)
    text = _fold(_CI.sub(" ", text))
    text = _LEADING_TAG.sub("", text)
    text = _LEADING_REF.sub("", text)
    text = _PAREN_REF.sub(" ", text)
    text = _KEYWORD_REF.sub(" ", text)
    text = _BARE_REF.sub(" ", text)
    text, kind = _conventional(_EDGES.sub("", _fold(text)))
    return _EDGES.sub("", _cut(_EDGES.sub("", _fold(text)))), kind


def _cut(text: str) -> str:
    """At most MAX_QUERY_BYTES of UTF-8, cut on a character's boundary."""
    data = text.encode("utf-8")
    if len(data) <= MAX_QUERY_BYTES:
        return text
    return data[:MAX_QUERY_BYTES].decode("utf-8", errors="ignore")


def clean_subject(subject: str) -> str:
    """The question text of a subject (cleaning steps 1-7 of the module docstring)."""
    return _clean(subject)[0]


def judge_subject(subject: str) -> Verdict:
    """The cleaned text of a subject and the reason it is left out, if it is."""
    raw = _fold(subject)
    text, kind = _clean(subject)
    for reason, pattern in _RAW_RULES:
        if pattern.search(raw):
            return Verdict(text, reason)
    if kind in _TYPE_REASONS:
        return Verdict(text, _TYPE_REASONS[kind])
    for reason, pattern in _CLEAN_RULES:
        if pattern.search(text):
            return Verdict(text, reason)
    if len(_WORD.findall(text)) < MIN_WORDS:
        return Verdict(text, "too_short")
    return Verdict(text, None)
