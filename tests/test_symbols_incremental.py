"""Tests for index.git.symbols.SymbolExtractor: cached, incremental, range-restricted lookups.

Every answer must equal what the one-shot ``enclosing_symbols`` gives on each side, so the
tests replay chains of edited file versions and compare the two for every line.
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Callable

import pytest

from index.git.symbols import Definition, SymbolExtractor, enclosing_symbols
from tests.test_symbols import (
    CPP,
    GO,
    JAVA,
    JAVASCRIPT,
    PHP,
    PYTHON,
    REPO_ROOT,
    RUST,
    TYPESCRIPT,
    C,
    src,
)

Hunk = tuple[int, int, int, int]


def hunks_between(old: bytes, new: bytes) -> list[Hunk]:
    """The -U0 hunk headers git would print: zero-length sides name the line before."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    hunks: list[Hunk] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        hunks.append((i1 + 1 if i2 > i1 else i1, i2 - i1, j1 + 1 if j2 > j1 else j1, j2 - j1))
    return hunks


def changed_lines(hunks: list[Hunk]) -> tuple[list[int], list[int]]:
    removed = [n for os_, ol, _, _ in hunks for n in range(os_, os_ + ol)]
    added = [n for _, _, ns, nl in hunks for n in range(ns, ns + nl)]
    return removed, added


def all_lines(source: bytes) -> list[int]:
    return list(range(1, source.count(b"\n") + 3))


class Blobs:
    """A blob store keyed by fake ids that counts reads."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.reads: list[str] = []

    def add(self, source: bytes) -> str:
        blob = _git_id(source)  # git's id, so new versions can be rebuilt from diffs
        self.data[blob] = source
        return blob

    def read(self, blob: str) -> bytes | None:
        self.reads.append(blob)
        return self.data.get(blob)


def replay(
    path: str,
    versions: list[bytes],
    extractor: SymbolExtractor | None = None,
    every_line: bool = True,
) -> SymbolExtractor:
    """Feed consecutive versions through one extractor and compare with one-shot answers.

    With every_line the extractor is asked about every line of both sides (not only the
    changed ones), which checks the incremental tree and the ranged query everywhere.
    """
    extractor = extractor or SymbolExtractor()
    blobs = Blobs()
    ids = [blobs.add(v) for v in versions]
    for step, (old, new) in enumerate(zip(versions, versions[1:], strict=False)):
        hunks = hunks_between(old, new)
        if not hunks:
            continue
        removed, added = changed_lines(hunks)
        if every_line:
            removed, added = all_lines(old), all_lines(new)
        old_map, new_map = extractor.file_symbols(
            path, ids[step], ids[step + 1], blobs.read, hunks, removed, added
        )
        assert old_map == (enclosing_symbols(path, old, removed) if removed else None), step
        assert new_map == (enclosing_symbols(path, new, added) if added else None), step
    return extractor


# --------------------------------------------------------------------------- mutations

_SNIPPETS: dict[str, list[str]] = {
    "py": [
        "def added_function(a, b):\n    return a + b\n",
        "    def added_method(self):\n        return 1\n",
        "        local = 2\n",
        "class Added:\n    x = 1\n",
        "@decorator\n",
        "    @staticmethod\n",
        "if flag:\n",
        '"""\n',
        "x = (\n",
        "\n",
    ],
    "js": [
        "function added(a) {\n  return a;\n}\n",
        "  method() {\n    return 1;\n  }\n",
        "const arrow = (x) => {\n  return x;\n};\n",
        "}\n",
        "{\n",
        "/* open comment\n",
        "let api = {get() { return 1; }};\n",
        "\n",
    ],
    "c": [
        "int added(int a) {\n  return a;\n}\n",
        "struct added { int x; };\n",
        "}\n",
        "{\n",
        "#define M(x) x\n",
        "  call(1);\n",
        "\n",
    ],
    "go": [
        "func Added(a int) int {\n\treturn a\n}\n",
        "func (s *Server) Added() {}\n",
        "}\n",
        "\tx := 1\n",
        "\n",
    ],
    "rs": [
        "fn added() -> i32 {\n    1\n}\n",
        "    #[test]\n",
        "#[derive(Debug)]\n",
        "impl Added {\n    fn f(&self) {}\n}\n",
        "}\n",
        "    let x = 1;\n",
        "\n",
    ],
}
_SNIPPETS["ts"] = _SNIPPETS["js"] + ["interface Added {\n  x: number;\n}\n"]
_SNIPPETS["java"] = _SNIPPETS["js"][:6] + ["  void added() {\n    run();\n  }\n"]
_SNIPPETS["cpp"] = _SNIPPETS["c"] + ["namespace added {\nvoid f() {}\n}\n"]
_SNIPPETS["php"] = _SNIPPETS["js"][:6] + ["function added() {\n  return 1;\n}\n"]
_SNIPPETS["h"] = _SNIPPETS["cpp"]


