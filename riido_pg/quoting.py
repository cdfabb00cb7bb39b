"""User input inside messages: quoted for the shell or SQL, and made visible.

A message that suggests a command built from user input (a snapshot id, a role, a
path) quotes that input, so copying the suggestion runs what it says and nothing
else: :func:`shell_arg` for a shell word (``shlex.quote``, or bash's ``$'...'`` when
the input holds control characters), :func:`sql_ident` for a SQL identifier
(PostgreSQL's ``quote_ident`` rules, or a ``U&"..."`` identifier for control
characters). :func:`visible` shows control characters as escapes (``\\x1b``), so a
name printed in a table or an ``error:`` line never drives the terminal.
"""

from __future__ import annotations

import re
import shlex
import unicodedata

__all__ = ["shell_arg", "shell_command", "sql_ident", "visible"]

#: Characters a terminal acts on or that break a line apart: C0 and C1 controls and
#: DEL, the line and paragraph separators, and the bidirectional controls (which
#: reorder what is shown around them).
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _hidden(char: str) -> bool:
    return char in _BIDI or unicodedata.category(char) in ("Cc", "Zl", "Zp")


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every control character (C0, DEL, C1, line and paragraph
    separators, bidirectional controls) written as a visible escape such as ``\\x1b``
    or ``\\n``; everything else, backslashes included, as it is."""
    if not any(_hidden(c) for c in text):
        return text
    return "".join(_escape(c) if _hidden(c) else c for c in text)


def shell_arg(word: str) -> str:
    """``word`` as one shell word: ``shlex.quote`` (POSIX quoting) when it holds no
    control character, else bash/zsh ANSI-C quoting ``$'...'`` with the control
    characters escaped (the same word, shown visibly)."""
    if not any(_hidden(c) for c in word):
        return shlex.quote(word)
    body = "".join(
        _shell_escape(c) if _hidden(c) else ("\\" + c if c in "\\'" else c) for c in word
    )
    return f"$'{body}'"


def _shell_escape(char: str) -> str:
    """A control character inside ``$'...'``: ``\\xNN`` only below 0x80 (above, bash's
    ``\\x`` makes a raw byte, not the character), ``\\uNNNN`` or ``\\UNNNNNNNN`` else."""
    code = ord(char)
    if code < 0x80:
        return _escape(char)
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shell_command(*words: str) -> str:
    """A command line of ``words``, each quoted by :func:`shell_arg` unless it is a
    placeholder written in capitals (``SOURCE``, ``DIR``), which stays as it is."""
    return " ".join(w if _PLACEHOLDER.fullmatch(w) else shell_arg(w) for w in words)


_PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*(\.\.\.)?")
_BARE = re.compile(r"[a-z_][a-z0-9_$]*")

#: PostgreSQL's keywords that are not "unreserved" (reserved, and those that cannot
#: be a column or a function name): ``quote_ident`` quotes them, so this does too.
_KEYWORDS = frozenset(
    """
    all analyse analyze and any array as asc asymmetric authorization between bigint
    binary bit boolean both case cast char character check coalesce collate collation
    column concurrently constraint create cross current_catalog current_date
    current_role current_schema current_time current_timestamp current_user dec
    decimal default deferrable desc distinct do else end except exists extract false
    fetch float for foreign freeze from full grant greatest group grouping having
    ilike in initially inner inout int integer intersect interval into is isnull join
    json json_array json_arrayagg json_exists json_object json_objectagg json_query
    json_scalar json_serialize json_table json_value lateral leading least left like
    limit localtime localtimestamp merge_action national natural nchar none normalize
    not notnull null nullif numeric offset on only or order out outer overlaps overlay
    placing position precision primary real references returning right row select
    session_user setof similar smallint some substring symmetric system_user table
    tablesample then time timestamp to trailing treat trim true union unique user
    using values varchar variadic verbose when where window with xmlattributes
    xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot
    xmlserialize xmltable
    """.split()
)


def sql_ident(name: str) -> str:
    """``name`` as a SQL identifier that means exactly ``name``: bare when PostgreSQL
    would read it unchanged (lower case, not a keyword), else double-quoted with ``"``
    doubled, or as a ``U&"..."`` identifier with its control characters escaped."""
    if _BARE.fullmatch(name) and name not in _KEYWORDS:
        return name
    if not any(_hidden(c) for c in name):
        return '"' + name.replace('"', '""') + '"'
    out = []
    for c in name:
        if _hidden(c) or c == "\\":
            code = ord(c)
            out.append(f"\\{code:04X}" if code < 0x10000 else f"\\+{code:06X}")
        else:
            out.append('""' if c == '"' else c)
    return 'U&"' + "".join(out) + '"'
