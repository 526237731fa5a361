"""The diff model: a change parsed once into frozen values.

Everything downstream (the index, the matcher, the renderers) speaks these types, so a diff's text
is parsed in exactly one place (`parse_patch`, wrapping unidiff) and never re-scanned elsewhere.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import unidiff
from unidiff.constants import (
    RE_DIFF_GIT_HEADER,
    RE_DIFF_GIT_HEADER_NO_PREFIX,
    RE_DIFF_GIT_HEADER_URI_LIKE,
    RE_HUNK_HEADER,
)

Side = Literal["+", "-"]

# Lines that say nothing on their own: they match everywhere, so they are kept in a hunk's text
# but never used as evidence or looked up.
_TRIVIAL = re.compile(
    r"""^(
        [\s{}()\[\];,:]*                 # lone brackets and punctuation
      | (pass|return|break|continue|else:?|try:|finally:|end|fi|done|\*/|/\*+|\*|//|\#)[;]?
      | (return\s+(None|null|nil|true|false|True|False|0|-1|this|self)|\}\s*else\s*\{)[;]?
      | ["']{3}                          # docstring fences
      | <\?php|\?>
    )$""",
    re.VERBOSE,
)


TRIVIAL_LINE = _TRIVIAL  # for readers that test many lines without a call per line


def normalise_line(text: str) -> str:
    """Strip and collapse inner whitespace, so re-indentation is not a different line.

    Equal to ``re.sub(r"\\s+", " ", text.strip())`` (both use Unicode's whitespace), and
    three times faster: it runs on every changed line of a repository's history.
    """
    return " ".join(text.split())


def line_keys(sides: Sequence[str], texts: Sequence[str]) -> list[str]:
    """A hunk's changed lines as they are compared (`ChangedLine.normalised`): normalised, so
    a line re-indented by another change is the same line, except in a hunk whose lines differ
    only in whitespace. There the whitespace is the change: normalised, its removed and added
    lines would be the same, and any change touching those lines would look like it (an
    identical patch, lines "already there"); such a hunk keeps its texts (`texts` are without
    their line break), and matches only a change that leaves the same whitespace."""
    keys = [normalise_line(text) for text in texts]
    if whitespace_only(sides, keys):
        return list(texts)
    return keys


def whitespace_only(sides: Sequence[str], keys: Sequence[str]) -> bool:
    """A hunk whose removed lines, normalised (`keys`), are its added lines, in order."""
    removed = [key for side, key in zip(sides, keys, strict=True) if side == "-"]
    return bool(removed) and removed == [
        key for side, key in zip(sides, keys, strict=True) if side == "+"
    ]


def is_trivial(normalised: str) -> bool:
    """True for lines too common to be evidence (blank, brackets, bare `return`, `else:`)."""
    return bool(_TRIVIAL.match(normalised))


def line_hash(normalised: str) -> int:
    """A signed 64-bit hash of a normalised line: fits an SQLite INTEGER and indexes cheaply."""
    digest = hashlib.blake2b(normalised.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass(frozen=True, slots=True)
class ChangedLine:
    """One removed (`-`) or added (`+`) line, with its number on that side of the diff."""

    side: Side
    number: int
    text: str
    normalised: str
    hash: int
    trivial: bool


@dataclass(frozen=True, slots=True)
class Hunk:
    """A run of changed lines. `section` is git's function-context header, when it gave one."""

    old_start: int
    old_length: int
    new_start: int
    new_length: int
    section: str
    lines: tuple[ChangedLine, ...]

    @property
    def removed(self) -> tuple[ChangedLine, ...]:
        return tuple(line for line in self.lines if line.side == "-")

    @property
    def added(self) -> tuple[ChangedLine, ...]:
        return tuple(line for line in self.lines if line.side == "+")

    @property
    def content_hash(self) -> int:
        """Identity of what the hunk does, independent of where it sits and of whitespace."""
        return hunk_identity((line.side, line.normalised) for line in self.lines)


def hunk_identity(lines: Iterable[tuple[str, str]]) -> int:
    """A hunk's content hash from its changed lines, (side, normalised text) in order."""
    return line_hash("\n".join(f"{side}{normalised}" for side, normalised in lines))


FileStatus = Literal["added", "removed", "modified", "renamed", "binary"]


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's part of a change; `old_path` differs from `path` for renames."""

    path: str
    old_path: str
    status: FileStatus
    hunks: tuple[Hunk, ...]
    old_blob: str | None = None
    new_blob: str | None = None

    @property
    def changed_lines(self) -> Iterable[ChangedLine]:
        for hunk in self.hunks:
            yield from hunk.lines


@dataclass(frozen=True, slots=True)
class Change:
    """A whole change: a PR's diff, a commit's diff, a branch's diff or a patch file."""

    files: tuple[FileChange, ...]
    skipped_files: tuple[tuple[str, str], ...] = field(default=())  # (path, why)
    # The hunks of files cut from a huge change ("path\0content hash"): no lines are read
    # from them, but they are part of its identity (the index hashes them the same way).
    cut_hunks: tuple[str, ...] = field(default=())

    @property
    def added_count(self) -> int:
        return sum(1 for f in self.files for line in f.changed_lines if line.side == "+")

    @property
    def removed_count(self) -> int:
        return sum(1 for f in self.files for line in f.changed_lines if line.side == "-")

    @property
    def is_empty(self) -> bool:
        return not any(f.hunks for f in self.files)

    @property
    def patch_id(self) -> str:
        """Whole-change identity: the same hunks in the same files, whatever the base or order."""
        hunks = [f"{f.path}\0{h.content_hash}" for f in self.files for h in f.hunks]
        return patch_identity([*hunks, *self.cut_hunks])


def patch_identity(hunks: Iterable[str]) -> str:
    """A change's patch id from its hunks ("path\0content hash"), whatever their order: one
    definition for the diff model and the index's stored form."""
    return hashlib.sha1("\n".join(sorted(hunks)).encode("utf-8", "surrogatepass")).hexdigest()


class NotADiff(ValueError):
    """The text handed to `parse_patch` is not a unified diff."""


def _strip_prefix(path: str | None) -> str:
    if path is None or path == "/dev/null":
        return ""
    if path.startswith(("a/", "b/")):
        return path[2:]
    return path


def _file_status(patched: unidiff.PatchedFile) -> FileStatus:
    if patched.is_binary_file:
        return "binary"
    if patched.is_added_file:
        return "added"
    if patched.is_removed_file:
        return "removed"
    if patched.is_rename:
        return "renamed"
    return "modified"


def _changed_line(side: Side, number: int, text: str, key: str) -> ChangedLine:
    return ChangedLine(
        side=side,
        number=number,
        text=text,
        normalised=key,
        hash=line_hash(key),
        trivial=is_trivial(normalise_line(text)),
    )


def _hunk(raw: unidiff.Hunk) -> Hunk:
    changed: list[tuple[Side, int]] = []
    texts: list[str] = []
    for line in raw:
        if line.is_removed:
            changed.append(("-", line.source_line_no or 0))
        elif line.is_added:
            changed.append(("+", line.target_line_no or 0))
        else:
            continue
        texts.append(line.value.rstrip("\r\n"))
    keys = line_keys([side for side, _ in changed], texts)
    lines = [
        _changed_line(side, number, text, key)
        for (side, number), text, key in zip(changed, texts, keys, strict=True)
    ]
    return Hunk(
        old_start=raw.source_start,
        old_length=raw.source_length,
        new_start=raw.target_start,
        new_length=raw.target_length,
        section=raw.section_header.strip(),
        lines=tuple(lines),
    )


_INDEX_LINE = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)", re.MULTILINE)


def _blobs(patched: unidiff.PatchedFile) -> tuple[str | None, str | None]:
    match = _INDEX_LINE.search(patched.patch_info and str(patched.patch_info) or "")
    if not match:
        return None, None
    old, new = match.groups()
    return (None if set(old) == {"0"} else old), (None if set(new) == {"0"} else new)


def file_change(patched: unidiff.PatchedFile, with_lines: bool = True) -> FileChange:
    """Wrap one unidiff file into the frozen model (without its hunks: `with_lines` False)."""
    old_blob, new_blob = _blobs(patched)
    path = _file_path(patched)
    old_path = _strip_prefix(patched.source_file) or path
    return FileChange(
        path=path,
        old_path=old_path,
        status=_file_status(patched),
        hunks=tuple(_hunk(h) for h in patched) if with_lines else (),
        old_blob=old_blob,
        new_blob=new_blob,
    )


def _file_path(patched: unidiff.PatchedFile) -> str:
    return _strip_prefix(patched.target_file) or _strip_prefix(patched.source_file)


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """One file of a parsed diff, made into the model only when asked: a huge change keeps
    the lines of its first files and only the identity of its other hunks, and a line costs
    far more to model (its normalised text, hash, kind) than to parse.

    With `text` (its part of the diff), `patched` holds what unidiff's metadata-only parse
    reads (headers, hunk sizes, line counts); its lines are parsed when asked for."""

    patched: unidiff.PatchedFile
    text: str | None = None

    @property
    def path(self) -> str:
        """`FileChange.path`."""
        return _file_path(self.patched)

    @property
    def changed(self) -> int:
        """How many lines it removes and adds: `FileChange`'s hunks' lines."""
        return int(self.patched.added + self.patched.removed)

    def change(self, with_lines: bool = True) -> FileChange:
        return file_change(self._with_lines() if with_lines else self.patched, with_lines)

    def hunk_ids(self) -> list[int]:
        """Each hunk's `Hunk.content_hash`, without modelling its lines."""
        if self.text is not None:
            found = _scanned_hunk_ids(self.text, list(self.patched))
            if found is not None:
                return found
        ids = []
        for raw in self._with_lines():
            changed = [line for line in raw if line.is_removed or line.is_added]
            sides = [line.line_type for line in changed]
            keys = line_keys(sides, [line.value.rstrip("\r\n") for line in changed])
            ids.append(hunk_identity(zip(sides, keys, strict=True)))
        return ids

    def _with_lines(self) -> unidiff.PatchedFile:
        if self.text is None:
            return self.patched
        return _unidiff(self.text)[0]


def _unidiff(text: str, metadata_only: bool = False) -> unidiff.PatchSet:
    try:
        return unidiff.PatchSet(text, metadata_only=metadata_only)
    except unidiff.UnidiffParseError as error:
        raise NotADiff(str(error)) from error


def parse_files(text: str, lazily: bool = False) -> list[ParsedFile]:
    """Parse a unified diff (git's or plain `diff -u`) into its files, as `parse_patch` does.

    `lazily` (for a diff most of whose lines are not wanted) parses git's diff a file at a
    time, each for its headers and sizes alone until its lines are asked for; a diff it does
    not read as git's, a file at a time, is parsed whole."""
    if lazily:
        found = _parsed_by_file(text)
        if found is not None:
            return found
    patch = _unidiff(text)
    if not len(patch) and text.strip():
        raise NotADiff("no file headers (---/+++ or 'diff --git') found")
    return [ParsedFile(patched) for patched in patch]


_GIT_HEADERS = (RE_DIFF_GIT_HEADER, RE_DIFF_GIT_HEADER_URI_LIKE, RE_DIFF_GIT_HEADER_NO_PREFIX)


def _parsed_by_file(text: str) -> list[ParsedFile] | None:
    """git's diff cut at its `diff --git` lines, each part one file as a whole parse reads it
    (a line of a hunk starts with `+`, `-`, a space or `\\`, never `diff`; each such line
    starts a new file whatever came before it); None where the text is not so made."""
    if not text.startswith("diff --git "):
        return None
    parts = text.split("\ndiff --git ")
    texts = [part + "\n" for part in parts[:-1]] + [parts[-1]]
    texts = [texts[0], *("diff --git " + part for part in texts[1:])]
    files: list[ParsedFile] = []
    for part in texts:
        if not any(header.match(part) for header in _GIT_HEADERS):
            return None
        try:
            patch = unidiff.PatchSet(part, metadata_only=True)
        except unidiff.UnidiffParseError:
            return None  # the whole parse says what is wrong
        if len(patch) != 1:
            return None
        files.append(ParsedFile(patch[0], part))
    return files


def _scanned_hunk_ids(text: str, hunks: list[unidiff.Hunk]) -> list[int] | None:
    """`Hunk.content_hash` of each of a file's hunks, read from its part of git's diff as
    unidiff reads a hunk (lines counted against its header's sizes: `+` added, `-` removed, a
    space, an empty line or a carriage return context, `\\` neither), with `hunks` (the
    metadata-only parse's) for the sizes; None on anything else (unidiff then reads it)."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    at, ids = 0, list[int]()
    for hunk in hunks:
        while at < len(lines) and not lines[at].startswith("@@ -"):
            if ids and not lines[at].startswith("\\"):
                return None  # between two hunks only "\ No newline at end of file"
            at += 1
        if at >= len(lines) or not RE_HUNK_HEADER.match(lines[at]):
            return None
        at += 1
        source, target = hunk.source_length, hunk.target_length
        if not (source or target):
            return None
        sides: list[str] = []
        texts: list[str] = []
        while source > 0 or target > 0:
            if at >= len(lines):
                return None
            line = lines[at]
            at += 1
            kind = line[:1]
            if kind in ("+", "-"):
                sides.append(kind)
                texts.append(line[1:].rstrip("\r\n"))
                source, target = (source - 1, target) if kind == "-" else (source, target - 1)
            elif kind in ("", " ", "\r"):
                source, target = source - 1, target - 1
            elif kind != "\\":
                return None
            if source < 0 or target < 0:
                return None
        ids.append(hunk_identity(zip(sides, line_keys(sides, texts), strict=True)))
    if any(not line.startswith("\\") for line in lines[at:]):
        return None
    return ids


def parse_patch(text: str) -> Change:
    """Parse a unified diff (git's or plain `diff -u`) into a `Change`.

    Raises `NotADiff` when the text has no file header at all, so a typo'd file name or a log
    message is not silently treated as an empty change.
    """
    return Change(files=tuple(parsed.change() for parsed in parse_files(text)))