def mutate(source: bytes, rng: random.Random, snippets: list[str]) -> bytes:
    """One random line-level edit: delete, duplicate, insert a snippet, re-indent or replace."""
    lines = source.decode().splitlines(keepends=True)
    if not lines:
        return rng.choice(snippets).encode()
    at = rng.randrange(len(lines) + 1)
    action = rng.randrange(8)
    if action == 0 and lines:
        del lines[min(at, len(lines) - 1) : min(at + rng.randrange(1, 4), len(lines))]
    elif action == 1 and at < len(lines):
        lines.insert(at, lines[at])
    elif action == 6 and at < len(lines):  # copy a run of lines elsewhere (whole definitions)
        end = min(len(lines), at + rng.randrange(1, 12))
        lines[rng.randrange(len(lines) + 1) : 0] = lines[at:end]
    elif action == 7 and at < len(lines):  # delete a run of lines
        del lines[at : at + rng.randrange(1, 12)]
    elif action == 2 and at < len(lines):
        stripped = lines[at].lstrip(" \t")
        lines[at] = " " * rng.choice((0, 4, 8)) + stripped
    elif action == 3 and at < len(lines):
        lines[at] = rng.choice(snippets)
    else:
        lines.insert(at, rng.choice(snippets))
    return "".join(lines).encode()


def valid_chain(path: str, source: bytes, kind: str, steps: int, seed: str) -> list[bytes]:
    """Versions that all parse without errors (rejection sampling over random edits), so
    the incremental path is exercised rather than the fresh reparses of broken files."""
    from index.git.symbols import _parser, language_for_path

    language = language_for_path(path)
    assert language is not None
    parser = _parser("cpp" if path.endswith(".h") else language)
    rng = random.Random(seed)
    versions = [source]
    for _ in range(steps):
        for _ in range(300):
            candidate = mutate(versions[-1], rng, _SNIPPETS[kind])
            if candidate != versions[-1] and not parser.parse(candidate).root_node.has_error:
                versions.append(candidate)
                break
    return versions


SAMPLES = [
    ("pkg/pipeline.py", PYTHON, "py"),
    ("app.js", JAVASCRIPT, "js"),
    ("app.ts", TYPESCRIPT, "ts"),
    ("main.go", GO, "go"),
    ("lib.rs", RUST, "rs"),
    ("A.java", JAVA, "java"),
    ("x.c", C, "c"),
    ("x.cpp", CPP, "cpp"),
    ("x.h", CPP, "h"),
    ("index.php", PHP, "php"),
]


@pytest.mark.parametrize(("path", "source", "kind"), SAMPLES)
def test_random_edit_chains_match_fresh_parses(path: str, source: bytes, kind: str) -> None:
    rng = random.Random(f"{path}-chain")
    versions = [source]
    for _ in range(40):
        versions.append(mutate(versions[-1], rng, _SNIPPETS[kind]))
    extractor = replay(path, versions)
    assert extractor.stats["incremental_parses"] > 30  # really derived from earlier versions
    assert extractor.stats["edit_mismatches"] == 0
    assert extractor.stats["errors"] == 0


@pytest.mark.parametrize(("path", "source", "kind"), SAMPLES)
def test_valid_edit_chains_are_parsed_incrementally(path: str, source: bytes, kind: str) -> None:
    """Error-free versions: every version after the first is an incremental parse."""
    versions = valid_chain(path, source, kind, 30, f"{path}-valid")
    assert len(versions) > 20
    extractor = replay(path, versions)
    assert extractor.stats["full_parses"] == 1, dict(extractor.stats)
    # (a version equal to an earlier one is the same blob: found in the cache instead)
    assert len(versions) // 2 < extractor.stats["incremental_parses"] <= len(versions) - 1
    replay(path, versions, every_line=False)


def test_a_real_file_edited_many_times() -> None:
    """This repository's own symbols.py: big, with classes, nested functions, decorators."""
    path = REPO_ROOT / "index" / "git" / "symbols.py"
    versions = valid_chain("index/git/symbols.py", path.read_bytes(), "py", 25, "real")
    replay("index/git/symbols.py", versions, every_line=False)


