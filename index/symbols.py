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
from bisect import bisect_left, bisect_right
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Parser, Query, Tree

__all__ = [
    "KINDS",
    "Definition",
    "SymbolExtractor",
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
    """Parse; return (start_byte, -end_byte, start_line, end_line, kind, parts) and has_error."""
    tree = _parser(language).parse(source)
    if tree is None:
        return [], True
    return _collect_tree(language, tree, source), tree.root_node.has_error


def _collect_tree(
    language: str,
    tree: Tree,
    source: bytes,
    rows: Sequence[tuple[int, int]] | None = None,
    end_of: Callable[[Node], tuple[int, int, int] | None] | None = None,
) -> list[_Found]:
    """The definitions of a parsed tree, or only those intersecting the given row ranges.

    ``rows`` holds half-open 0-based ``(first_row, end_row)`` ranges.  A definition that
    encloses a line intersects that line's range, so with its ancestors it is still found;
    the query then skips every subtree outside the ranges instead of walking the whole file.

    ``end_of`` may replace a node's (end_byte, end_row, end_column): a reduced parse leaves
    out the tail of a definition, whose real end it knows from the base version.

    Node.parent and sibling lookups cost O(depth) in tree-sitter, so wrappers (decorators,
    template headers) come from query matches and Rust attributes from a byte-gap check.
    """
    from tree_sitter import QueryCursor

    root = tree.root_node
    query = _query(language)
    by_id: dict[int, _Raw] = {}
    attributes: set[tuple[int, int, int]] = set()  # Rust (end_byte, start_byte, start_row)
    attribute_nodes: list[Node] = []
    item_rows: set[int] = {-1}  # rows already queried for the item after attributes
    if rows is None:
        batches: list[list[tuple[int, dict[str, list[Node]]]]] = [QueryCursor(query).matches(root)]
    else:
        batches = []
        for first_row, end_row in rows:
            cursor = QueryCursor(query)
            cursor.set_point_range((first_row, 0), (end_row, 0))
            batches.append(cursor.matches(root))
    pending = list(reversed(batches))
    while pending:
        for _, captures in pending.pop():
            wrap = captures.get("wrap")
            for capture_name, nodes in captures.items():
                if capture_name == "wrap":
                    continue
                for node in nodes:
                    if capture_name == "attr":
                        attributes.add((node.end_byte, node.start_byte, node.start_point[0]))
                        if rows is not None:
                            attribute_nodes.append(node)
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
                        raw = (
                            node.start_byte, -node.end_byte, start[0], end[0], end[1], kind, parts
                        )
                        if end_of is not None:
                            real = end_of(node)
                            if real is not None:
                                raw = (raw[0], -real[0], raw[2], real[1], real[2], kind, parts)
                        if rows is not None and language == "rust":
                            _attributes_before(node, attributes)
                    if wrap and wrap[0].start_byte < raw[0]:
                        raw = (wrap[0].start_byte, raw[1], wrap[0].start_point[0], *raw[3:])
                    by_id[node.id] = raw
        if attribute_nodes:
            # A changed #[attribute] line belongs to the item after it, which the row range
            # did not reach: query that item's first row too.
            cursor = QueryCursor(query)
            for row in sorted({_item_row_after(node) for node in attribute_nodes} - item_rows):
                item_rows.add(row)
                cursor.set_point_range((row, 0), (row + 1, 0))
                pending.append(cursor.matches(root))
            attribute_nodes.clear()
    raws = list(by_id.values())
    if attributes:
        raws = _extend_over_attributes(raws, sorted(attributes), source)
    found: list[_Found] = []
    for start_byte, neg_end, start_row, end_row, end_col, kind, parts in raws:
        if end_col == 0 and end_row > start_row:
            end_row -= 1  # ends at the very start of a line: that line is not inside
        found.append((start_byte, neg_end, start_row + 1, end_row + 1, kind, parts))
    return found


def _attributes_before(node: Node, attributes: set[tuple[int, int, int]]) -> None:
    """Rust attributes just before an item, which a row-restricted query may not reach."""
    sibling = node.prev_named_sibling
    for _ in range(256):
        if sibling is None or sibling.type != "attribute_item":
            return
        attributes.add((sibling.end_byte, sibling.start_byte, sibling.start_point[0]))
        sibling = sibling.prev_named_sibling


def _item_row_after(node: Node) -> int:
    """First row of the item a run of Rust attributes belongs to, or -1."""
    sibling = node.next_named_sibling
    for _ in range(256):
        if sibling is None:
            return -1
        if sibling.type != "attribute_item":
            return sibling.start_point[0]
        sibling = sibling.next_named_sibling
    return -1


def _extend_over_attributes(
    raws: list[_Raw], attributes: list[tuple[int, int, int]], source: bytes
) -> list[_Raw]:
    """Rust ``#[test]`` / ``#[derive]`` lines are siblings before the item, not children.

    ``attributes`` must be sorted.
    """
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


def _usable_source(source: bytes | str | bytearray | memoryview) -> bytes | None:
    """UTF-8 bytes worth parsing, or None for binary files and files over MAX_SOURCE_BYTES."""
    if isinstance(source, str):
        source = source.encode("utf-8", "surrogateescape")
    elif not isinstance(source, bytes):
        source = bytes(source)
    if len(source) > MAX_SOURCE_BYTES or b"\0" in source[:_BINARY_SNIFF_BYTES]:
        return None
    return _as_utf8(source)


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
        usable = _usable_source(source)
        if usable is None:
            return []
        found, has_error = _collect(language, usable)
        if has_error and language == "c" and path.lower().endswith(".h"):
            # .h is shared by C and C++; a header the C grammar chokes on is likely C++.
            cpp_found, cpp_error = _collect("cpp", usable)
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


def _wanted_lines(line_numbers: Iterable[int]) -> list[int]:
    """Sorted distinct positive line numbers; [] for anything unusable."""
    try:
        return sorted({line for line in line_numbers if isinstance(line, int) and line > 0})
    except Exception:  # e.g. an iterable that raises: treat as no lines
        return []


def _innermost(defs: list[Definition], wanted: list[int]) -> dict[int, Definition]:
    """Sweep sorted lines against definitions (outer before inner): line -> innermost."""
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


def enclosing_symbols(
    path: str, source: bytes, line_numbers: Iterable[int]
) -> dict[int, Definition]:
    """For each given 1-based line, the innermost Definition containing it.

    Lines outside any definition are omitted.  One parse serves all lines, and the lookup
    is a sweep over sorted lines and definitions, so thousands of lines cost O(n log n).
    """
    wanted = _wanted_lines(line_numbers)
    if not wanted:
        return {}
    defs = definitions(path, source)
    if not defs:
        return {}
    return _innermost(defs, wanted)


# ---------------------------------------------------------------------------------------
# Stateful extraction for indexing: cached trees, incremental parses, ranged queries
# ---------------------------------------------------------------------------------------

# Changed lines closer than this many rows share one ranged query: each query costs a
# descent from the root, each row in range costs the nodes on it.
_CLUSTER_GAP = 24

Hunk = tuple[int, int, int, int]
"""(old_start, old_length, new_start, new_length), as in a unified diff's ``@@`` header."""


class _Lines:
    """Byte offset <-> (row, column) for one source, from its newline offsets."""

    __slots__ = ("_newlines", "_size", "rows")

    def __init__(self, source: bytes) -> None:
        self._size = len(source)
        try:
            import numpy

            self._newlines: Sequence[int] = numpy.flatnonzero(
                numpy.frombuffer(source, dtype=numpy.uint8) == 10
            )
        except ImportError:  # pragma: no cover - numpy comes with scikit-learn
            self._newlines = [m.start() for m in re.finditer(b"\n", source)]
        # Lines as git counts them: a last line without a newline still counts.
        self.rows = len(self._newlines) + (1 if source and not source.endswith(b"\n") else 0)

    def start(self, row: int) -> int:
        """Byte offset where 0-based ``row`` starts (the end of the source past the last)."""
        if row <= 0:
            return 0
        if row > len(self._newlines):
            return self._size
        return int(self._newlines[row - 1]) + 1

    def point(self, offset: int) -> tuple[int, int]:
        row = bisect_left(self._newlines, offset)  # newlines before offset
        return row, offset - self.start(row)


class _Version:
    """One file version as the extractor keeps it: its source and tree(s), or why not.

    A version is either materialized (``trees`` holds its parse) or lazy: ``base`` is a
    materialized earlier version and ``blocks`` maps the rows the two share, so lookups can
    parse just the changed neighbourhood (see _reduced_lookup) instead of the whole file.
    """

    __slots__ = ("readable", "source", "trees", "language", "base", "blocks", "key", "_lines")

    def __init__(
        self,
        readable: bool,
        source: bytes = b"",
        trees: dict[str, Tree] | None = None,
        language: str | None = None,
    ) -> None:
        self.readable = readable  # the blob could be read: a parser looked at this file
        self.source = source  # UTF-8 source the trees were parsed from
        self.trees = trees or {}  # language -> tree (a .h file may hold a C and a C++ tree)
        self.language = language  # the tree used for lookups; None: nothing to parse
        self.base: _Version | None = None
        self.blocks: list[_Block] | None = None
        self.key: tuple[str, str] | None = None  # its key in the extractor's cache
        self._lines: _Lines | None = None

    @property
    def lines(self) -> _Lines:
        if self._lines is None:
            self._lines = _Lines(self.source)
        return self._lines

    @property
    def rows(self) -> int:
        return self.lines.rows

    @property
    def parsed(self) -> bool:
        """Materialized or lazy: a tree (of this or the base version) can answer lookups."""
        return bool(self.trees) or self.base is not None

    @property
    def weight(self) -> int:
        """Estimated memory: a tree takes ~20 bytes per source byte, a lazy version its source."""
        if self.trees:
            return _TREE_BYTES_PER_SOURCE_BYTE * len(self.source) * len(self.trees) + 256
        return len(self.source) + 64 * len(self.blocks or ()) + 256


def _row_ranges(wanted: list[int]) -> list[tuple[int, int]]:
    """Half-open 0-based row ranges covering the wanted 1-based lines, nearby lines merged."""
    ranges: list[tuple[int, int]] = []
    first = last = wanted[0]
    for line in wanted[1:]:
        if line - last > _CLUSTER_GAP:
            ranges.append((first - 1, last))
            first = line
        last = line
    ranges.append((first - 1, last))
    return ranges


class SymbolExtractor:
    """Enclosing definitions of changed lines for many changes in a row, for indexing.

    Compared with calling ``enclosing_symbols`` on both sides of every file change:

    * file versions stay in an LRU cache keyed by blob id, so a version is read and parsed
      at most once while it is hot (walking history oldest first, a commit's old blob is
      the previous commit's new one; many pull requests share a base blob);
    * a new version whose old version is at hand is not parsed at all: it is kept as the
      nearest parsed version plus a row map, and a lookup parses only the changed
      definitions and the lines asked about, inside a skeleton of their enclosing
      definitions (tree-sitter's included ranges skip the rest of the file);
    * after enough changes pile up, the version is parsed incrementally from that base
      (the base tree is edited with the diff's hunks so tree-sitter reuses unchanged
      subtrees), which also happens whenever a reduced parse cannot be trusted;
    * the definitions query only visits rows near the changed lines.

    Results equal ``enclosing_symbols`` on each side.  Not thread-safe: one per thread.
    """

    def __init__(self, max_cached_trees: int = 512, max_cached_bytes: int = 512 << 20) -> None:
        # Parsed trees kept (lazy versions, which hold no tree, are not counted), and the
        # estimated memory of everything kept.
        self.max_cached_trees = max(0, max_cached_trees)
        self.max_cached_bytes = max(0, max_cached_bytes)
        self._cache: OrderedDict[tuple[str, str], _Version] = OrderedDict()
        self._cached_bytes = 0
        self._cached_trees = 0
        self._asked: OrderedDict[tuple[str, str], None] = OrderedDict()  # uncached bases
        self.stats: Counter[str] = Counter()
        self.lazy = True  # keep derived versions lazy (reduced parses) when possible

    def file_symbols(
        self,
        path: str,
        old_blob: str | None,
        new_blob: str | None,
        read: Callable[[str], bytes | None],
        hunks: Sequence[Hunk],
        removed_lines: Sequence[int],
        added_lines: Sequence[int],
        *,
        old_path: str | None = None,
    ) -> tuple[dict[int, Definition] | None, dict[int, Definition] | None]:
        """(old-side map, new-side map): removed line -> Definition, added line -> Definition.

        ``path`` is the new path (``old_path`` the old one, for renames); ``read`` returns a
        blob's bytes or None; ``hunks`` are all of the file's ``-U0`` hunks.  A side's map is
        None when no parser read that side (no lines on it, no blob, unreadable blob or no
        grammar for the path), {} when it was read but no definition encloses its lines.
        Never raises.
        """
        old_path = old_path or path
        removed = _wanted_lines(removed_lines)
        added = _wanted_lines(added_lines)
        old_key = _key(old_path)
        new_key = _key(path)
        try:
            return self._file_symbols(
                old_key, new_key, old_blob, new_blob, read, hunks, removed, added
            )
        except Exception:  # never break indexing: answer as the one-shot functions would
            self.stats["errors"] += 1
            return (
                _fallback(old_path, old_blob, read, removed),
                _fallback(path, new_blob, read, added),
            )

    def _file_symbols(
        self,
        old_key: str | None,
        new_key: str | None,
        old_blob: str | None,
        new_blob: str | None,
        read: Callable[[str], bytes | None],
        hunks: Sequence[Hunk],
        removed: list[int],
        added: list[int],
    ) -> tuple[dict[int, Definition] | None, dict[int, Definition] | None]:
        old: _Version | None = None
        if old_key and old_blob:
            old = self._cached(old_blob, old_key)
            if old is None and removed:
                self.stats["cold_old"] += 1
                old = self._full(old_blob, old_key, read)
        new: _Version | None = None
        if new_key and new_blob and (added or (old is not None and old.parsed)):
            # Even without added lines the new version is derived while its base is at hand:
            # walking history oldest first, the next change of this file starts from it.
            new = self._cached(new_blob, new_key)
            if new is None:
                same = old_key == new_key
                if old is None and same and old_blob and self._asked_twice(old_blob, old_key):
                    old = self._full(old_blob, old_key, read)  # a base shared by many changes
                if old is None or not same:
                    self.stats["cold_new"] += 1
                new = self._derived(new_blob, new_key, read, old if same else None, hunks)
        old_map = self._lookup(old, removed) if removed else None
        new_map = self._lookup(new, added) if added else None
        return old_map, new_map

    # --- cache ------------------------------------------------------------------------

    def _cached(self, blob: str, key: str) -> _Version | None:
        version = self._cache.get((blob, key))
        if version is not None:
            self._cache.move_to_end((blob, key))
            base = version.base
            if base is not None and base.key in self._cache:
                # A base is never evicted before the lazy versions that need it.
                self._cache.move_to_end(base.key)  # type: ignore[arg-type]
            self.stats["cache_hits"] += 1
        return version

    def _account(self, version: _Version, sign: int) -> None:
        self._cached_bytes += sign * version.weight
        self._cached_trees += sign * (1 if version.trees else 0)

    def _store(self, blob: str, key: str, version: _Version) -> _Version:
        version.key = (blob, key)
        previous = self._cache.pop(version.key, None)
        if previous is not None:
            self._account(previous, -1)
        self._cache[version.key] = version
        self._account(version, 1)
        if version.base is not None and version.base.key in self._cache:
            self._cache.move_to_end(version.base.key)  # type: ignore[arg-type]
        self._evict()
        return version

    def _evict(self) -> None:
        while len(self._cache) > 1 and (
            self._cached_trees > self.max_cached_trees
            or self._cached_bytes > self.max_cached_bytes
            or len(self._cache) > 8 * self.max_cached_trees
        ):
            _, evicted = self._cache.popitem(last=False)
            self._account(evicted, -1)

    def _asked_twice(self, blob: str, key: str) -> bool:
        """True the second time an uncached base is asked for: then it is worth parsing."""
        if (blob, key) in self._asked:
            del self._asked[(blob, key)]
            return True
        self._asked[(blob, key)] = None
        if len(self._asked) > 4 * self.max_cached_trees:
            self._asked.popitem(last=False)
        return False

    # --- parsing ----------------------------------------------------------------------

    def _read(self, blob: str, read: Callable[[str], bytes | None]) -> bytes | None:
        self.stats["reads"] += 1
        return read(blob)

    def _full(self, blob: str, key: str, read: Callable[[str], bytes | None]) -> _Version:
        raw = self._read(blob, read)
        if raw is None:
            return self._store(blob, key, _Version(readable=False))
        source = _usable_source(raw)
        if source is None:
            return self._store(blob, key, _Version(readable=True))
        self.stats["full_parses"] += 1
        return self._store(blob, key, _parse_version(key, source, None, ()))

    def _derived(
        self,
        blob: str,
        key: str,
        read: Callable[[str], bytes | None],
        old: _Version | None,
        hunks: Sequence[Hunk],
    ) -> _Version:
        """The new version: lazily or incrementally from ``old`` when the hunks check out."""
        if old is None or not old.parsed:
            return self._full(blob, key, read)
        raw = self._read(blob, read)
        if raw is None:
            return self._store(blob, key, _Version(readable=False))
        source = _usable_source(raw)
        if source is None:
            return self._store(blob, key, _Version(readable=True))
        edits = _edits(old, source, hunks)  # also checks that the hunks fit both sources
        if edits is None:
            self.stats["edit_mismatches"] += 1
            self.stats["full_parses"] += 1
            return self._store(blob, key, _parse_version(key, source, None, ()))
        version = _Version(True, source)
        base = old.base or old
        step = _blocks_from_hunks(hunks, old.rows, version.rows)
        if old.base is not None and old.blocks is not None and step is not None:
            blocks = _compose(old.blocks, step)
        else:
            blocks = step
        if blocks is not None and self._may_stay_lazy(key, base, blocks, version.rows):
            version.base, version.blocks, version.language = base, blocks, base.language
            self.stats["lazy_versions"] += 1
            return self._store(blob, key, version)
        if old.base is not None:  # edits are relative to the base, which holds the tree
            if blocks is not None:
                edits = _edits(base, source, _hunks_from_blocks(blocks, base.rows, version.rows))
            if blocks is None or edits is None:
                self.stats["full_parses"] += 1
                return self._store(blob, key, _parse_version(key, source, None, ()))
        self.stats["incremental_parses"] += 1
        return self._store(blob, key, _parse_version(key, source, base, edits, self.stats))

    def _may_stay_lazy(self, key: str, base: _Version, blocks: list[_Block], rows: int) -> bool:
        if not self.lazy or key == "h" or base.language not in _CONTAINERS:
            return False  # .h: the C/C++ choice needs the whole file
        tree = base.trees.get(base.language)
        if tree is None or tree.root_node.has_error:
            return False
        gaps = _gaps(blocks, base.rows, rows)
        changed = sum(v1 - v0 for _, _, v0, v1 in gaps)
        return len(gaps) <= _MAX_LAZY_GAPS and changed <= max(_MAX_LAZY_ROWS, rows // 8)

    def _materialize(self, version: _Version) -> None:
        """Parse a lazy version (incrementally from its base) and drop the base."""
        base, blocks = version.base, version.blocks
        assert base is not None and blocks is not None
        key = base.language or ""
        edits = _edits(base, version.source, _hunks_from_blocks(blocks, base.rows, version.rows))
        self.stats["materializations"] += 1
        parsed = _parse_version(key, version.source, base if edits else None, edits or (),
                                self.stats)
        cached = version.key is not None and self._cache.get(version.key) is version
        if cached:
            self._account(version, -1)
        version.trees, version.language = parsed.trees, parsed.language
        version.base = version.blocks = None
        if cached:
            self._account(version, 1)
            self._evict()

    # --- lookup -----------------------------------------------------------------------

    def _lookup(self, version: _Version | None, wanted: list[int]) -> dict[int, Definition] | None:
        if version is None or not version.readable:
            return None
        if version.language is None or not wanted:
            return {}
        if version.base is not None:
            found = _reduced_lookup(version, wanted)
            if not isinstance(found, str):
                self.stats["reduced_lookups"] += 1
                return found
            self.stats["reduced_refused"] += 1
            self.stats[f"refused_{found}"] += 1
            self._materialize(version)
        language = version.language
        if language is None:
            return {}
        tree = version.trees[language]
        return _innermost(_nest(_collect_tree(language, tree, version.source,
                                              _row_ranges(wanted))), wanted)


def _key(path: str) -> str | None:
    """Cache key part for a path's grammar; .h files get their own (C, maybe C++)."""
    language = language_for_path(path)
    if language == "c" and path.lower().endswith(".h"):
        return "h"
    return language


_Edit = tuple[int, int, int, tuple[int, int], tuple[int, int], tuple[int, int]]


def _edits(base: _Version, source: bytes, hunks: Sequence[Hunk]) -> list[_Edit] | None:
    """``Tree.edit`` arguments turning base into source, bottom hunk first; None if they don't.

    The unchanged stretches between hunks are compared byte for byte (a memcmp, ~20 µs for
    half a megabyte): a diff that does not belong to these two blobs, or sources that were
    transcoded differently, must not let tree-sitter reuse subtrees for the wrong text.
    """
    old_lines, new_lines = base.lines, _Lines(source)
    old_source = base.source
    edits: list[_Edit] = []
    old_done = new_done = 0  # end of the previous hunk on each side
    for old_start, old_length, new_start, new_length in hunks:
        old_row = old_start - 1 if old_length else old_start
        new_row = new_start - 1 if new_length else new_start
        if old_row < 0 or new_row < 0 or old_length < 0 or new_length < 0:
            return None
        start = old_lines.start(old_row)
        old_end = old_lines.start(old_row + old_length)
        new_start_byte = new_lines.start(new_row)
        new_end_in_new = new_lines.start(new_row + new_length)
        if start < old_done or new_start_byte < new_done:
            return None  # hunks out of order or overlapping
        if old_source[old_done:start] != source[new_done:new_start_byte]:
            return None
        old_done, new_done = old_end, new_end_in_new
        # Edits are applied bottom-up, so the text before ``start`` is still the old text.
        start_point = old_lines.point(start)
        first_row, first_column = new_lines.point(new_start_byte)
        end_row, end_column = new_lines.point(new_end_in_new)
        if end_row == first_row:
            new_end_point = (start_point[0], start_point[1] + end_column - first_column)
        else:
            new_end_point = (start_point[0] + end_row - first_row, end_column)
        edits.append(
            (
                start,
                old_end,
                start + new_end_in_new - new_start_byte,
                start_point,
                old_lines.point(old_end),
                new_end_point,
            )
        )
    if old_source[old_done:] != source[new_done:]:
        return None
    edits.reverse()
    return edits


def _parse_version(
    key: str,
    source: bytes,
    base: _Version | None,
    edits: Sequence[_Edit],
    stats: Counter[str] | None = None,
) -> _Version:
    """Parse source (incrementally from base's trees when given) and pick the lookup tree."""
    trees: dict[str, Tree] = {}

    def parse(language: str) -> Tree:
        old_tree = None
        if base is not None:
            old_tree = base.trees.get(language)
            if old_tree is not None:
                old_tree = old_tree.copy()  # the base stays cached for its other users
                for edit in edits:
                    old_tree.edit(*edit)
        parser = _parser(language)
        if old_tree is None:
            tree = parser.parse(source)
        else:
            tree = parser.parse(source, old_tree)
            if tree.root_node.has_error:
                # Error recovery depends on which subtrees were reused, so a broken file
                # parsed incrementally may differ from a fresh parse: parse it afresh.
                tree = parser.parse(source)
                if stats is not None:
                    stats["error_reparses"] += 1
        trees[language] = tree
        return tree

    if key != "h":
        parse(key)
        return _Version(True, source, trees, key)
    # .h is shared by C and C++; a header the C grammar chokes on is likely C++ (as in
    # definitions(), which compares counts over the whole file when both report errors).
    if not parse("c").root_node.has_error:
        return _Version(True, source, trees, "c")
    if not parse("cpp").root_node.has_error:
        return _Version(True, source, trees, "cpp")
    c_count = len(_collect_tree("c", trees["c"], source))
    cpp_count = len(_collect_tree("cpp", trees["cpp"], source))
    return _Version(True, source, trees, "cpp" if cpp_count > c_count else "c")


# ---------------------------------------------------------------------------------------
# Lazy versions: row maps between versions, and reduced parses
# ---------------------------------------------------------------------------------------

_TREE_BYTES_PER_SOURCE_BYTE = 20  # measured: a 445 KB Python file's tree takes 8.6 MB

_Block = tuple[int, int, int]
"""(base_row, version_row, count): a run of rows two versions share, 0-based."""

# A lazy version whose changes since its parsed base exceed these is parsed for real: a
# reduced parse re-reads every changed region, so it only pays while they are few.
_MAX_LAZY_GAPS = 12
_MAX_LAZY_ROWS = 600

# Statement-list nodes whose children are complete, independent items (statements, members,
# declarations) on their own lines: dropping some of them leaves valid code that parses the
# rest the same way.  Only these are thinned out in a reduced parse.
_CONTAINERS: dict[str, frozenset[str]] = {
    "python": frozenset({"module", "block"}),
    "javascript": frozenset({"program", "statement_block", "class_body"}),
    "typescript": frozenset({"program", "statement_block", "class_body", "interface_body"}),
    "tsx": frozenset({"program", "statement_block", "class_body", "interface_body"}),
    "go": frozenset({"source_file", "statement_list"}),
    "rust": frozenset({"source_file", "declaration_list", "block"}),
    "java": frozenset({"program", "class_body", "block", "interface_body"}),
    "c": frozenset({"translation_unit", "compound_statement", "field_declaration_list"}),
    "cpp": frozenset(
        {"translation_unit", "compound_statement", "field_declaration_list", "declaration_list"}
    ),
    "php": frozenset({"program", "compound_statement", "declaration_list"}),
}

# Items never dropped: PHP's <?php tag and inline HTML switch the lexer's mode.
_NEVER_DROPPED: dict[str, frozenset[str]] = {
    "php": frozenset({"php_tag", "text", "text_interpolation"}),
}

# Siblings that belong to the item after them (Rust attributes, TypeScript member
# decorators): never separated from it.
_GLUE: dict[str, frozenset[str]] = {
    "rust": frozenset({"attribute_item"}),
    "typescript": frozenset({"decorator"}),
    "tsx": frozenset({"decorator"}),
}


def _blocks_from_hunks(hunks: Sequence[Hunk], old_rows: int, new_rows: int) -> list[_Block] | None:
    """Shared row runs of two versions from -U0 hunks; None if the hunks don't fit."""
    blocks: list[_Block] = []
    b = v = 0
    for old_start, old_length, new_start, new_length in hunks:
        b0 = old_start - 1 if old_length else old_start
        v0 = new_start - 1 if new_length else new_start
        if b0 < b or b0 - b != v0 - v or old_length < 0 or new_length < 0:
            return None
        if b0 > b:
            blocks.append((b, v, b0 - b))
        b, v = b0 + old_length, v0 + new_length
    if old_rows < b or old_rows - b != new_rows - v:
        return None
    if old_rows > b:
        blocks.append((b, v, old_rows - b))
    return blocks


def _compose(first: list[_Block], second: list[_Block]) -> list[_Block]:
    """Rows shared by A and C, from the rows A shares with B and B shares with C."""
    out: list[_Block] = []
    i = j = 0
    while i < len(first) and j < len(second):
        a, b1, n1 = first[i]
        b2, c, n2 = second[j]
        low, high = max(b1, b2), min(b1 + n1, b2 + n2)
        if low < high:
            start_a, start_c = a + low - b1, c + low - b2
            if out and out[-1][0] + out[-1][2] == start_a and out[-1][1] + out[-1][2] == start_c:
                out[-1] = (out[-1][0], out[-1][1], out[-1][2] + high - low)
            else:
                out.append((start_a, start_c, high - low))
        if b1 + n1 < b2 + n2:
            i += 1
        else:
            j += 1
    return out


def _gaps(blocks: list[_Block], old_rows: int, new_rows: int) -> list[tuple[int, int, int, int]]:
    """The changed row ranges between shared runs: (old_from, old_to, new_from, new_to)."""
    gaps: list[tuple[int, int, int, int]] = []
    b = v = 0
    for start_b, start_v, count in [*blocks, (old_rows, new_rows, 0)]:
        if start_b > b or start_v > v:
            gaps.append((b, start_b, v, start_v))
        b, v = start_b + count, start_v + count
    return gaps


def _hunks_from_blocks(blocks: list[_Block], old_rows: int, new_rows: int) -> list[Hunk]:
    """-U0 hunk headers (git's conventions) for the changes between shared runs."""
    return [
        (b0 + 1 if b1 > b0 else b0, b1 - b0, v0 + 1 if v1 > v0 else v0, v1 - v0)
        for b0, b1, v0, v1 in _gaps(blocks, old_rows, new_rows)
    ]


def _map_row(blocks: list[_Block], starts: list[int], row: int, to_base: bool) -> int | None:
    """Row in the other version for a row in a shared run, else None.

    ``starts`` are the blocks' starts on the side ``row`` is on (version side when mapping
    to the base, base side otherwise).
    """
    index = bisect_right(starts, row) - 1
    if index < 0:
        return None
    b, v, count = blocks[index]
    here, there = (v, b) if to_base else (b, v)
    return there + row - here if row < here + count else None


class _Unreducible(Exception):
    """A reduced parse cannot be planned safely here: parse the whole version instead."""


def _whitespace(data: bytes) -> bool:
    return not data.strip()


class _Reducer:
    """Plan which lines of a version to parse, using the base version's tree.

    Interests are byte ranges of the base.  A *dirty* interest (a changed region) keeps the
    base items it touches whole, plus the item before (to see what the change may attach
    to) and the item after (which must come out of the parse unchanged: the check that the
    change did not swallow what follows).  A *clean* interest (an unchanged line asked
    about) keeps the item holding it.  In every statement list on the way down from the
    root only those items are kept; an item's own statement lists keep their first entry.
    Dropped items are whole lines, so indentation and line structure stay as they were.
    """

    def __init__(self, language: str, tree: Tree, source: bytes, lines: _Lines) -> None:
        self.containers = _CONTAINERS[language]
        self.glue = _GLUE.get(language, frozenset())
        self.never_dropped = _NEVER_DROPPED.get(language, frozenset())
        self.root = tree.root_node
        self.source = source
        self.lines = lines
        # container id -> (container, {child start byte: (child, keep whole)})
        self.protected: dict[int, tuple[Node, dict[int, tuple[Node, bool]]]] = {}
        self.thin: dict[int, Node] = {}  # statement lists of kept items: keep one entry
        self.whole: list[tuple[int, int]] = []
        # (item, its statement list): unchanged items that must parse the same, in the same list
        self.checks: list[tuple[Node, Node]] = []
        self._kids: dict[int, tuple[list[Node], list[int]]] = {}

    def kids(self, container: Node) -> tuple[list[Node], list[int]]:
        cached = self._kids.get(container.id)
        if cached is None:
            kids = container.named_children
            cached = self._kids[container.id] = (kids, [k.start_byte for k in kids])
        return cached

    def chain(self, start: int, end: int) -> list[Node]:
        node = self.root.descendant_for_byte_range(start, end)
        path: list[Node] = []
        while node is not None:
            path.append(node)
            node = node.parent
        path.reverse()
        return path

    def keep(self, container: Node, child: Node, whole: bool) -> None:
        entry = self.protected.setdefault(container.id, (container, {}))[1]
        known = entry.get(child.start_byte)
        if known is None or (whole and not known[1]):
            entry[child.start_byte] = (child, whole)
        if whole:
            self.whole.append((child.start_byte, child.end_byte))
        else:
            for inner in self.statement_lists(child):
                self.thin.setdefault(inner.id, inner)

    def statement_lists(self, node: Node) -> list[Node]:
        """Statement lists directly inside an item (one wrapper deep: decorators, templates)."""
        found: list[Node] = []
        for child in node.children:
            if child.type in self.containers:
                found.append(child)
            elif child.named_child_count and child.end_byte == node.end_byte:
                found.extend(c for c in child.children if c.type in self.containers)
        return found

    def interest(self, start: int, end: int, dirty: bool) -> None:
        point = start >= end
        chain = self.chain(start, start if point else end)
        deepest = -1
        for index, node in enumerate(chain):
            if node.type in self.containers and (
                not point or index == 0 or node.start_byte < start
            ):
                deepest = index
        if deepest < 0:
            raise _Unreducible
        for index in range(deepest):
            if chain[index].type in self.containers:
                self.keep(chain[index], chain[index + 1], whole=False)
        container = chain[deepest]
        child = chain[deepest + 1] if deepest + 1 < len(chain) else None
        if child is not None and (not point or child.start_byte < start):
            self.keep(container, child, whole=dirty)
            if dirty:
                self.neighbours(container, child.start_byte, child.end_byte)
            return
        kids, starts = self.kids(container)
        touched = [] if point else [k for k in kids if k.start_byte < end and k.end_byte > start]
        for kid in touched:
            self.keep(container, kid, whole=True)
        if touched:
            if dirty:
                self.neighbours(container, touched[0].start_byte, touched[-1].end_byte)
        else:
            self.neighbours(container, start, start)

    def neighbours(self, container: Node, before: int, after: int) -> None:
        """Keep the items just before and after a region: what it may attach to, and the
        unchanged item whose start proves the region ends where it did."""
        kids, starts = self.kids(container)
        index = bisect_left(starts, before) - 1
        while index >= 0 and (kids[index].is_extra or kids[index].end_byte > before):
            index -= 1
        while index >= 0:
            kid = kids[index]
            if kid.is_extra:
                index -= 1
                continue
            self.point(kid.end_byte - 1)
            if kid.type not in self.glue:
                break
            index -= 1
        index = bisect_left(starts, after)
        while index < len(kids):
            kid = kids[index]
            if kid.is_extra or kid.start_byte < after:
                index += 1
                continue
            self.point(kid.start_byte)
            self.checks.append((kid, container))
            if kid.type not in self.glue:
                break
            index += 1

    def point(self, at: int) -> None:
        """Keep the chain down to one byte of an unchanged item (its last byte or first)."""
        self.interest(at, at + 1, dirty=False)

    def dropped_rows(self) -> list[tuple[int, int]]:
        """Row ranges to leave out: runs of unkept items, whole lines only."""
        runs: list[tuple[int, int]] = []
        whole = sorted(self.whole)
        containers = [c for c, _ in self.protected.values()]
        containers += [c for i, c in self.thin.items() if i not in self.protected]
        for container in containers:
            if _inside(whole, container.start_byte, container.end_byte):
                continue
            kids, starts = self.kids(container)
            if not kids:
                continue
            entry = self.protected.get(container.id)
            kept = [False] * len(kids)
            if entry is not None:
                for start_byte in entry[1]:
                    index = bisect_left(starts, start_byte)
                    if index < len(kids) and starts[index] == start_byte:
                        kept[index] = True
            if not any(kept):
                first = next((i for i, k in enumerate(kids) if not k.is_extra), 0)
                kept[first] = True
            if self.never_dropped:
                for index, kid in enumerate(kids):
                    if kid.type in self.never_dropped:
                        kept[index] = True
            self.glue_together(kids, kept)
            runs.extend(self.runs(container, kids, kept))
        runs.sort()
        return runs

    def glue_together(self, kids: list[Node], kept: list[bool]) -> None:
        if not self.glue:
            return
        for index in range(len(kids)):
            if not kept[index]:
                continue
            back = index - 1
            while back >= 0 and kids[back].type in self.glue:
                kept[back] = True
                back -= 1
        index = 0
        while index < len(kids):
            if kept[index] and kids[index].type in self.glue:
                forward = index + 1
                while forward < len(kids) and (
                    kids[forward].type in self.glue or kids[forward].is_extra
                ):
                    kept[forward] = True
                    forward += 1
                if forward < len(kids):
                    kept[forward] = True
                index = forward
            index += 1

    def runs(self, container: Node, kids: list[Node], kept: list[bool]) -> list[tuple[int, int]]:
        runs: list[tuple[int, int]] = []
        count = len(kids)
        index = 0
        while index < count:
            if kept[index]:
                index += 1
                continue
            first = index
            while index < count and not kept[index]:
                index += 1
            last = index - 1
            while first <= last and not self.clean_start(kids, first):
                first += 1
            while last >= first and not self.clean_end(kids, last):
                last -= 1
            if first > last:
                continue
            end_row, end_column = kids[last].end_point
            rows_to = end_row if end_column == 0 and end_row > kids[last].start_point[0] else (
                end_row + 1
            )
            runs.append((kids[first].start_point[0], rows_to))
            if last + 1 < count:
                self.checks.append((kids[last + 1], container))
        return runs

    def clean_start(self, kids: list[Node], index: int) -> bool:
        kid = kids[index]
        row = kid.start_point[0]
        if index and kids[index - 1].end_point[0] >= row:
            return False
        return _whitespace(self.source[self.lines.start(row) : kid.start_byte])

    def clean_end(self, kids: list[Node], index: int) -> bool:
        kid = kids[index]
        row, column = kid.end_point
        if column == 0 and row > kid.start_point[0]:
            last_row, line_end = row - 1, kid.end_byte
        else:
            last_row, line_end = row, self.lines.start(row + 1)
        if index + 1 < len(kids) and kids[index + 1].start_point[0] <= last_row:
            return False
        return _whitespace(self.source[kid.end_byte : line_end])


def _inside(ranges: list[tuple[int, int]], start: int, end: int) -> bool:
    """True if [start, end) lies within one of the sorted ranges."""
    index = bisect_right(ranges, (start, 1 << 62)) - 1
    while index >= 0:
        low, high = ranges[index]
        if low <= start and end <= high:
            return True
        index -= 1
    return False


def _content(source: bytes, start: int, end: int) -> tuple[int, int]:
    """[start, end) without leading and trailing whitespace; (start, start) if blank."""
    chunk = source[start:end]
    stripped = chunk.lstrip()
    if not stripped:
        return start, start
    first = start + len(chunk) - len(stripped)
    return first, first + len(stripped.rstrip())


def _reduced_parser(language: str) -> Parser:
    """A second parser per language for reduced parses (they change included ranges)."""
    cache: dict[str, Parser] | None = getattr(_local, "reduced_parsers", None)
    if cache is None:
        cache = _local.reduced_parsers = {}
    parser = cache.get(language)
    if parser is None:
        from tree_sitter import Parser

        parser = cache[language] = Parser(_language(language))
    return parser


def _reduced_lookup(version: _Version, wanted: list[int]) -> dict[int, Definition] | str:
    """Answer a lookup on a lazy version by parsing only the lines that matter.

    Returns why not when the plan or the checks fail; the caller then parses the whole version.
    """
    base, blocks = version.base, version.blocks
    language = version.language
    if base is None or blocks is None or language is None:
        return "setup"
    tree = base.trees.get(language)
    if tree is None:
        return "setup"
    from tree_sitter import Range

    source, base_source = version.source, base.source
    lines, base_lines = version.lines, base.lines
    base_starts = [b for b, _, _ in blocks]
    version_starts = [v for _, v, _ in blocks]
    reducer = _Reducer(language, tree, base_source, base_lines)
    try:
        for b0, b1, _, _ in _gaps(blocks, base.rows, version.rows):
            start, end = _content(base_source, base_lines.start(b0), base_lines.start(b1))
            reducer.interest(start, end, dirty=True)
        for line in wanted:
            row = _map_row(blocks, version_starts, line - 1, to_base=True)
            if row is None:
                continue  # a changed line: its gap is an interest already (or past the end)
            start, end = _content(base_source, base_lines.start(row), base_lines.start(row + 1))
            reducer.interest(start, end, dirty=False)
        dropped = reducer.dropped_rows()
    except _Unreducible:
        return "unplannable"
    # Dropped rows must be shared rows: map them into the version.
    mapped: list[tuple[int, int]] = []
    for first, last in dropped:
        row = _map_row(blocks, base_starts, first, to_base=False)
        end_row = _map_row(blocks, base_starts, last - 1, to_base=False)
        if row is None or end_row is None or end_row - row != last - 1 - first:
            return "unmappable"
        mapped.append((row, end_row + 1))
    ranges = []
    position, size = 0, len(source)
    for row, end_row in mapped:
        start, end = lines.start(row), lines.start(end_row)
        if start > position:
            ranges.append(Range(lines.point(position), lines.point(start), position, start))
        position = max(position, end)
    if position < size:
        ranges.append(Range(lines.point(position), lines.point(size), position, size))
    if not ranges:
        return "nothing"
    parser = _reduced_parser(language)
    parser.included_ranges = ranges
    reduced = parser.parse(source)
    root = reduced.root_node
    if root.has_error:
        return "error"
    # Unchanged items after each dropped run (and after each changed region) must start
    # where they did, as the same kind, in the same statement list: else the change (say a
    # dedent, or an unclosed bracket) reshaped what follows, and only a full parse can tell.
    for node, container in reducer.checks:
        row, column = node.start_point
        mapped_row = _map_row(blocks, base_starts, row, to_base=False)
        if mapped_row is None:
            continue  # a changed item: nothing to compare
        found = _node_at(root, lines.start(mapped_row) + column, node.type)
        parent = found.parent if found is not None else None
        if parent is None or parent.type != container.type:
            return "check"
        # A statement list starts at its first item, which may have been dropped: compare
        # the lists' owners (the definition or statement whose body it is) instead.
        owner, reduced_owner = container.parent, parent.parent
        if owner is None or reduced_owner is None:
            if owner is not reduced_owner:
                return "check"
            continue
        row, column = owner.start_point
        mapped_row = _map_row(blocks, base_starts, row, to_base=False)
        if reduced_owner.type != owner.type or (
            mapped_row is not None and reduced_owner.start_byte != lines.start(mapped_row) + column
        ):
            return "check"
    dropped_starts = [first for first, _ in dropped]
    base_root = tree.root_node

    def end_of(node: Node) -> tuple[int, int, int] | None:
        """The real end of a definition whose tail was dropped, from the base version."""
        row, column = node.start_point
        base_row = _map_row(blocks, version_starts, row, to_base=True)
        if base_row is None:
            return None
        base_node = _node_at(base_root, base_lines.start(base_row) + column, node.type)
        if base_node is None:
            return None
        end_row, end_column = base_node.end_point
        last_row = end_row
        if end_column == 0 and end_row > base_node.start_point[0]:
            last_row -= 1
        index = bisect_right(dropped_starts, last_row) - 1
        if index < 0 or last_row >= dropped[index][1]:
            return None  # its end was parsed: the reduced tree has it right
        mapped_last = _map_row(blocks, base_starts, last_row, to_base=False)
        if mapped_last is None:
            return None
        if end_row != last_row:
            return lines.start(mapped_last + 1), mapped_last + 1, 0
        return lines.start(mapped_last) + end_column, mapped_last, end_column

    found = _collect_tree(language, reduced, source, _row_ranges(wanted), end_of)
    return _innermost(_nest(found), wanted)


def _node_at(root: Node, at: int, kind: str) -> Node | None:
    node = root.descendant_for_byte_range(at, at + 1)
    while node is not None and node.start_byte == at:
        if node.type == kind:
            return node
        node = node.parent
    return None


def _fallback(
    path: str, blob: str | None, read: Callable[[str], bytes | None], wanted: list[int]
) -> dict[int, Definition] | None:
    """The one-shot answer for one side, used if the extractor itself failed."""
    if not wanted or not blob or language_for_path(path) is None:
        return None
    try:
        source = read(blob)
    except Exception:
        return None
    if source is None:
        return None
    return enclosing_symbols(path, source, wanted)
