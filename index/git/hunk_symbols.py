"""Symbols from git's hunk headers: the function or class each hunk sits in, named by git.

git's built-in diff drivers (python, golang, ruby, java, cpp, php, rust, csharp, kotlin, bash
and more) put the nearest enclosing definition line in every hunk header once a file has the
matching `diff` attribute. prdup passes its own attributes file (`data/diff.gitattributes`) to
every git process it starts, so the streaming `git log` and `git diff-tree` that read the
history name every hunk's symbol at no extra cost: no file is parsed at index time.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path, PurePosixPath

ATTRIBUTES_FILE = Path(__file__).with_name("data") / "diff.gitattributes"
MAX_SYMBOL = 120

# The kind a symbol row records: a header line that defines what it names (a function, a
# method, a class), or one that names no definition (a namespace opened above the hunk, a
# call at the first column, the nearest line of prose). Only a definition is named to a
# maintainer as "the same code". Rows written before kinds were told apart say
# `HEADER_SYMBOL` ("hunk-header").
DEFINITION = "definition"
CONTEXT = "context"

# Paths whose hunk headers are declaration lines of a programming language (a git driver's,
# or JavaScript's first-column lines under git's default rule): a name is read out of them.
# Other headers (a Markdown heading, a test-data case name) are kept as they are.
_CODE_SUFFIXES = frozenset(
    {
        ".py", ".pyi", ".go", ".rb", ".rake", ".java", ".c", ".h", ".cc", ".cpp", ".cxx",
        ".hh", ".hpp", ".hxx", ".m", ".mm", ".php", ".rs", ".cs", ".kt", ".kts", ".sh",
        ".bash", ".pl", ".pm", ".ex", ".exs", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs",
        ".scala", ".swift", ".dart", ".lua",
    }
)  # fmt: skip

# A definition keyword, then the name it introduces (Go methods: the receiver comes first).
_KEYWORD_NAME = re.compile(
    r"(?:^|[\s;{])(def|fn|func|function|fun|sub|proc|class|struct|union|enum|module|"
    r"interface|trait|impl|type|namespace|object|record|protocol|extension|defmodule|defp?)"
    r"\s+(?:\([^)]*\)\s*)?(?:self\.)?([A-Za-z_$][\w$]*(?:(?:::|\.)[A-Za-z_$][\w$]*)*)"
)
# Keywords that open a namespace: the hunk sits somewhere in a module's body, and its name
# (`module ActiveSupport`) says nothing of what the change edits.
_NAMESPACE_KEYWORDS = frozenset({"module", "namespace", "defmodule"})
# What a keyword is followed by in an anonymous class (`moduleFor('x', class extends Base {`).
_ANONYMOUS = frozenset({"extends", "implements"})
# Suffixes whose hunk headers come from git's default rule (any line starting at the first
# column with a letter), not from a driver that matches definitions: a name read before a
# parenthesis there is as often a call (`describe('x', () => {`, `export default
# Component.extend({`) as a definition, so only a definition keyword names one.
_NO_DRIVER_SUFFIXES = frozenset(
    {".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".scala", ".swift", ".dart", ".lua"}
)
# Otherwise the (qualified) name just before the first parenthesis: C, C++, Java, C# methods.
_CALLABLE_NAME = re.compile(r"([A-Za-z_$~][\w$]*(?:(?:::|\.)~?[A-Za-z_$][\w$]*)*)\s*\(")
_NOT_NAMES = frozenset({"if", "for", "while", "switch", "return", "catch", "sizeof", "elif"})


def attribute_environment() -> dict[str, str]:
    """Environment that makes a git process read prdup's attributes file (git 2.31+).

    The lowest-priority attributes source: a repository's own `.gitattributes` still decides
    for the paths it names.
    """
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.attributesFile",
        "GIT_CONFIG_VALUE_0": str(ATTRIBUTES_FILE),
    }


@lru_cache(maxsize=4096)
def is_code(path: str) -> bool:
    """A source file of a language whose hunk headers name definitions."""
    return PurePosixPath(path).suffix.lower() in _CODE_SUFFIXES


def header_symbol(path: str, section: str) -> str | None:
    """The symbol a hunk header names for a file at `path`, or None when it names none.

    For source files, the defined name (`def load(self):` is `load`, `func (s *Server)
    Serve(l net.Listener) error {` is `Serve`); for other files the header itself, trimmed.
    """
    text = section.strip()
    if not text:
        return None
    if not is_code(path):
        return text[:MAX_SYMBOL]
    return _name_in(text)


def header_kind(path: str, section: str) -> str:
    """`DEFINITION` when the header defines the name `header_symbol` reads (`def load(self):`,
    `class Loader`, a C function's signature under git's driver), else `CONTEXT`: a module or
    namespace line, a call, a line of prose or data."""
    text = section.strip()
    if not text or not is_code(path):
        return CONTEXT
    keyword, name = _named_in(text)
    if name is None or keyword in _NAMESPACE_KEYWORDS or name in _ANONYMOUS:
        return CONTEXT
    if keyword is None and PurePosixPath(path).suffix.lower() in _NO_DRIVER_SUFFIXES:
        return CONTEXT
    return DEFINITION


def _name_in(header: str) -> str | None:
    return _named_in(header)[1]


@lru_cache(maxsize=65536)
def _named_in(header: str) -> tuple[str | None, str | None]:
    """(the definition keyword, or None for a name read before a parenthesis; the name)."""
    found = _KEYWORD_NAME.search(header)
    if found:
        return found.group(1), found.group(2)[:MAX_SYMBOL]
    for match in _CALLABLE_NAME.finditer(header):
        name = match.group(1)
        if name not in _NOT_NAMES:
            return None, name[:MAX_SYMBOL]
    return None, None
