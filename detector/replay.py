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
import weakref
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Generic, Literal, TypeVar, cast

from detector.model import (
    TRIVIAL_LINE,
    Change,
    ChangedLine,
    FileChange,
    Hunk,
    is_trivial,
    normalise_line,
)
from detector.pins import CompetingPin, competing_pins, is_manifest
from detector.text import STOP_WORDS
from detector.versions import VERSION_IN_TEXT, VersionKey, first_version, version_key

T = TypeVar("T")
HunkState = Literal["there", "new", "conflict"]
FileKind = Literal["code", "test", "docs"]
How = Literal["identical", "same-code", "same-names", "same-names-supporting", ""]

CONTEXT = 3  # lines of the query's own file around each hunk, as `git apply` uses them
MIN_LOOSE_BLOCK = 3  # a pure addition found anywhere in the file needs this many real lines
MAX_DIFF_LINES = 1500  # a candidate's edit of a region is read with difflib up to this size
ANCHOR_SEARCH = 200  # lines searched around a region for a line both versions have once
BLOCK_SEARCH = 5000  # lines searched for a block's opening and closing lines
COUNTED_LINES = 64  # lines looked at to count normalised lines one by one, at least
# Lines asked for by `FileText.once` with a scan of the text before its lines are counted (in
# C, about the cost of this many scans), and a line not there exactly once is answered at once.
SCANS_BEFORE_COUNT = 6
STRONG_CONTEXT = 3  # context lines that place a hunk on their own (fewer: its neighbours do)
ABOVE_SEARCH = 9  # lines looked up from a deeper copy of a line for the line above it
ENCLOSING_SEARCH = 60  # lines looked up from a guard for the definition around it
PARTIAL_SHARE = 0.25  # of the hunks that carry code, this much done: a real part is done
SAME_CODE_SHARE = 0.7  # of a hunk's code lines, this many written by the candidate (as the
# matcher's "contained": most of it, allowing a comment or a line written another way)
# A line that is a comment in the languages prdup meets: `// x`, `/* x`, ` * x` (a docblock,
# not `*ptr = 1`), `# x` (not C's `#include` or `#define`, nor Rust's and PHP's `#[attribute]`
# and `#![attribute]`), `-- x`, `<!-- x`, a docstring quote.
_COMMENT = re.compile(
    r"^(?://|/\*|\*(?:\s|/|$)|#(?!!?\[|\s*(?:include|import|define|undef|if|ifn?def|elif|else|endif"
    r"|pragma|region|endregion|error|warning|line)\b)|--\s|<!--|\"\"\"|''')"
)

# An attribute line (`#[inline]`, `#[must_use]`): code that qualifies the definition below it.
_ATTRIBUTE = re.compile(r"^#!?\[")

# Files that are sets of patterns, one a line: ignore files.
_PATTERN_LIST = re.compile(r"(?:^|/)\.[\w-]*ignore$")
_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|spec|specs|__tests__|testdata|test_data|fixtures)/"
    r"|(^|/)test_[^/]*$|_test\.[^/.]+$|(^|/)[^/]*Tests?\.[^/.]+$"
    r"|\.(test|spec)\.[cm]?[jt]sx?$|_spec\.rb$"
)
_DOCS_PATH = re.compile(
    r"(^|/)(docs?|documentation|changelogs?|news|release-?notes)/|^\.?(changes|changelog\.d)/"
    r"|(^|/)(CHANGELOG|CHANGES|NEWS|HISTORY|UPGRADE|README|AUTHORS|CONTRIBUTORS)[^/]*$"
    r"|\.(md|rst|txt|adoc|textile)$",
    re.IGNORECASE,
)

# A pip requirements or constraints file: its pins are what a bump changes, wherever it sits
# and however it is named (`test-requirements.txt` is neither a test nor a document). Other
# manifests (`pyproject.toml`, `package.json`, `go.mod`) are code by their names already; under
# a test folder they are a fixture's.
_DEPENDENCY_MANIFEST = re.compile(
    r"(^|/)([^/]*[-_.])?(requirements|constraints)([-_.][^/]*)?\.(txt|in)$"
    r"|(^|/)requirements/[^/]*\.(txt|in)$",
    re.IGNORECASE,
)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_STRING = r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'"
_LITERAL = re.compile(_STRING)
# A name as written, whole: `SymfonyStyle`, `$event`, `minimizePanelIcon` (not its parts).
_WHOLE_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
# Shorter names (`ctx`, `err`, `id`) are everywhere; a name this long says what it is.
FRESH_NAME_LENGTH = 4
# Words that are a keyword in some language prdup reads (Rust's and Scala's `match`, Go's
# `select` and `range`, SQL's `where`): a rewrite that starts using one says how it is
# written, not what it is for, wherever else the word may be a name.
_SYNTAX_WORDS = frozenset(
    ["match", "select", "range", "where", "when", "then", "loop", "until", "unless", "case",
     "enum", "struct", "interface", "trait", "impl", "package", "namespace", "using",
     "template", "typename", "virtual", "override", "final", "abstract", "extern", "inline",
     "fallthrough", "chan", "defer", "goto", "elsif", "elseif", "foreach", "endif", "begin",
     "sizeof", "instanceof", "implements", "throws", "readonly", "unsafe", "async", "await",
     "yield", "lambda", "assert", "module", "require", "include", "export", "default"]
)  # fmt: skip
# An import, in the languages git's diff drivers know: `import x`, `from x import y`,
# `#include <x>`, `using X;`, `use X;`, `require 'x'`, and a Go import block's `alias "path"`.
_IMPORT = re.compile(
    r"""^\s*(?:import\b|from\s+\S+\s+import\b|#\s*include\b|using\s+[\w.]+\s*;|use\s+[\w:\\]+"""
    r"""|require(?:_once|_relative)?\b|@import\b|(?:[\w.]+\s+)?"[^"\s]+"\s*$)"""
)
# A version number or a release heading: `"version": "1.0.0",`, `__version__ = '1.0.0'`,
# `<version>1.0.0</version>`, `## [1.0.0] - 2022-06-01`, `v1.0.0`, a heading's underline. Two
# changes that both write "1.0.0" may be years apart and mean different releases.
_VERSION_NUMBER = r"v?\d+(?:\.\d+)+(?:[-+][0-9a-z.-]+)?"
_VERSION_LINE = re.compile(
    # a heading: a Markdown one ("## 1.0"), else a number of three parts ("1.0.0 (2022-06-01)")
    rf"""^(?:(?:#+\s*\[?v?\d+(?:\.\d+)+|\[?v?\d+\.\d+\.\d+)(?:[-+][0-9a-z.-]+)?\]?"""
    r"""(?:\s*[-(:,].*)?"""
    rf"""|["']?[\w.]*version\w*["']?\s*[:=]\s*["']?{_VERSION_NUMBER}["']?\s*[,;]?"""
    rf"""|<version>{_VERSION_NUMBER}</version>|[=~^*#-]+)$""",
    re.IGNORECASE,
)
# A string compared for (in)equality, on either side: `code != "X"`, `"X" === kind`.
_COMPARISON = re.compile(
    rf"(?P<left>{_STRING})\s*(?P<op>===|!==|==|!=)|(?P<op2>===|!==|==|!=)\s*(?P<right>{_STRING})"
)
_TOKEN = re.compile(r"\w+|[^\w\s]")  # a word or one punctuation character
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
# Where a comment may follow code on its line. Strings (and Go's raw strings) are matched
# first so that a marker inside one is read past.
_HASH_COMMENTS = re.compile(
    r"\.(py|pyi|pyx|rb|rake|gemspec|sh|bash|zsh|pl|pm|r|ya?ml|toml|cfg|conf|ex|exs|nix|cmake|mk)$"
    r"|^(Makefile|Dockerfile|Gemfile|Rakefile|Containerfile)",
    re.IGNORECASE,
)
_BOTH_COMMENTS = re.compile(r"\.(php|phtml|tf|hcl)$", re.IGNORECASE)
_SKIPPED = rf"{_STRING}|`[^`]*`"
_HASH_COMMENT = re.compile(rf"{_SKIPPED}|(?<!\S)(?P<comment>#)")
_SLASH_COMMENT = re.compile(rf"{_SKIPPED}|(?<!\S)(?P<comment>//|/\*)")
_HASH_OR_SLASH_COMMENT = re.compile(rf"{_SKIPPED}|(?<!\S)(?P<comment>#|//|/\*)")
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
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
        # Keywords of other languages prdup reads that are seldom a name elsewhere (Rust's
        # `mut`, Go's `defer`, PHP's `foreach`, Ruby's `unless`): words such as `match`,
        # `select` or `range`, keywords in one language and names in another, stay names.
        "chan",
        "crate",
        "defer",
        "dyn",
        "elseif",
        "elsif",
        "endforeach",
        "endif",
        "endwhile",
        "extern",
        "fallthrough",
        "foreach",
        "goto",
        "impl",
        "implements",
        "instanceof",
        "mut",
        "pub",
        "readonly",
        "rescue",
        "synchronized",
        "throws",
        "trait",
        "typedef",
        "typename",
        "unless",
        "unsafe",
    ]
)


def names(text: str) -> set[str]:
    """The name parts a text uses: `resolve_offload_strategy` and `OffloadStrategy.resolve`
    both say resolve, offload, strategy. Keywords and short parts say nothing."""
    found: set[str] = set()
    for identifier in set(_IDENTIFIER.findall(text)):  # each identifier once: a file repeats them
        for part in _NAME_PART.findall(identifier):
            lowered = part.lower()
            if len(lowered) > 2 and lowered not in _KEYWORDS and lowered not in STOP_WORDS:
                found.add(lowered)
    return found


def file_kind(path: str) -> FileKind:
    """Tests, docs and changelog entries go with a fix; the fix itself is in the code, and so
    is a dependency manifest's pin: a bump not made is the change not made."""
    if _DEPENDENCY_MANIFEST.search(path):
        return "code"
    if _TEST_PATH.search(path):
        return "test"
    if _DOCS_PATH.search(path):
        return "docs"
    return "code"


@dataclass(frozen=True, slots=True)
class FileVersions:
    """One file of the query as it reads in three places (None: the file is not there)."""

    base: Sequence[str] | None  # the query's own starting point: the context of its hunks
    # Just before the candidate (its landing's parent, fork point), and after it (its landing
    # commit, its head): lines, or a `FileText` already made of them (one read is searched by
    # many replays, and keeps what it learnt).
    before: FileText | Sequence[str] | None
    after: FileText | Sequence[str] | None


@dataclass(frozen=True, slots=True)
class HunkReplay:
    """One hunk of the query, replayed before and after the candidate."""

    path: str
    first_line: int  # on the query's new side, for "what remains"
    last_line: int
    weight: int  # changed lines that carry code: not trivial, not only re-indented in place
    kind: FileKind
    new_file: bool
    before: HunkState
    after: HunkState
    how: How  # how the hunk is done after the candidate ("" when it is not)
    imports_only: bool = False  # every line it changes imports something
    versions_only: bool = False  # every line it changes is a version number or release heading
    comments_only: bool = False  # every line it changes is a comment (a docblock, a note)
    # It only removes lines, and the candidate removed every one of them that says something
    # (whatever the context around them became): for an identical patch, it kept this hunk.
    removal_made: bool = False
    deletes_file: bool = False  # it is the change deleting its file
    written: bool = False  # the candidate wrote its file (created or changed it, not deleted)
    # Packages it pins that the candidate pinned to another version: a competing bump.
    other_pins: tuple[CompetingPin, ...] = ()
    # It bumps dependency versions, and the candidate bumped the same lines to higher versions:
    # the candidate's line for each (`"lodash": "^4.17.21",`). The bump is superseded.
    superseded_by: tuple[str, ...] = ()
    # It only adds lines, and the file after the candidate has them all, at another place:
    # applying it would write them twice.
    added_elsewhere: bool = False
    # It only adds entries to a file of patterns (`.gitignore`), and the file after the
    # candidate has every one of them, in any order: it changes nothing there.
    entries_there: bool = False
    # It only adds lines, starting definitions the file after the candidate already defines,
    # each of them (by name, where the change's base did not): written otherwise there.
    defined_there: bool = False
    # It only adds lines, and the candidate wrote lines at its place that say most of what
    # they say (`_said_there`: the same docstring note, worded otherwise): written otherwise.
    said_there: bool = False
    # Its removed lines that say something (exact, indentation counted), and how many of them
    # the candidate itself replaced or deleted at the hunk's place, where the hunk still
    # applied before the candidate and no longer does after it (not done): the candidate
    # rewrote these lines its own way. `rewritten_as` is what it put there instead.
    removed_lines: int = 0
    rewritten_lines: int = 0
    rewritten_as: tuple[str, ...] = ()
    # The words that agree on what both are for: a word this hunk brings into a string that
    # the candidate's replacement brings into one (the same message reworded, the same query
    # extended), or a name new to the file that both bring into it (`_fresh_names`).
    agreeing_words: tuple[str, ...] = ()
    # It creates its file, and the candidate created a file at the same path with other lines
    # (the same page translated twice): how many lines the candidate's file has, else 0.
    created_otherwise: int = 0

    @property
    def rewritten(self) -> bool:
        """The candidate rewrote at least half of the lines this hunk removes, its own way."""
        return self.rewritten_lines > 0 and 2 * self.rewritten_lines >= self.removed_lines

    @property
    def turned(self) -> bool:
        """Not there before the candidate, done after it: the candidate did it."""
        return self.before != "there" and self.how != ""

    @property
    def anchors(self) -> bool:
        """Done by the candidate on its own evidence, not only by the names it brings."""
        return (
            self.turned
            and self.how in ("identical", "same-code", "same-names")
            and not self.imports_only
            and not self.versions_only
        )


