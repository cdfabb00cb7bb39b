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
  they are bound to, also through a call (``var add = wrap(function …)``), as
  :mod:`riido_pg.extract.rules.javascript` says;
* Ruby singleton methods drop their receiver: ``def self.build`` and
  ``def Greeter.build`` in ``class Greeter`` are both ``Greeter.build``;
* C# destructors are ``~Name``; C++ operators ``operator==``.

Declarations without a body (prototypes, abstract and interface methods,
signatures) are not functions and are not extracted.

The rules see the tree through the walk's frames (:mod:`riido_pg.extract.syntax`):
a node and its ancestors, never ``Node.parent``.
"""

from __future__ import annotations

from riido_pg.extract.rules.base import (
    ContainerRule,
    Rules,
    clean_name,
    container_field,
    field_name,
    named_with_body,
    on_node,
)
from riido_pg.extract.rules.javascript import JS
from riido_pg.extract.rules.native import c_name, csharp_name, go_name, kotlin_name, rust_type

#: One rule set per language (JavaScript's, :data:`JS`, serves TypeScript too); the
#: language records of :mod:`riido_pg.extract.languages` name theirs.
__all__ = [
    "CPP",
    "CSHARP",
    "GO",
    "JAVA",
    "JS",
    "KOTLIN",
    "PYTHON",
    "RUBY",
    "RUST",
    "C",
    "Rules",
    "clean_name",
]

_CPP_CONTAINERS: dict[str, ContainerRule] = {
    "class_specifier": container_field,
    "struct_specifier": container_field,
    "union_specifier": container_field,
    "namespace_definition": container_field,
}

PYTHON = Rules(
    definitions=("function_definition",),
    name=on_node(named_with_body),
    containers={"class_definition": container_field},
    wrappers=frozenset({"decorated_definition"}),
)
GO = Rules(definitions=("function_declaration", "method_declaration"), name=on_node(go_name))
JAVA = Rules(
    definitions=(
        "method_declaration",
        "constructor_declaration",
        "compact_constructor_declaration",
    ),
    name=on_node(named_with_body),
    containers={
        kind: container_field
        for kind in (
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
        )
    },
    leading=frozenset({"line_comment", "block_comment"}),
)
CSHARP = Rules(
    definitions=(
        "method_declaration",
        "constructor_declaration",
        "destructor_declaration",
        "local_function_statement",
    ),
    name=on_node(csharp_name),
    containers={
        kind: container_field
        for kind in (
            "class_declaration",
            "struct_declaration",
            "interface_declaration",
            "record_declaration",
            "record_struct_declaration",
            "namespace_declaration",
        )
    },
)
RUST = Rules(
    definitions=("function_item",),
    name=on_node(named_with_body),
    containers={
        "impl_item": rust_type,
        "trait_item": container_field,
        "mod_item": container_field,
    },
    leading=frozenset({"line_comment", "block_comment", "attribute_item"}),
)
C = Rules(definitions=("function_definition",), name=on_node(c_name))
CPP = Rules(
    definitions=("function_definition",),
    name=on_node(c_name),
    containers=_CPP_CONTAINERS,
    wrappers=frozenset({"template_declaration"}),
)
RUBY = Rules(
    definitions=("method", "singleton_method"),
    name=on_node(field_name),
    containers={"class": container_field, "module": container_field},
)
KOTLIN = Rules(
    definitions=("function_declaration",),
    name=on_node(kotlin_name),
    containers={
        "class_declaration": container_field,
        "object_declaration": container_field,
        "companion_object": container_field,
    },
    leading=frozenset({"line_comment", "block_comment"}),
)
