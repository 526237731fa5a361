"""Map changed lines of a source file to the definition that encloses them.

The indexer calls this on the old side of a diff (for removed lines) and on the new side
(for added lines), so that two pull requests touching ``Pipeline.__init__`` can be matched
even when their line numbers differ.

Design notes:

* Importing this module is cheap: tree-sitter and the grammar wheels are imported only
  when a file of that language is first parsed.  Languages and queries are cached per
  process, parsers per thread (a ``Parser`` is not safe to share between threads).
* Definition nodes are found with one tree-sitter query per language.  The query runs
  in C and walks the tree iteratively, so Python objects are built only for the
  definition nodes themselves (not for every node) and deep trees cannot overflow the
  Python stack.  Nesting is then recovered with a stack sweep over the sorted nodes.
* Qualified names join the enclosing definitions with ``"."``: ``Pipeline.__init__``,
  ``outer.inner``, Go ``func (s *T) M()`` -> ``T.M``, Rust ``impl X { fn f }`` -> ``X.f``,
  C++ out-of-line ``ns::A::b`` -> ``ns.A.b`` (``::`` is always rewritten to ``.``),
  JS ``Foo.prototype.bar = function`` -> ``Foo.bar``, ``var api = {get() {}}`` -> ``api.get``.
* A function directly inside a class-like definition (class, struct, impl, trait, ...) is
  a ``method``; so are Go methods and out-of-line ``A::b`` (a namespace-qualified free
  function ``ns::f`` looks the same to the parser and is reported as a method too).

Known limits: anonymous functions and lambdas are not definitions (their lines belong to
the enclosing one); PHP namespaces and Go/Java packages do not qualify names; macros that
look like functions (``TEST(A, b) {``) are named after the macro; a ``.h`` file is parsed
as C, and as C++ only when the C grammar reports errors.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Parser, Query

__all__ = [
    "KINDS",
    "Definition",
    "definitions",
    "enclosing_symbols",
    "language_for_path",
]

# Parsing cost grows with file size, and files this large are almost always generated,
# vendored or minified code whose symbols are useless for duplicate detection; skipping
# them keeps one pathological file from dominating a 10,000-commit indexing run.
MAX_SOURCE_BYTES = 2 * 1024 * 1024

# Definitions nested deeper than this are folded into their ancestor.  Real code never
# comes close, but a crafted file of 100,000 nested functions would otherwise build
# qualified names of quadratic total size.
MAX_NESTING = 64

# Git's own binary heuristic: a NUL byte near the start.  Error recovery on binary junk
# is the slowest thing tree-sitter does (about 3 ms per KB), and it yields nothing useful.
_BINARY_SNIFF_BYTES = 8000

KINDS: frozenset[str] = frozenset(
    {
        "function",
        "method",
        "class",
        "interface",
        "struct",
        "union",
        "enum",
        "trait",
        "impl",
        "module",
        "namespace",
    }
)
"""The fixed vocabulary of ``Definition.kind`` values."""

# A function whose innermost enclosing definition is one of these is reported as a method.
_CLASS_LIKE = frozenset({"class", "interface", "struct", "union", "enum", "trait", "impl"})


@dataclass(frozen=True, slots=True)
class Definition:
    """One named definition and the 1-based, inclusive line span it covers."""

    name: str
    qualified: str
    kind: str
    start_line: int
    end_line: int


_EXTENSIONS: dict[str, str] = {
    "py": "python",
    "pyi": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rs": "rust",
    "java": "java",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "hpp": "cpp",
    "hh": "cpp",
    "hxx": "cpp",
    "php": "php",
}


def language_for_path(path: str) -> str | None:
    """Language name for a path by its extension, or None when we have no grammar for it."""
    _, dot, extension = path.rpartition("/")[2].rpartition(".")
    return _EXTENSIONS.get(extension.lower()) if dot else None


# ---------------------------------------------------------------------------------------
# Grammars, parsers and queries (all lazy)
# ---------------------------------------------------------------------------------------


def _grammar_capsule(language: str) -> object:
    """Import only the grammar wheel this file needs, never all nine up front."""
    if language == "python":
        import tree_sitter_python

        return tree_sitter_python.language()
    if language == "javascript":
        import tree_sitter_javascript

        return tree_sitter_javascript.language()
    if language == "typescript":
        import tree_sitter_typescript

        return tree_sitter_typescript.language_typescript()
    if language == "tsx":
        import tree_sitter_typescript

        return tree_sitter_typescript.language_tsx()
    if language == "go":
        import tree_sitter_go

        return tree_sitter_go.language()
    if language == "rust":
        import tree_sitter_rust

        return tree_sitter_rust.language()
    if language == "java":
        import tree_sitter_java

        return tree_sitter_java.language()
    if language == "c":
        import tree_sitter_c

        return tree_sitter_c.language()
    if language == "cpp":
        import tree_sitter_cpp

        return tree_sitter_cpp.language()
    if language == "php":
        import tree_sitter_php

        # language_php (not _php_only) so files mixing HTML and <?php still parse.
        return tree_sitter_php.language_php()
    raise KeyError(language)


@cache
def _language(language: str) -> Language:
    """Languages are immutable and shareable, so one per process is enough."""
    from tree_sitter import Language

    return Language(_grammar_capsule(language))


@cache
def _query(language: str) -> Query:
    """Compiling a query costs a few ms, so it is done once per language per process."""
    from tree_sitter import Query

    return Query(_language(language), _QUERIES[language])


_local = threading.local()


def _parser(language: str) -> Parser:
    """A cached parser for this thread: parsers carry mutable state and must not be shared."""
    cache: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    parser = cache.get(language)
    if parser is None:
        from tree_sitter import Parser

        parser = cache[language] = Parser(_language(language))
    return parser


# Capture names are "<kind>.<namer>"; the namer (see _NAMERS) turns the captured node into
# the name parts it contributes to the qualified name ([] means "skip this node").
# "@wrap" captures a wrapper whose leading lines (decorators, template headers) belong to
# the wrapped definition; "@attr" captures Rust attributes, which are preceding siblings.
_PY_QUERY = """
(function_definition) @function.name
(class_definition) @class.name
(decorated_definition definition: (function_definition) @function.name) @wrap
(decorated_definition definition: (class_definition) @class.name) @wrap
"""

_JS_COMMON = """
(function_declaration) @function.name
(generator_function_declaration) @function.name
(class_declaration) @class.name
(class_body (method_definition) @method.name)
(object (method_definition) @method.js_member)
(variable_declarator
  name: (identifier)
  value: [(arrow_function) (function_expression) (generator_function)]) @function.name
