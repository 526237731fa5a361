"""The section of a document a hunk sits in: the nearest title above it, read from the file.

git names a hunk of a document after the nearest line that starts with a letter (its default
rule, for reStructuredText, AsciiDoc and plain text), or after the nearest `#` heading (the
markdown driver): a line of prose, or no title at all under a setext or reStructuredText title,
whose underline is on the line below. A maintainer reads a document by its sections, so the
reasons name the section title, read from the file at the change's own commit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

MAX_TITLE = 120
_DOCUMENT_SUFFIXES = frozenset(
    {".md", ".markdown", ".mdown", ".mkd", ".rst", ".rest", ".txt", ".adoc", ".asciidoc",
     ".rdoc", ".textile"}
)  # fmt: skip
# Files named without a suffix that are prose by convention.
_DOCUMENT_NAMES = frozenset({"readme", "changelog", "changes", "news", "history", "authors"})

_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$")  # "## Install ##"
_ASCIIDOC = re.compile(r"^={1,6}[ \t]+(\S.*?)\s*$")  # "== Install"
# An underline (reStructuredText: any punctuation repeated; setext: `=` or `-`) of 3 or more.
_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+_:.])\1{2,}[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def is_document(path: str) -> bool:
    """Markdown, reStructuredText, AsciiDoc and plain text files (`README`, `CHANGES` too)."""
    pure = PurePosixPath(path)
    if pure.suffix.lower() in _DOCUMENT_SUFFIXES:
        return True
    return not pure.suffix and pure.name.lower() in _DOCUMENT_NAMES


def headings(text: str) -> list[tuple[int, str]]:
    """Each title of a document, with its line number (1-based): `#` headings, setext and
    reStructuredText titles (the text above an underline), AsciiDoc `==` titles. Lines in a
    Markdown code fence are no titles (`# a shell comment`)."""
    found: list[tuple[int, str]] = []
    lines = text.splitlines()
    fenced = False
    previous = ""
    for number, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            title = _title(line, previous)
            if title is not None:
                text, on_this_line = title
                found.append((number if on_this_line else number - 1, text[:MAX_TITLE]))
        previous = line
    return found


def _title(line: str, previous: str) -> tuple[str, bool] | None:
    """(the title, whether it is on this line) when `line` is a heading or underlines one."""
    for pattern in (_ATX, _ASCIIDOC):
        match = pattern.match(line)
        if match and match.group(1).strip():
            return match.group(1).strip(), True
    above = previous.strip()
    if _UNDERLINE.match(line) and above and not _UNDERLINE.match(previous):
        if previous[:1].isspace() or above.startswith(("..", "- ", "* ", "|")):
            return None  # an indented line, a directive, a list item or a table row
        return above, False
    return None


def section_at(titles: list[tuple[int, str]], line: int) -> str | None:
    """The title of the section that holds `line`: the last title at or above it."""
    best = None
    for at, title in titles:
        if at > line:
            break
        best = title
    return best


@dataclass(frozen=True, slots=True)
class DocumentHunk:
    """A hunk of a document that git's header names: where to read the file, and the line."""

    path: str
    symbol: str  # what the hunk header says (the index's symbol for it)
    revision: str  # a blob id, or `commit:path`
    line: int


def section_titles(
    hunks: Iterable[DocumentHunk], read: Callable[[str], bytes | None]
) -> dict[tuple[str, str], str]:
    """(path, header symbol) -> the title of the section its hunk sits in; each file is read
    once (`read` takes a blob id or `commit:path`, as `git cat-file --batch` does)."""
    titles: dict[tuple[str, str], str] = {}
    parsed: dict[str, list[tuple[int, str]]] = {}
    for hunk in hunks:
        if (hunk.path, hunk.symbol) in titles:
            continue
        if hunk.revision not in parsed:
            data = read(hunk.revision)
            parsed[hunk.revision] = (
                headings(data.decode("utf-8", "replace")) if data is not None else []
            )
        title = section_at(parsed[hunk.revision], hunk.line)
        if title is None:
            title = _header_title(hunk.symbol)
        if title:
            titles[(hunk.path, hunk.symbol)] = title
    return titles


def _header_title(header: str) -> str | None:
    """A `#` heading git's markdown driver put in the header, when the file could not be read."""
    match = _ATX.match(header)
    return match.group(1).strip() if match and match.group(1).strip() else None
