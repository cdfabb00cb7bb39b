"""Passwords never appear in a message riido-pg prints about a connection string.

libpq echoes parts of a DSN it cannot parse (``invalid percent-encoded token:
"LEAK%zz"``, the whole URL after an unclosed ``[``, ``missing "=" after "AK5"`` for a
password with a space), so masking what psycopg parsed is not enough: secrets are
found by pattern, in well-formed and malformed strings alike.

* a URL's userinfo: everything after the first ``:`` up to the last ``@`` before the
  next space (libpq stops at the first ``@`` or ``/``, so a stray ``@`` or ``/`` in a
  password would otherwise leave the rest of it in the host or database it reports);
* ``password=`` and ``sslpassword=`` as URL query parameters (up to ``&``), and as
  key-value pairs: a quoted value (single quotes as libpq has them, or double quotes
  as a user may type them) up to its closing quote or the end, an unquoted one up to
  the next ``key=`` or the end, so a password with a space is masked whole.

:func:`redact_dsn` masks these in any text; given the DSN the text is about, it also
masks the fragments of its secrets the text quotes, and the secrets themselves.

A string libpq could not parse has no known secrets, so :func:`unparsed_reason` keeps
only libpq's own words of its parse error: every part of the input it quotes (a URL, a
token, an option name, the words after a space) is masked, whatever it looks like.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["MASK", "NOT_UTF8", "dsn_params", "redact_dsn", "unparsed_reason"]

#: What a secret is replaced with.
MASK = "***"

#: A URL up to the ``:`` after its user name; its password runs to the last ``@`` of the
#: same run of non-space characters (found without backtracking, so time stays linear).
_URL_LEAD = re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[^:@/?#\s]*:")
_URL_PARAM = re.compile(r"(?P<lead>[?&](?:ssl)?password=)(?P<secret>[^&#\s\"']*)", re.IGNORECASE)
_KEY_VALUE = re.compile(
    r"(?P<lead>(?<![\w?&.\-])(?:ssl)?password\s*=\s*)"
    r"(?P<secret>'(?:[^'\\]|\\.)*(?:'|\\?$)|\"[^\"]*\"?"
    r"|(?:[^\s\"'&]|\s++(?![A-Za-z_]\w*\s*=))*)",
    re.IGNORECASE,
)
_PATTERNS = (_URL_PARAM, _KEY_VALUE)
_RUN = re.compile(r"\S+")
_QUOTED = re.compile(r"\"([^\"]+)\"|'([^']+)'")
#: Secrets shorter than this are masked only where the text quotes them.
_MIN_VALUE = 3


def _secret_spans(text: str) -> list[tuple[int, int]]:
    """Where the secrets of ``text`` are: sorted, overlapping ones merged."""
    spans: list[tuple[int, int]] = []
    for run in _RUN.finditer(text):
        last_at = text.rfind("@", run.start(), run.end())
        if last_at < 0:
            continue
        for lead in _URL_LEAD.finditer(text, run.start(), run.end()):
            if lead.end() <= last_at:
                spans.append((lead.end(), last_at))
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span("secret")
            if end > start:
                spans.append((start, end))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _mask_patterns(text: str) -> str:
    out: list[str] = []
    at = 0
    for start, end in _secret_spans(text):
        out.append(text[at:start])
        out.append(MASK)
        at = end
    out.append(text[at:])
    return "".join(out)


def _from_secret(fragment: str, dsn: str, spans: list[tuple[int, int]]) -> bool:
    """Whether some occurrence of ``fragment`` in ``dsn`` overlaps a secret."""
    at = dsn.find(fragment)
    while at >= 0:
        end = at + len(fragment)
        if any(at < s_end and s_start < end for s_start, s_end in spans):
            return True
        at = dsn.find(fragment, at + 1)
    return False


def _values(dsn: str, spans: list[tuple[int, int]]) -> set[str]:
    """Each secret as written and percent-decoded (without its quotes)."""
    found: set[str] = set()
    for start, end in spans:
        value = dsn[start:end].strip()
        if len(value) >= 2 and value[0] == value[-1] == "'":
            value = value[1:-1]
        found.update((value, unquote(value)))
    return {v for v in found if len(v) >= _MIN_VALUE}


def redact_dsn(text: str, dsn: str | None = None) -> str:
    """``text`` with every password in it masked as ``***``.

    ``text`` may be a DSN or a message quoting one (well-formed or not). With ``dsn``,
    the connection string ``text`` is about (e.g. a libpq error for it), fragments of
    its secrets that ``text`` quotes are masked too, even when they no longer look like a
    password (``missing "=" after "AK5"`` for ``password=LE AK5``), and so is any
    whole secret it repeats.
    """
    masked = _mask_patterns(text)
    if not dsn:
        return masked
    spans = _secret_spans(dsn)
    if not spans:
        return masked

    def quoted(match: re.Match[str]) -> str:
        fragment = match.group(1) if match.group(1) is not None else match.group(2)
        if fragment == MASK or not _from_secret(fragment, dsn, spans):
            return match.group(0)
        quote = match.group(0)[0]
        return f"{quote}{MASK}{quote}"

    masked = _QUOTED.sub(quoted, masked)
    for value in sorted(_values(dsn, spans), key=len, reverse=True):
        masked = masked.replace(value, MASK)
    return masked


#: libpq's messages for a connection string it cannot parse (``%s`` quotes the input,
#: ``%c`` one character of it; ``%d`` is a position, the rest libpq's own words).
_PARSE_ERRORS = (
    'invalid percent-encoded token: "%s"',
    'forbidden value %%00 in percent-encoded value: "%s"',
    'unexpected spaces found in "%s", use percent-encoded spaces (%%20) instead',
    'invalid connection option "%s"',
    'invalid URI propagated to internal parser routine: "%s"',
    'end of string reached when looking for matching "]" in IPv6 host address in URI: "%s"',
    'IPv6 host address may not be empty in URI: "%s"',
    'unexpected character "%c" at position %d in URI (expected ":" or "/"): "%s"',
    'extra key/value separator "=" in URI query parameter: "%s"',
    'missing key/value separator "=" in URI query parameter: "%s"',
    'invalid URI query parameter: "%s"',
    'missing "=" after "%s" in connection info string',
    "unterminated quoted string in connection info string",
    "out of memory",
)
_CONVERSION = re.compile(r"%%|%s|%c|%d")
_PIECES = {"%%": ("%", False), "%s": ("(?:.*)", True), "%c": ("(?:.)", True), "%d": (r"\d+", False)}


def _template(form: str) -> tuple[re.Pattern[str], str]:
    """A libpq message form as a pattern matching it whole, and its masked text."""
    pattern: list[str] = []
    shown: list[str] = []
    at = 0
    for conversion in _CONVERSION.finditer(form):
        literal = form[at : conversion.start()]
        pattern.append(re.escape(literal))
        shown.append(literal)
        piece, secret = _PIECES[conversion.group(0)]
        pattern.append(f"({piece})" if not secret else piece)
        shown.append(MASK if secret else "{}")
        at = conversion.end()
    pattern.append(re.escape(form[at:]))
    shown.append(form[at:])
    return re.compile("".join(pattern), re.DOTALL), "".join(shown)


_TEMPLATES = tuple(_template(form) for form in _PARSE_ERRORS)


def unparsed_reason(message: str) -> str:
    """What libpq said of a connection string it could not parse, with every part of the
    string it quotes masked (only its own words and positions are kept); a message of
    another form is not shown at all."""
    message = message.strip()
    for pattern, shown in _TEMPLATES:
        match = pattern.fullmatch(message)
        if match:
            return shown.format(*match.groups())
    return "libpq could not parse it (its message is not shown: it may quote a password)"


#: What is said of a DSN whose percent-encoded bytes are not UTF-8 (psycopg raises a
#: UnicodeDecodeError of its own there, which names a byte of the input).
NOT_UTF8 = "a percent-encoded part is not UTF-8"


def dsn_params(dsn: str) -> dict[str, str]:
    """The parameters libpq reads from ``dsn``; a string it cannot parse raises
    :class:`ValueError` whose text is :func:`unparsed_reason`'s (none of the input)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        raise ValueError(unparsed_reason((str(exc).strip().splitlines() or [""])[0])) from None
    except UnicodeDecodeError:
        raise ValueError(NOT_UTF8) from None
    return {k: str(v) for k, v in params.items() if v is not None}
