"""What the index stores of a diff, read straight from git's `-U0` text.

`prdup index` reads every changed line of a repository's history. Parsing that through unidiff
and the frozen diff model (`detector.model`) built several objects per line; here each line is
normalised, hashed and classified in place, and only files and hunks become objects. The
values are the model's: the same normalised text, line hashes, trivial lines, hunk content
hashes, patch id, counts and file statuses (`tests/test_stored_diff.py` compares the two on
sample diffs). A file whose diff holds anything git does not usually print (a quoted path, a
header that does not match its `+++` line, a binary patch) is read by
`detector.model.parse_patch` instead, so odd files are read exactly as `check` reads them.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from hashlib import blake2b

# unidiff's own patterns, so the fast path splits headers exactly as `parse_patch` does.
from unidiff.constants import RE_DIFF_GIT_HEADER, RE_HUNK_HEADER

from detector.model import (
    TRIVIAL_LINE,
    Change,
    FileChange,
    line_hash,
    line_keys,
    parse_patch,
    patch_identity,
    whitespace_only,
)
from index.config import Settings
from index.git.diff_budget import ListedFile
from index.git.hunk_symbols import header_symbol

_DEV_NULL = "/dev/null"
_from_bytes = int.from_bytes
_add = operator.add
_first = operator.itemgetter(0)  # a body line's side: it is never empty
# Every trivial line (`detector.model`'s pattern) is at most this long once normalised, unless
# it starts with one of these characters (lone brackets and punctuation, any number of them).
_LONGEST_WORDY_TRIVIAL = 24
_PUNCTUATION = frozenset("{}()[];,:/")


@dataclass(slots=True)
class StoredHunk:
    old_start: int
    old_length: int
    new_start: int
    new_length: int
    section: str
    symbol: str | None  # the definition git's hunk header names
    content_hash: int
    sides: str  # the sides it changes lines on: "-", "+" or "-+"


@dataclass(slots=True)
class StoredFile:
    path: str
    old_path: str
    status: str
    hunks: list[StoredHunk] = field(default_factory=list)
    cut: bool = False  # cut from a huge change: its lines are not stored
    # Distinct non-trivial line hashes per side, in diff order.
    removed: dict[int, None] = field(default_factory=dict)
    added: dict[int, None] = field(default_factory=dict)


@dataclass(slots=True)
class StoredChange:
    """A change as the index writes it: files, hunks, distinct line hashes and their texts."""

    files: list[StoredFile]
    skipped_files: list[tuple[str, str]]
    texts: dict[int, str]  # line hash -> normalised text, for every stored line
    added_count: int
    removed_count: int
    truncated: bool
    # The hunks of the files cut from a huge change ("path\0content hash"): not stored, but
    # part of its identity, so a rebased landing of a cut PR is still the same patch.
    cut_hunks: list[str] = field(default_factory=list)
    # False when git was stopped before the end of the diff: some hunks were never read.
    read_whole: bool = True

    @property
    def is_empty(self) -> bool:
        return not any(f.hunks for f in self.files)

    @property
    def patch_id(self) -> str | None:
        """`detector.model.Change.patch_id` of the same diff, cut files' hunks included; None
        for a diff not read to its end."""
        if not self.read_whole:
            return None
        hunks = [f"{f.path}\0{h.content_hash}" for f in self.files for h in f.hunks]
        return patch_identity([*hunks, *self.cut_hunks])


CUT = "too many changed lines"  # why a file cut from a huge change has no stored lines


class _Unusual(Exception):
    """The fast path met something it does not read; the model's parser will."""


def parse_stored(diff: str, settings: Settings, limit: int | None = None) -> StoredChange:
    """Parse git's diff of one change into its stored form; raises `NotADiff` as `parse_patch`.

    Ignored files are listed as skipped, and a change beyond `limit` changed lines (by default
    `max_changed_lines`) keeps the lines of the files that fit and only the names of the rest
    (`truncated`).
    """
    change = _parse_fast(diff, settings, settings.max_changed_lines if limit is None else limit)
    if not settings.symbols:
        for file in change.files:
            for hunk in file.hunks:
                hunk.symbol = None
    return change


# The status the diff model gives a file, by git's letter for it in a raw listing.
_LISTED_STATUS = {"A": "added", "C": "added", "D": "removed", "R": "renamed"}