(variable_declarator name: (identifier) value: (class)) @class.name
(assignment_expression
  left: [(identifier) (member_expression)]
  right: [(arrow_function) (function_expression) (generator_function)]) @function.js_assign
(pair
  key: [(property_identifier) (string) (number) (computed_property_name)]
  value: [(arrow_function) (function_expression) (generator_function)]) @method.js_pair
"""

_TS_QUERY = (
    _JS_COMMON
    + """
(abstract_class_declaration) @class.name
(interface_declaration) @interface.name
(enum_declaration) @enum.name
(internal_module) @namespace.name
(module) @module.name
(function_signature) @function.name
(method_signature) @method.name
(abstract_method_signature) @method.name
"""
)

_GO_QUERY = """
(function_declaration) @function.name
(method_declaration) @method.go_method
(type_spec type: (struct_type)) @struct.name
(type_spec type: (interface_type)) @interface.name
"""

_RUST_QUERY = """
(function_item) @function.name
(function_signature_item) @function.name
(impl_item) @impl.rust_impl
(trait_item) @trait.name
(struct_item) @struct.name
(enum_item) @enum.name
(union_item) @union.name
(mod_item body: (_)) @module.name
(attribute_item) @attr
"""

_JAVA_QUERY = """
(class_declaration) @class.name
(record_declaration) @class.name
(interface_declaration) @interface.name
(annotation_type_declaration) @interface.name
(enum_declaration) @enum.name
(method_declaration) @method.name
(constructor_declaration) @method.name
(compact_constructor_declaration) @method.name
"""

_C_QUERY = """
(function_definition) @function.c_function
(struct_specifier body: (_)) @struct.c_tag
(union_specifier body: (_)) @union.c_tag
(enum_specifier body: (_)) @enum.c_tag
"""

_CPP_QUERY = (
    _C_QUERY
    + """
