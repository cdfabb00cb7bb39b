"""Functions of one source file: parse, walk once, name and cut out their text.

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

Nesting is bounded, so that the time and the output stay linear in the file's
size: a function inside more than ``MAX_NESTING`` (200) functions and named
blocks (classes, modules, namespaces… — the parts of a qualified name) is not
extracted, and is counted in ``too_deep``; so are the functions below it. Below
``MAX_SYNTAX_DEPTH`` (50,000) levels of syntax tree, which only generated or hostile
code reaches (a function at the bottom of 50,000 brackets), definitions are not read
but counted too, named or not.

How: one tree-sitter query (in C) lists where definitions start, down to
``MAX_SYNTAX_DEPTH``; one walk down the tree (:mod:`riido_pg.extract.syntax`) then
enters only the nodes that hold one, carrying each node's qualified-name prefix, its
binding and the comments before it down from its parent. No per-function search up
the tree remains. A skipped subtree big enough to reach below the query's depth is
walked once more, only to count the definitions there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import cast

from tree_sitter import Node, Query, QueryCursor, TreeCursor

from riido_pg.documents import MAX_ID_BYTES
from riido_pg.extract.grammars import language, parser, rules
from riido_pg.extract.locations import function_id
from riido_pg.extract.model import Function
from riido_pg.extract.rules import Rules
from riido_pg.extract.rules.base import Named
from riido_pg.extract.syntax import Frame

__all__ = ["MAX_NESTING", "MAX_SYNTAX_DEPTH", "FileFunctions", "extract_functions"]

#: Functions and named blocks a function may be inside and still be extracted.
MAX_NESTING = 200
#: Tree levels below which nothing is read (tree-sitter's query engine counts depth
#: in 16 bits; this stays well inside).
MAX_SYNTAX_DEPTH = 50_000

_SPACE = re.compile(rb"[ \t\r\x0b\x0c]*")  # bytes.strip()'s whitespace but the newline


@dataclass
class FileFunctions:
    """The functions of one file, and what was left out of it."""

    functions: list[Function] = field(default_factory=list)
    #: Functions nested deeper than ``MAX_NESTING``, and definitions below the
    #: query's reach (``MAX_SYNTAX_DEPTH``), counted without being named.
    too_deep: int = 0
    #: Functions whose qualified name alone is longer than an id may be.
    long_ids: int = 0
    #: Steps the walk took: nodes looked at (each at most twice) and steps back over
    #: comments and wrappers (each at most once per function): linear in the tree.
    steps: int = 0


@cache
def _query(key: str) -> Query:
    """One query capturing every definition node kind the grammar knows."""
    lang = language(key)
    kinds = [k for k in rules(key).definitions if lang.id_for_node_kind(k, True) is not None]
    return Query(lang, "[" + " ".join(f"({k})" for k in kinds) + "] @def")


def _last_row(node: Node) -> int:
    """0-based row of the node's last character (not of a trailing newline)."""
    row, column = node.end_point
    return row - 1 if column == 0 and node.end_byte > node.start_byte and row > 0 else row