@pytest.mark.parametrize(("path", "source", "kind"), SAMPLES)
def test_changed_lines_only_match_fresh_parses(path: str, source: bytes, kind: str) -> None:
    """The indexer asks only about changed lines: the ranged query must still find them."""
    rng = random.Random(f"{path}-lines")
    versions = [source]
    for _ in range(40):
        versions.append(mutate(versions[-1], rng, _SNIPPETS[kind]))
    replay(path, versions, every_line=False)


def test_many_pull_requests_on_one_base_parse_the_base_once() -> None:
    base = PYTHON
    blobs = Blobs()
    base_id = blobs.add(base)
    extractor = SymbolExtractor()
    rng = random.Random(7)
    for _ in range(6):
        head = mutate(base, rng, _SNIPPETS["py"])
        hunks = hunks_between(base, head)
        if not hunks:
            continue
        removed, added = changed_lines(hunks)
        old_map, new_map = extractor.file_symbols(
            "p.py", base_id, blobs.add(head), blobs.read, hunks, removed, added
        )
        assert old_map == (enclosing_symbols("p.py", base, removed) if removed else None)
        assert new_map == (enclosing_symbols("p.py", head, added) if added else None)
    assert blobs.reads.count(base_id) == 1
    assert extractor.stats["incremental_parses"] >= 4


def test_a_cached_version_is_not_read_again() -> None:
    v1 = src(
        """
        def a():
            return 1
        """
    )
    v2 = v1 + b"\ndef b():\n    return 2\n"
    v3 = v2.replace(b"return 2", b"return 3")
    blobs = Blobs()
    ids = [blobs.add(v) for v in (v1, v2, v3)]
    extractor = SymbolExtractor()
    for old, new, old_id, new_id in ((v1, v2, ids[0], ids[1]), (v2, v3, ids[1], ids[2])):
        hunks = hunks_between(old, new)
        removed, added = changed_lines(hunks)
        extractor.file_symbols("m.py", old_id, new_id, blobs.read, hunks, removed, added)
    # v2 was parsed as the new side of the first change and reused as the old side after.
    assert blobs.reads.count(ids[1]) == 1
    assert extractor.stats["cache_hits"] >= 1


def test_pure_addition_on_an_unseen_base_parses_only_the_new_side() -> None:
    old = b"def a():\n    return 1\n"
    new = old + b"\ndef b():\n    return 2\n"
    blobs = Blobs()
    old_id, new_id = blobs.add(old), blobs.add(new)
    hunks = hunks_between(old, new)
    old_map, new_map = SymbolExtractor().file_symbols(
        "m.py", old_id, new_id, blobs.read, hunks, [], [4, 5]
    )
    assert old_map is None
    assert new_map is not None and new_map[5].qualified == "b"
    assert blobs.reads == [new_id]


def test_hunks_that_do_not_match_the_blobs_fall_back_to_a_full_parse() -> None:
    old = PYTHON
    new = PYTHON.replace(b"y = x + 1", b"y = x + 1\n    z = 2")
    blobs = Blobs()
    old_id, new_id = blobs.add(old), blobs.add(new)
    extractor = SymbolExtractor()
    wrong = [(3, 0, 3, 1)]  # claims an insertion elsewhere
    removed = all_lines(old)
    added = all_lines(new)
    old_map, new_map = extractor.file_symbols(
        "p.py", old_id, new_id, blobs.read, wrong, removed, added
    )
    assert extractor.stats["edit_mismatches"] == 1
    assert old_map == enclosing_symbols("p.py", old, removed)
    assert new_map == enclosing_symbols("p.py", new, added)


def test_rust_attribute_line_maps_to_the_item_after_it() -> None:
    old = src(
        """
        impl Store {
            fn open() {}

            #[inline]
            fn get(&self) -> u32 {
                1
            }
        }
        """
    )
    new = old.replace(b"#[inline]", b"#[inline(always)]\n    #[must_use]")
    blobs = Blobs()
    extractor = SymbolExtractor()
    hunks = hunks_between(old, new)
    removed, added = changed_lines(hunks)
    old_map, new_map = extractor.file_symbols(
        "s.rs", blobs.add(old), blobs.add(new), blobs.read, hunks, removed, added
    )
    assert old_map is not None and new_map is not None
    assert {d.qualified for d in old_map.values()} == {"Store.get"}
    assert {d.qualified for d in new_map.values()} == {"Store.get"}
    assert new_map == enclosing_symbols("s.rs", new, added)
    get = next(iter(new_map.values()))
    assert get.start_line == 4  # stretched over both attributes, as a full parse does