(class_specifier body: (_)) @class.c_tag
(namespace_definition name: (_)) @namespace.cpp_namespace
(template_declaration (function_definition) @function.c_function) @wrap
(template_declaration (class_specifier body: (_)) @class.c_tag) @wrap
(template_declaration (struct_specifier body: (_)) @struct.c_tag) @wrap
"""
)

_PHP_QUERY = """
(function_definition) @function.name
(method_declaration) @method.name
(class_declaration) @class.name
(interface_declaration) @interface.name
(trait_declaration) @trait.name
(enum_declaration) @enum.name
"""

_QUERIES: dict[str, str] = {
    "python": _PY_QUERY,
    "javascript": _JS_COMMON,
    "typescript": _TS_QUERY,
    "tsx": _TS_QUERY,
    "go": _GO_QUERY,
    "rust": _RUST_QUERY,
    "java": _JAVA_QUERY,
    "c": _C_QUERY,
    "cpp": _CPP_QUERY,
    "php": _PHP_QUERY,
}

# ---------------------------------------------------------------------------------------
# Namers: captured node -> list of name parts
# ---------------------------------------------------------------------------------------


def _text(source: bytes, node: Node | None) -> str:
    """Node text, whitespace-collapsed; invalid UTF-8 becomes U+FFFD instead of raising."""
    if node is None:
        return ""
    raw = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
    return " ".join(raw.split())


def _name_field(node: Node, source: bytes) -> list[str]:
    """Most grammars put the definition's name in a ``name`` field."""
    name_node = node.child_by_field_name("name")
    name = _text(source, name_node)
    if name_node is not None and name_node.type == "string":
        name = name.strip("\"'`")  # TypeScript: declare module "foo" { ... }
    return [name] if name else []


_JS_DOTTED = re.compile(r"[\w$#]+(?:\.[\w$#]+)*")


def _js_assign(node: Node, source: bytes) -> list[str]:
    """``Foo.prototype.bar = function`` -> Foo.bar; ``this.x = () =>`` -> x (under its owner)."""
    left = node.child_by_field_name("left")
    if left is None:
        return []
    text = _text(source, left).replace(" ", "")
    if left.type == "identifier":
        return [text] if text else []
    if not _JS_DOTTED.fullmatch(text):
        prop = left.child_by_field_name("property")
        name = _text(source, prop)
        return [name] if name else []
    parts = [p for p in text.split(".") if p != "prototype"]
    if parts and parts[0] == "this":
        parts = parts[1:]
    return parts


def _js_object_owner(obj: Node | None, source: bytes) -> list[str]:
    """Name parts of the variable or assignment that holds an object literal, outer first.

    ``var api = {sub: {...}}`` gives [api, sub] for the inner literal; a literal that is
    returned or passed as an argument gives [] and its members qualify under the enclosing
    definition only.
    """
    parts: list[str] = []
    for _ in range(8):
        if obj is None or obj.type != "object":
            break
        holder = obj.parent
        if holder is None:
            break
        if holder.type == "pair":
            key = _text(source, holder.child_by_field_name("key")).strip("\"'`")
            if not key:
                return []
            parts.append(key)
            obj = holder.parent
            continue
        if holder.type == "variable_declarator":
            owner = holder.child_by_field_name("name")
            if owner is not None and owner.type == "identifier":
                parts.append(_text(source, owner))
        elif holder.type == "assignment_expression":
            parts.extend(reversed(_js_assign(holder, source)))
        break
    parts.reverse()
    return parts