class _File:
    """One walk over one file's tree."""

    def __init__(self, rules: Rules, language_name: str, path: str, src: bytes) -> None:
        self.rules = rules
        self.language_name = language_name
        self.path = path
        self.src = src
        self.definitions = frozenset(rules.definitions)
        self.result = FileFunctions()
        self.seen: dict[str, int] = {}
        self.indents: dict[int, int] = {}  # row -> byte offset of its first non-space

    # --- lines ----------------------------------------------------------------

    def _only_space_before(self, node: Node) -> bool:
        """Whether only indentation precedes ``node`` on its first line."""
        row, column = node.start_point
        first = self.indents.get(row)
        if first is None:
            match = _SPACE.match(self.src, node.start_byte - column)
            first = self.indents[row] = match.end() if match else node.start_byte
        return first >= node.start_byte

    def _text_start(self, stack: list[Frame], index: int) -> int:
        """Where the text of the definition wrapped by ``stack[index]`` starts: its
        leading block (the contiguous comments before it, also before parents that
        start where it does), then back to the start of the line."""
        first = stack[index].node
        row = first.start_point[0]
        parent = stack[index - 1]
        run = parent.run or []
        left = len(run)
        while True:
            self.result.steps += 1
            if not left:
                if parent.other or index == 1 or parent.node.start_byte != first.start_byte:
                    break
                index -= 1
                parent = stack[index - 1]
                run = parent.run or []
                left = len(run)
                continue
            prev = run[left - 1]
            if _last_row(prev) < row - 1 or not self._only_space_before(prev):
                break
            if self.src.startswith((b"//!", b"/*!"), prev.start_byte):
                break
            first, row, left = prev, prev.start_point[0], left - 1
        if self._only_space_before(first):
            return first.start_byte - first.start_point[1]
        return first.start_byte

    # --- definitions ------------------------------------------------------------

    def _emit(self, stack: list[Frame], named: tuple[str, Node], qualname: str) -> None:
        node = stack[-1].node
        index = self.rules.outer(stack) if self.rules.outer is not None else len(stack) - 1
        while index > 1 and stack[index - 1].node.type in self.rules.wrappers:
            self.result.steps += 1
            index -= 1
        outer = stack[index].node
        start = self._text_start(stack, index)
        end = max(outer.end_byte, node.end_byte)
        line = named[1].start_point[0] + 1
        key = function_id(self.path, qualname, line)
        count = self.seen.get(key, 0) + 1
        self.seen[key] = count
        doc_id = function_id(self.path, qualname, line, count)
        self.result.functions.append(
            Function(
                id=doc_id,
                text=self.src[start:end].decode("utf-8", "replace"),
                metadata={
                    "language": self.language_name,
                    "path": self.path,
                    "qualname": qualname,
                    "start_line": line,
                    "end_line": _last_row(node) + 1,
                },
            )
        )

    def _definition(self, stack: list[Frame], frame: Frame, parent: Frame) -> None:
        frame.level += 1
        named: Named = self.rules.name(stack, self.src)
        if named is None:
            return
        if frame.level > MAX_NESTING:
            self.result.too_deep += 1
            return
        if parent.prefix is None:
            frame.prefix = None
            self.result.long_ids += 1
            return
        qualname = parent.prefix + named[0]
        frame.prefix = qualname + "." if len(qualname) < MAX_ID_BYTES else None
        self._emit(stack, named, qualname)

    def _container(self, stack: list[Frame], frame: Frame, parent: Frame) -> None:
        component = self.rules.containers[frame.node.type](stack, self.src)
        if not component:
            return
        frame.level += 1
        if frame.level <= MAX_NESTING and parent.prefix is not None:
            prefix = f"{parent.prefix}{component}."
            frame.prefix = prefix if len(prefix) <= MAX_ID_BYTES else None

    # --- the walk ---------------------------------------------------------------

    def _beyond(self, node: Node) -> int:
        """Count the definitions in a subtree the query could not reach (too deep)."""
        cursor, count, definitions = node.walk(), 0, self.definitions
        while True:
            current = cast(Node, cursor.node)
            self.result.steps += 1
            if current.is_named and current.type in definitions:
                count += 1
            if cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    return count

    def walk(self, cursor: TreeCursor, starts: list[tuple[int, int]], deep: bool) -> None:
        """Enter the nodes holding a definition (``starts``: their (start, end) bytes in
        tree order); note the children of an entered node, up to the last one holding a
        definition, for the comment runs. With ``deep``, look at every child, and count
        what lies in a skipped subtree that may go below the query's reach."""
        definitions, containers = self.definitions, self.rules.containers
        leading, carry, src = self.rules.leading, self.rules.carry, self.src
        first_child, next_sibling = cursor.goto_first_child, cursor.goto_next_sibling
        begins = [begin for begin, _ in starts]
        stack: list[Frame] = [Frame(cast(Node, cursor.node), None, "", 0)]
        total, at, steps = len(starts), 0, 0
        moved = first_child()
        while moved:
            node = cast(Node, cursor.node)
            steps += 1
            parent = stack[-1]
            while at < total and begins[at] < node.start_byte:
                at += 1  # not reached: cannot happen in a well-formed tree
            if at < total and begins[at] < node.end_byte:
                field_name = cursor.field_name
                slot = carry(stack, node, field_name, src) if carry is not None else None
                frame = Frame(node, field_name, parent.prefix, parent.level, slot)
                stack.append(frame)
                kind = node.type
                if kind in definitions:
                    if starts[at] == (node.start_byte, node.end_byte):
                        at += 1
                    self._definition(stack, frame, parent)
                elif kind in containers:
                    self._container(stack, frame, parent)
                if first_child():
                    continue
                stack.pop()
            elif deep and len(stack) + node.descendant_count > MAX_SYNTAX_DEPTH // 2:
                self.result.too_deep += self._beyond(node)
            while True:
                if node.is_named:
                    if node.type in leading:
                        if parent.run is None:
                            parent.run = []
                        parent.run.append(node)
                    else:
                        parent.run, parent.other = None, True
                rest = deep or (at < total and begins[at] < parent.node.end_byte)
                if rest and next_sibling():
                    break
                if not cursor.goto_parent() or len(stack) == 1:
                    moved = False
                    break
                node = stack.pop().node
                parent = stack[-1]
        self.result.steps += steps


def extract_functions(key: str, language_name: str, path: str, src: bytes) -> FileFunctions:
    """The functions of one file, in source order, for grammar ``key``."""
    tree = parser(key).parse(src)
    query = QueryCursor(_query(key))
    query.set_max_start_depth(MAX_SYNTAX_DEPTH)
    found = query.captures(tree.root_node).get("def", [])
    starts = sorted(((n.start_byte, n.end_byte) for n in found), key=lambda s: (s[0], -s[1]))
    # Only a tree of more nodes than that can go below the query's reach.
    deep = tree.root_node.descendant_count > MAX_SYNTAX_DEPTH // 2
    file = _File(rules(key), language_name, path, src)
    if starts or deep:
        file.walk(tree.walk(), starts, deep)
    return file.result
