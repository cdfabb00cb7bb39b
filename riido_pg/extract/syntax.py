"""The walk's view of one syntax tree: a frame per node from the root to where it is.

``extract_functions`` walks each tree once, top down, and keeps one :class:`Frame` for
every node on the path from the root to the node it is at. The naming rules look at a
node's parent, its binding or its preceding comments through these frames, never
through tree-sitter's ``Node.parent`` or sibling lookups: those search down from the
root on every call, so asking them for every function made extraction time grow with
the cube of the nesting depth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node  # types only: importing the rules loads no grammar

__all__ = ["Frame", "Slot", "Stack"]


@dataclass(slots=True, eq=False)
class Slot:
    """A name waiting for a function (JavaScript, TypeScript): a binding whose value is a
    call, parentheses or ``?:``, as in ``var add = wrap(function …)``. ``binding`` is the
    index of the binding's frame; ``taken`` once a function argument has claimed it."""

    binding: int
    taken: bool = False


@dataclass(slots=True, eq=False)
class Frame:
    """One node on the walk's path, and what its descendants inherit from it."""

    node: Node
    #: The node's field name in its parent (``value``, ``arguments``…), if any.
    field: str | None
    #: Qualified-name prefix for the functions inside (``""`` or ``"A.b."``); None
    #: once it is longer than any id may be.
    prefix: str | None
    #: Functions and named blocks around this node, itself included.
    level: int
    #: The binding name a function argument here may take (JavaScript, TypeScript).
    slot: Slot | None = None
    #: For a function named after a binding: the index of the binding's frame.
    bound: int | None = None
    #: The run of comments (or other leading kinds) among the children seen so far,
    #: since the last child of another named kind.
    run: list[Node] | None = None
    #: Whether a named child of another kind has been seen.
    other: bool = False
    #: Per-node data a rule computes once (the declarators of a declaration).
    memo: int | None = None


#: The frames from the root (index 0) to the current node (last).
Stack = Sequence[Frame]
