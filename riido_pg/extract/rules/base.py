"""What every grammar's rules are made of: the ``Rules`` record and shared helpers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from riido_pg.extract.syntax import Slot, Stack

if TYPE_CHECKING:
    from tree_sitter import Node  # types only: importing the rules loads no grammar

__all__ = [
    "ContainerRule",
    "Named",
    "Rules",
    "clean_name",
    "container_field",
    "field_name",
    "named_with_body",
    "on_node",
    "text",
]

#: (name, node whose first line is the function's line) or None: not extracted.
Named = tuple[str, "Node"] | None
#: The name of the definition at ``stack[-1]``.
NameRule = Callable[[Stack, bytes], Named]
#: The name component the container at ``stack[-1]`` adds (None: nothing).
ContainerRule = Callable[[Stack, bytes], str | None]
#: The index in the stack of the node whose extent becomes the text (before wrappers).
OuterRule = Callable[[Stack], int]
#: The slot a child inherits: (stack with the parent last, the child, its field name).
CarryRule = Callable[[Stack, "Node", str | None, bytes], Slot | None]


@dataclass(frozen=True)
class Rules:
    """How to find and name the functions of one grammar."""

    #: Node types that may be functions (kinds unknown to the grammar are ignored).
    definitions: tuple[str, ...]
    #: Name of a definition, or None when it is anonymous or has no body.
    name: NameRule
    #: Node type -> name component it adds to the functions inside it.
    containers: Mapping[str, ContainerRule] = field(default_factory=dict)
    #: Parents whose extent becomes the text (decorators, ``export``, ``template<>``).
    wrappers: frozenset[str] = frozenset()
    #: Preceding siblings kept with the text when contiguous (comments, decorators).
    leading: frozenset[str] = frozenset({"comment"})
    #: Where the wrapping starts for bound expressions (JS/TS): the binding statement.
    outer: OuterRule | None = None
    #: How a binding's name travels down to a function argument (JS/TS).
    carry: CarryRule | None = None


def on_node(rule: Callable[[Node, bytes], Named]) -> NameRule:
    """A name rule that needs the definition node alone."""
    return lambda stack, src: rule(stack[-1].node, src)


def text(node: Node, src: bytes) -> str:
    """The source of a node."""
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def clean_name(raw: str) -> str:
    """Whitespace collapsed, ``::`` qualifiers turned into ``.``."""
    name = " ".join(raw.split())
    name = name.replace(" ::", "::").replace(":: ", "::").replace(" .", ".").replace(". ", ".")
    return name.replace("::", ".")


def field_name(node: Node, src: bytes, field_name: str = "name") -> Named:
    """The node's ``name`` field (or another), cleaned."""
    name = node.child_by_field_name(field_name)
    if name is None:
        return None
    return clean_name(text(name, src)), name


def named_with_body(node: Node, src: bytes) -> Named:
    """The ``name`` field of a definition that has a ``body``."""
    if node.child_by_field_name("body") is None:
        return None
    return field_name(node, src)


def container_field(stack: Stack, src: bytes) -> str | None:
    """A container named by its ``name`` field."""
    named = field_name(stack[-1].node, src)
    return named[0] if named else None
