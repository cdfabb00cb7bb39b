"""Per-language rules: which nodes are functions, their names, their containers.

A function's qualified name is the names of its enclosing named blocks,
outermost first, then its own name, joined with ``.`` in every language:

* containers are classes, structs, interfaces, traits, enums, records, objects,
  ``impl`` blocks (named after their type: ``impl Display for Point`` gives
  ``Point``), modules and namespaces written as blocks, and enclosing
  functions (nested functions: ``outer.inner``);
* file-level declarations (Java ``package``, Go ``package``, C# file-scoped
  ``namespace X;``) and anonymous blocks (anonymous classes, anonymous
  namespaces, lambdas) add nothing;
* a qualifier written in the definition itself is kept, with ``::`` turned
  into ``.``: C++ ``void ui::Widget::render()`` is ``ui.Widget.render``;
* Go methods are ``Type.Method`` whatever the receiver (``*Server`` or
  ``Server``; type parameters dropped);
* JavaScript/TypeScript function and arrow expressions are named after what
  they are bound to: a variable (``const f = () => {}``), an object key
  (``api.post``), a class field (``Greeter.onClick``) or an assignment target
  (``module.exports.helper``); an unbound one is named by its own name
  (``setTimeout(function tick() {})`` gives ``tick``) and is not extracted
  when it has none (anonymous callbacks);
* Ruby singleton methods drop their receiver: ``def self.build`` and
  ``def Greeter.build`` in ``class Greeter`` are both ``Greeter.build``;
* C# destructors are ``~Name``; C++ operators ``operator==``.

Declarations without a body (prototypes, abstract and interface methods,
signatures) are not functions and are not extracted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

__all__ = ["RULES", "Rules", "clean_name"]

#: (name, node whose first line is the function's line) or None: not extracted.
Named = tuple[str, Node] | None
NameRule = Callable[[Node, bytes], Named]
ContainerRule = Callable[[Node, bytes], str | None]


@dataclass(frozen=True)
class Rules:
    """How to find and name the functions of one grammar."""

    #: Node types that may be functions (kinds unknown to the grammar are ignored).
    definitions: tuple[str, ...]
    #: Name of a definition node, or None when it is anonymous or has no body.
    name: NameRule
    #: Node type -> name component it adds to the functions inside it (None: nothing).
    containers: Mapping[str, ContainerRule] = field(default_factory=dict)
    #: Parents whose extent becomes the text (decorators, ``export``, ``template<>``).
    wrappers: frozenset[str] = frozenset()
    #: Preceding siblings kept with the text when contiguous (comments, decorators).
    leading: frozenset[str] = frozenset({"comment"})
    #: Where the wrapping starts for bound expressions (JS/TS): the binding node.
    binding: Callable[[Node], Node] | None = None


def text(node: Node, src: bytes) -> str:
    """The source of a node."""
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def clean_name(raw: str) -> str:
    """Whitespace collapsed, ``::`` qualifiers turned into ``.``."""
    name = " ".join(raw.split())
    name = name.replace(" ::", "::").replace(":: ", "::").replace(" .", ".").replace(". ", ".")
    return name.replace("::", ".")


def _field_name(node: Node, src: bytes, field_name: str = "name") -> Named:
    name = node.child_by_field_name(field_name)
    if name is None:
        return None
    return clean_name(text(name, src)), name


def _named_with_body(node: Node, src: bytes) -> Named:
    if node.child_by_field_name("body") is None:
        return None
    return _field_name(node, src)


def _container_field(node: Node, src: bytes) -> str | None:
    named = _field_name(node, src)
    return named[0] if named else None


# --- Go ---------------------------------------------------------------------


def _go_type_name(node: Node, src: bytes) -> str:
    while node.type in ("pointer_type", "parenthesized_type", "generic_type"):
        inner = node.child_by_field_name("type") if node.type == "generic_type" else None
        if inner is None:
            inner = node.named_children[0] if node.named_child_count else None
        if inner is None:
            break
        node = inner
    return clean_name(text(node, src))


def _go_name(node: Node, src: bytes) -> Named:
    named = _named_with_body(node, src)
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


# --- JavaScript / TypeScript ------------------------------------------------

_JS_EXPRESSIONS = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_JS_FIELDS = ("field_definition", "public_field_definition")


def _js_binding(node: Node) -> Node | None:
    """The node that names a function expression, or None when it is unbound."""
    parent = node.parent
    if parent is None:
        return None
    if parent.type in ("variable_declarator", "pair", *_JS_FIELDS):
        value = parent.child_by_field_name("value")
        return parent if value is not None and value == node else None
    if parent.type == "assignment_expression":
        right = parent.child_by_field_name("right")
        return parent if right is not None and right == node else None
    return None


def _js_binding_name(binding: Node, src: bytes) -> Named:
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


def _js_name(node: Node, src: bytes) -> Named:
    if node.type in _JS_EXPRESSIONS:
        binding = _js_binding(node)
        if binding is not None:
            return _js_binding_name(binding, src)
    return _named_with_body(node, src)


def _js_outer(node: Node) -> Node:
    """Where a function's text starts being wrapped: its binding statement."""
    if node.type not in _JS_EXPRESSIONS:
        return node
    binding = _js_binding(node)
    if binding is None:
        return node
    parent = binding.parent
    if binding.type == "variable_declarator" and parent is not None:
        declarators = [c for c in parent.named_children if c.type == "variable_declarator"]
        return parent if len(declarators) == 1 else binding
    if binding.type == "assignment_expression" and parent is not None:
        return parent if parent.type == "expression_statement" else binding
    return binding