def test_sides_without_lines_or_blobs_are_none() -> None:
    new = b"def a():\n    return 1\n"
    blobs = Blobs()
    new_id = blobs.add(new)
    extractor = SymbolExtractor()
    # An added file: no old blob.
    old_map, new_map = extractor.file_symbols(
        "a.py", None, new_id, blobs.read, [(0, 0, 1, 2)], [], [1, 2]
    )
    assert old_map is None
    assert new_map == enclosing_symbols("a.py", new, [1, 2])
    # A deleted file: no new blob.
    old_map, new_map = extractor.file_symbols(
        "a.py", new_id, None, blobs.read, [(1, 2, 0, 0)], [1, 2], []
    )
    assert old_map == enclosing_symbols("a.py", new, [1, 2])
    assert new_map is None
    # No grammar for the path.
    assert extractor.file_symbols(
        "notes.txt", new_id, new_id, blobs.read, [(1, 1, 1, 1)], [1], [1]
    ) == (None, None)


def test_unreadable_blob_is_none_but_unparseable_blob_is_empty() -> None:
    blobs = Blobs()
    binary = blobs.add(b"\0\1\2 def f(): pass\n")
    extractor = SymbolExtractor()
    old_map, new_map = extractor.file_symbols(
        "a.py", "f" * 40, binary, blobs.read, [(1, 1, 1, 1)], [1], [1]
    )
    assert old_map is None  # missing blob: no parser read that side
    assert new_map == {}  # read, but binary: nothing to report


def test_reader_errors_do_not_escape() -> None:
    def broken(blob: str) -> bytes | None:
        raise OSError("cat-file died")

    result = SymbolExtractor().file_symbols(
        "a.py", "a" * 40, "b" * 40, broken, [(1, 1, 1, 1)], [1], [1]
    )
    assert result == (None, None)


def test_non_utf8_versions_match_fresh_parses() -> None:
    v1 = "def café():\n    return 'é'\n\ndef other():\n    pass\n".encode("latin-1")
    v2 = v1.replace(b"pass", "return 'à'".encode("latin-1"))
    v3 = v2.decode("latin-1").encode("utf-8")  # re-encoded: every line changed bytes
    replay("m.py", [v1, v2, v3, v2])


def test_cache_is_bounded() -> None:
    rng = random.Random(3)
    versions = [PYTHON]
    for _ in range(12):
        versions.append(mutate(versions[-1], rng, _SNIPPETS["py"]))
    extractor = SymbolExtractor(max_cached_trees=3)
    replay("p.py", versions, extractor)
    assert len(extractor._cache) <= 3
    budget = 50 * len(PYTHON)
    tiny = SymbolExtractor(max_cached_trees=100, max_cached_bytes=budget)
    replay("p.py", versions, tiny)
    assert sum(v.weight for v in tiny._cache.values()) <= budget


def rebuild_case(old: bytes, new: bytes, mangle: Callable[[list[str]], list[str]] | None = None):
    """file_symbols with added_text taken from a diff of old and new; returns the reads."""
    blobs = Blobs()
    old_id = blobs.add(old)
    new_id = _git_id(new)
    blobs.data[new_id] = new
    hunks = hunks_between(old, new)
    removed, added = changed_lines(hunks)
    new_lines = new.decode("utf-8", "replace").splitlines()
    text = [new_lines[n - 1] for n in added]
    if mangle is not None:
        text = mangle(text)
    extractor = SymbolExtractor()
    extractor.file_symbols("m.py", old_id, None, blobs.read, hunks, removed, [])  # cache old
    blobs.reads.clear()
    _, new_map = extractor.file_symbols(
        "m.py", old_id, new_id, blobs.read, hunks, removed, added, added_text=text
    )
    assert new_map == enclosing_symbols("m.py", new, added)
    return blobs.reads, extractor.stats


def _git_id(data: bytes) -> str:
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_new_version_is_rebuilt_from_the_diff_without_reading_it() -> None:
    old = b"def a():\n    return 1\n\ndef b():\n    return 2\n"
    new = b"def a():\n    x = 0\n    return 1\n\ndef b():\n    return 3\n"
    reads, stats = rebuild_case(old, new)
    assert reads == [] and stats["rebuilt"] == 1


def test_rebuild_keeps_crlf_and_a_missing_final_newline() -> None:
    old = b"def a():\r\n    return 1\r\n"
    new = b"def a():\r\n    return 2\r\n\r\ndef b():\r\n    pass"
    reads, stats = rebuild_case(old, new)
    assert reads == [] and stats["rebuilt"] == 1