def _js_pair(node: Node, source: bytes) -> list[str]:
    """Object-literal members ``var api = {get: function () {}}`` -> api.get (pre-ES6 style)."""
    key = _text(source, node.child_by_field_name("key")).strip("\"'`")
    return [*_js_object_owner(node.parent, source), key] if key else []


def _js_member(node: Node, source: bytes) -> list[str]:
    """Shorthand object members ``var api = {get() {}}`` -> api.get, like _js_pair."""
    name = _name_field(node, source)
    return [*_js_object_owner(node.parent, source), *name] if name else []


def _go_method(node: Node, source: bytes) -> list[str]:
    """``func (s *Server[T]) Start()`` -> [Server, Start]: Go methods live outside the type."""
    name = _text(source, node.child_by_field_name("name"))
    if not name:
        return []
    receiver = node.child_by_field_name("receiver")
    type_node: Node | None = None
    if receiver is not None:
        for child in receiver.named_children:
            if child.type == "parameter_declaration":
                type_node = child.child_by_field_name("type")
                break
    for _ in range(8):
        if type_node is None or type_node.type not in (
            "pointer_type",
            "generic_type",
            "parenthesized_type",
        ):
            break
        inner = type_node.child_by_field_name("type")
        type_node = inner if inner is not None else type_node.named_children[-1]
    owner = _text(source, type_node)
    return [owner, name] if owner else [name]


def _rust_impl(node: Node, source: bytes) -> list[str]:
    """``impl<T> Trait for a::Foo<T>`` -> [Foo]: methods qualify under the implementing type."""
    type_node = node.child_by_field_name("type")
    for _ in range(8):
        if type_node is None:
            return []
        if type_node.type in ("generic_type", "reference_type", "pointer_type"):
            type_node = type_node.child_by_field_name("type")
        elif type_node.type == "scoped_type_identifier":
            type_node = type_node.child_by_field_name("name")
        else:
            break
    name = _text(source, type_node)
    return [name] if name else []


_C_DECLARATOR_WRAPPERS = frozenset(
    {
        "function_declarator",
        "pointer_declarator",
        "reference_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
        "array_declarator",
    }
)


def _cpp_name_parts(node: Node | None, source: bytes) -> list[str]:
    """Split a (possibly qualified, possibly templated) C++ name into parts, dropping ``<..>``."""
    parts: list[str] = []
    for _ in range(32):
        if node is None:
            break
        kind = node.type
        if kind == "qualified_identifier":
            scope = node.child_by_field_name("scope")
            if scope is not None:
                parts.extend(_cpp_name_parts(scope, source))
            node = node.child_by_field_name("name")
            continue
        if kind in ("template_function", "template_type", "template_method"):
            node = node.child_by_field_name("name")
            continue
        if kind == "nested_namespace_specifier":
            parts.extend(p for p in _text(source, node).replace(" ", "").split("::") if p)
            break
        text = _text(source, node)
        if text:
            parts.append(text)
        break
    return parts


def _c_function(node: Node, source: bytes) -> list[str]:
    """The name lives at the bottom of the declarator chain: ``char *(*f(void))(int)`` -> f."""
    decl = node.child_by_field_name("declarator")
    for _ in range(32):
        if decl is None or decl.type not in _C_DECLARATOR_WRAPPERS:
            break
        inner = decl.child_by_field_name("declarator")
        if inner is None:
            named = decl.named_children
            inner = named[-1] if named else None
            if decl.type == "parenthesized_declarator" and named:
                inner = named[0]
        decl = inner
    if decl is None or decl.type in ("ERROR", "parameter_list"):
        return []
    return _cpp_name_parts(decl, source)


