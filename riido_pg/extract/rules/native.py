"""Name rules of the compiled languages: Go receivers, C/C++ declarators, Rust ``impl``
blocks, C# destructors, Kotlin bodies. Each needs the definition node alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from riido_pg.extract.rules.base import Named, clean_name, field_name, named_with_body, text
from riido_pg.extract.syntax import Stack

if TYPE_CHECKING:
    from tree_sitter import Node  # types only: importing the rules loads no grammar

__all__ = ["c_name", "csharp_name", "go_name", "kotlin_name", "rust_type"]

# --- Go -----------------------------------------------------------------------


def _go_type_name(node: Node, src: bytes) -> str:
    while node.type in ("pointer_type", "parenthesized_type", "generic_type"):
        inner = node.child_by_field_name("type") if node.type == "generic_type" else None
        if inner is None:
            inner = node.named_children[0] if node.named_child_count else None
        if inner is None:
            break
        node = inner
    return clean_name(text(node, src))


def go_name(node: Node, src: bytes) -> Named:
    """Functions by name, methods as ``Type.Method`` whatever the receiver."""
    named = named_with_body(node, src)
    if named is None or node.type != "method_declaration":
        return named
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return named
    params = [c for c in receiver.named_children if c.type == "parameter_declaration"]
    rtype = params[0].child_by_field_name("type") if params else None
    if rtype is None:
        return named
    return f"{_go_type_name(rtype, src)}.{named[0]}", named[1]


# --- C / C++ ------------------------------------------------------------------
_C_NAMES = frozenset(
    {
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "template_function",
        "operator_cast",
    }
)


def _c_declarator_name(declarator: Node, src: bytes) -> str:
    """A declarator's name; a conversion operator's stops before its ``()``."""
    last = declarator
    while last.type == "qualified_identifier":
        name = last.child_by_field_name("name")
        if name is None:
            break
        last = name
    end = declarator.end_byte
    if last.type == "operator_cast":
        stack = [last]
        while stack:
            current = stack.pop()
            if current.type == "parameter_list":
                end = current.start_byte
                break
            stack.extend(reversed(current.named_children))
    return clean_name(src[declarator.start_byte : end].decode("utf-8", "replace"))


def c_name(node: Node, src: bytes) -> Named:
    """The name in the declarator, qualifiers kept (``ui.Widget.render``)."""
    if node.child_by_field_name("body") is None:
        return None
    declarator = node.child_by_field_name("declarator")
    while declarator is not None:
        if declarator.type in _C_NAMES:
            return _c_declarator_name(declarator, src), declarator
        inner = declarator.child_by_field_name("declarator")
        if inner is None and declarator.type == "parenthesized_declarator":
            inner = declarator.named_children[0] if declarator.named_child_count else None
        declarator = inner
    return None


# --- Rust ---------------------------------------------------------------------


def rust_type(stack: Stack, src: bytes) -> str | None:
    """An ``impl`` block is named after its type (``impl Display for Point``: ``Point``)."""
    kind = stack[-1].node.child_by_field_name("type")
    while kind is not None and kind.type in ("generic_type", "reference_type", "pointer_type"):
        kind = kind.child_by_field_name("type")
    return clean_name(text(kind, src)) if kind is not None else None


# --- C# -----------------------------------------------------------------------


def csharp_name(node: Node, src: bytes) -> Named:
    """Destructors are ``~Name``."""
    named = named_with_body(node, src)
    if named is not None and node.type == "destructor_declaration":
        return "~" + named[0], named[1]
    return named


# --- Kotlin -------------------------------------------------------------------


def kotlin_name(node: Node, src: bytes) -> Named:
    """A function with a body, by its name."""
    if not any(c.type == "function_body" for c in node.named_children):
        return None
    return field_name(node, src)