@dataclass(frozen=True, slots=True)
class Replay:
    """The query's hunks replayed at one candidate: what it already did, and what remains."""

    commit: str  # where the hunks were replayed (a landing commit, an open PR's head)
    hunks: tuple[HunkReplay, ...]
    # `deciding`, worked out when first asked: every verdict rule asks it again.
    _deciding: tuple[HunkReplay, ...] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def deciding(self) -> tuple[HunkReplay, ...]:
        """The hunks that carry the change: code, or everything when there is no code (docs).
        Comments in code go with the code they explain: two fixes of one method may both
        correct its docblock, and that makes neither a part of the other; only a change of
        nothing but comments is decided by them. A change whose code is nothing but version
        numbers is decided with its notes and tests."""
        if self._deciding is None:
            object.__setattr__(self, "_deciding", self._carrying_the_change())
        assert self._deciding is not None
        return self._deciding

    def _carrying_the_change(self) -> tuple[HunkReplay, ...]:
        carrying = [h for h in self.hunks if h.weight > 0]
        code = [h for h in carrying if h.kind == "code"]
        statements = [h for h in code if not h.comments_only]
        deciding = statements or code or carrying
        if all(h.versions_only for h in deciding):
            # A release whose code is its version number: its notes say which release it
            # is (a 2020 proposal of "1.0.0" and the 2022 release both write the number).
            return tuple(carrying)
        return tuple(deciding)

    @property
    def done_share(self) -> float:
        hunks = self.deciding
        total = sum(h.weight for h in hunks)
        return sum(h.weight for h in hunks if h.turned) / total if total else 0.0

    @property
    def own_work(self) -> tuple[HunkReplay, ...]:
        """The hunks of the change's own work: its code and its tests, without docs and
        comments."""
        return tuple(
            h for h in self.hunks if h.weight > 0 and h.kind != "docs" and not h.comments_only
        )

    @property
    def work_share(self) -> float:
        """The share of the change's own work done, by weight (the share of its code,
        `done_share`, where it has none): a test migration that shares one import line with
        the candidate has its code done and its work not."""
        work = self.own_work
        total = sum(h.weight for h in work)
        if not total:
            return self.done_share
        return sum(h.weight for h in work if h.turned) / total

    @property
    def imports_only(self) -> bool:
        """The change is nothing but imports (adding a missing one, removing unused ones)."""
        hunks = self.deciding
        return bool(hunks) and all(h.imports_only for h in hunks)

    @property
    def versions_only(self) -> bool:
        """The change is nothing but version numbers and release headings (a version bump)."""
        hunks = self.deciding
        return bool(hunks) and all(h.versions_only for h in hunks)

    @property
    def complete(self) -> bool:
        """Every hunk that carries the change is done by the candidate. A hunk of imports or
        of version numbers alone anchors nothing, unless the change is nothing else: the same
        "1.0.0" written by a proposal and by a release years later is no part of the rest."""
        hunks = self.deciding
        anchored = self.imports_only or self.versions_only or any(h.anchors for h in hunks)
        return bool(hunks) and all(h.turned for h in hunks) and anchored

    @property
    def partial(self) -> bool:
        """A real part is done and a real part remains: "rebase, only X is left". A file the
        change deletes, deleted by the candidate too, is a part only where the candidate also
        wrote where the change puts code (tests moved to a new file, written there with
        other lines); else what the file becomes decides (moved into a crate, or a CI job
        moved to one service, deleted with a whole crate or for a move to another service)."""
        hunks = self.deciding
        rest = [h for h in hunks if not h.deletes_file]
        deletion_counts = not rest or any(h.written for h in rest)
        return (
            not self.complete
            and (
                self.imports_only
                or self.versions_only
                or any(h.anchors and (deletion_counts or not h.deletes_file) for h in hunks)
            )
            and self.done_share >= PARTIAL_SHARE
        )

    @property
    def left_where_it_wrote(self) -> bool:
        """Every carrying hunk the candidate did not do is in a file it wrote: what it left is
        that place written another way, not a part of the change it never touched (a
        behaviour change beside the types both add is more than those types)."""
        return all(h.written for h in self.deciding if not h.turned)

    @property
    def competing_pins(self) -> tuple[CompetingPin, ...]:
        """Packages this change pins to one version and the candidate to another."""
        return tuple(pin for hunk in self.hunks for pin in hunk.other_pins)

    @property
    def already_before(self) -> bool:
        """Every carrying hunk was there before the candidate: something earlier did it."""
        hunks = self.deciding
        return bool(hunks) and all(h.before == "there" for h in hunks)

    @property
    def superseded(self) -> bool:
        """Every hunk that carries the change bumps versions the candidate bumped higher (or
        is done by it), and one at least is such a bump: a dependency bumped again later. A
        test or document the change adds beside its bump is its own work, not a bump: left
        undone, the change is not superseded (a PR stacked on a bump to add its test)."""
        hunks = self.deciding
        return (
            bool(hunks)
            and any(h.superseded_by for h in hunks)
            and all(h.turned or h.superseded_by for h in hunks)
            and all(h.turned or h.superseded_by for h in self.hunks if h.weight > 0)
        )

    @property
    def rewrote(self) -> bool:
        """The candidate rewrote, its own way, at least half of the lines this change removes
        (counted over the hunks that carry it): the lines this change edits are not there as
        it read them any more, and the candidate is who changed them."""
        hunks = [h for h in self.deciding if h.removed_lines]
        removed = sum(h.removed_lines for h in hunks)
        rewritten = sum(h.rewritten_lines for h in hunks if h.rewritten)
        return removed > 0 and 2 * rewritten >= removed

    @property
    def created_otherwise(self) -> tuple[HunkReplay, ...]:
        """The hunks that create a file the candidate created at the same path, otherwise."""
        return tuple(h for h in self.deciding if h.created_otherwise)

    @property
    def created_the_pages(self) -> bool:
        """`created_the_files`, every such file a document (a page, not a module or a test)."""
        return self.created_the_files and all(h.kind == "docs" for h in self.created_otherwise)

    @property
    def created_the_files(self) -> bool:
        """Most of the change (more than half of its carrying lines) is new files that the
        candidate created first at the same paths, with lines of its own."""
        total = sum(h.weight for h in self.deciding)
        created = sum(h.weight for h in self.created_otherwise)
        return total > 0 and 2 * created > total

    @property
    def rewritten_rest(self) -> tuple[HunkReplay, ...]:
        """The carrying hunks the candidate did not make as they are but rewrote, its own way,
        as it landed (`HunkReplay.rewritten`); empty unless every hunk it did not make is such:
        then it made the whole change, part as it is and the rest otherwise."""
        rest = [h for h in self.deciding if not h.turned]
        if not rest or not all(h.rewritten for h in rest):
            return ()
        return tuple(rest)

    @property
    def agreeing_words(self) -> tuple[str, ...]:
        """The words agreeing on the purpose (`HunkReplay.agreeing_words`) of the hunks the
        candidate rewrote."""
        hunks = (h for h in self.deciding if h.rewritten)
        return tuple(sorted({word for h in hunks for word in h.agreeing_words}))

    @property
    def same_names(self) -> bool:
        """Some hunk is done only in substance: the same lines replaced using the same names."""
        return any(h.turned and h.how == "same-names" for h in self.deciding)

    @property
    def kept(self) -> bool:
        """Every hunk that carries the change is there after the candidate, and not all of
        them were there before it: its landing kept the change (a merge whose conflict
        resolution threw it away did not, whatever the patch identity says)."""
        if not self.hunks:
            # Nothing was replayed (a landing whose own diff is empty: a PR's merge that
            # brought nothing, the same change having landed before): no evidence against the
            # patch identity.
            return True
        hunks = self.deciding
        return (
            bool(hunks)
            and all(h.turned or h.after == "there" or h.removal_made for h in hunks)
            and not self.already_before
        )

    @property
    def residual(self) -> tuple[str, ...]:
        """What the candidate did not do, file by file ("tests/test_x.py (new file)")."""
        return self._places(h for h in self.hunks if not h.turned)

    @property
    def residual_after(self) -> tuple[str, ...]:
        """What is not there after the candidate, file by file: what remains of a change the
        candidate's landing holds as its identical patch."""
        return self._places(
            h for h in self.hunks if not (h.turned or h.after == "there" or h.removal_made)
        )

    @staticmethod
    def _places(hunks: Iterable[HunkReplay]) -> tuple[str, ...]:
        places: dict[str, list[str]] = {}
        for hunk in hunks:
            if hunk.weight == 0:
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


@dataclass(frozen=True, slots=True)
class HunkCount:
    """The one hunk accounting behind a replayed verdict and the reasons that explain it, so
    the two cannot disagree: the verdict is read from `whole` and `share`, the reasons print
    `done`, `total`, `others` and `residual`."""

    total: int  # the hunks that carry the change (its code; tests and docs where it has none)
    done: int  # of them, done by the candidate (there after it, for its kept identical patch)
    others: int  # hunks with changed lines that carry nothing beside code, and are not done
    share: float  # of the carrying hunks' changed lines, the share done
    whole: bool  # every carrying hunk is done: a complete replay, or an identical patch kept
    by_identity: bool  # whole only because the candidate's landing holds the identical patch
    residual: tuple[str, ...]  # what is still to do, file by file

    @classmethod
    def of(cls, replayed: Replay, same_patch: bool) -> HunkCount:
        """Count `replayed`'s hunks; `same_patch`: the candidate's change is this very patch,
        which decides where its landing kept every hunk (`Replay.kept`), even a hunk the
        replay cannot credit to it (a line that was there before elsewhere in the file)."""
        deciding = replayed.deciding
        by_identity = same_patch and not replayed.complete and replayed.kept

        def done(hunk: HunkReplay) -> bool:
            return hunk.turned or (by_identity and (hunk.after == "there" or hunk.removal_made))

        carrying = {id(h) for h in deciding}
        others = [h for h in replayed.hunks if h.weight > 0 and id(h) not in carrying]
        return cls(
            total=len(deciding),
            done=sum(1 for h in deciding if done(h)),
            others=sum(1 for h in others if not done(h)),
            share=1.0 if by_identity else replayed.done_share,
            whole=replayed.complete or by_identity,
            by_identity=by_identity,
            residual=replayed.residual_after if by_identity else replayed.residual,
        )


@dataclass(frozen=True, slots=True)
class Leftover:
    """The hunks a landing did not do, sorted by what the branch's tip says of them."""

    still: tuple[HunkReplay, ...]  # not on the tip either: still to do
    on_tip: tuple[HunkReplay, ...]  # on the tip anyway: another change made them
    gone: tuple[HunkReplay, ...]  # in files the tip no longer has: nothing left to apply
    # Neither there nor applying on the tip: the tip rewrote the lines it edits or sits
    # between since (renamed, re-wrapped, moved, bumped past): not to do as it stands.
    rewritten: tuple[HunkReplay, ...] = ()

    @classmethod
    def of(cls, landed: Replay, tip: Replay | None, gone: frozenset[str] = frozenset()) -> Leftover:
        """Split what `landed` left by `tip` (the change replayed at its branch's tip from its
        own base): a hunk is on the tip where its result is there at its place, or, removing
        lines only, where they are gone; a hunk of a file the tip no longer has (and the
        change does not add) has nothing left to apply to; a hunk whose lines the tip has
        neither as its result nor as what it edits was rewritten there since. Still to do is
        what would still apply to the tip and change something there."""
        left = [h for h in landed.hunks if h.weight and not h.turned]
        return cls._split(left, tip.hunks if tip else (), gone)

    @classmethod
    def at_tip(cls, tip: Replay, gone: frozenset[str] = frozenset()) -> Leftover:
        """Split, as `of` does, hunks no landing replayed (the commits of a PR that have no
        copy on its branch) by the tip alone; there, the same code at its place is on the tip
        too (an addition whose context is still there reads as applying, made or not)."""
        return cls._split([h for h in tip.hunks if h.weight], tip.hunks, gone, by_code=True)

    @classmethod
    def _split(
        cls,
        left: Iterable[HunkReplay],
        tip: Iterable[HunkReplay],
        gone: frozenset[str],
        by_code: bool = False,
    ) -> Leftover:
        at_tip = {(h.path, h.first_line, h.last_line): h for h in tip}
        still: list[HunkReplay] = []
        on_tip: list[HunkReplay] = []
        deleted: list[HunkReplay] = []
        rewritten: list[HunkReplay] = []
        for hunk in left:
            there = at_tip.get((hunk.path, hunk.first_line, hunk.last_line))
            if hunk.path in gone:
                deleted.append(hunk)
            elif there is not None and (
                there.after == "there"
                or there.removal_made
                or there.entries_there
                or (by_code and there.turned and there.how in ("identical", "same-code"))
            ):
                on_tip.append(hunk)
            elif there is not None and (
                there.after == "conflict"
                or there.added_elsewhere
                or there.defined_there
                or there.said_there
            ):
                rewritten.append(hunk)
            else:
                still.append(hunk)
        return cls(tuple(still), tuple(on_tip), tuple(deleted), tuple(rewritten))

    def rewritten_since(self, landed: Replay) -> bool:
        """The tip rewrote some of the change's code that the landing left (a name it renamed,
        a version it went past, a signature it re-wrapped): "rebase, only X is left" would be
        false, as the rest no longer applies as it is, and whatever of it still applies (X)
        is to be read against what the branch became since, not applied."""
        carrying = {id(h) for h in landed.deciding}
        return any(id(h) in carrying for h in self.rewritten)

    def nothing_applies(self, landed: Replay) -> bool:
        """No hunk that carries the change would still apply to the tip as it is: each is
        done by the landing, on the tip, rewritten there since, or in a file gone."""
        carrying = {id(h) for h in landed.deciding}
        return not any(id(h) in carrying for h in self.still)

    def done_on_tip(self, landed: Replay) -> bool:
        """Every hunk that carries the change is done by the landing or on the tip, and the tip
        holds some: the change is done, across the landing and what else put the rest there."""
        carrying = {id(h) for h in landed.deciding}
        left = (*self.still, *self.gone, *self.rewritten)
        return bool(self.on_tip) and not any(id(h) in carrying for h in left)