def _c_tag(node: Node, source: bytes) -> list[str]:
    """``struct s {..}`` -> s; anonymous ``typedef struct {..} T;`` takes the typedef name."""
    name_node = node.child_by_field_name("name")
    if name_node is not None:
        return _cpp_name_parts(name_node, source)
    parent = node.parent
    if parent is not None and parent.type == "type_definition":
        declarator = parent.child_by_field_name("declarator")
        if declarator is not None and declarator.type == "type_identifier":
            name = _text(source, declarator)
            return [name] if name else []
    return []


def _cpp_namespace(node: Node, source: bytes) -> list[str]:
    """``namespace a::b {`` -> [a, b]; anonymous namespaces are transparent."""
    return _cpp_name_parts(node.child_by_field_name("name"), source)


_NAMERS: dict[str, Callable[[Node, bytes], list[str]]] = {
    "name": _name_field,
    "js_assign": _js_assign,
    "js_pair": _js_pair,
    "js_member": _js_member,
    "go_method": _go_method,
    "rust_impl": _rust_impl,
    "c_function": _c_function,
    "c_tag": _c_tag,
    "cpp_namespace": _cpp_namespace,
}

# ---------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------


_Found = tuple[int, int, int, int, str, list[str]]
# (start_byte, -end_byte, start_row, end_row, end_column, kind, parts) while collecting.
_Raw = tuple[int, int, int, int, int, str, list[str]]


def _collect(language: str, source: bytes) -> tuple[list[_Found], bool]:
    """Parse; return (start_byte, -end_byte, start_line, end_line, kind, parts) and has_error.

    Node.parent and sibling lookups cost O(depth) in tree-sitter, so wrappers (decorators,
    template headers) come from query matches and Rust attributes from a byte-gap check.
    """
    tree = _parser(language).parse(source)
    if tree is None:
        return [], True
    root = tree.root_node
    from tree_sitter import QueryCursor

    by_id: dict[int, _Raw] = {}
    attributes: list[tuple[int, int, int]] = []  # Rust (end_byte, start_byte, start_row)
    for _, captures in QueryCursor(_query(language)).matches(root):
        wrap = captures.get("wrap")
        for capture_name, nodes in captures.items():
            if capture_name == "wrap":
                continue
            for node in nodes:
                if capture_name == "attr":
                    attributes.append((node.end_byte, node.start_byte, node.start_point[0]))
                    continue
                raw = by_id.get(node.id)
                if raw is None:
                    capture_kind, _, namer_key = capture_name.partition(".")
                    parts = _NAMERS[namer_key](node, source)
                    if not parts:
                        continue
                    kind = capture_kind
                    if kind == "function" and len(parts) > 1:
                        kind = "method"  # out-of-line A::b, Foo.prototype.bar = function
                    start, end = node.start_point, node.end_point
                    raw = (node.start_byte, -node.end_byte, start[0], end[0], end[1], kind, parts)
                if wrap and wrap[0].start_byte < raw[0]:
                    raw = (wrap[0].start_byte, raw[1], wrap[0].start_point[0], *raw[3:])
                by_id[node.id] = raw
    raws = list(by_id.values())
    if attributes:
        raws = _extend_over_attributes(raws, attributes, source)
    found: list[_Found] = []
    for start_byte, neg_end, start_row, end_row, end_col, kind, parts in raws:
        if end_col == 0 and end_row > start_row:
            end_row -= 1  # ends at the very start of a line: that line is not inside
        found.append((start_byte, neg_end, start_row + 1, end_row + 1, kind, parts))
    return found, root.has_error


def _extend_over_attributes(
    raws: list[_Raw], attributes: list[tuple[int, int, int]], source: bytes
) -> list[_Raw]:
    """Rust ``#[test]`` / ``#[derive]`` lines are siblings before the item, not children."""
    attributes.sort()
    ends = [end for end, _, _ in attributes]
    extended: list[_Raw] = []
    for raw in raws:
        start_byte, start_row = raw[0], raw[2]
        index = bisect_right(ends, start_byte) - 1
        while index >= 0:
            end, start, row = attributes[index]
            if source[end:start_byte].strip():
                break  # something other than whitespace separates them
            start_byte, start_row = start, row
            index -= 1
        extended.append((start_byte, raw[1], start_row, *raw[3:]))
    return extended