def test_rebuild_falls_back_to_reading_when_the_text_is_not_the_blob() -> None:
    old = b"def a():\n    return 1\n"
    new = b"def a():\n    return 2\n"
    reads, stats = rebuild_case(old, new, mangle=lambda text: [t + " " for t in text])
    assert len(reads) == 1 and stats["rebuilt"] == 0
    latin = "def a():\n    return 'é'\n".encode("latin-1")
    latin_new = "def a():\n    return 'è'\n".encode("latin-1")
    reads, stats = rebuild_case(latin, latin_new)  # the diff text cannot hold latin-1 bytes
    assert len(reads) == 1 and stats["rebuilt"] == 0


def test_header_switching_between_c_and_cpp() -> None:
    c_header = src(
        """
        struct point { int x; };
        int area(int w, int h) {
            return w * h;
        }
        """
    )
    cpp_header = c_header + src(
        """
        namespace geo {
        class Shape {
          public:
            virtual double area() const = 0;
        };
        template <typename T> T twice(T v) { return v + v; }
        }
        """
    )
    replay("geo.h", [c_header, cpp_header, c_header, cpp_header.replace(b"twice", b"thrice")])


def extract_with(
    extractor_factory: Callable[[], SymbolExtractor | None],
) -> list[tuple[object, object]]:
    """Run index.questions.changes.extract_symbols over a small history, one extractor or none."""
    from detector.model import parse_patch
    from index.config import Settings
    from index.questions.changes import extract_symbols

    rng = random.Random(11)
    versions = [PYTHON]
    for _ in range(10):
        versions.append(mutate(versions[-1], rng, _SNIPPETS["py"]))
    store = Blobs()
    ids = [store.add(v) for v in versions]

    class Reader:
        def read(self, blob: str, limit: int) -> bytes | None:
            return store.read(blob)

    extractor = extractor_factory()
    results = []
    for step, (old, new) in enumerate(zip(versions, versions[1:], strict=False)):
        body = "".join(
            difflib.unified_diff(
                old.decode().splitlines(keepends=True),
                new.decode().splitlines(keepends=True),
                "a/p.py",
                "b/p.py",
                n=0,
            )
        )
        if not body:
            continue
        if not body.endswith("\n"):
            body += "\n"
        diff = f"diff --git a/p.py b/p.py\nindex {ids[step]}..{ids[step + 1]} 100644\n{body}"
        change = parse_patch(diff)
        results.append(extract_symbols(change, Reader(), Settings(), extractor))  # type: ignore[arg-type]
    return results


def test_extract_symbols_with_a_shared_extractor_matches_one_shot() -> None:
    shared = SymbolExtractor()
    assert extract_with(lambda: shared) == extract_with(lambda: None)
    assert shared.stats["incremental_parses"] > 0
    assert shared.stats["rebuilt"] > 0  # new versions came from the diff, not from reads


def test_definition_objects_are_the_public_type() -> None:
    blobs = Blobs()
    new_id = blobs.add(PYTHON)
    _, new_map = SymbolExtractor().file_symbols(
        "p.py", None, new_id, blobs.read, [(0, 0, 1, 5)], [], [7]
    )
    assert new_map is not None
    assert all(isinstance(d, Definition) for d in new_map.values())


@pytest.mark.parametrize(("path", "source", "kind"), SAMPLES)
def test_pull_requests_on_old_bases_derive_them_from_the_latest_version(
    path: str, source: bytes, kind: str
) -> None:
    """History first, then PRs whose bases fell out of the cache: each base is derived from
    the path's newest cached version by one span edit, and answers still match fresh parses."""
    history = valid_chain(path, source, kind, 12, f"{path}-history")
    extractor = replay(path, history, SymbolExtractor(max_cached_trees=2), every_line=False)
    blobs = Blobs()
    rng = random.Random(f"{path}-prs")
    for base in history[1:6]:
        head = mutate(base, rng, _SNIPPETS[kind])
        hunks = hunks_between(base, head)
        if not hunks:
            continue
        removed, added = all_lines(base), all_lines(head)
        old_map, new_map = extractor.file_symbols(
            path, blobs.add(base), blobs.add(head), blobs.read, hunks, removed, added
        )
        assert old_map == enclosing_symbols(path, base, removed)
        assert new_map == enclosing_symbols(path, head, added)
    assert extractor.stats["near_parses"] >= 3