def places(hunks: Iterable[HunkReplay]) -> tuple[str, ...]:
    """Hunks as places, file by file ("a.py (lines 3-5, line 9)", "b.py (new file)")."""
    return Replay._places(hunks)


def replay(
    change: Change,
    versions: Mapping[str, FileVersions],
    commit: str,
    memo: dict[int, _Blocks | _FileFacts] | None = None,
) -> Replay:
    """Replay every hunk of `change`; `versions` is keyed by each file's (new) path. A file
    with no versions is one the candidate did not touch: its hunks stay to do. `memo` keeps
    each hunk's blocks, and what is read of each file alone, from one candidate to the next
    (the same change is replayed at many)."""
    hunks: list[HunkReplay] = []
    additions: list[tuple[int, _Blocks, FileText, FileText]] = []
    repeated: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[int]] = {}
    texts: dict[str, tuple[FileText, FileText]] = {}
    for file in change.files:
        if not file.hunks or file.status == "binary":
            continue
        found = versions.get(file.path)
        for replayed, blocks, before, after in _replay_file(file, found, memo):
            if before is not None and after is not None:
                texts[file.path] = (before, after)
                key = (file.path, blocks.removed, blocks.added)
                repeated.setdefault(key, []).append(len(hunks))
            if (
                not replayed.how
                and not blocks.removed
                and replayed.before != "there"
                and before is not None
                and after is not None
            ):
                additions.append((len(hunks), blocks, before, after))
            hunks.append(replayed)
    if not any(h.anchors for h in hunks) and not Replay(commit, tuple(hunks)).imports_only:
        # An import the candidate added too says nothing by itself: two fixes of the same
        # error path both import the error package, whatever they do with it. (A change that
        # is nothing but imports, as adding a missing one, is decided by them.)
        hunks = [replace(h, how="") if h.imports_only and h.turned else h for h in hunks]
    if additions and any(h.anchors for h in hunks):
        # Additions that only support the fix (its import, a helper's signature) count as done
        # where the names they bring are there: read only once something anchors the claim.
        for at, blocks, before, after in additions:
            if _introduced_names_there(blocks, before, after):
                hunks[at] = replace(hunks[at], how="same-names-supporting")
    for (path, removed, added), positions in repeated.items():
        if len(positions) > 1:
            _credit_each_once(hunks, positions, removed, added, *texts[path])
    return Replay(commit=commit, hunks=tuple(hunks))


_HOW_RANK = {"identical": 0, "same-code": 1, "same-names": 2, "same-names-supporting": 3}


def _credit_each_once(
    hunks: list[HunkReplay],
    positions: Sequence[int],
    removed: Sequence[str],
    added: Sequence[str],
    before: FileText,
    after: FileText,
) -> None:
    """Equal hunks of one file (the same line added to three lists) are done only as many
    times as the candidate made their lines: one `"linux/riscv64",` added to one list is
    one of the three, however well each is found. The hunks kept are those done on the
    best evidence (identical, then the same code at their place), in the file's order."""
    made = _times_made(removed, added, before, after)
    done = sorted(
        (at for at in positions if hunks[at].how),
        key=lambda at: (_HOW_RANK.get(hunks[at].how, 4), at),
    )
    for at in done[made:]:
        hunks[at] = replace(hunks[at], how="")


def _times_made(
    removed: Sequence[str], added: Sequence[str], before: FileText, after: FileText
) -> int:
    """How many more times the candidate wrote one of these added lines, or took one of these
    removed lines away, than the file had before it (lines that say nothing aside)."""

    def saying(lines: Sequence[str]) -> list[str]:
        return [n for n in map(normalise_line, lines) if n and not is_trivial(n)]

    wrote = [after.normalised[n] - before.normalised[n] for n in saying(added)]
    took = [before.normalised[n] - after.normalised[n] for n in saying(removed)]
    return max([0, *wrote, *took])


@dataclass(frozen=True, slots=True)
class _HunkFacts:
    """What the replay reads of a hunk alone: the same at every candidate."""

    moves: bool  # every line it changes is moved (`_moves_only`)
    weight: int  # changed lines that carry code
    imports_only: bool
    versions_only: bool
    comments_only: bool
    first_line: int  # on the change's new side
    last_line: int


@dataclass(frozen=True, slots=True)
class _FileFacts:
    """What the replay reads of a file of the change alone, worked out once for all the
    candidates it is replayed at (kept in `replay`'s memo by the file's id)."""

    kept: set[int]  # lines the file's diff both removes and adds
    kind: FileKind
    hunks: tuple[_HunkFacts, ...]
    added: frozenset[str]  # every line the file's diff adds, normalised
    added_calls: frozenset[tuple[str, str]]  # the calls those lines make (`_call_expressions`)

    @classmethod
    def of(cls, file: FileChange) -> _FileFacts:
        kept = {line.hash for line in file.changed_lines if line.side == "-"} & {
            line.hash for line in file.changed_lines if line.side == "+"
        }
        moved = _moved_lines(file)
        hunks = []
        for hunk in file.hunks:
            moves = _moves_only(hunk, moved)
            weight = sum(
                1 for line in hunk.lines if not line.trivial and (line.hash not in kept or moves)
            )
            added = [line.number for line in hunk.lines if line.side == "+"]
            first = added[0] if added else max(1, hunk.new_start)  # a removal at the top: line 1
            hunks.append(
                _HunkFacts(
                    moves=moves,
                    weight=weight,
                    imports_only=_imports_only(hunk),
                    versions_only=_versions_only(hunk),
                    comments_only=_comments_only(hunk),
                    first_line=first,
                    last_line=added[-1] if added else first,
                )
            )
        added_lines = frozenset(line.normalised for line in file.changed_lines if line.side == "+")
        calls = frozenset(_call_expressions(added_lines))
        return cls(kept, file_kind(file.path), tuple(hunks), added_lines, calls)


def _facts_of(file: FileChange, memo: dict[int, _Blocks | _FileFacts] | None) -> _FileFacts:
    found = memo.get(id(file)) if memo is not None else None
    if isinstance(found, _FileFacts):
        return found
    facts = _FileFacts.of(file)
    if memo is not None:
        memo[id(file)] = facts
    return facts


def _replay_file(
    file: FileChange,
    versions: FileVersions | None,
    memo: dict[int, _Blocks | _FileFacts] | None = None,
) -> list[tuple[HunkReplay, _Blocks, FileText | None, FileText | None]]:
    facts = _facts_of(file, memo)
    kept, kind = facts.kept, facts.kind
    before = FileText.of(versions.before) if versions else None
    after = FileText.of(versions.after) if versions else None
    wrote = after is not None and (before is None or before.lines != after.lines)
    results = []
    base = versions.base if versions else None
    result: _Lazy[list[str] | None] = _Lazy(
        lambda: _result_of(file, base) if base is not None and len(file.hunks) > 1 else None
    )
    for hunk, known in zip(file.hunks, facts.hunks, strict=True):
        found = memo.get(id(hunk)) if memo is not None and versions else None
        blocks = found if isinstance(found, _Blocks) else None
        if blocks is None:
            blocks = _Blocks.of(hunk, base, result.get())
            if memo is not None and versions:
                memo[id(hunk)] = blocks
        moves = known.moves
        state_before: HunkState
        state_after: HunkState
        # An import's place is its file's import block, in whatever order a project sorts it.
        imports_only = known.imports_only
        # Where it is found: the files as they are for a hunk that strips trailing whitespace.
        seen_before, seen_after = (
            (before and before.exact(), after and after.exact())
            if blocks.exact
            else (before, after)
        )
        place: _Lazy[_Place | None] = _Lazy(
            partial(_place, blocks, None if imports_only else seen_before, seen_after)
        )
        if versions is None:
            state_before = state_after = "new"
        else:
            state_before = _state(blocks, seen_before, file, place=place)
            state_after = _state(blocks, seen_after, file, since=seen_before, place=place)
            if state_after != "there" and moves and _move_made(blocks, before, after, place):
                state_after = "there"
        how: How = ""
        if state_after == "there" and (_fresh(hunk, before) or moves):
            how = "identical"
        elif (
            state_after == "conflict"
            and state_before == "new"
            and not moves  # lines it only moves are done where the move is made, not by names
            and blocks.removed
            and before is not None
            and after is not None
            and _same_fix(blocks, before, after, file.path)
        ):
            how = "same-names"
        elif (
            state_before != "there"
            and before is not None
            and after is not None
            and _same_code(hunk, blocks, before, after, place, kept, kind)
        ):
            how = "same-code"
        if (
            how
            and state_before == "new"  # the candidate started from the lines it deletes
            and before is not None
            and after is not None
            and (
                _keeps_what_it_deletes(hunk, kept, before, after)
                or (how == "identical" and _calls_made_beside(blocks, before, after, place, facts))
            )
        ):
            # Not this hunk's result, whatever stands at its place: no later reader (what the
            # tip holds anyway, a kept identical patch) may take it for one.
            how, state_after = "", "conflict"
        superseded_by = (
            _superseding(hunk, before, after, file.path)
            if state_before == "new" and state_after == "conflict" and before and after
            else ()
        )
        removed_lines = sum(1 for line in hunk.removed if not line.trivial)
        rewritten_lines, rewritten_as, agreeing_words = (
            _rewrite(blocks, before, after, file.path)
            if state_before == "new"
            and state_after == "conflict"
            and not how
            and not moves
            and removed_lines
            and before is not None
            and after is not None
            else (0, (), ())
        )
        replayed = HunkReplay(
            path=file.path,
            first_line=known.first_line,
            last_line=known.last_line,
            weight=known.weight,
            kind=kind,
            new_file=file.status == "added",
            before=state_before,
            after=state_after,
            how=how,
            imports_only=imports_only,
            versions_only=known.versions_only,
            comments_only=known.comments_only,
            removal_made=_removal_made(hunk, before, after),
            deletes_file=file.status == "removed",
            written=wrote,
            other_pins=_other_pins(file.path, hunk, before, after),
            superseded_by=superseded_by,
            added_elsewhere=state_after == "new" and _added_elsewhere(blocks, after),
            entries_there=state_after == "new" and _entries_there(blocks, after, file.path),
            said_there=state_after == "new"
            and _said_there(blocks, before, after, place, facts.added),
            removed_lines=removed_lines,
            rewritten_lines=rewritten_lines,
            rewritten_as=rewritten_as,
            agreeing_words=agreeing_words,
            created_otherwise=(
                len(after.lines)
                if file.status == "added"
                and before is None
                and after is not None
                and not how
                and not commonly_added(file.path)
                else 0
            ),
        )
        results.append((replayed, blocks, before, after))
    return results


