"""Identifier splitting: ``ReadConfig``, ``read_config``, ``HTTPServer2`` -> ``read config``,
``read config``, ``http server 2``.

This is the one implementation. Documents and queries both go through
:func:`split_identifiers`; PostgreSQL then applies the snapshot's text search
configuration to its output to build ``tsv_ident`` and the identifier-side query.

Rules, applied to the NFC-normalized text:

* words are maximal runs of letters, digits and combining marks; everything else
  (spaces, ``_``, ``-``, ``.``, punctuation, symbols) separates words; a combining
  mark belongs to the character before it;
* inside a word, a new part starts at a lower-to-upper change (``readConfig``), before
  the last capital of a capital run that is followed by a lowercase letter
  (``HTTPServer`` -> ``HTTP`` + ``Server``) unless the run is a plural acronym
  (``userIDsFor`` -> ``user`` + ``IDs`` + ``For``), and wherever letters and digits meet
  (``utf8Decode`` -> ``utf`` + ``8`` + ``Decode``);
* parts are lowercased (and NFC-normalized again) and joined with single spaces, so
  splitting the output again gives the output.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["SPLITTER_VERSION", "split_identifiers", "split_words"]

#: Part of every snapshot's content digest: bump it whenever the output of
#: split_identifiers changes, so stored snapshots built with the old rules are seen as
#: different content (reload with --replace) instead of silently reused.
SPLITTER_VERSION = 2

# Applied to ASCII text directly, and to a class string for other text, where every
# base character is replaced by its class: "A" upper or titlecase, "a" other letter,
# "0" decimal digit, " " separator (combining marks go with their base character).
# A plural acronym ("IDs", "URLs") stays one part: a capital run, then "s", then no
# lowercase letter.
_PARTS = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _char_class(ch: str) -> str:
    if ch.isdecimal():
        return "0"
    if ch.isalnum():
        # titlecase digraphs such as "ǅ" start a part like a capital; a "capital" with
        # no lowercase form ("ℂ") is not one, or the lowercased output would split again
        if (ch.isupper() or ch.istitle()) and ch.lower() != ch:
            return "A"
        return "s" if ch == "s" else "a"  # "s" keeps its class for plural acronyms
    if unicodedata.category(ch).startswith("M"):
        return "a"  # a mark with no base character before it is a word character
    # everything else separates, including symbols Unicode calls upper- or lowercase
    # ("Ⓐ", "ⓐ", "🄰"): they are not letters
    return " "


def split_words(text: str) -> list[str]:
    """Split ``text`` into lowercase identifier parts, in order."""
    if text.isascii():
        return [m.group().lower() for m in _PARTS.finditer(text)]
    text = unicodedata.normalize("NFC", text)
    # One class character per base character; a combining mark that follows a word
    # character belongs to it and gets no class of its own, so it neither splits a
    # capital run ("X\u0332ML") nor reads as a lowercase letter after a capital.
    starts: list[int] = []
    classes: list[str] = []
    for i, ch in enumerate(text):
        if (
            classes
            and classes[-1] != " "
            and not ch.isalnum()
            and unicodedata.category(ch).startswith("M")
        ):
            continue
        starts.append(i)
        classes.append(_char_class(ch))
    starts.append(len(text))
    # lowercasing can leave marks out of canonical order ("İ\u0332"): renormalize
    return [
        unicodedata.normalize("NFC", text[starts[m.start()] : starts[m.end()]].lower())
        for m in _PARTS.finditer("".join(classes))
    ]


def split_identifiers(text: str) -> str:
    """The identifier-split form of ``text``: its parts joined by single spaces."""
    if text.isascii():  # the common case, 1.4x faster than lowering part by part
        return " ".join(_PARTS.findall(text)).lower()
    return " ".join(split_words(text))
