"""Identifier splitting (README "How it works"): table-driven cases and properties.

The one implementation is :mod:`riido_pg.splitting`; documents and queries both go
through it, so these tests pin its output exactly. No database is needed.
"""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import riido_pg
from riido_pg.splitting import split_identifiers, split_words

# --------------------------------------------------------------------------- table

REQUIRED_CASES = [
    # the examples of the README's opening paragraph
    ("ReadConfig", "read config"),
    ("readConfig", "read config"),
    ("read_config", "read config"),
    ("HTTPServer2", "http server 2"),
    ("XMLHttpRequest", "xml http request"),
    ("getHTTPResponseCode", "get http response code"),
    ("utf8Decode", "utf 8 decode"),
    ("os.path.join", "os path join"),
    ("ServeHTTP", "serve http"),
    ("naïveBayes", "naïve bayes"),
    ("kebab-case-name", "kebab case name"),
]

MORE_CASES = [
    # ASCII shapes
    ("SCREAMING_SNAKE", "screaming snake"),
    ("SCREAMING_SNAKE_CASE_2", "screaming snake case 2"),
    ("__dunder__", "dunder"),
    ("__init__", "init"),
    ("_private", "private"),
    ("12345", "12345"),
    ("0", "0"),
    ("v2", "v 2"),
    ("2fa", "2 fa"),
    ("x86_64", "x 86 64"),
    ("A", "a"),
    ("a", "a"),
    ("ABC", "abc"),
    ("aB", "a b"),
    ("ABc", "a bc"),
    ("getX", "get x"),
    ("getXY", "get xy"),
    ("getXYz", "get x yz"),
    ("HTTP2Server", "http 2 server"),
    ("parseHTML5Doc", "parse html 5 doc"),
    ("already split words", "already split words"),
    ("  padded\t\nwith  whitespace  ", "padded with whitespace"),
    ("func ReadConfig() {}", "func read config"),
    ("def read_config(path: str) -> Config:", "def read config path str config"),
    ("self.readConfig(cfg)", "self read config cfg"),
    ("a::b->c", "a b c"),
    # plural acronyms: a capital run, "s", then no lowercase letter stays one part
    ("IDs", "ids"),
    ("getIDs", "get ids"),
    ("userIDsFor", "user ids for"),
    ("parseURLs", "parse urls"),
    ("HTTPServer", "http server"),
    ("HTTPSConnection", "https connection"),
    ("ÜRLs", "ürls"),
    ("URLsearch", "ur lsearch"),
    # empty and separator-only input
    ("", ""),
    ("   ", ""),
    ("!!! ???", ""),
    ("_-.,;:()[]{}<>/\\|'\"`~@#$%^&*+=", ""),
    ("…—·«»", ""),
    # non-ASCII letters: Latin, Cyrillic, Greek, CJK, mixed scripts
    ("naïve", "naïve"),
    ("ÉcoleNormale", "école normale"),
    ("straßeName", "straße name"),
    ("читатьКонфиг", "читать конфиг"),
    ("ЧитатьКонфиг", "читать конфиг"),
    ("HTTPСервер", "http сервер"),
    ("λόγοςΚαι", "λόγος και"),
    ("ΑλφαΒήτα", "αλφα βήτα"),
    ("ΑΒΓ", "αβγ"),
    ("漢字", "漢字"),
    ("漢字Config", "漢字 config"),
    ("read漢字", "read漢字"),
    ("読み込むConfig2", "読み込む config 2"),
    ("get_値", "get 値"),
    ("hello世界World", "hello世界 world"),
    # non-ASCII decimal digits are digits
    ("utf８Decode", "utf ８ decode"),
    ("٣abc", "٣ abc"),
    # titlecase digraphs start a part like a capital
    ("ǅungla", "ǆungla"),
    ("aǅb", "a ǆb"),
    ("ǄUNGLA", "ǆungla"),
    ("readǅ", "read ǆ"),
    # a capital whose lowercase is two characters; renormalized after lowercasing
    ("İSTANBUL", "i̇stanbul"),
    ("İ\u0332x", "i\u0332\u0307x"),
    # a letter that is "uppercase" but has no lowercase form is not a capital
    ("Aℂ", "aℂ"),
    ("aℂ", "aℂ"),
    ("ℂℂb", "ℂℂb"),
    ("Ⅻ_Ⅳ", "ⅻ ⅳ"),
    # combining marks belong to their base character, also inside a capital run
    ("X\u0332ML", "x\u0332ml"),
    ("HTTP\u0332Server", "http\u0332 server"),
    ("getQ\u0303", "get q\u0303"),
    ("हिन्दीText", "हिन्दी text"),
    # symbols are separators even when Unicode calls them upper- or lowercase
    ("Ⓐbc", "bc"),
    ("ⓐbc", "bc"),
    ("a🄰b", "a b"),
    # Greek final sigma: parts are lowercased on their own, like separate words
    ("ΟΔΟΣValue", "οδος value"),
]


@pytest.mark.parametrize(("text", "expected"), REQUIRED_CASES + MORE_CASES)
def test_split_table(text: str, expected: str) -> None:
    assert split_identifiers(text) == expected
    assert split_words(text) == (expected.split(" ") if expected else [])


@pytest.mark.parametrize(("text", "expected"), REQUIRED_CASES + MORE_CASES)
def test_split_nfd_input_gives_nfc_output(text: str, expected: str) -> None:
    for form in ("NFC", "NFD"):
        assert split_identifiers(unicodedata.normalize(form, text)) == expected