def parse_read_in_part(
    diff: str, listed: Iterable[ListedFile], settings: Settings, limit: int
) -> StoredChange:
    """A change git was stopped printing once past `limit` changed lines (`index.git.diff_budget`):
    the files printed in full are read as `parse_stored` reads them, the others are named from
    git's listing of the change's files, cut (a file whose diff was not printed shows as
    modified, added, removed or renamed, never binary). Its patch identity is unknown."""
    change = parse_stored(diff, settings, limit)
    named = {file.path for file in change.files} | {path for path, _ in change.skipped_files}
    for file in listed:
        if file.path in named:
            continue
        pattern = settings.is_ignored(file.path)
        if pattern:
            change.skipped_files.append((file.path, f"ignored by {pattern}"))
            continue
        status = _LISTED_STATUS.get(file.status, "modified")
        change.files.append(StoredFile(file.path, file.old_path, status, cut=True))
        change.skipped_files.append((file.path, CUT))
    change.truncated = True
    change.read_whole = False
    return change


def _strip_prefix(path: str) -> str:
    if path == _DEV_NULL:
        return ""
    if path.startswith(("a/", "b/")):
        return path[2:]
    return path


def _parse_fast(diff: str, settings: Settings, budget: int) -> StoredChange:
    result = StoredChange([], [], {}, 0, 0, False)
    for chunk in _file_chunks(diff):
        # One file's lines at a time: a change that rewrites a whole tree is hundreds of MB
        # of text, and a list of all its lines would be several times that.
        try:
            budget = _parse_file(chunk.split("\n"), settings, budget, result)
        except _Unusual:  # this file only, through the model (it raises before writing)
            budget = _parse_file_with_model(chunk, settings, budget, result)
    return result


def _parse_file_with_model(
    chunk: str, settings: Settings, budget: int, result: StoredChange
) -> int:
    """`_parse_file` through `parse_patch`, with `parse_filtered`'s rules for what is kept."""
    for file in parse_patch(chunk).files:
        pattern = settings.is_ignored(file.path)
        if pattern:
            result.skipped_files.append((file.path, f"ignored by {pattern}"))
            continue
        size = sum(len(h.lines) for h in file.hunks)
        if size > budget:
            result.truncated = True
            result.files.append(StoredFile(file.path, file.old_path, file.status, cut=True))
            result.skipped_files.append((file.path, CUT))
            result.cut_hunks += [f"{file.path}\0{h.content_hash}" for h in file.hunks]
            continue
        budget -= size
        _add_model_file(file, result)
    return budget


def _file_chunks(diff: str) -> Iterator[str]:
    """The text of each file's diff, from its `diff --git` line (the first chunk may start
    with blank lines). A changed line starts with `-` or `+`, so only a header can start a
    line with `diff --git `."""
    start = 0
    while True:
        end = diff.find("\ndiff --git ", start)
        if end < 0:
            yield diff[start:]
            return
        yield diff[start : end + 1]
        start = end + 1


def _parse_file(lines: list[str], settings: Settings, budget: int, result: StoredChange) -> int:
    """Parse one file's diff into `result`; returns the changed-line budget left."""
    count = len(lines)
    i = 0
    while i < count and not lines[i]:
        i += 1
    if i == count:
        return budget
    line = lines[i]
    if not line.startswith("diff --git ") or '"' in line:
        raise _Unusual
    header = RE_DIFF_GIT_HEADER.match(line)
    if header is None:
        raise _Unusual
    source, target = header.group("source"), header.group("target")
    binary = False
    i += 1
    while i < count:
        line = lines[i]
        if line.startswith("@@ "):
            break
        if line.startswith("new file mode "):
            source = _DEV_NULL
        elif line.startswith("deleted file mode "):
            target = _DEV_NULL
        elif line.startswith("Binary files "):
            binary = True
        elif line.startswith("+++ "):
            if line[4:].split("\t", 1)[0] != target:
                raise _Unusual
        elif line.startswith("GIT binary patch"):
            raise _Unusual
        i += 1
    # Hunk headers and where each body starts; bodies are read by count, as unidiff does
    # (a removed line may itself start with "--- " or "@@").
    spans: list[tuple[re.Match[str], int, int]] = []
    changed = 0
    while i < count and lines[i].startswith("@@"):
        found = RE_HUNK_HEADER.match(lines[i])
        if found is None:
            raise _Unusual
        old_len = 1 if found.group(2) is None else int(found.group(2))
        new_len = 1 if found.group(4) is None else int(found.group(4))
        start = i + 1
        i = start
        need = old_len + new_len
        while need:
            if i >= count:
                raise _Unusual  # a hunk shorter than its header: unidiff's error
            kind = lines[i][:1]
            if kind == "-" or kind == "+":
                need -= 1
            elif kind != "\\":
                raise _Unusual
            i += 1
        while i < count and lines[i].startswith("\\"):
            i += 1
        spans.append((found, start, i))
        changed += old_len + new_len
    if any(lines[i:]):
        raise _Unusual  # text after the last hunk that is not another file
    path = _strip_prefix(target) or _strip_prefix(source)
    old_path = _strip_prefix(source) or path
    status = _status(binary, source, target, spans)
    pattern = settings.is_ignored(path)
    if pattern:
        result.skipped_files.append((path, f"ignored by {pattern}"))
        return budget
    stored = StoredFile(path, old_path, status)
    result.files.append(stored)
    if changed > budget:
        result.truncated = True
        stored.cut = True
        result.skipped_files.append((path, CUT))
        result.cut_hunks += [f"{path}\0{_content_hash(lines[a:b])}" for _, a, b in spans]
        return budget
    for found, start, end in spans:
        stored.hunks.append(_hunk(found, lines, start, end, stored, result))
    return budget - changed


