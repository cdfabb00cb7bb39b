"""JavaScript and TypeScript: functions named after what they are bound to.

A function or arrow expression is named after the binding whose value it is: a
variable (``const f = () => {}``), an object key (``api.post``), a class field
(``Greeter.onClick``) or an assignment target (``module.exports.helper``); the text
starts at the binding's statement (``const``, ``export``) when it declares nothing else.

When the value is a call, parentheses or ``?:`` instead, the name goes to the first
function expression (in source order) that the value reaches through the arguments of
calls, the called function itself (``(function () {…})()``), parentheses and the two
branches of ``?:``, however deeply nested: ``var camelCase = createCompounder(function
(result, word) {…})`` and ``const f = memoize(debounce(() => {…}))`` give ``camelCase``
and ``f``, with the id's line that of the name. The other function arguments stay
unbound. A function expression with a name of its own keeps it (``var t =
wrap(function tick() {…})`` gives ``tick``), and still takes the binding's turn.
Calls that compute with a callback rather than wrap a function pass no name on: the
array methods (``const names = users.map(u => u.name)``; also ``filter``, ``find``,
``reduce``, ``sort``… as listed in ``_COMPUTING``), the promise methods (``then``,
``catch``, ``finally``), ``replace`` and the timers (``setTimeout``…); nor do ``new``
expressions, method-call receivers, ``await`` and type assertions.

An unbound function expression is named by its own name and is not extracted when it
has none (anonymous callbacks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from riido_pg.extract.rules.base import (
    ContainerRule,
    Named,
    Rules,
    clean_name,
    container_field,
    named_with_body,
    text,
)
from riido_pg.extract.syntax import Frame, Slot, Stack

if TYPE_CHECKING:
    from tree_sitter import Node  # types only: importing the rules loads no grammar

__all__ = ["JS"]

_EXPRESSIONS = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
#: Binding node type -> the field holding its value.
_BINDINGS = {
    "variable_declarator": "value",
    "pair": "value",
    "field_definition": "value",
    "public_field_definition": "value",
    "assignment_expression": "right",
}
#: Calls that compute with a callback rather than wrap a function: the iteration
#: methods of arrays, the methods of promises, ``replace`` and the timers.
_COMPUTING = frozenset(
    {
        "map", "filter", "find", "findIndex", "findLast", "findLastIndex", "flatMap",
        "forEach", "reduce", "reduceRight", "some", "every", "sort", "toSorted",
        "then", "catch", "finally", "replace", "replaceAll",
        "setTimeout", "setInterval", "setImmediate", "requestAnimationFrame",
    }
)  # fmt: skip
#: Node type -> the fields of its children a binding's name passes through.
_PASSING: dict[str, frozenset[str | None]] = {
    "call_expression": frozenset({"function", "arguments"}),
    "arguments": frozenset({None}),
    "parenthesized_expression": frozenset({None}),
    "ternary_expression": frozenset({"consequence", "alternative"}),
}


def _binding_name(binding: Node, src: bytes) -> Named:
    if binding.type == "variable_declarator":
        name = binding.child_by_field_name("name")
        if name is None or name.type != "identifier":
            return None  # destructuring
    elif binding.type == "pair":
        name = binding.child_by_field_name("key")
    elif binding.type == "assignment_expression":
        name = binding.child_by_field_name("left")
    else:
        name = binding.child_by_field_name("property") or binding.child_by_field_name("name")
    if name is None:
        return None
    raw = text(name, src)
    if name.type == "string":
        raw = raw[1:-1]
    return clean_name(raw), name


def _is_value(stack: Stack, index: int) -> bool:
    """Whether the node at ``index`` is the value of a binding (its parent)."""
    if index == 0:
        return False
    value = _BINDINGS.get(stack[index - 1].node.type)
    return value is not None and value == stack[index].field


def _computes(call: Node, src: bytes) -> bool:
    """Whether a call is one of ``_COMPUTING`` (``xs.map(…)``, ``setTimeout(…)``)."""
    callee = call.child_by_field_name("function")
    if callee is not None and callee.type == "member_expression":
        callee = callee.child_by_field_name("property")
    return callee is not None and text(callee, src) in _COMPUTING


def _carry(stack: Stack, node: Node, field: str | None, src: bytes) -> Slot | None:
    kind = node.type
    if kind not in _PASSING and kind not in _EXPRESSIONS:
        return None
    if kind == "call_expression" and _computes(node, src):
        return None
    parent = stack[-1]
    value = _BINDINGS.get(parent.node.type)
    if value is not None and value == field:
        return Slot(len(stack) - 1) if kind in _PASSING else None
    slot = parent.slot
    if slot is None or slot.taken or field not in _PASSING.get(parent.node.type, ()):
        return None
    return slot


def _name(stack: Stack, src: bytes) -> Named:
    frame = stack[-1]
    node = frame.node
    if node.type in _EXPRESSIONS:
        index = len(stack) - 1
        if _is_value(stack, index):
            frame.bound = index - 1
            return _binding_name(stack[index - 1].node, src)
        slot = frame.slot
        if slot is not None and not slot.taken:
            slot.taken = True
            if node.child_by_field_name("name") is None:
                named = _binding_name(stack[slot.binding].node, src)
                if named is not None:
                    frame.bound = slot.binding
                return named
    return named_with_body(node, src)


def _declarators(frame: Frame) -> int:
    if frame.memo is None:
        frame.memo = sum(1 for c in frame.node.named_children if c.type == "variable_declarator")
    return frame.memo


def _outer(stack: Stack) -> int:
    """Where a function's text starts being wrapped: its binding statement."""
    index = len(stack) - 1
    bound = stack[index].bound
    if bound is None:
        return index
    if bound == 0:
        return bound
    binding, parent = stack[bound].node, stack[bound - 1]
    if binding.type == "variable_declarator":
        return bound - 1 if _declarators(parent) == 1 else bound
    if binding.type == "assignment_expression":
        return bound - 1 if parent.node.type == "expression_statement" else bound
    return bound


def _object(stack: Stack, src: bytes) -> str | None:
    index = len(stack) - 1
    if not _is_value(stack, index):
        return None
    named = _binding_name(stack[index - 1].node, src)
    return named[0] if named else None


def _class(stack: Stack, src: bytes) -> str | None:
    name = container_field(stack, src)
    if name is None and len(stack) > 1:
        return _object(stack, src)  # const A = class { ... }
    return name


_CONTAINERS: dict[str, ContainerRule] = {
    "class_declaration": _class,
    "class": _class,
    "abstract_class_declaration": _class,
    "internal_module": container_field,
    "module": container_field,
    "object": _object,
}

JS = Rules(
    definitions=(
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
        *sorted(_EXPRESSIONS),
    ),
    name=_name,
    containers=_CONTAINERS,
    wrappers=frozenset({"export_statement"}),
    leading=frozenset({"comment", "decorator"}),
    outer=_outer,
    carry=_carry,
)
