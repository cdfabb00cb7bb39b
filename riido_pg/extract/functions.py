"""Functions of one source file: parse, find, name and cut out their text.

A function's document text runs from the start of its leading block to the
end of its definition, taking the indentation of the first line too (whole
lines, unless code precedes the definition on its first line). The leading
block is the run of comments (and, where the grammar has them, decorators and
attributes) immediately above the definition, each on its own line, with no
blank line in between; a comment after code on the same line, or one
separated by a blank line, is not kept.
Rust inner doc comments (``//!``, ``/*!``) document the module, not the
function, and end the block. Python docstrings sit inside the function and
come with it; decorators, annotations, attributes, ``export`` and C++
``template<...>`` headers are part of the definition's text.

The function's line (in its id and ``start_line``) is the 1-based line of its
name, or of the name it is bound to. Ids are ``PATH:QUALNAME:LINE``; in the
rare case that two functions of a file share qualified name and line (several
definitions on one line, as in minified code), the second gets ``#2``
appended, the third ``#3`` and so on, so ids stay unique.
"""

from __future__ import annotations

from functools import cache

from tree_sitter import Node, Query, QueryCursor

from riido_pg.extract.grammars import language, parser
from riido_pg.extract.model import Function
from riido_pg.extract.rules import RULES, Rules

__all__ = ["extract_functions"]


@cache
def _query(key: str) -> Query:
    """One query capturing every definition node kind the grammar knows."""
    lang = language(key)
    kinds = [k for k in RULES[key].definitions if lang.id_for_node_kind(k, True) is not None]
    return Query(lang, "[" + " ".join(f"({k})" for k in kinds) + "] @def")


def _last_row(node: Node) -> int:
    """0-based row of the node's last character (not of a trailing newline)."""
    row, column = node.end_point
    return row - 1 if column == 0 and node.end_byte > node.start_byte and row > 0 else row


def _starts_line(src: bytes, offset: int) -> bool:
    line_start = src.rfind(b"\n", 0, offset) + 1
    return not src[line_start:offset].strip()


def _previous(node: Node) -> Node | None:
    """The named node just before ``node``, also across parents starting with it."""
    while True:
        prev = node.prev_named_sibling
        if prev is not None:
            return prev
        parent = node.parent
        if parent is None or parent.start_byte != node.start_byte:
            return None
        node = parent


def _text_start(outer: Node, rules: Rules, src: bytes) -> int:
    start, row, node = outer.start_byte, outer.start_point[0], outer
    while True:
        prev = _previous(node)
        if prev is None or prev.type not in rules.leading:
            return start
        if _last_row(prev) < row - 1 or not _starts_line(src, prev.start_byte):
            return start
        if src.startswith((b"//!", b"/*!"), prev.start_byte):
            return start
        start, row, node = prev.start_byte, prev.start_point[0], prev


def _line_start(src: bytes, offset: int) -> int:
    """Back to the start of the line when only indentation precedes ``offset``."""
    line_start = src.rfind(b"\n", 0, offset) + 1
    return line_start if not src[line_start:offset].strip() else offset


def _outer(node: Node, rules: Rules) -> Node:
    outer = rules.binding(node) if rules.binding is not None else node
    parent = outer.parent
    while parent is not None and parent.type in rules.wrappers:
        outer, parent = parent, parent.parent
    return outer


def _qualname(node: Node, name: str, rules: Rules, src: bytes) -> str:
    parts = [name]
    ancestor = node.parent
    definitions = frozenset(rules.definitions)
    while ancestor is not None:
        kind = ancestor.type
        component: str | None = None
        if kind in definitions:
            named = rules.name(ancestor, src)
            component = named[0] if named else None
        else:
            container = rules.containers.get(kind)
            if container is not None:
                component = container(ancestor, src)
        if component:
            parts.append(component)
        ancestor = ancestor.parent
    return ".".join(reversed(parts))


def extract_functions(key: str, language_name: str, path: str, src: bytes) -> list[Function]:
    """The functions of one file, in source order, for grammar ``key``."""
    rules = RULES[key]
    tree = parser(key).parse(src)
    captures = QueryCursor(_query(key)).captures(tree.root_node)
    nodes = sorted(captures.get("def", []), key=lambda n: (n.start_byte, -n.end_byte))
    functions: list[Function] = []
    seen: dict[str, int] = {}
    for node in nodes:
        named = rules.name(node, src)
        if named is None:
            continue
        name, anchor = named
        qualname = _qualname(node, name, rules, src)
        line = anchor.start_point[0] + 1
        outer = _outer(node, rules)
        start = _line_start(src, _text_start(outer, rules, src))
        end = max(outer.end_byte, node.end_byte)
        doc_id = f"{path}:{qualname}:{line}"
        count = seen.get(doc_id, 0) + 1
        seen[doc_id] = count
        if count > 1:
            doc_id = f"{doc_id}#{count}"
        functions.append(
            Function(
                id=doc_id,
                text=src[start:end].decode("utf-8", "replace"),
                metadata={
                    "language": language_name,
                    "path": path,
                    "qualname": qualname,
                    "start_line": line,
                    "end_line": _last_row(node) + 1,
                },
            )
        )
    return functions