def _as_utf8(source: bytes) -> bytes:
    """Transcode non-UTF-8 files as Latin-1, which keeps every line break where it was.

    tree-sitter reads UTF-8 only; raw invalid bytes become ERROR nodes that can cut an
    identifier such as ``résumé`` short.  Latin-1 maps every byte to one character, so
    legacy (Latin-1/cp1252) sources get their real names back and any other encoding at
    least parses as cleanly as ASCII.  Validating costs ~0.1 ms per MB.
    """
    try:
        source.decode("utf-8")
    except UnicodeDecodeError:
        return source.decode("latin-1").encode("utf-8")
    return source


def definitions(path: str, source: bytes) -> list[Definition]:
    """All definitions in source order, outer before inner; [] when the language is unknown.

    Never raises: a file that does not parse cleanly yields whatever tree-sitter recovered,
    and any unexpected failure yields [] so one odd file cannot stop an indexing run.
    Binary files (a NUL byte early on) and files over MAX_SOURCE_BYTES also yield [].
    """
    language = language_for_path(path)
    if language is None:
        return []
    try:
        if isinstance(source, str):
            source = source.encode("utf-8", "surrogateescape")
        elif not isinstance(source, bytes):
            source = bytes(source)
        if len(source) > MAX_SOURCE_BYTES or b"\0" in source[:_BINARY_SNIFF_BYTES]:
            return []
        source = _as_utf8(source)
        found, has_error = _collect(language, source)
        if has_error and language == "c" and path.lower().endswith(".h"):
            # .h is shared by C and C++; a header the C grammar chokes on is likely C++.
            cpp_found, cpp_error = _collect("cpp", source)
            if not cpp_error or len(cpp_found) > len(found):
                found = cpp_found
        return _nest(found)
    except Exception:  # a symbol lookup must never break indexing
        return []


def _nest(found: list[_Found]) -> list[Definition]:
    """Qualify names with a stack sweep over nodes sorted by (start, -end): O(n log n)."""
    found.sort(key=lambda item: (item[0], item[1]))
    result: list[Definition] = []
    stack: list[tuple[int, str, str]] = []  # (end_byte, qualified, kind)
    for start_byte, neg_end, start_line, end_line, kind, parts in found:
        while stack and stack[-1][0] <= start_byte:
            stack.pop()
        if not stack:
            qualified = ".".join(parts)
        elif len(stack) >= MAX_NESTING:
            stack.append((-neg_end, stack[-1][1], stack[-1][2]))  # folded into the ancestor
            continue
        else:
            qualified = stack[-1][1] + "." + ".".join(parts)
            if kind == "function" and stack[-1][2] in _CLASS_LIKE:
                kind = "method"
        result.append(Definition(parts[-1], qualified, kind, start_line, max(end_line, start_line)))
        stack.append((-neg_end, qualified, kind))
    return result


def enclosing_symbols(
    path: str, source: bytes, line_numbers: Iterable[int]
) -> dict[int, Definition]:
    """For each given 1-based line, the innermost Definition containing it.

    Lines outside any definition are omitted.  One parse serves all lines, and the lookup
    is a sweep over sorted lines and definitions, so thousands of lines cost O(n log n).
    """
    try:
        wanted = sorted({line for line in line_numbers if isinstance(line, int) and line > 0})
    except Exception:  # e.g. an iterable that raises: treat as no lines
        return {}
    if not wanted:
        return {}
    defs = definitions(path, source)
    if not defs:
        return {}
    result: dict[int, Definition] = {}
    stack: list[Definition] = []
    index, count = 0, len(defs)
    for line in wanted:
        while index < count and defs[index].start_line <= line:
            stack.append(defs[index])
            index += 1
        while stack and stack[-1].end_line < line:
            stack.pop()
        if stack:
            result[line] = stack[-1]
    return result