def test_decomposed_marks_compose() -> None:
    nfd = "nai\u0308veBayes"  # i + COMBINING DIAERESIS
    assert split_identifiers(nfd) == "na\u00efve bayes"
    assert split_identifiers("E\u0301cole") == "\u00e9cole"
    # Hangul jamo compose into syllables
    assert split_identifiers("\u1112\u1161\u11ab") == "\ud55c"


def test_split_identifiers_is_exported() -> None:
    assert riido_pg.split_identifiers is split_identifiers


# --------------------------------------------------------------------------- properties

# Text biased towards identifier shapes, plus arbitrary Unicode.
_IDENT_ALPHABET = st.sampled_from(
    [
        *"aAbBzZ09_-. ",
        *["é", "É", "ß", "İ", "ǅ", "Ǆ", "ǆ", "Σ", "σ", "ς", "λ", "Λ", "ж", "Ж", "漢", "８"],
        *["\u0301", "\u0308", "\u0332", "\u0307", "Ⓐ", "ⓐ", "Ⅻ", "²", "ℂ", "\u00a0", "\t"],
    ]
)
_TEXT = st.one_of(
    st.text(_IDENT_ALPHABET, max_size=40),
    st.text(max_size=40),
    st.from_regex(r"[A-Za-z0-9_.\- ]{0,40}", fullmatch=True),
)
_ASCII_TEXT = st.text(st.characters(max_codepoint=127), max_size=60)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_output_shape(text: str) -> None:
    out = split_identifiers(text)
    assert out == out.strip()
    assert "  " not in out
    words = split_words(text)
    assert out == " ".join(words)
    assert all(words), "no empty words"
    for word in words:
        assert word == word.lower()
        assert not any(ch.isspace() for ch in word)
        assert unicodedata.is_normalized("NFC", word)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_idempotent(text: str) -> None:
    out = split_identifiers(text)
    assert split_identifiers(out) == out


@settings(max_examples=300, deadline=None)
@given(_ASCII_TEXT)
def test_ascii_fast_path_agrees_with_unicode_path(text: str) -> None:
    # Appending a separator and a non-ASCII word forces the Unicode path; the separator
    # guarantees the extra word cannot change how `text` splits (no part spans a space,
    # and the one-character look-ahead of the capital-run rule cannot see past it).
    fast = split_words(text)
    assert text.isascii()
    forced = split_words(text + " é")
    assert forced[-1] == "é"
    assert forced[:-1] == fast


def _fold_sigma(s: str) -> str:
    return s.replace("ς", "σ")


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_words_are_substrings_of_lowercased_input(text: str) -> None:
    nfc = unicodedata.normalize("NFC", text)
    # Each part is lowercased on its own, so a Greek capital sigma at the end of a part
    # becomes final "ς" where lowercasing the whole text may give "σ": fold the two.
    # Lowercasing can also leave combining marks out of canonical order ("İ\u0332"),
    # and the words are NFC, so the haystack is renormalized too.
    haystack = _fold_sigma(unicodedata.normalize("NFC", nfc.lower()))
    for word in split_words(text):
        assert _fold_sigma(word) in haystack


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_words_are_lowercased_ordered_disjoint_slices(text: str) -> None:
    # Stronger, exact form: the words are the lowercased (and renormalized) forms of
    # disjoint slices of the NFC text, in input order.
    nfc = unicodedata.normalize("NFC", text)
    pos = 0
    for word in split_words(text):
        found = None
        for i in range(pos, len(nfc)):
            # lower() never shortens a string, so the slice is at most len(word) long
            for j in range(i + 1, min(len(nfc), i + len(word)) + 1):
                if unicodedata.normalize("NFC", nfc[i:j].lower()) == word:
                    found = (i, j)
                    break
            if found:
                break
        assert found is not None, (word, nfc)
        pos = found[1]


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXT, max_size=6))
def test_space_separated_words_split_independently(chunks: list[str]) -> None:
    # Splitting never joins characters across a space: the split of the whole is the
    # concatenation of the splits of its space-separated pieces.
    whole = " ".join(chunks)
    assert split_words(whole) == [w for chunk in chunks for w in split_words(chunk)]


@pytest.mark.parametrize(
    ("left", "right"), [("read", "Config"), ("HTTP", "Server"), ("utf", "8"), ("na", "\u0308ve")]
)
def test_space_is_a_hard_boundary(left: str, right: str) -> None:
    assert split_words(f"{left} {right}") == split_words(left) + split_words(right)


def test_idempotent_for_every_code_point() -> None:
    # Every code point alone, and every word character (letter, digit, mark) after a
    # capital, before a lowercase letter, and between a digit and a capital, all in one
    # string: the pieces are separated by spaces, which split independently (property
    # above), so one call covers them all.
    chars = [chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i <= 0xDFFF]
    word_chars = [c for c in chars if c.isalnum() or unicodedata.category(c).startswith("M")]
    contexts = [("A", ""), ("", "a"), ("1", "A")]
    text = " ".join(chars) + " " + " ".join(p + c + q for c in word_chars for p, q in contexts)
    out = split_identifiers(text)
    assert split_identifiers(out) == out
    assert unicodedata.is_normalized("NFC", out)
    assert out == out.lower()
