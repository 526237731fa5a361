"""Replay a change at another commit: is each of its hunks already there, new, or in conflict?

"Already done in #N" is a sentence a maintainer acts on without checking, so it is proven the
way git would: this change's own hunks are taken to where #N landed (or to #N's head) and asked,
one by one, whether applying them would still change anything. Shared lines only say where to
look; a hunk counts as done when its result is in the file after #N and was not before it (the
replay "turns" at #N). File versions come from the index's git reader; this module only compares
text, so it is tested with plain strings.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from detector.model import Change, FileChange, Hunk, is_trivial, normalise_line
from detector.text import STOP_WORDS

HunkState = Literal["there", "new", "conflict"]
FileKind = Literal["code", "test", "docs"]
How = Literal["identical", "same-names", "same-names-supporting", ""]

CONTEXT = 3  # lines of the query's own file around each hunk, as `git apply` uses them
MIN_LOOSE_BLOCK = 3  # a pure addition found anywhere in the file needs this many real lines
MAX_DIFF_LINES = 4000  # a candidate's edit of a region is read with difflib up to this size
PARTIAL_SHARE = 0.25  # of the hunks that carry code, this much done: a real part is done

_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|spec|specs|__tests__|testdata|test_data|fixtures)/"
    r"|(^|/)test_[^/]*$|_test\.[^/.]+$|(^|/)[^/]*Tests?\.[^/.]+$"
    r"|\.(test|spec)\.[cm]?[jt]sx?$|_spec\.rb$"
)
_DOCS_PATH = re.compile(
    r"(^|/)(docs?|documentation|changelogs?|changes|news|release-?notes)/"
    r"|(^|/)(CHANGELOG|CHANGES|NEWS|HISTORY|UPGRADE|README|AUTHORS|CONTRIBUTORS)[^/]*$"
    r"|\.(md|rst|txt|adoc|textile)$",
    re.IGNORECASE,
)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_KEYWORDS = frozenset(
    [
        "and",
        "as",
        "assert",
        "async",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "def",
        "default",
        "del",
        "do",
        "elif",
        "else",
        "end",
        "except",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "from",
        "func",
        "function",
        "global",
        "if",
        "import",
        "in",
        "is",
        "lambda",
        "let",
        "new",
        "nil",
        "none",
        "nonlocal",
        "not",
        "null",
        "or",
        "pass",
        "private",
        "protected",
        "public",
        "raise",
        "return",
        "self",
        "static",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "type",
        "var",
        "void",
        "while",
        "with",
        "yield",
    ]
)


def names(text: str) -> set[str]:
    """The name parts a text uses: `resolve_offload_strategy` and `OffloadStrategy.resolve`
    both say resolve, offload, strategy. Keywords and short parts say nothing."""
    found: set[str] = set()
    for identifier in _IDENTIFIER.findall(text):
        for part in _NAME_PART.findall(identifier):
            lowered = part.lower()
            if len(lowered) > 2 and lowered not in _KEYWORDS and lowered not in STOP_WORDS:
                found.add(lowered)
    return found


def file_kind(path: str) -> FileKind:
    """Tests, docs and changelog entries go with a fix; the fix itself is in the code."""
    if _TEST_PATH.search(path):
        return "test"
    if _DOCS_PATH.search(path):
        return "docs"
    return "code"


@dataclass(frozen=True, slots=True)
class FileVersions:
    """One file of the query as it reads in three places (None: the file is not there)."""

    base: Sequence[str] | None  # the query's own starting point: the context of its hunks
    before: Sequence[str] | None  # just before the candidate (its landing's parent, fork point)
    after: Sequence[str] | None  # after the candidate (its landing commit, its head)


@dataclass(frozen=True, slots=True)
class HunkReplay:
    """One hunk of the query, replayed before and after the candidate."""

    path: str
    first_line: int  # on the query's new side, for "what remains"
    last_line: int
    weight: int  # changed lines that carry code: not trivial, not only moved or re-indented
    kind: FileKind
    new_file: bool
    before: HunkState
    after: HunkState
    how: How  # how the hunk is done after the candidate ("" when it is not)

    @property
    def turned(self) -> bool:
        """Not there before the candidate, done after it: the candidate did it."""
        return self.before != "there" and self.how != ""

    @property
    def anchors(self) -> bool:
        """Done by the candidate on its own evidence, not only by the names it brings."""
        return self.turned and self.how in ("identical", "same-names")


@dataclass(frozen=True, slots=True)
class Replay:
    """The query's hunks replayed at one candidate: what it already did, and what remains."""

    commit: str  # where the hunks were replayed (a landing commit, an open PR's head)
    hunks: tuple[HunkReplay, ...]

    @property
    def deciding(self) -> tuple[HunkReplay, ...]:
        """The hunks that carry the change: code, or everything when there is no code (docs)."""
        carrying = [h for h in self.hunks if h.weight > 0]
        code = [h for h in carrying if h.kind == "code"]
        return tuple(code or carrying)

    @property
    def done_share(self) -> float:
        hunks = self.deciding
        total = sum(h.weight for h in hunks)
        return sum(h.weight for h in hunks if h.turned) / total if total else 0.0

    @property
    def complete(self) -> bool:
        """Every hunk that carries the change is done by the candidate."""
        hunks = self.deciding
        return bool(hunks) and all(h.turned for h in hunks) and any(h.anchors for h in hunks)

    @property
    def partial(self) -> bool:
        """A real part is done and a real part remains: "rebase, only X is left"."""
        return (
            not self.complete
            and any(h.anchors for h in self.deciding)
            and self.done_share >= PARTIAL_SHARE
        )

    @property
    def already_before(self) -> bool:
        """Every carrying hunk was there before the candidate: something earlier did it."""
        hunks = self.deciding
        return bool(hunks) and all(h.before == "there" for h in hunks)

    @property
    def same_names(self) -> bool:
        """Some hunk is done only in substance: the same lines replaced using the same names."""
        return any(h.turned and h.how == "same-names" for h in self.deciding)

    @property
    def residual(self) -> tuple[str, ...]:
        """What the candidate did not do, file by file ("tests/test_x.py (new file)")."""
        places: dict[str, list[str]] = {}
        for hunk in self.hunks:
            if hunk.weight == 0 or hunk.turned:
                continue
            spans = places.setdefault(hunk.path, [])
            if hunk.new_file:
                spans.append("new file")
            elif hunk.first_line == hunk.last_line:
                spans.append(f"line {hunk.first_line}")
            else:
                spans.append(f"lines {hunk.first_line}-{hunk.last_line}")
        return tuple(
            f"{path} ({', '.join(dict.fromkeys(spans))})" for path, spans in places.items()
        )