@dataclass(slots=True)
class _PairMemo:
    """What one file version worked out against a later one (`FileText.opcodes_against`,
    `FileText.anchors_against`)."""

    opcodes: dict[tuple[int, int, int, int], tuple[tuple[str, int, int, int, int], ...]] = field(
        default_factory=dict
    )
    heads: dict[int, tuple[int, int] | None] = field(default_factory=dict)
    tails: dict[int, tuple[int, int] | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _OpenerChain:
    """Each line's place among a file's block openers: `indentation` of a line that says
    something (-1 for one that does not), `last_saying` the nearest such line at or above
    each line, `parent` the nearest such line above it indented less (-1: none). A line's
    openers are its nearest saying line, then parents, each kept where it is indented less
    than the last kept: the lines skipped between a line and its parent are indented at
    least as deep as it, so none of them can open its block."""

    # Arrays of machine integers: a chain costs a quarter of the text it describes.
    indentation: array[int]
    last_saying: array[int]
    parent: array[int]

    @classmethod
    def of(cls, lines: Sequence[str]) -> _OpenerChain:
        indentation, last_saying, parent = array("i"), array("i"), array("i")
        stack: list[int] = []  # saying lines above, each indented more than the one before
        last = -1
        trivial = TRIVIAL_LINE.match  # `_says_something`, a line at a time, without its calls
        for number, raw in enumerate(lines):
            line = raw.rstrip()
            says = bool(line) and not trivial(" ".join(line.split()))
            depth = len(line) - len(line.lstrip()) if says else -1
            indentation.append(depth)
            parent.append(-1)
            if depth >= 0:
                while stack and indentation[stack[-1]] >= depth:
                    stack.pop()
                parent[number] = stack[-1] if stack else -1
                stack.append(number)
                last = number
            last_saying.append(last)
        return cls(indentation, last_saying, parent)


class FileText:
    """A file's lines, with right-hand whitespace dropped, searched for blocks of lines.

    A block is searched as one string in the joined text (a C-speed scan); the per-line map
    is built only when a rule asks where a single line occurs. What it works out (the map,
    normalised lines, names) is kept: one file version may be searched by many replays.
    """

    def __init__(self, lines: Sequence[str], exact: bool = False) -> None:
        self.lines = list(lines) if exact else [line.rstrip() for line in lines]
        # Unchanged lines are the same objects in both: keeping the source costs a pointer a line.
        self._source = lines
        self._exact: FileText | None = self if exact else None
        self._joined = "\n" + "\n".join(self.lines) + "\n"
        self._where: dict[str, list[int]] | None = None
        self._line_counts: Counter[str] | None = None  # each line's count, for `once`
        self._once_scans = 0  # `once` scans before `_line_counts` is made
        self._normalised: Counter[str] | None = None
        self._counts: dict[str, int] = {}  # lines counted one by one, before `_normalised`
        self._looked = 0  # lines looked at to count them one by one
        self._words: set[str] | None = None
        self._whole_names: set[str] | None = None
        self._chain: _OpenerChain | None = None
        # What this version asked of a later one (`opcodes_against`, `anchors_against`), by
        # the later version, held weakly as `_since` is.
        self._pairs: weakref.WeakKeyDictionary[FileText, _PairMemo] = weakref.WeakKeyDictionary()
        # `names_written_since`'s answers, by the earlier version, held weakly (an entry goes
        # with it: holding it would keep alive a text the sweep's reads have let go).
        self._since: weakref.WeakKeyDictionary[FileText, Counter[str]] = weakref.WeakKeyDictionary()

    @classmethod
    def of(cls, lines: FileText | Sequence[str] | None) -> FileText | None:
        if lines is None or isinstance(lines, FileText):
            return lines
        return cls(lines)

    def exact(self) -> FileText:
        """The same file with its lines' right-hand whitespace: a hunk that only strips
        trailing whitespace is searched there (`_Blocks.exact`)."""
        if self._exact is None:
            self._exact = FileText(self._source, exact=True)
        return self._exact

    def has(self, block: Sequence[str]) -> bool:
        return bool(block) and _needle(block) in self._joined

    def starts_with(self, block: Sequence[str]) -> bool:
        return bool(block) and self.lines[: len(block)] == list(block)

    def count(self, block: Sequence[str]) -> int:
        return self._joined.count(_needle(block)) if block else 0

    def find(self, block: Sequence[str]) -> list[int]:
        """Where `block` occurs as consecutive lines (the index of its first line)."""
        if not block:
            return []
        needle, joined = _needle(block), self._joined
        starts = []
        line, counted = 0, 0
        at = joined.find(needle)
        while at != -1:
            line += joined.count("\n", counted, at)  # the newline before line k is the k-th
            counted = at
            starts.append(line)
            at = joined.find(needle, at + 1)
        return starts

    def openers(self, start: int, depth: int | None) -> tuple[str, ...]:
        """`_openers(self.lines, start, changed)` where `depth` is `_opening_depth(changed)`
        (a replay works it out once for a hunk), read from the file's opener chain: a replay
        asks it at every place a hunk's lines occur, each answer a walk up the chain instead
        of a scan of up to `BLOCK_SEARCH` lines."""
        if depth is None:
            return ()
        chain = self._opener_chain()
        lowest = max(0, start - BLOCK_SEARCH)  # the lowest line `_openers` reads
        found: list[str] = []
        top = min(start, len(self.lines)) - 1
        number = chain.last_saying[top] if top >= 0 else -1
        while depth and number >= lowest:
            indentation = chain.indentation[number]
            if indentation < depth:
                found.append(self.lines[number].rstrip())
                depth = indentation
            number = chain.parent[number]
        return tuple(found)

    def opcodes_against(
        self, after: FileText, old: tuple[int, int], new: tuple[int, int]
    ) -> tuple[tuple[str, int, int, int, int], ...]:
        """difflib's opcodes from this file's lines in the span `old` to `after`'s in `new`,
        kept for the pair: the replays of many changes at one landing ask about the same
        spans (three quarters of the asks of a first sweep), and each costs a line diff."""
        kept = self._pair(after).opcodes
        key = (*old, *new)
        found = kept.get(key)
        if found is None:
            matcher = difflib.SequenceMatcher(
                None, self.lines[slice(*old)], after.lines[slice(*new)], autojunk=False
            )
            found = kept[key] = tuple(matcher.get_opcodes())
        return found

    def anchors_against(
        self, after: FileText, start: int, end: int
    ) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
        """The nearest lines above line `start` and from line `end` on (within
        `ANCHOR_SEARCH`) that say something and occur once in this version and in `after`,
        each as (here, there): a region's bounds in both versions. Kept for the pair: a
        hunk's place and the landing's edit there ask the same, for many changes."""
        memo = self._pair(after)
        if start not in memo.heads:
            above = range(start - 1, max(-1, start - 1 - ANCHOR_SEARCH), -1)
            memo.heads[start] = _anchor(self, after, above)
        if end not in memo.tails:
            below = range(end, min(len(self.lines), end + ANCHOR_SEARCH))
            memo.tails[end] = _anchor(self, after, below)
        return memo.heads[start], memo.tails[end]

    def _pair(self, after: FileText) -> _PairMemo:
        memo = self._pairs.get(after)
        if memo is None:
            memo = self._pairs[after] = _PairMemo()
        return memo

    def _opener_chain(self) -> _OpenerChain:
        if self._chain is None:
            self._chain = _OpenerChain.of(self.lines)
        return self._chain

    @property
    def where(self) -> dict[str, list[int]]:
        if self._where is None:
            self._where = {}
            for number, line in enumerate(self.lines):
                self._where.setdefault(line, []).append(number)
        return self._where

    def at_any_indentation(self, stripped: str) -> list[int]:
        """Where a line occurs, however indented: a scan of the text for the few lines asked
        (`stripped` without its leading and trailing whitespace)."""
        if not stripped or "\n" in stripped:
            return []
        found = []
        pattern = re.compile(r"\n[ \t]*" + re.escape(stripped) + r"(?=\n)")
        for match in pattern.finditer(self._joined):
            found.append(self._joined.count("\n", 0, match.start()))
        return found

    def once(self, line: str) -> int | None:
        """Where `line` is, if it occurs exactly once; found by a scan of the text while the map
        is not built (most replays ask about a few lines of a large file)."""
        if self._where is not None:
            found = self._where.get(line, ())
            return found[0] if len(found) == 1 else None
        counted = self._counted(line)
        if counted is not None and counted != 1:
            return None
        needle, joined = _needle((line,)), self._joined
        at = joined.find(needle)
        # Counted once, it is there once: no second scan to show it is not there again.
        if at == -1 or (counted is None and joined.find(needle, at + 1) != -1):
            return None
        return joined.count("\n", 0, at)

    def _counted(self, line: str) -> int | None:
        """How often `line` is a line of the file, once the lines are counted (None before,
        and where a count does not say what a scan finds: an empty file, whose text is one
        empty line, or a line break inside a line)."""
        if self._line_counts is None:
            self._once_scans += 1
            if self._once_scans <= SCANS_BEFORE_COUNT or not self.lines:
                return None
            if self._joined.count("\n") != len(self.lines) + 1:
                self._once_scans = -(1 << 62)  # a line holds a line break: scan, always
                return None
            self._line_counts = Counter(self.lines)
        return None if "\n" in line else self._line_counts[line]

    @property
    def normalised(self) -> LineCounts:
        """How often each whitespace-normalised line occurs (a re-indent is the same line)."""
        return LineCounts(self)

    def normalised_count(self, line: str) -> int:
        """How often the whitespace-normalised `line` occurs. A replay asks about a few lines
        of a large file: each is counted among the lines holding its longest word, found by
        a scan of the text, until the lines looked at so cost about what counting every line
        once costs (then every line is counted)."""
        if self._normalised is not None:
            return self._normalised[line]
        if line in self._counts:
            return self._counts[line]
        word = max(line.split(" "), key=len)
        budget = max(COUNTED_LINES, len(self.lines) // 4)
        if not word:
            return self._count_all()[line]
        joined, found = self._joined, 0
        at = joined.find(word)
        while at != -1:
            start, end = joined.rfind("\n", 0, at) + 1, joined.find("\n", at)
            self._looked += 1
            if self._looked > budget:
                return self._count_all()[line]
            found += " ".join(joined[start:end].split()) == line
            at = joined.find(word, end)
        self._counts[line] = found
        return found

    def _count_all(self) -> Counter[str]:
        if self._normalised is None:
            # `normalise_line` of every line, without a Python call per line.
            self._normalised = Counter(map(" ".join, map(str.split, self.lines)))
        return self._normalised

    def counted(self, ranges: _Ranges) -> Counter[str]:
        """How often each whitespace-normalised line occurs in `ranges` of lines."""
        numbers = {number for low, high in ranges for number in range(low, high)}
        return Counter(normalise_line(self.lines[number]) for number in numbers)

    @property
    def words(self) -> set[str]:
        if self._words is None:
            self._words = names(self._joined)
        return self._words

    @property
    def whole_names(self) -> set[str]:
        """Every name the file spells, whole (`_WHOLE_NAME`): what is new to it is not here."""
        if self._whole_names is None:
            self._whole_names = set(_WHOLE_NAME.findall(self._joined))
        return self._whole_names

    def names_written_since(self, before: FileText, leaving: Iterable[str] = ()) -> set[str]:
        """The names used by the lines this version has and `before` lacks (what a commit from
        `before` to it wrote), but for the lines `leaving`. How many such lines use each name
        is worked out once per pair of versions, which many hunks of many changes ask about;
        a name is left out where only lines of `leaving` use it."""
        uses = self._since.get(before)
        if uses is None:
            where = before.where
            uses = Counter(
                name
                for line in {line for line in self.lines if line not in where}
                for name in names(line)
            )
            self._since[before] = uses
        taken: Counter[str] = Counter()
        for line in set(leaving):
            if line not in before.where and self.has((line,)):
                taken.update(names(line))
        return {name for name, count in uses.items() if count > taken[name]}


class LineCounts:
    """A file's whitespace-normalised lines, counted as they are asked about (`FileText`)."""

    __slots__ = ("_text",)

    def __init__(self, text: FileText) -> None:
        self._text = text

    def __getitem__(self, line: str) -> int:
        return self._text.normalised_count(line)

    def get(self, line: str, default: int = 0) -> int:
        return self._text.normalised_count(line) or default


def _index_of(start: int, length: int) -> int:
    """Where a `-U0` header's range starts, 0-based: an empty one ("-5,0", a pure addition;
    "+5,0", a removal) sits after line 5; otherwise it starts at line 5."""
    return start if length == 0 else start - 1


def _context(lines: Sequence[str], start: int, end: int, exact: bool = False) -> tuple[str, ...]:
    if exact:
        return tuple(lines[max(0, start) : end])
    return tuple(line.rstrip() for line in lines[max(0, start) : end])


def _result_of(file: FileChange, base: Sequence[str]) -> list[str] | None:
    """The file as the change leaves it, from its base and its `-U0` hunks; None where the
    hunks do not apply to that base (its removed lines are not where they say)."""
    out: list[str] = []
    at = 0
    for hunk in sorted(file.hunks, key=lambda h: h.old_start):
        start = _index_of(hunk.old_start, hunk.old_length)
        removed = [line.text.rstrip() for line in hunk.removed]
        if start < at or [line.rstrip() for line in base[start : start + len(removed)]] != removed:
            return None
        out.extend(base[at:start])
        out.extend(line.text for line in hunk.added)
        at = start + hunk.old_length
    out.extend(base[at:])
    return out


def _needle(block: Sequence[str]) -> str:
    return "\n" + "\n".join(block) + "\n"


@dataclass(frozen=True, slots=True)
class _Blocks:
    """A hunk as `git apply` sees it: its removed and added lines inside their context."""

    before_context: tuple[str, ...]
    removed: tuple[str, ...]
    added: tuple[str, ...]
    after_context: tuple[str, ...]
    real_added: int  # added lines that say something on their own
    at_top: bool = False  # the hunk starts the file: nothing above it to anchor it
    # The lines that open the blocks around it in the query's base, innermost first (each
    # indented less than the one inside it): `platforms = [`, then `target "binary" {`.
    openers: tuple[str, ...] = ()
    # The context of its result in the query's own result, where another hunk of the change
    # is that close (else the base's, as for its pre-image): a block the change moves into
    # the `go func() {` right after the lines it removes leaves that line followed by the
    # moved block, not by the base's next lines.
    result_before: tuple[str, ...] | None = None
    result_after: tuple[str, ...] | None = None
    # A hunk that only changes lines' right-hand whitespace: its lines and context keep it,
    # and it is searched in the files as they are (`FileText.exact`), else its removed and
    # added lines would be the same lines and it would apply, and be undone, everywhere.
    exact: bool = False

    @classmethod
    def of(
        cls, hunk: Hunk, base: Sequence[str] | None, result: Sequence[str] | None = None
    ) -> _Blocks:
        removed = tuple(line.text.rstrip() for line in hunk.removed)
        added = tuple(line.text.rstrip() for line in hunk.added)
        exact = bool(removed) and removed == added
        if exact:
            removed = tuple(line.text for line in hunk.removed)
            added = tuple(line.text for line in hunk.added)
        before: tuple[str, ...] = ()
        after: tuple[str, ...] = ()
        result_before = result_after = None
        if base is not None:
            start = _index_of(hunk.old_start, hunk.old_length)
            end = start + hunk.old_length
            before = _context(base, start - CONTEXT, start, exact)
            after = _context(base, end, end + CONTEXT, exact)
            begin = _index_of(hunk.new_start, hunk.new_length)
            finish = begin + hunk.new_length
            # Only where the result holds the hunk's lines (a cut diff misses hunks), its
            # context is as long as the base's (a variant's offset serves both images), and
            # another hunk is that close.
            if result is not None and _context(result, begin, finish, exact) == added:
                above = _context(result, begin - CONTEXT, begin, exact)
                below = _context(result, finish, finish + CONTEXT, exact)
                as_long = (len(above), len(below)) == (len(before), len(after))
                if as_long and (above, below) != (before, after):
                    result_before, result_after = above, below
        real = sum(1 for line in hunk.added if not line.trivial)
        at_top = base is not None and (hunk.old_start == 0 or hunk.old_start == 1 and bool(removed))
        openers = _openers(base, start, removed or added) if base is not None else ()
        return cls(
            before,
            removed,
            added,
            after,
            real,
            at_top,
            openers,
            result_before,
            result_after,
            exact,
        )

    @property
    def post_before(self) -> tuple[str, ...]:
        return self.before_context if self.result_before is None else self.result_before

    @property
    def post_after(self) -> tuple[str, ...]:
        return self.after_context if self.result_after is None else self.result_after

    def variants(self) -> list[tuple[tuple[str, ...], tuple[str, ...], int]]:
        """(pre-image, post-image, offset of the change in them), from full context down, as
        `git apply` reduces context when the surroundings have moved on."""
        out = []
        for size in range(CONTEXT, -1, -1):
            # Near a file's top the context above is shorter than `size`: all of it, not its
            # last line (a negative start would slice from the end).
            head = self.before_context[max(0, len(self.before_context) - size) :] if size else ()
            tail = self.after_context[:size]
            if size and not head and not tail:
                continue
            if not size and not self._loose_match_allowed():
                continue
            post_head = self.post_before[max(0, len(self.post_before) - size) :] if size else ()
            post_tail = self.post_after[:size]
            out.append((head + self.removed + tail, post_head + self.added + post_tail, len(head)))
        return out

    def _loose_match_allowed(self) -> bool:
        # Without context a block may match another place with the same text: a replacement
        # still needs its removed lines gone, and an addition needs enough real lines.
        return bool(self.removed and self.added) or (
            not self.removed and self.real_added >= MIN_LOOSE_BLOCK
        )


def _same_code(
    hunk: Hunk,
    blocks: _Blocks,
    before: FileText,
    after: FileText,
    place: _Lazy[_Place | None],
    kept: set[int],
    kind: FileKind,
) -> bool:
    """Done in substance, line by line: the candidate wrote most of the code lines this hunk
    adds at the hunk's place (they are there after it and were not before it), and removed
    what this hunk removes there, keeping none of the names it deletes. Comments and lines
    the hunk only moves say nothing."""

    def code(lines: Sequence[ChangedLine]) -> list[str]:
        return [
            line.normalised
            for line in lines
            if not line.trivial
            and line.hash not in kept
            and (kind == "docs" or not _COMMENT.match(line.normalised))
        ]

    added, removed = code(hunk.added), code(hunk.removed)
    # An attribute line the hunk adds (`#[inline]`) qualifies the definition it stands on:
    # whether the same code was written is read from the definition's own lines.
    added = [line for line in added if not _ATTRIBUTE.match(line)] or added
    if not added or not _written(added, removed, before.normalised, after.normalised):
        return False
    if not _keeps_what_it_renests(hunk, kept, after):
        return False
    where = place.get()
    # One line added where no enclosing block tells its place (a `cfg(any(...))` list among
    # lists alike) is done where it stands beside the lines it is added between. Inside a
    # block found once (a class, a method) its members sit in any order; a block of lines is
    # known by its own lines; an import's place is its file's import block, in any order.
    if (
        len(added) == 1
        and not removed
        and (where is None or len(where.after) == 1)
        and not _imports_only(hunk)
        and not _beside_its_neighbours(blocks, after)
    ):
        return False
    if where is not None:
        there, here = before.counted(where.before), after.counted(where.after)
        if not _written(added, removed, there, here) or _keeps_deleted(blocks, here - there):
            return False
    # (Without a place, its surroundings are nowhere to be found: the file is all there is.)
    return not _put_deeper(hunk, blocks, before, after)


def _keeps_what_it_renests(hunk: Hunk, kept: set[int], after: FileText) -> bool:
    """A hunk that moves lines it keeps into or out of a block (a statement put under a new
    guard) is about those lines: they are still there after the candidate. A new
    `if ($verbose) {` written while the message this change guards was rewritten is another
    change; entries of an array only re-aligned around a new entry are not moved at all."""
    return all(after.normalised[line] > 0 for line in _renested(hunk, kept))


def _put_deeper(hunk: Hunk, blocks: _Blocks, before: FileText, after: FileText) -> bool:
    """The candidate wrote a line this hunk adds one block deeper than this hunk does, below
    the same line above it (the nearest that says something: not a brace), right under an
    opening line of its own that tests an option it added (`_new_option`): the line runs
    only when asked (`if flush:` before `fp.flush()`, with `flush=False` added to the
    signature: tqdm's #1724, where #1056 flushes after every write). Where some copy stands
    as deep as this hunk puts it, it is there; a line only indented otherwise, or under a
    test of what was there already (`if self._completed_intervals > 0:`, click's #3614
    around the `make_step` #3690 calls always), is the same line."""
    above = next(
        (line for line in reversed(blocks.post_before) if not is_trivial(normalise_line(line))),
        None,
    )
    if above is None:
        return False  # only braces and blank lines above it: nothing tells its depth
    wanted = above.strip()
    ours_added = {normalise_line(line) for line in blocks.added}
    lines = after.lines
    deeper = False
    for line in hunk.added:
        if line.trivial:
            continue
        text = line.text.rstrip()
        ours = _indentation(text) - _indentation(above)
        for at in after.at_any_indentation(text.strip()):
            theirs = lines[at]
            start = next(
                (
                    up
                    for up in range(at - 1, max(-1, at - 1 - ABOVE_SEARCH), -1)
                    if lines[up].strip() == wanted
                ),
                None,
            )
            if start is None:
                continue
            placed = _indentation(theirs) - _indentation(lines[start])
            opener = next((up for up in range(at - 1, start, -1) if lines[up].strip()), None)
            if (
                placed <= ours
                or opener is None
                or _indentation(lines[opener]) >= _indentation(theirs)
            ):
                return False
            guard = normalise_line(lines[opener])
            if guard in ours_added or after.normalised_count(guard) <= before.normalised_count(
                guard
            ):
                return False  # under a line this change writes too, or one already there
            if not _new_option(lines, opener, before, after):
                return False  # a test of what was there: the step it skips does nothing
            deeper = True
    return deeper


def _new_option(lines: Sequence[str], guard: int, before: FileText, after: FileText) -> bool:
    """The guard at `guard` tests a name that a line enclosing it brings, a line the
    candidate wrote (its own signature: `flush=False` above `if flush:`): an option added to
    ask for what this change does always."""
    tested = names(lines[guard])
    depth = _indentation(lines[guard])
    for up in range(guard - 1, max(-1, guard - 1 - ENCLOSING_SEARCH), -1):
        line = lines[up]
        if not line.strip() or _indentation(line) >= depth:
            continue
        depth = _indentation(line)  # a line opening a block around the guard
        normalised = normalise_line(line)
        if names(line) & tested and after.normalised_count(normalised) > before.normalised_count(
            normalised
        ):
            return True
        if depth == 0:
            break
    return False


def _renested(hunk: Hunk, kept: set[int]) -> list[str]:
    """The lines the hunk keeps but indents otherwise: moved into or out of a block."""
    indents: dict[int, set[str]] = {}
    for line in hunk.removed:
        if line.hash in kept and not line.trivial:
            indents.setdefault(line.hash, set()).add(_leading(line.text))
    return [
        line.normalised
        for line in hunk.added
        if line.hash in kept
        and not line.trivial
        and _leading(line.text) not in indents.get(line.hash, set())
    ]


def _leading(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def _beside_its_neighbours(blocks: _Blocks, after: FileText) -> bool:
    """An added line stands, after the candidate, next to a line this hunk puts it beside: the
    nearest line above or below it (on either side) that is neither blank nor one of the
    hunk's own added lines. `target_os = "hurd",` added to one `cfg` list is not done by the
    same line in the next list, between other neighbours; `$total = 0;` written just above
    the blank line this change writes it below is."""
    own = {line.strip() for line in blocks.added if line.strip()}
    above = next((line.strip() for line in reversed(blocks.before_context) if line.strip()), None)
    below = next((line.strip() for line in blocks.after_context if line.strip()), None)
    lines = [line.strip() for line in after.lines]

    def neighbour(at: int, step: int) -> str | None:
        at += step
        while 0 <= at < len(lines):
            if lines[at] and lines[at] not in own:
                return lines[at]
            at += step
        return None

    # On either side of it: `evt.preventDefault();` written just before the
    # `evt.stopPropagation();` this change puts it after is the same line at the same place.
    wanted = {above, below} - {None}
    return any(
        {neighbour(at, -1), neighbour(at, 1)} & wanted
        for at, line in enumerate(lines)
        if line in own
    )


def _written(
    added: Sequence[str],
    removed: Sequence[str],
    before: Counter[str] | LineCounts,
    after: Counter[str] | LineCounts,
) -> bool:
    """Most `added` lines are more often in `after` than `before`, every `removed` one less.
    Lines are counted only until the share is reached or out of reach (counting a line in a
    large file is a scan)."""
    needed = SAME_CODE_SHARE * len(added)
    written, left = 0, len(added)
    for line in added:
        if written >= needed or written + left < needed:
            break
        written += after[line] > before[line]
        left -= 1
    if written < needed:
        return False
    return all(after[line] < before[line] for line in removed)


def _keeps_deleted(blocks: _Blocks, written: Iterable[str]) -> bool:
    """The candidate's new lines still use a name this hunk deletes (one its removed lines
    use and neither its added lines nor its context do): a rewrite that keeps the very thing
    this change takes away (its legacy flag, its second call) is another change."""
    deleted = names("\n".join(blocks.removed)) - names(
        "\n".join(blocks.added + blocks.before_context + blocks.after_context)
    )
    return bool(deleted & names("\n".join(written)))


def _other_pins(
    path: str, hunk: Hunk, before: FileText | None, after: FileText | None
) -> tuple[CompetingPin, ...]:
    """The packages this hunk pins that the candidate re-pinned to another version."""
    if before is None or after is None or not hunk.added or not is_manifest(path):
        return ()
    return competing_pins(path, (line.text for line in hunk.added), before.lines, after.lines)


def _moved_lines(file: FileChange) -> set[int]:
    """The lines the change moves within the file: removed by one of its hunks and added by
    another, both hunks doing nothing but that (a block that stands whole in a new place; a
    line re-indented in place is removed and added by one hunk, and a line taken into a
    rewritten block elsewhere is part of that rewrite).

    A move is a change of its own (a reorder is a fix: a check put before another), so its
    lines carry weight; and its hunks are done only where the lines stand in their new place
    after the candidate, never because the same text is still in the file, where it was."""
    hunks = [[line for line in hunk.lines if not line.trivial] for hunk in file.hunks]
    candidates = _across_hunks(hunks)
    moving = [lines if all(line.hash in candidates for line in lines) else [] for lines in hunks]
    return _across_hunks(moving)


def _across_hunks(hunks: Sequence[Sequence[ChangedLine]]) -> set[int]:
    """Lines removed by one of `hunks` and added by another."""
    removed: dict[int, set[int]] = {}
    added: dict[int, set[int]] = {}
    for at, lines in enumerate(hunks):
        for line in lines:
            (removed if line.side == "-" else added).setdefault(line.hash, set()).add(at)
    return {
        line for line, where in removed.items() if line in added and len(where | added[line]) > 1
    }


def _moves_only(hunk: Hunk, moved: set[int]) -> bool:
    """Every line the hunk changes (trivial ones aside) is moved, here or from here: what it
    adds was in the file before the candidate, so standing at the hunk's place after it (one
    more there than before, as `_state` counts) is what shows the candidate made the move."""
    lines = [line for line in hunk.lines if not line.trivial]
    return bool(lines) and all(line.hash in moved for line in lines)


def _move_made(
    blocks: _Blocks, before: FileText | None, after: FileText | None, place: _Lazy[_Place | None]
) -> bool:
    """The candidate made this move's hunk: one fewer of its pre-image and one more of its
    result at its place. (The pre-image of a move's addition is its two neighbours joined,
    which a function repeated further up the file may also have: found there, it does not
    say the move is not made.)"""
    if before is None or after is None:
        return False
    for pre, post, offset in blocks.variants():
        if (
            after.count(pre) < before.count(pre)
            and _says_something(post)
            and _found_at_place(
                post, offset, len(blocks.added), after, before, place, _function_of(blocks)
            )
        ):
            return True
    return False


def _removal_made(hunk: Hunk, before: FileText | None, after: FileText | None) -> bool:
    """A hunk that only removes lines, each of which (trivial ones aside) there is one fewer
    of after the candidate than before it."""
    if hunk.added or before is None:
        return False
    lines = [line.normalised for line in hunk.removed if not line.trivial]
    if after is None:
        return bool(lines)  # the file is gone
    return bool(lines) and all(
        after.normalised.get(line, 0) < before.normalised[line] for line in lines
    )


def _keeps_what_it_deletes(hunk: Hunk, kept: set[int], before: FileText, after: FileText) -> bool:
    """A line this hunk takes out of the file for good (every copy the file had, not one the
    change writes back elsewhere, nor one it edits into a line of its own) is still in the
    file after the candidate: the candidate kept, or moved, what this change deletes,
    whatever it wrote at the hunk's place. (axios #1889 drops the removal of an empty
    request's Content-Type; #4787 moved that removal and its comment up the function, and
    left the header loop as #1889 writes it.)"""
    counts: dict[str, int] = {}
    texts: dict[str, str] = {}
    for line in hunk.removed:
        if not line.trivial and line.hash not in kept:
            counts[line.normalised] = counts.get(line.normalised, 0) + 1
            texts[line.normalised] = line.text
    still = [
        texts[text]
        for text, count in counts.items()
        if before.normalised_count(text) == count and after.normalised_count(text) > 0
    ]
    if not still:
        return False
    # An edit, not a deletion, where a line the hunk adds holds its names or is held by them
    # (`_alike`), each added line's names read once: a hunk may rewrite thousands of lines.
    added = [found for line in hunk.added if not line.trivial and (found := names(line.text))]
    return any(
        not (mine and any(mine <= theirs or theirs <= mine for theirs in added))
        for mine in map(names, still)
    )


def _calls_made_beside(
    blocks: _Blocks,
    before: FileText,
    after: FileText,
    place: _Lazy[_Place | None],
    ours: _FileFacts,
) -> bool:
    """The candidate writes, at this hunk's place or within `CONTEXT` lines of it, a line
    making a call the hunk takes out of its lines, with the same arguments (one its removed
    lines make, and neither its context nor any line this change adds to the file: `ours`),
    a line this change does not add itself: the line edited the same way, and the call made
    again beside it (tqdm's #1263 drops `.strip()` from the line joining the values, as #884
    does, and strips each value just above it by default). A call this change makes
    elsewhere in the file is moved, not taken away (bat's #3618 and #3595 both move
    `map_err` up a few lines); another call of the same name is another call (a
    `require('x')` written where this change drops `require('legacy-loader')`)."""
    dropped = (
        _call_expressions(blocks.removed)
        - _call_expressions((*blocks.before_context, *blocks.after_context))
        - ours.added_calls
    )
    where = place.get() if dropped else None
    if where is None:
        return False
    low, high = where.after[0]
    near = after.lines[max(0, low - CONTEXT) : high + CONTEXT]
    return any(
        _call_expressions([line]) & dropped
        and (normalised := normalise_line(line)) not in ours.added
        and after.normalised_count(normalised) > before.normalised_count(normalised)
        for line in near
    )


# A call with what it is given, when that holds no call of its own: `strip()`,
# `require('legacy-loader')`.
_CALL_EXPRESSION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(([^()]*)\)")


def _call_expressions(lines: Iterable[str]) -> set[tuple[str, str]]:
    """The calls the lines make, each as its name and its arguments (spaces aside); keywords
    call nothing (`if (x)`)."""
    return {
        (name, "".join(arguments.split()))
        for line in lines
        for name, arguments in _CALL_EXPRESSION.findall(line)
        if names(name)
    }


def _fresh(hunk: Hunk, before: FileText | None) -> bool:
    """Most of what the hunk adds was not in the file before the candidate: the candidate
    wrote it. (A PR stacked on another's new file adds one line to it; the file being
    complete after it does not make it the author of the rest.)"""
    real = [line.text.rstrip() for line in hunk.added if not line.trivial]
    if not real or before is None:
        return True
    absent = sum(1 for line in real if not before.has((line,)))
    return absent * 2 >= len(real)


def _added_elsewhere(blocks: _Blocks, text: FileText | None) -> bool:
    """A hunk that only adds lines, at least a loose block's worth, all of them standing in
    `text` together (blank lines around them aside): applying it would write them twice."""
    added = list(blocks.added)
    while added and not added[0].strip():
        added.pop(0)
    while added and not added[-1].strip():
        added.pop()
    real = [line for line in added if line.strip()]
    return (
        text is not None
        and not blocks.removed
        and len(real) >= MIN_LOOSE_BLOCK
        and _says_something(real)
        and text.has(added)
    )


def _entries_there(blocks: _Blocks, text: FileText | None, path: str) -> bool:
    """A hunk that only adds entries to a file of patterns (`.gitignore`, `.dockerignore`),
    each a line `text` already has: such a file is a set of patterns, where one listed twice
    means what it means once, so the hunk adds nothing, wherever the file lists them."""
    real = [line for line in blocks.added if line.strip()]
    return (
        text is not None
        and not blocks.removed
        and bool(real)
        and _PATTERN_LIST.search(path) is not None
        and all(text.has((line,)) for line in real)
    )


SAID_THERE = 2 / 3  # of the names an addition uses, this share in what the candidate wrote there
MIN_SAID_NAMES = 4  # an addition naming fewer says too little to be found said otherwise
SAID_WINDOW = 40  # lines between a place's neighbours, beyond the addition's own, read for it


def _said_there(
    blocks: _Blocks,
    before: FileText | None,
    after: FileText | None,
    place: _Lazy[_Place | None],
    own: frozenset[str],
) -> bool:
    """A hunk that only adds lines, where the lines the candidate wrote at the hunk's place
    (between the same close neighbours, lines neither the file before it had there nor
    this change adds in its other hunks) use two thirds of the names the hunk's lines use, four at
    least, and half the names they bring that the place did not have, one at least, and
    every compound identifier and string they bring (a sibling entry,
    `register('focus', handle_focus)` beside this `register('hover', handle_hover)`, shares
    every word but the ones that say what it is), and are not three times as many names (a
    rewrite of the whole region says everything): the same note or check, worded otherwise.
    Applying the hunk would say it twice; it is no "still to do"."""
    if blocks.removed or before is None or after is None:
        return False
    ours = names("\n".join(blocks.added))
    if len(ours) < MIN_SAID_NAMES:
        return False
    where = place.get()
    if where is None:
        return False
    (low, high), (start, end) = where.before[0], where.after[0]
    if end - start > SAID_WINDOW + len(blocks.added):
        return False  # its neighbours are far (or the file's edges): no close place to read
    elsewhere = own - {normalise_line(line) for line in blocks.added}
    gained = _gained_lines(before, after, (low, high), (start, end), elsewhere)
    theirs = names("\n".join(gained))
    place_had = before.lines[low:high]
    fresh = ours - names("\n".join(place_had))
    shared = len(ours & theirs)
    return (
        3 * shared >= 2 * len(ours)
        and 3 * shared >= len(theirs)
        and bool(fresh)
        and 2 * len(fresh & theirs) >= len(fresh)
        and _proper_names(blocks.added) - _proper_names(place_had) <= _proper_names(gained)
    )


# An identifier that names one thing: compound (`handle_hover_event`, `HoverEvent`,
# `PathLike`), not a plain word.
_COMPOUND_NAME = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|[a-z0-9][A-Z]")


def _proper_names(lines: Sequence[str]) -> set[str]:
    """The compound identifiers and the string literals the lines use: what a line is about
    (the event it registers, the message it logs), where plain words only say how."""
    text = "\n".join(lines)
    found = {name for name in _IDENTIFIER.findall(text) if _COMPOUND_NAME.search(name)}
    return found | set(_literals(lines))


def _gained_lines(
    before: FileText,
    after: FileText,
    ours: tuple[int, int],
    theirs: tuple[int, int],
    own: frozenset[str],
) -> list[str]:
    """The lines of `after` in the range `theirs` that `before` lacks in the range `ours`
    (as many times as they occur more), lines that say nothing aside, and lines this
    change adds itself (a part of it made beside the place is not the place said again)."""
    had = Counter(normalise_line(line) for line in before.lines[ours[0] : ours[1]])
    gained = []
    for line in after.lines[theirs[0] : theirs[1]]:
        normal = normalise_line(line)
        if not normal or is_trivial(normal) or normal in own:
            continue
        if had[normal] > 0:
            had[normal] -= 1
        else:
            gained.append(line)
    return gained


def _says_something(block: Sequence[str]) -> bool:
    return any(not is_trivial(normalise_line(line)) for line in block)


def _state(
    blocks: _Blocks,
    text: FileText | None,
    file: FileChange,
    since: FileText | None = None,
    place: _Lazy[_Place | None] | None = None,
) -> HunkState:
    """Where `since` is given (the file before the candidate), a result counts as there only
    where the candidate made one more of it, at the hunk's place: with less context a
    removal's result is two ordinary lines, and the same two lines elsewhere in the file (a
    sibling call, a `continue` after a call further down the same long function) say
    nothing."""
    if text is None:
        # A file the change deletes is done where it is gone; any other is not there yet.
        return "there" if file.status == "removed" else "new"
    if blocks.at_top and blocks.removed:
        # Lines removed from the top of a file have no context above them, and what follows
        # them was there before too: the file's start says whether they are gone.
        # As `git apply` does, with less context when what follows moved on too.
        for size in range(len(blocks.after_context), -1, -1):
            pre = blocks.removed + blocks.after_context[:size]
            post = blocks.added + blocks.post_after[:size]
            if text.starts_with(pre):
                return "new"
            if (
                _says_something(post)
                and text.starts_with(post)
                and (since is None or not since.starts_with(post))
            ):
                return "there"
    if file.status == "added" and not blocks.removed and not blocks.before_context:
        # A new file's place is the file itself: its lines there are the hunk there, however
        # few (a three-line README has no context to match loosely, and needs none). A file
        # there with other lines is not this file to create: creating it would not apply.
        post = blocks.added
        made = text.count(post) > (since.count(post) if since is not None else 0)
        return "there" if _says_something(post) and made else "conflict"
    function = _function_of(blocks)
    for pre, post, offset in blocks.variants():
        pre_found = text.has(pre) and _applies_in_function(
            pre, offset, len(blocks.removed), text, place, function
        )
        post_found = _says_something(post) and _found_at_place(
            post, offset, len(blocks.added), text, since, place, function
        )
        if pre_found:
            return "new"  # it still applies: whatever else is there, this edit is not made
        if post_found:
            return "there"
    if not blocks.removed and not any(blocks.before_context + blocks.after_context):
        return "new"  # an addition to an empty or new file, with no text of its own there
    return "conflict"


def _found_at_place(
    post: Sequence[str],
    offset: int,
    size: int,
    text: FileText,
    since: FileText | None,
    place: _Lazy[_Place | None] | None,
    function: str | None = None,
) -> bool:
    """`text` has `post` at the hunk's place (where the place is not known, its surroundings
    being nowhere to be found: anywhere in the `function` the hunk changes, where it names
    one, else anywhere); where `since` is given (the file before the candidate, `text` being
    the file after it), one more of it than `since` has there."""
    if since is None:
        if not text.has(post):
            return False
        where = place.get() if place is not None else None
        if where is None:
            return _count_in_function(text, post, offset, size, function) > 0
        return _count_within(text, post, offset, size, where.before) > 0
    if text.count(post) <= since.count(post):
        return False
    where = place.get() if place is not None else None
    if where is None:
        return _count_in_function(text, post, offset, size, function) > _count_in_function(
            since, post, offset, size, function
        )
    return _count_within(text, post, offset, size, where.after) > _count_within(
        since, post, offset, size, where.before
    )


def _applies_in_function(
    pre: Sequence[str],
    offset: int,
    size: int,
    text: FileText,
    place: _Lazy[_Place | None] | None,
    function: str | None,
) -> bool:
    """A pre-image `text` has still applies, as `git apply` would apply it; but where the
    hunk's place is nowhere to be found, only inside the function it changes: the same lines
    in another function are not what this change edits."""
    if function is None or place is None or place.get() is not None:
        return True
    return _count_in_function(text, pre, offset, size, function) > 0


def _count_in_function(
    text: FileText, block: Sequence[str], offset: int, size: int, function: str | None
) -> int:
    """How often `block` occurs with its changed part inside a block that a line naming
    `function` opens (every occurrence, where no function is named): the same line fixed in
    another function is not this change."""
    starts = text.find(block)
    if function is None:
        return len(starts)
    changed = block[offset : offset + size] or block
    depth = _opening_depth(changed)
    return sum(1 for start in starts if _in_function(text, start + offset, depth, function))


def _in_function(text: FileText, at: int, depth: int | None, function: str) -> bool:
    """Whether a block opened by a line naming `function` holds the changed lines put at line
    `at` of `text` (`depth`: their `_opening_depth`)."""
    return any(function in _function_names(line) for line in text.openers(at, depth))


# A name followed by an opening parenthesis: a definition's (or a call's) in its opening line.
_CALLED = re.compile(r"([A-Za-z_$][\w$]*)\s*\(")
# Words that open a block with a parenthesis and name no function.
_BLOCK_KEYWORDS = frozenset(
    [
        "if",
        "elif",
        "else",
        "for",
        "foreach",
        "while",
        "switch",
        "case",
        "catch",
        "except",
        "with",
        "return",
        "sizeof",
        "typeof",
        "function",
        "func",
        "fn",
        "def",
        "do",
        "try",
        "match",
        "when",
        "unless",
        "until",
        "lambda",
        "assert",
        "and",
        "or",
        "not",
        "in",
    ]
)


def _function_names(line: str) -> list[str]:
    return [name for name in _CALLED.findall(line) if name not in _BLOCK_KEYWORDS]


def _function_of(blocks: _Blocks) -> str | None:
    """The function the hunk changes: the innermost line opening a block around it that
    names one (`def load(path):`, `static int load(const char *path)`), None where none
    does (a hunk at a file's top level, a block whose opener names no function)."""
    for opener in blocks.openers:
        names = _function_names(opener)
        if names:
            return names[0]
    return None


def _count_within(
    text: FileText, block: Sequence[str], offset: int, size: int, ranges: _Ranges
) -> int:
    """How often `block` occurs with its changed part (`size` lines from `offset`) inside one
    of `ranges`: its context may reach past a range's edge lines, its change may not."""
    return sum(
        1
        for start in text.find(block)
        if any(low <= start + offset <= high - size for low, high in ranges)
    )


class _Lazy(Generic[T]):
    """A value computed once, when first asked for (a hunk's place costs a line map)."""

    def __init__(self, compute: Callable[[], T]) -> None:
        self._compute: Callable[[], T] | None = compute
        self._value: T | None = None

    def get(self) -> T:
        if self._compute is not None:
            self._value = self._compute()
            self._compute = None
        return cast(T, self._value)


_Ranges = tuple[tuple[int, int], ...]  # half-open ranges of line numbers


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a hunk sits in the file before and after the candidate: from the nearest line
    above it to the nearest line below it that both versions have once (those two lines
    included; a file's edge where there is none within reach); and the block that encloses
    it, where its opening line occurs once in both (a method's body, a class's, an object
    literal's: a member documented further up the same class is there).

    "Already there" means there: the same neighbours or the same enclosing block, not an
    equal line in another method or in another branch of a long function. A change made
    with other surrounding lines, or with its neighbours reformatted, still sits between the
    same lines further out."""

    before: _Ranges
    after: _Ranges


def _place(blocks: _Blocks, before: FileText | None, after: FileText | None) -> _Place | None:
    """The hunk's place, or None where it cannot be found in the file before the candidate or
    no line on either side of it is kept once by both versions."""
    if before is None or after is None:
        return None
    spot = _spot(blocks, before)
    if spot is None:
        return None
    start, end = spot
    head, tail = before.anchors_against(after, start, end)
    if head is None and tail is None:
        return None
    before_low, after_low = head if head else (0, 0)
    before_high, after_high = (
        (tail[0] + 1, tail[1] + 1) if tail else (len(before.lines), len(after.lines))
    )
    if after_high <= after_low:
        return None  # the neighbours swapped places: the code moved, no place to compare
    window = ((before_low, before_high),), ((after_low, after_high),)
    enclosing = _enclosing_block(blocks, before, after, start)
    if enclosing is None:
        return _Place(*window)
    return _Place(window[0] + (enclosing[0],), window[1] + (enclosing[1],))


def _enclosing_block(
    blocks: _Blocks, before: FileText, after: FileText, start: int
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The block around the hunk's changed lines, in both versions: from the nearest line
    above them indented less (one that says something, occurring once in each version) to
    the next line indented no deeper than it."""
    changed = [line for line in blocks.added or blocks.removed if _says_something((line,))]
    if not changed:
        return None
    depth = min(_indentation(line) for line in changed)
    opener = None
    lines = before.lines
    # `_indentation(line) < depth` without copying the line: its first `depth` characters are
    # not all whitespace (the lines have none at their end). No line is indented less than 0.
    for number in range(start - 1, max(-1, start - 1 - BLOCK_SEARCH), -1) if depth else ():
        line = lines[number]
        if not line[:depth].isspace() and line and _says_something((line,)):
            opener = line
            break
    if opener is None:
        return None
    ours, theirs = before.once(opener), after.once(opener)
    if ours is None or theirs is None:
        return None
    return _block_from(before, ours), _block_from(after, theirs)


def _openers(base: Sequence[str], start: int, changed: Sequence[str]) -> tuple[str, ...]:
    """The lines above `start` in `base` that open the blocks around the `changed` lines,
    innermost first: each line that says something and is indented less than the last.
    (`FileText.openers` answers the same from the file's opener chain, worked out once.)"""
    depth = _opening_depth(changed)
    if depth is None:
        return ()
    found: list[str] = []
    for number in range(min(start, len(base)) - 1, max(-1, start - 1 - BLOCK_SEARCH), -1):
        line = base[number].rstrip()
        if depth == 0:
            break
        # `_indentation(line) < depth`, as in `_enclosing_block`.
        if not line[:depth].isspace() and line and _says_something((line,)):
            found.append(line)
            depth = _indentation(line)
    return tuple(found)


def _opening_depth(changed: Sequence[str]) -> int | None:
    """The indentation a block's opening line must be under to hold the `changed` lines: the
    least of those that say something (None where none does)."""
    saying = [line for line in changed if _says_something((line,))]
    return min(_indentation(line) for line in saying) if saying else None


def _in_own_block(blocks: _Blocks, text: FileText) -> tuple[int, int] | None:
    """Where the hunk's removed lines sit inside its own block: the innermost block around it
    whose opening line occurs once in `text` (`target "binary-smoketest" {`), searched with
    as much context as occurs once there. Three equal hunks of one change, each in another
    block, are each found in their own, not all at the first place their text matches."""
    for opener in blocks.openers:
        found = text.once(opener)
        if found is None:
            continue
        low, high = _block_from(text, found)
        for pre, _, offset in blocks.variants() or [(blocks.removed, (), 0)]:
            starts = [at + offset for at in text.find(pre) if low < at + offset <= high]
            if len(starts) == 1:
                return starts[0], starts[0] + len(blocks.removed)
            if starts:
                return None  # more than once in its own block: no one place
        return None  # its own block is there, the hunk's lines are not
    return None


def _block_from(text: FileText, opener: int) -> tuple[int, int]:
    """From the opening line to the next line indented no deeper that says something."""
    lines = text.lines
    depth = _indentation(lines[opener])
    for number in range(opener + 1, min(len(lines), opener + 1 + BLOCK_SEARCH)):
        line = lines[number]
        # `_indentation(line) <= depth`, as in `_enclosing_block`.
        if not line[: depth + 1].isspace() and line and _says_something((line,)):
            return opener, number
    return opener, min(len(text.lines), opener + 1 + BLOCK_SEARCH)


def _indentation(line: str) -> int:
    return len(line) - len(line.lstrip())


def _spot(blocks: _Blocks, text: FileText) -> tuple[int, int] | None:
    """Where the hunk's removed lines sit in `text` (an addition's: where it goes).

    Found, as `git apply` would, with as much of its context as occurs once; but a line or
    two of context matching once is weaker than the hunk's own neighbours: where fewer
    than three context lines place it, the nearest context lines above and below it
    that occur once in the file say where it is (the same call and `continue` elsewhere in
    a long function are not its place, its other neighbours are)."""
    for pre, _, offset in blocks.variants():
        if len(pre) - len(blocks.removed) < STRONG_CONTEXT:
            break
        starts = text.find(pre)
        if len(starts) == 1:
            start = starts[0] + offset
            return start, start + len(blocks.removed)
    between = _between_neighbours(blocks, text)
    if between is not None:
        return between
    own = _in_own_block(blocks, text)
    if own is not None:
        return own
    # The variants with strong context matched more than once above: the weaker ones decide.
    return _found_once(blocks, text, blocks.variants())


def _between_neighbours(blocks: _Blocks, text: FileText) -> tuple[int, int] | None:
    """Where the hunk's context lines that say something and occur once in `text` put it,
    by most of them: one neighbour can be matched by a line that moved or was reworded
    elsewhere (the other section's call), the rest of its neighbours still agree. The hunk
    is then between the nearest of the agreeing lines above and below it."""
    size = len(blocks.removed)
    votes: list[tuple[int, int, bool]] = []  # (where it puts the first removed line, the
    # neighbour's own line, whether it is above)
    for distance, line in enumerate(reversed(blocks.before_context), start=1):
        found = text.once(line) if _says_something((line,)) else None
        if found is not None:
            votes.append((found + distance, found, True))
    for distance, line in enumerate(blocks.after_context):
        found = text.once(line) if _says_something((line,)) else None
        if found is not None:
            votes.append((found - distance - size, found, False))
    function = _function_of(blocks)
    if function is not None:
        # A neighbour found once in another function (its `return {}`) puts it nowhere.
        depth = _opening_depth(blocks.removed or blocks.added)
        votes = [vote for vote in votes if _in_function(text, vote[0], depth, function)]
    if not votes:
        return None
    # The lines around a hunk may have shifted by a few lines: agreeing within the context.
    centre = max(
        (at for at, _, _ in votes),
        key=lambda at: sum(1 for other, _, _ in votes if abs(other - at) <= CONTEXT),
    )
    agreeing = [(line, above) for at, line, above in votes if abs(at - centre) <= CONTEXT]
    above = [line + 1 for line, is_above in agreeing if is_above]
    below = [line for line, is_above in agreeing if not is_above]
    start = max(above) if above else max(0, min(below) - size)
    end = min(below) if below else min(len(text.lines), start + size)
    if end < start:
        start, end = end, start
    removed_at = [at for at in text.find(blocks.removed) if start <= at <= end - size]
    if len(removed_at) == 1:
        return removed_at[0], removed_at[0] + size
    return start, end


def _imports_only(hunk: Hunk) -> bool:
    """Every line the hunk changes (trivial ones aside) imports something."""
    lines = [line.text for line in hunk.lines if not line.trivial]
    return bool(lines) and all(_IMPORT.match(text) for text in lines)


def _bump_key(text: str) -> str | None:
    """A dependency line with its versions masked (`"lodash": "^#",`), if it is one: a line
    holding a version and a name, and not the project's own version or a release heading
    (those name a release, and a later one is another release, not the same bump)."""
    text = text.strip()
    if _VERSION_LINE.match(text) or not VERSION_IN_TEXT.search(text):
        return None
    masked = VERSION_IN_TEXT.sub("#", text)
    return masked if re.search(r"[A-Za-z]{2}", masked) else None


def _superseding(hunk: Hunk, before: FileText, after: FileText, path: str) -> tuple[str, ...]:
    """The candidate's lines that supersede this hunk, where it is nothing but dependency
    bumps (each removed line and its added line the same but for the versions, the added one
    higher) and the candidate replaced each of those lines with a higher version than this
    hunk's: the same package bumped again. Empty otherwise. A comment after a pin
    (`foo==1.2  # for py3.8`, go.mod's `// indirect`) is no part of the bump: two bumps of one
    package compare without."""
    trailing = _trailing_comment(path)
    removed = [
        _cut_comment(line.text, trailing).strip() for line in hunk.removed if not line.trivial
    ]
    added = [_cut_comment(line.text, trailing).strip() for line in hunk.added if not line.trivial]
    if not added or len(removed) != len(added):
        return ()
    if any(_bump_key(line) is None for line in added):
        return ()  # not bumps only: no need to read the whole file for the candidate's bumps
    written = {
        key: code
        for line in after.lines
        if (key := _bump_key(code := _cut_comment(line, trailing))) is not None
        and line.rstrip() not in before.where
    }
    still = {_cut_comment(line, trailing).strip() for line in after.lines}
    found: list[str] = []
    for old, new in zip(removed, added, strict=True):
        key = _bump_key(new)
        if key is None or key != _bump_key(old) or old == new or old in still:
            return ()
        theirs = written.get(key)
        mine, later = first_version(new), first_version(theirs or "")
        if theirs is None or mine is None or later is None or later <= mine:
            return ()
        was = first_version(old)
        if was is not None and mine <= was:
            return ()  # a pin held back (`~2.3` to `~2.3.0`), not a bump: a higher one undoes it
        found.append(theirs.strip())
    return tuple(found)


def _versions_only(hunk: Hunk) -> bool:
    """Every line the hunk changes (trivial ones aside) is a version number or a release
    heading."""
    lines = [line.normalised for line in hunk.lines if not line.trivial]
    return bool(lines) and all(_VERSION_LINE.match(text) for text in lines)


def _comments_only(hunk: Hunk) -> bool:
    """Every line the hunk changes (trivial ones aside) is a comment."""
    lines = [line.normalised for line in hunk.lines if not line.trivial]
    return bool(lines) and all(_COMMENT.match(text) for text in lines)


def _same_fix(blocks: _Blocks, before: FileText, after: FileText, path: str) -> bool:
    """Done in substance: the candidate replaced the same lines, and its replacement brings in
    what this hunk brings in (the same fix written differently)."""
    region = _located(blocks, before)
    if region is None:
        return False
    replaced, replacement = _candidate_edit(before, after, region)
    if replaced is None:
        return False
    # Names are read from code: `//nolint:staticcheck // Deprecated in config v4` appended
    # to the same lines shares words with this hunk's comment, not its fix. A hunk whose code
    # brings in no name (fields realigned under new doc comments) is its comments.
    our_added, our_removed = _code(blocks.added, path), _code(blocks.removed, path)
    their_added, their_removed = _code(replacement, path), _code(replaced, path)
    if not _new_words(our_added, our_removed):
        our_added, our_removed = list(blocks.added), list(blocks.removed)
        their_added, their_removed = list(replacement), list(replaced)
    ours = _new_words(our_added, our_removed)
    theirs = _new_words(their_added, their_removed)
    shared = ours & theirs
    if not (ours and theirs) or not _holds_ours(ours, theirs, our_added, their_added):
        return False
    if _leaves_out(our_added, our_removed, their_added):
        return False
    # What this hunk starts calling is what it adds: a candidate that only passes another
    # argument to the same call has not added the timeout this hunk wraps around it.
    if not _calls_brought(our_added, our_removed, their_added, their_removed):
        return False
    # The same names around other values, or the same value tested the other way, is another
    # change: `EnvDefaultFunc("GCLOUD_KEYFILE")` is not `MultiEnvDefaultFunc([...,
    # "GOOGLE_CLOUD_KEYFILE_JSON"])`, and skipping an error `!= "AlreadyExists"` is not
    # reporting it `== "AlreadyExists"`.
    our_values = _new_values(our_added, our_removed)
    their_values = _new_values(their_added, their_removed)
    if our_values and their_values and not our_values & their_values:
        return False
    # Likewise a version moved to a lower one (`freebsd-15-0-amd64` is not
    # `freebsd-14-4-release-amd64`): the number is what such a line changes. A higher one is
    # the same move made further (a dependency bumped again later).
    our_versions = _new_versions(our_added, our_removed)
    their_versions = _new_versions(their_added, their_removed)
    if (
        our_versions
        and their_versions
        and not our_versions & their_versions
        and max(map(_version, their_versions)) < max(map(_version, our_versions))
    ):
        return False
    # What the lines become decides, not only what they were: one name in common (and no
    # value), where the candidate's replacement rests on something it brought into the file
    # elsewhere (a new dependency's import, a helper of its own), is another purpose on the
    # same line: `String(url)` is not a new dependency that rewrites the expression around
    # `url` and also spells `String`. (`list(map(str.strip, ...))` brings nothing else in.)
    if (
        len(shared) == 1
        and not our_values & their_values
        and (theirs - ours) & _brought_elsewhere(before, after, replacement)
    ):
        return False
    # One name in common that the file already spelled is where both edits happen, not what
    # either brings in, when this hunk brings in more (`url: config ? url :
    # this.defaults.url` is not `data: (config || {}).data`, `config` being the function's
    # parameter) or the two spell it in different names (`AxiosError` is not
    # `AxiosInterceptorOptions`). Defaulting to the file's own `TIMEOUT_SECONDS` on both
    # sides, or testing for `undefined` with `utils.isUndefined`, is the same fix.
    if (
        len(shared) == 1
        and not our_values & their_values
        and shared <= before.words
        and (ours - theirs or _spelled_otherwise(shared, our_added, their_added))
    ):
        return False
    if _keeps_deleted(blocks, replacement):
        return False
    return not _opposite_tests("\n".join(blocks.added), "\n".join(replacement))


def _holds_ours(
    ours: set[str], theirs: set[str], our_added: Sequence[str], their_added: Sequence[str]
) -> bool:
    """The candidate's replacement brings in at least half of this hunk's new names: "done
    in #N" means #N holds this change, so the share is of this hunk's names, not of whichever
    side is shorter (one `ctx` passed along is not six names of a timeout). Where a shared
    name is one either side calls, half of the shorter side's is enough: `[p.strip() for p
    in ...]` and `list(map(str.strip, ...))` both strip, whatever else each spells out."""
    shared = ours & theirs
    called = shared & names(" ".join(_calls(our_added) | _calls(their_added)))
    needed = min(len(ours), len(theirs)) if called else len(ours)
    return len(shared) >= max(1, math.ceil(needed / 2))


def _leaves_out(
    our_added: Sequence[str], our_removed: Sequence[str], their_added: Sequence[str]
) -> bool:
    """The candidate's replacement is this hunk's own lines, line for line, with some of the
    names it brings in left out (`config(options, responseDetails)` for `config(options,
    responseDetails, requestDetails)`): a part of this hunk, not this hunk written another
    way. A name the hunk keeps from the lines it replaces is no part it brings
    (`!array_key_exists($v, $c)` for `!array_key_exists($v, $c) && !in_array($v, $c)`, where
    `in_array` was there)."""
    if len(our_added) != len(their_added):
        return False
    kept = set(_TOKEN.findall("\n".join(our_removed)))
    shorter = False
    for ours_line, theirs_line in zip(our_added, their_added, strict=True):
        # Values are no names: `read_text(path)` for `read_text(path, 'utf-8')` leaves none out.
        ours = _TOKEN.findall(_LITERAL.sub('""', ours_line))
        theirs = _TOKEN.findall(_LITERAL.sub('""', theirs_line))
        remaining = iter(ours)
        if not all(token in remaining for token in theirs):  # not ours with tokens taken out
            return False
        spelled = kept | set(theirs)
        shorter = shorter or any(
            _IDENTIFIER.fullmatch(token) and token.lower() not in _KEYWORDS and token not in spelled
            for token in Counter(ours) - Counter(theirs)
        )
    return shorter


def _calls_brought(
    our_added: Sequence[str],
    our_removed: Sequence[str],
    their_added: Sequence[str],
    their_removed: Sequence[str],
) -> bool:
    """Where this hunk starts calling something (`context.WithTimeout`, the `killCancel` it
    defers), the candidate's replacement brings in a name like it (one whose name parts hold
    the call's, or are held by them: `StrategyResolver(config).resolve()` for
    `resolve_strategy(config)`), or starts calling a name this hunk brings in
    (`[p.strip() for p in ...]` for `list(map(str.strip, ...))`)."""
    our_calls = _calls(our_added) - _calls(our_removed)
    if not our_calls:
        return True
    their_names = _identifiers(their_added) - _identifiers(their_removed)
    their_calls = _calls(their_added) - _calls(their_removed)
    our_names = _identifiers(our_added) - _identifiers(our_removed)
    return any(_alike(call, name) for call in our_calls for name in their_names) or any(
        _alike(call, name) for call in their_calls for name in our_names
    )


def _alike(one: str, other: str) -> bool:
    """One identifier's name parts hold the other's: `resolve` and `resolve_strategy`."""
    mine, theirs = names(one), names(other)
    return bool(mine and theirs) and (mine <= theirs or theirs <= mine)


def _calls(lines: Iterable[str]) -> set[str]:
    """The identifiers the lines call (outside strings), keywords aside: `if (` calls nothing."""
    text = _LITERAL.sub('""', "\n".join(lines))
    return {name for name in _CALL.findall(text) if names(name)}


def _spelled_otherwise(parts: set[str], ours: Sequence[str], theirs: Sequence[str]) -> bool:
    """Both sides' code spells these name parts, in identifiers with other name parts:
    `AxiosHeaders` spells `axios` otherwise than `axios`, `isUndefined` spells `undefined` as
    `undefined` does (a part in a string alone is spelled by nothing)."""

    def spellings(lines: Sequence[str]) -> set[frozenset[str]]:
        return {frozenset(found) for word in _identifiers(lines) if (found := names(word)) & parts}

    mine, other = spellings(ours), spellings(theirs)
    return bool(mine and other) and not mine & other


def _identifiers(lines: Iterable[str]) -> set[str]:
    """The identifiers the lines use outside strings."""
    return set(_IDENTIFIER.findall(_LITERAL.sub('""', "\n".join(lines))))


def _code(lines: Sequence[str], path: str) -> list[str]:
    """The lines without their comments: a comment line is dropped, a comment after code on
    its line cut off (`#` in the languages that write it, where `//` divides; `//` and `/*`
    elsewhere; strings are read past, so `"http://x"` stays)."""
    trailing = _trailing_comment(path)
    return [_cut_comment(line, trailing) for line in lines if not _COMMENT.match(line.strip())]


def _cut_comment(line: str, trailing: re.Pattern[str]) -> str:
    """The line without the comment that follows its code, if one does."""
    for match in trailing.finditer(line):
        if match.group("comment") is not None:
            return line[: match.start()]
    return line


def _trailing_comment(path: str) -> re.Pattern[str]:
    """How a comment starts in this file (a pip requirements file's comments start with `#`)."""
    name = path.rsplit("/", 1)[-1]
    if _BOTH_COMMENTS.search(name):
        return _HASH_OR_SLASH_COMMENT
    if _HASH_COMMENTS.search(name) or _DEPENDENCY_MANIFEST.search(path):
        return _HASH_COMMENT
    return _SLASH_COMMENT


def _brought_elsewhere(before: FileText, after: FileText, replacement: Sequence[str]) -> set[str]:
    """Names the candidate's new lines outside `replacement` bring into the file (names it
    did not use before): an import, a helper of the candidate's own."""
    return after.names_written_since(before, leaving=replacement) - before.words


_VERSIONISH = re.compile(r"(?<![\w.])\d+(?:[.-]\d+)+")


def _new_values(added: Sequence[str], removed: Sequence[str]) -> set[str]:
    """String values the lines bring in (their contents, whichever quotes spell them)."""
    return _values("\n".join(added)) - _values("\n".join(removed))


def _version(text: str) -> VersionKey:
    """Where a dotted or dashed number sorts among versions (`15-0` as `15.0`)."""
    return version_key(text.replace("-", "."))


def _new_versions(added: Sequence[str], removed: Sequence[str]) -> set[str]:
    """Dotted or dashed numbers the lines bring in (`15-0`, `2.4.1`, `2025-01-25`)."""
    return set(_VERSIONISH.findall("\n".join(added))) - set(_VERSIONISH.findall("\n".join(removed)))


def _values(text: str) -> set[str]:
    return {literal[1:-1] for literal in _LITERAL.findall(text) if len(literal) > 2}


def _opposite_tests(ours: str, theirs: str) -> bool:
    """Some string is tested for equality in one text and for inequality only in the other."""

    def tests(text: str) -> dict[str, set[bool]]:
        found: dict[str, set[bool]] = {}
        for match in _COMPARISON.finditer(text):
            value = (match["left"] or match["right"])[1:-1]
            found.setdefault(value, set()).add((match["op"] or match["op2"]).startswith("="))
        return found

    mine, other = tests(ours), tests(theirs)
    return any(
        len(mine[v] | other[v]) == 2 and not mine[v] & other[v] for v in mine.keys() & other.keys()
    )


def _introduced_names_there(blocks: _Blocks, before: FileText, after: FileText) -> bool:
    """An addition's new names (absent from the file before the candidate) are all there
    after it."""
    introduced = names("\n".join(blocks.added)) - before.words
    return bool(introduced) and introduced <= after.words


def _new_words(added: Sequence[str], removed: Sequence[str]) -> set[str]:
    return names("\n".join(added)) - names("\n".join(removed))


def _located(blocks: _Blocks, text: FileText) -> tuple[int, int] | None:
    """Where the hunk's removed lines sit in `text`, found with as much context as matches."""
    return _found_once(blocks, text, blocks.variants() or [(blocks.removed, (), 0)])


def _found_once(
    blocks: _Blocks,
    text: FileText,
    variants: Sequence[tuple[tuple[str, ...], tuple[str, ...], int]],
) -> tuple[int, int] | None:
    """The removed lines' place by the first variant (most context first) that occurs once in
    `text`, else by the removed lines alone where they occur once; inside the function the
    hunk changes, where it names one (the same lines in another function are not its
    place)."""
    function = _function_of(blocks)
    depth = _opening_depth(blocks.removed or blocks.added) if function is not None else None

    def found(block: Sequence[str], offset: int) -> list[int]:
        starts = text.find(block)
        if function is None or not starts:
            return starts
        return [start for start in starts if _in_function(text, start + offset, depth, function)]

    for pre, _, offset in variants:
        starts = found(pre, offset)
        if len(starts) == 1:
            start = starts[0] + offset
            return start, start + len(blocks.removed)
    starts = found(blocks.removed, 0)
    if len(starts) == 1:
        return starts[0], starts[0] + len(blocks.removed)
    return None


def _candidate_edit(
    before: FileText, after: FileText, region: tuple[int, int]
) -> tuple[list[str] | None, list[str]]:
    """What the candidate did to `region` of the file: the lines it replaced there (None when
    it left some of them in place) and the lines it put instead."""
    edit = _edit_of(before, after, region)
    if edit is None:
        return None, []
    replaced, replacement, untouched = edit
    if any(not is_trivial(normalise_line(before.lines[i])) for i in untouched):
        return None, replacement
    return replaced, replacement


def _edit_of(
    before: FileText, after: FileText, region: tuple[int, int]
) -> tuple[list[str], list[str], set[int]] | None:
    """The candidate's edit of `region`: the lines it replaced or deleted around it, the lines
    it put instead, and the region's lines it left in place (by their index in `before`).
    Read between the nearest lines around the region that both versions have once, so a
    large file costs no more; None where that span is too large to compare."""
    start, end = region
    head, tail = before.anchors_against(after, start, end)
    old_lo, new_lo = (head[0] + 1, head[1] + 1) if head else (0, 0)
    old_hi, new_hi = tail if tail else (len(before.lines), len(after.lines))
    if new_hi < new_lo or old_hi - old_lo > MAX_DIFF_LINES or new_hi - new_lo > MAX_DIFF_LINES:
        return None
    old, new = before.lines[old_lo:old_hi], after.lines[new_lo:new_hi]
    replaced: list[str] = []
    replacement: list[str] = []
    untouched = set(range(start, end))
    for tag, i1, i2, j1, j2 in before.opcodes_against(after, (old_lo, old_hi), (new_lo, new_hi)):
        if tag == "equal" or i2 < start - old_lo or i1 > end - old_lo:
            continue
        untouched -= set(range(old_lo + i1, old_lo + i2))
        replaced.extend(old[i1:i2])
        replacement.extend(new[j1:j2])
    return replaced, replacement, untouched


def _rewrite(
    blocks: _Blocks, before: FileText, after: FileText, path: str
) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """How many of the hunk's removed lines that say something the candidate replaced or
    deleted at the hunk's place (exact lines: indentation counts), what it put there, and
    the words that agree on what both are for: a word both bring into a string there, or a
    name new to the file that both bring into it."""
    region = _located(blocks, before)
    if region is None:
        return 0, (), ()
    edit = _edit_of(before, after, region)
    if edit is None:
        return 0, (), ()
    replaced, replacement, untouched = edit
    touched = sum(
        1
        for i in range(*region)
        if i not in untouched and not is_trivial(normalise_line(before.lines[i]))
    )
    ours = _new_words(_literals(blocks.added), _literals(blocks.removed))
    theirs = _new_words(_literals(replacement), _literals(replaced))
    fresh = _fresh_names(blocks.added, before) & after.whole_names
    return touched, tuple(replacement), tuple(sorted((ours & theirs) | fresh))


def _fresh_names(lines: Sequence[str], before: FileText) -> set[str]:
    """The whole names the lines bring into a file that spelt them nowhere before. Where the
    landing that rewrote a hunk's lines brought one of them into the file too (a class both
    start to use, `SymfonyStyle`; the `$event` both pass on), both did it for one purpose. A
    name the file already used (`ctx`, passed along everywhere in it) says where they act,
    not why."""
    found = {
        name
        for line in lines
        for name in _WHOLE_NAME.findall(line)
        if len(name.strip("$_")) >= FRESH_NAME_LENGTH
        and name.lower() not in _KEYWORDS
        and name.lower() not in _SYNTAX_WORDS
    }
    return found - before.whole_names


# Files that PRs of many kinds add alike: a package's `__init__.py`, a changelog fragment named
# after its PR, a lock file. Two PRs adding one of them are not the same change.
_COMMONLY_ADDED = re.compile(
    r"(^|/)(__init__\.py|package-lock\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock"
    r"|Cargo\.lock|Gemfile\.lock|composer\.lock|go\.sum|uv\.lock|\.gitkeep|\.keep)$"
    r"|(^|/)(changelog\.d|changes|newsfragments|\.changeset|changelogs/fragments)/",
    re.IGNORECASE,
)


def commonly_added(path: str) -> bool:
    """A file PRs of many kinds add alike (`__init__.py`, a lock file, a changelog fragment)."""
    return bool(_COMMONLY_ADDED.search(path))


def _literals(lines: Sequence[str]) -> list[str]:
    """The strings the lines spell (messages, queries, paths): where two rewrites of one line
    say what they are for. A name both pass along (`ctx`) says where they act, not why."""
    return [literal for line in lines for literal in _LITERAL.findall(line)]


def _anchor(before: FileText, after: FileText, positions: Iterable[int]) -> tuple[int, int] | None:
    """The first of `positions` whose line says something and occurs once in each version."""
    for position in positions:
        line = before.lines[position]
        if not line.strip() or is_trivial(normalise_line(line)):
            continue
        theirs = after.once(line) if before.once(line) is not None else None
        if theirs is not None:
            return position, theirs
    return None