def _js_object(node: Node, src: bytes) -> str | None:
    parent = node.parent
    if parent is None:
        return None
    if parent.type in ("variable_declarator", "pair", "assignment_expression", *_JS_FIELDS):
        value = parent.child_by_field_name(
            "right" if parent.type == "assignment_expression" else "value"
        )
        if value is not None and value == node:
            named = _js_binding_name(parent, src)
            return named[0] if named else None
    return None


def _js_class(node: Node, src: bytes) -> str | None:
    name = _container_field(node, src)
    if name is None and node.parent is not None:
        return _js_object(node, src)  # const A = class { ... }
    return name


_JS_CONTAINERS: dict[str, ContainerRule] = {
    "class_declaration": _js_class,
    "class": _js_class,
    "abstract_class_declaration": _js_class,
    "internal_module": _container_field,
    "module": _container_field,
    "object": _js_object,
}

_JS = Rules(
    definitions=(
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
        *sorted(_JS_EXPRESSIONS),
    ),
    name=_js_name,
    containers=_JS_CONTAINERS,
    wrappers=frozenset({"export_statement"}),
    leading=frozenset({"comment", "decorator"}),
    binding=_js_outer,
)

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


def _c_name(node: Node, src: bytes) -> Named:
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


def _rust_type(node: Node, src: bytes) -> str | None:
    kind = node.child_by_field_name("type")
    while kind is not None and kind.type in ("generic_type", "reference_type", "pointer_type"):
        kind = kind.child_by_field_name("type")
    return clean_name(text(kind, src)) if kind is not None else None


# --- C# -----------------------------------------------------------------------


def _csharp_name(node: Node, src: bytes) -> Named:
    named = _named_with_body(node, src)
    if named is not None and node.type == "destructor_declaration":
        return "~" + named[0], named[1]
    return named


# --- Kotlin -------------------------------------------------------------------


def _kotlin_name(node: Node, src: bytes) -> Named:
    if not any(c.type == "function_body" for c in node.named_children):
        return None
    return _field_name(node, src)


_PYTHON = Rules(
    definitions=("function_definition",),
    name=_named_with_body,
    containers={"class_definition": _container_field},
    wrappers=frozenset({"decorated_definition"}),
)

_CPP_CONTAINERS: dict[str, ContainerRule] = {
    "class_specifier": _container_field,
    "struct_specifier": _container_field,
    "union_specifier": _container_field,
    "namespace_definition": _container_field,
}

#: Grammar key -> its rules (``tsx`` shares TypeScript's).
RULES: dict[str, Rules] = {
    "python": _PYTHON,
    "go": Rules(definitions=("function_declaration", "method_declaration"), name=_go_name),
    "javascript": _JS,
    "typescript": _JS,
    "tsx": _JS,
    "java": Rules(
        definitions=(
            "method_declaration",
            "constructor_declaration",
            "compact_constructor_declaration",
        ),
        name=_named_with_body,
        containers={
            kind: _container_field
            for kind in (
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
            )
        },
        leading=frozenset({"line_comment", "block_comment"}),
    ),
    "csharp": Rules(
        definitions=(
            "method_declaration",
            "constructor_declaration",
            "destructor_declaration",
            "local_function_statement",
        ),
        name=_csharp_name,
        containers={
            kind: _container_field
            for kind in (
                "class_declaration",
                "struct_declaration",
                "interface_declaration",
                "record_declaration",
                "record_struct_declaration",
                "namespace_declaration",
            )
        },
    ),
    "rust": Rules(
        definitions=("function_item",),
        name=_named_with_body,
        containers={
            "impl_item": _rust_type,
            "trait_item": _container_field,
            "mod_item": _container_field,
        },
        leading=frozenset({"line_comment", "block_comment", "attribute_item"}),
    ),
    "c": Rules(definitions=("function_definition",), name=_c_name),
    "cpp": Rules(
        definitions=("function_definition",),
        name=_c_name,
        containers=_CPP_CONTAINERS,
        wrappers=frozenset({"template_declaration"}),
    ),
    "ruby": Rules(
        definitions=("method", "singleton_method"),
        name=_field_name,
        containers={"class": _container_field, "module": _container_field},
    ),
    "kotlin": Rules(
        definitions=("function_declaration",),
        name=_kotlin_name,
        containers={
            "class_declaration": _container_field,
            "object_declaration": _container_field,
            "companion_object": _container_field,
        },
        leading=frozenset({"line_comment", "block_comment"}),
    ),
}