def replay(change: Change, versions: Mapping[str, FileVersions], commit: str) -> Replay:
    """Replay every hunk of `change`; `versions` is keyed by each file's (new) path."""
    hunks: list[HunkReplay] = []
    for file in change.files:
        if not file.hunks or file.status == "binary":
            continue
        found = versions.get(file.path)
        if found is None:
            continue
        hunks.extend(_replay_file(file, found))
    return Replay(commit=commit, hunks=tuple(hunks))


def _replay_file(file: FileChange, versions: FileVersions) -> list[HunkReplay]:
    kept = {line.hash for line in file.changed_lines if line.side == "-"} & {
        line.hash for line in file.changed_lines if line.side == "+"
    }
    kind = file_kind(file.path)
    before = _Text.of(versions.before)
    after = _Text.of(versions.after)
    results = []
    for hunk in file.hunks:
        blocks = _Blocks.of(hunk, versions.base)
        weight = sum(1 for line in hunk.lines if not line.trivial and line.hash not in kept)
        state_before = _state(blocks, before, file)
        state_after = _state(blocks, after, file)
        how: How = ""
        if state_after == "there" and _fresh(hunk, before):
            how = "identical"
        elif state_before != "there" and before is not None and after is not None:
            how = _same_names(blocks, before, after)
        added = [line.number for line in hunk.lines if line.side == "+"]
        first = added[0] if added else hunk.new_start
        results.append(
            HunkReplay(
                path=file.path,
                first_line=first,
                last_line=added[-1] if added else first,
                weight=weight,
                kind=kind,
                new_file=file.status == "added",
                before=state_before,
                after=state_after,
                how=how,
            )
        )
    return results


