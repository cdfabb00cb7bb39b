"""Identifier splitting: ``ReadConfig``, ``read_config``, ``HTTPServer2`` -> ``read config``,
``read config``, ``http server 2``.

This is the one implementation. Documents and queries both go through
:func:`split_identifiers`; PostgreSQL then applies the snapshot's text search
configuration to its output to build ``tsv_ident`` and the identifier-side query.

Rules, applied to the NFC-normalized text:

* words are maximal runs of letters, digits and combining marks; everything else
  (spaces, ``_``, ``-``, ``.``, punctuation) separates words;
* inside a word, a new part starts at a lower-to-upper change (``readConfig``), before
  the last capital of a capital run that is followed by a lowercase letter
  (``HTTPServer`` -> ``HTTP`` + ``Server``), and wherever letters and digits meet
  (``utf8Decode`` -> ``utf`` + ``8`` + ``Decode``);
* parts are lowercased and joined with single spaces.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["split_identifiers", "split_words"]

# Applied to ASCII text directly, and to a class string for other text, where every
# character is replaced by its class: "A" upper, "a" other letter or mark, "0" digit.
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _char_class(ch: str) -> str:
    if ch.isdecimal():
        return "0"
    if ch.isupper():
        return "A"
    if ch.istitle():  # titlecase digraphs such as "ǅ" start a part like a capital
        return "A"
    if ch.isalnum() or unicodedata.category(ch).startswith("M"):
        return "a"
    return " "


def split_words(text: str) -> list[str]:
    """Split ``text`` into lowercase identifier parts, in order."""
    if text.isascii():
        return [m.group().lower() for m in _PARTS.finditer(text)]
    text = unicodedata.normalize("NFC", text)
    classes = "".join(_char_class(ch) for ch in text)
    return [text[m.start() : m.end()].lower() for m in _PARTS.finditer(classes)]


def split_identifiers(text: str) -> str:
    """The identifier-split form of ``text``: its parts joined by single spaces."""
    return " ".join(split_words(text))
