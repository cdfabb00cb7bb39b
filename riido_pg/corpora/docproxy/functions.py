"""The docproxy corpus's function extractor: every Python function with a docstring,
its text without docstrings and its question (the rules are in
:mod:`riido_pg.corpora.docproxy`). It reads Python with :mod:`ast`, not tree-sitter:
the corpus needs the docstring's value and ``__qualname__``-style names."""

from __future__ import annotations

import ast
import importlib.util
import inspect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypeAlias

__all__ = ["MIN_QUESTION_WORDS", "FunctionRecord", "documented_functions", "summary_of"]

MIN_QUESTION_WORDS = 3


@dataclass(frozen=True)
class FunctionRecord:
    """One function with a docstring: a document, and maybe a question's target."""

    repo: str
    path: str
    qualname: str
    lineno: int
    text: str
    summary: str | None  # the question text, None when shorter than three words

    @property
    def doc_id(self) -> str:
        return f"{self.repo}:{self.path}:{self.qualname}:{self.lineno}"


def summary_of(docstring: str) -> str | None:
    """The question for a docstring: its first paragraph, whitespace folded, or None
    when that has fewer than three words."""
    paragraph: list[str] = []
    for line in inspect.cleandoc(docstring).split("\n"):
        if not line.strip():
            break
        paragraph.append(line)
    words = " ".join(paragraph).split()
    if len(words) < MIN_QUESTION_WORDS:
        return None
    text = " ".join(words)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from an escape: not writable as UTF-8
        return None
    return text


_FunctionNode: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef


def _docstring_node(node: _FunctionNode) -> ast.Expr | None:
    first = node.body[0] if node.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


def _walk_functions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, _FunctionNode]]:
    """Every function under ``node`` with its ``__qualname__``, in source order."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _FunctionNode):
            qualname = prefix + child.name
            yield qualname, child
            yield from _walk_functions(child, qualname + ".<locals>.")
        elif isinstance(child, ast.ClassDef):
            yield from _walk_functions(child, prefix + child.name + ".")
        else:
            yield from _walk_functions(child, prefix)


def _char_col(line: str, byte_col: int) -> int:
    """``ast`` columns are UTF-8 byte offsets; this is the character offset."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _remove_span(lines: dict[int, str], expr: ast.Expr) -> None:
    """Remove one docstring from ``lines`` (1-based line number -> text, edited in place)."""
    first, last = expr.lineno, expr.end_lineno or expr.lineno
    start = _char_col(lines[first], expr.col_offset)
    end = _char_col(lines[last], expr.end_col_offset or 0)
    before, after = lines[first][:start], lines[last][end:]
    for number in range(first, last + 1):
        del lines[number]
    if not before.strip() and (not after.strip() or after.lstrip().startswith("#")):
        return  # the docstring had its lines to itself: they go entirely
    lines[first] = before + after if after.strip() else before.rstrip()


def _dedent(lines: Iterable[str], indent: str) -> list[str]:
    return [line[len(indent) :] if line.startswith(indent) else line for line in lines]


def _function_text(source_lines: list[str], node: _FunctionNode) -> str:
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    last = node.end_lineno or node.lineno
    lines = {n: source_lines[n - 1] for n in range(first, last + 1)}
    for inner in ast.walk(node):
        if isinstance(inner, _FunctionNode):
            doc = _docstring_node(inner)
            if doc is not None:
                _remove_span(lines, doc)
    head = source_lines[first - 1]
    indent = head[: len(head) - len(head.lstrip())]
    return "\n".join(_dedent((lines[n] for n in sorted(lines)), indent))


def _decode(source: bytes | str) -> str:
    if isinstance(source, str):
        return source.replace("\r\n", "\n").replace("\r", "\n")
    return importlib.util.decode_source(source)  # PEP 263 cookie, universal newlines


def documented_functions(source: bytes | str, *, repo: str, path: str) -> list[FunctionRecord]:
    """The functions with a docstring in one file, in source order; [] when it does not
    decode or parse."""
    try:
        text = _decode(source)
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return []
    source_lines = text.split("\n")  # ast counts only \n; str.splitlines would split on \f
    records = []
    for qualname, node in _walk_functions(tree):
        doc = _docstring_node(node)
        if doc is None:
            continue
        assert isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)
        records.append(
            FunctionRecord(
                repo=repo,
                path=path,
                qualname=qualname,
                lineno=node.lineno,
                text=_function_text(source_lines, node),
                summary=summary_of(doc.value.value),
            )
        )
    return sorted(records, key=lambda r: (r.lineno, r.qualname))