class _Text:
    """A file's lines, with right-hand whitespace dropped, and where each line occurs."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = [line.rstrip() for line in lines]
        self.where: dict[str, list[int]] = {}
        for number, line in enumerate(self.lines):
            self.where.setdefault(line, []).append(number)
        self._words: set[str] | None = None

    @classmethod
    def of(cls, lines: Sequence[str] | None) -> _Text | None:
        return None if lines is None else cls(lines)

    def find(self, block: Sequence[str]) -> list[int]:
        """Where `block` occurs as consecutive lines."""
        if not block:
            return []
        size = len(block)
        return [
            start
            for start in self.where.get(block[0], ())
            if self.lines[start : start + size] == list(block)
        ]

    @property
    def words(self) -> set[str]:
        if self._words is None:
            self._words = names("\n".join(self.lines))
        return self._words


@dataclass(frozen=True, slots=True)
class _Blocks:
    """A hunk as `git apply` sees it: its removed and added lines inside their context."""

    before_context: tuple[str, ...]
    removed: tuple[str, ...]
    added: tuple[str, ...]
    after_context: tuple[str, ...]
    real_added: int  # added lines that say something on their own

    @classmethod
    def of(cls, hunk: Hunk, base: Sequence[str] | None) -> _Blocks:
        removed = tuple(line.text.rstrip() for line in hunk.removed)
        added = tuple(line.text.rstrip() for line in hunk.added)
        before: tuple[str, ...] = ()
        after: tuple[str, ...] = ()
        if base is not None:
            # -U0 headers: a pure addition "-5,0" goes after line 5; otherwise lines start at 5.
            start = hunk.old_start if hunk.old_length == 0 else hunk.old_start - 1
            end = start + hunk.old_length
            before = tuple(line.rstrip() for line in base[max(0, start - CONTEXT) : start])
            after = tuple(line.rstrip() for line in base[end : end + CONTEXT])
        real = sum(1 for line in hunk.added if not line.trivial)
        return cls(before, removed, added, after, real)

    def variants(self) -> list[tuple[tuple[str, ...], tuple[str, ...], int]]:
        """(pre-image, post-image, offset of the change in them), from full context down, as
        `git apply` reduces context when the surroundings have moved on."""
        out = []
        for size in range(CONTEXT, -1, -1):
            head = self.before_context[len(self.before_context) - size :] if size else ()
            tail = self.after_context[:size]
            if size and not head and not tail:
                continue
            if not size and not self._loose_match_allowed():
                continue
            out.append((head + self.removed + tail, head + self.added + tail, len(head)))
        return out

    def _loose_match_allowed(self) -> bool:
        # Without context a block may match another place with the same text: a replacement
        # still needs its removed lines gone, and an addition needs enough real lines.
        return bool(self.removed and self.added) or (
            not self.removed and self.real_added >= MIN_LOOSE_BLOCK
        )


def _fresh(hunk: Hunk, before: _Text | None) -> bool:
    """Most of what the hunk adds was not in the file before the candidate: the candidate
    wrote it. (A PR stacked on another's new file adds one line to it; the file being
    complete after it does not make it the author of the rest.)"""
    real = [line.text.rstrip() for line in hunk.added if not line.trivial]
    if not real or before is None:
        return True
    absent = sum(1 for line in real if line not in before.where)
    return absent * 2 >= len(real)


def _says_something(block: Sequence[str]) -> bool:
    return any(not is_trivial(normalise_line(line)) for line in block)


def _state(blocks: _Blocks, text: _Text | None, file: FileChange) -> HunkState:
    if text is None:
        # A file the change deletes is done where it is gone; any other is not there yet.
        return "there" if file.status == "removed" else "new"
    for pre, post, _ in blocks.variants():
        pre_found = bool(pre) and bool(text.find(pre))
        post_found = _says_something(post) and bool(text.find(post))
        if pre_found:
            return "new"  # it still applies: whatever else is there, this edit is not made
        if post_found:
            return "there"
    if not blocks.removed and not any(blocks.before_context + blocks.after_context):
        return "new"  # an addition to an empty or new file, with no text of its own there
    return "conflict"


def _same_names(blocks: _Blocks, before: _Text, after: _Text) -> How:
    """Done in substance: the candidate replaced the same lines and its replacement brings in
    the names this hunk brings in (the same fix written differently); for an addition, the
    names it introduces to the file are there after the candidate and were not before."""
    if blocks.removed:
        region = _located(blocks, before)
        if region is None:
            return ""
        replaced, replacement = _candidate_edit(before, after, region)
        if replaced is None:
            return ""
        ours = _new_words(blocks.added, blocks.removed)
        theirs = _new_words(replacement, replaced)
        # Half the new names of the shorter replacement: `[p.strip() for p in ...]` and
        # `list(map(str.strip, ...))` both bring in `strip`, whatever else they spell out.
        smaller = min(len(ours), len(theirs))
        if ours and theirs and len(ours & theirs) >= max(1, math.ceil(smaller / 2)):
            return "same-names"
        return ""
    introduced = names("\n".join(blocks.added)) - before.words
    if introduced and introduced <= after.words:
        return "same-names-supporting"
    return ""


def _new_words(added: Sequence[str], removed: Sequence[str]) -> set[str]:
    return names("\n".join(added)) - names("\n".join(removed))


def _located(blocks: _Blocks, text: _Text) -> tuple[int, int] | None:
    """Where the hunk's removed lines sit in `text`, found with as much context as matches."""
    for pre, _, offset in blocks.variants() or [(blocks.removed, (), 0)]:
        starts = text.find(pre)
        if len(starts) == 1:
            start = starts[0] + offset
            return start, start + len(blocks.removed)
    starts = text.find(blocks.removed)
    if len(starts) == 1:
        return starts[0], starts[0] + len(blocks.removed)
    return None


def _candidate_edit(
    before: _Text, after: _Text, region: tuple[int, int]
) -> tuple[list[str] | None, list[str]]:
    """What the candidate did to `region` of the file: the lines it replaced there (None when
    it left some of them in place) and the lines it put instead."""
    old, new = before.lines, after.lines
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    old_mid = old[prefix : len(old) - suffix]
    new_mid = new[prefix : len(new) - suffix]
    start, end = region
    if start < prefix or end > len(old) - suffix:
        return None, []  # the candidate left these lines as they were
    if len(old_mid) > MAX_DIFF_LINES or len(new_mid) > MAX_DIFF_LINES:
        return None, []
    matcher = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False)
    replaced: list[str] = []
    replacement: list[str] = []
    untouched = set(range(start, end))
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        i1, i2 = i1 + prefix, i2 + prefix
        if tag == "equal" or i2 < start or i1 > end:
            continue
        untouched -= set(range(i1, i2))
        replaced.extend(old[i1:i2])
        replacement.extend(new[j1 + prefix : j2 + prefix])
    if any(not is_trivial(normalise_line(old[i])) for i in untouched):
        return None, replacement
    return replaced, replacement