def _status(
    binary: bool, source: str, target: str, spans: list[tuple[re.Match[str], int, int]]
) -> str:
    """unidiff's file status, as `detector.model` reads it."""
    if binary:
        return "binary"
    only = spans[0][0] if len(spans) == 1 else None
    if source == _DEV_NULL or (only is not None and only.group(1) == "0" and _len(only, 2) == 0):
        return "added"
    if target == _DEV_NULL or (only is not None and only.group(3) == "0" and _len(only, 4) == 0):
        return "removed"
    if source[2:] != target[2:]:
        return "renamed"
    return "modified"


def _len(found: re.Match[str], group: int) -> int:
    value = found.group(group)
    return 1 if value is None else int(value)


def _content_hash(body: list[str]) -> int:
    """A hunk's content hash as `_hunk` computes it, without hashing its lines one by one."""
    kept = [line for line in body if line[:1] != "\\"]
    sides = [line[:1] for line in kept]
    keys = line_keys(sides, [line[1:].rstrip("\r\n") for line in kept])
    return line_hash("\n".join(map(_add, sides, keys)))


def _hunk(
    found: re.Match[str],
    lines: list[str],
    start: int,
    end: int,
    stored: StoredFile,
    result: StoredChange,
) -> StoredHunk:
    """Hash one hunk's lines into `stored` and `result`; its content hash as the model's."""
    body = lines[start:end]
    old_length, new_length = _len(found, 2), _len(found, 4)
    if end - start != old_length + new_length:  # "\\ No newline at end of file" among them
        body = [line for line in body if line[:1] != "\\"]
    normalised = [" ".join(line[1:].split()) for line in body]
    sides = list(map(_first, body))
    keys = normalised
    if old_length == new_length and whitespace_only(sides, normalised):
        keys = line_keys(sides, [line[1:].rstrip("\r\n") for line in body])
    content = "\n".join(map(_add, sides, keys))
    # The body was read by these counts, so they are its removed and added lines.
    result.removed_count += old_length
    result.added_count += new_length
    texts = result.texts
    removed, added = stored.removed, stored.added
    for line, text, key in zip(body, normalised, keys, strict=True):
        # Trivial lines are short, or made of brackets and punctuation only.
        if (len(text) <= _LONGEST_WORDY_TRIVIAL or text[:1] in _PUNCTUATION) and TRIVIAL_LINE.match(
            text
        ):
            continue
        hashed = _from_bytes(
            blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
            "big",
            signed=True,
        )  # detector.model.line_hash, inlined: it runs for every line of history
        seen = removed if line[0] == "-" else added
        if hashed not in seen:
            seen[hashed] = None
            texts[hashed] = key
    section = found.group(5).strip()
    return StoredHunk(
        old_start=int(found.group(1)),
        old_length=old_length,
        new_start=int(found.group(3)),
        new_length=new_length,
        section=section,
        symbol=header_symbol(stored.path, section),
        content_hash=line_hash(content),
        sides=("-" if old_length else "") + ("+" if new_length else ""),
    )


def stored_from_change(change: Change, truncated: bool = False) -> StoredChange:
    result = StoredChange([], list(change.skipped_files), {}, 0, 0, truncated)
    result.cut_hunks = list(change.cut_hunks)
    cut = {path for path, why in change.skipped_files if why == CUT}
    for file in change.files:
        _add_model_file(file, result)
        result.files[-1].cut = file.path in cut and not file.hunks
    return result


def _add_model_file(file: FileChange, result: StoredChange) -> None:
    stored = StoredFile(file.path, file.old_path, file.status)
    result.files.append(stored)
    for hunk in file.hunks:
        sides = ""
        for line in hunk.lines:
            if line.side not in sides:
                sides += line.side
            if line.side == "-":
                result.removed_count += 1
            else:
                result.added_count += 1
            if line.trivial:
                continue
            (stored.removed if line.side == "-" else stored.added).setdefault(line.hash, None)
            result.texts[line.hash] = line.normalised
        stored.hunks.append(
            StoredHunk(
                hunk.old_start,
                hunk.old_length,
                hunk.new_start,
                hunk.new_length,
                hunk.section,
                header_symbol(file.path, hunk.section),
                hunk.content_hash,
                sides,
            )
        )
