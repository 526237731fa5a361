"""The index's own diff reader stores what the diff model (unidiff) would: the same files,
statuses, hunks, line hashes, texts, counts and patch id, on every kind of change git prints."""

from __future__ import annotations

import pytest

from index.config import Settings
from index.git import gitsource
from index.git.stored_diff import (
    StoredChange,
    _parse_fast,
    _parse_file,
    _Unusual,
    parse_stored,
)
from index.questions.changes import from_model
from tests.repo_builder import RepoBuilder

PYTHON = "def f(x):\n    if x:\n        return None\n    y = x * 2\n    return y\n"


def _history(builder: RepoBuilder) -> RepoBuilder:
    builder.commit("Initial", {"a.py": PYTHON, "old.txt": "one\ntwo\n", "gone.txt": "bye\n"})
    builder.commit("Edit and add", {"a.py": PYTHON.replace("x * 2", "x + x"), "b.py": "B = 1\n"})
    builder.commit("Rename", {"old.txt": None, "new.txt": "one\ntwo\n"})
    builder.commit("Rename and edit", {"new.txt": None, "newer.txt": "one\n2\n"})
    builder.commit("Delete", {"gone.txt": None})
    builder.commit("Binary", {"logo.png": b"\x89PNG\x00\x01\x02" * 20})
    builder.commit("CRLF", {"win.txt": "first\r\nsecond\r\n"})
    builder.commit("No newline at end", {"b.py": "B = 2"})
    builder.commit("Newline again", {"b.py": "B = 2\nC = 3\n"})
    builder.commit("Lines that look like headers", {"notes.txt": "--- a\n+++ b\n@@ x @@\n-- c\n"})
    builder.commit("Drop them", {"notes.txt": "kept\n"})
    builder.commit("Empty file", {"empty.txt": ""})
    builder.commit("Fill it", {"empty.txt": "now\n"})
    builder.commit("Trivial lines", {"c.js": "}\n{\n  return null;\n  }}}}}}}}}}}}}}}}}}}}}}}}\n"})
    builder.commit("Lockfile", {"package-lock.json": '{"a": 1}\n', "d.py": "D = 4\n"})
    builder.commit("Unicode", {"u.py": "name = 'café'  # ünïcode\n"})
    builder.commit(
        "Odd whitespace",
        {"w.py": "x  =\t1 \t\n\t\t\n  y\xa0=\u3000 2\u2003\n   \nz = 3  \r\n"},
    )
    builder.git("update-index", "--chmod=+x", "b.py")
    builder.git("commit", "-q", "-m", "Mode only")
    return builder


@pytest.mark.parametrize("limit", [20_000, 3])
def test_every_commit_is_stored_as_the_model_reads_it(builder: RepoBuilder, limit: int):
    repo = gitsource.open_repository(_history(builder).path)
    settings = Settings(max_changed_lines=limit)
    commits = list(gitsource.first_parent_log(repo, "main"))
    assert len(commits) == 18
    for commit in commits:
        fast = _parse_fast(commit.diff, settings, limit)
        assert fast == from_model(commit.diff, settings), commit.message
        assert fast.patch_id == from_model(commit.diff, settings).patch_id
    truncated = [c for c in commits if _parse_fast(c.diff, settings, limit).truncated]
    assert bool(truncated) == (limit == 3)


def test_statuses_of_added_removed_renamed_binary_files(builder: RepoBuilder):
    repo = gitsource.open_repository(_history(builder).path)
    statuses = {
        (f.path, f.status)
        for commit in gitsource.first_parent_log(repo, "main")
        for f in parse_stored(commit.diff, Settings()).files
    }
    assert {("gone.txt", "removed"), ("logo.png", "binary"), ("newer.txt", "renamed")} <= statuses
    assert {("b.py", "added"), ("new.txt", "renamed")} <= statuses


def test_a_quoted_path_goes_through_the_model_and_the_other_files_do_not():
    quoted = (
        'diff --git "a/caf\\303\\251.py" "b/caf\\303\\251.py"\n'
        "index 1111111..2222222 100644\n"
        '--- "a/caf\\303\\251.py"\n'
        '+++ "b/caf\\303\\251.py"\n'
        "@@ -1 +1 @@\n"
        "-x = 1\n"
        "+x = 2\n"
    )
    plain = (
        "diff --git a/b.py b/b.py\n"
        "index 3333333..4444444 100644\n"
        "--- a/b.py\n"
        "+++ b/b.py\n"
        "@@ -2,0 +3 @@ def f():\n"
        "+    return 3\n"
    )
    with pytest.raises(_Unusual):
        _parse_file(quoted.split("\n"), Settings(), 100, StoredChange([], [], {}, 0, 0, False))
    for diff in (quoted, plain + quoted, quoted + plain):
        assert parse_stored(diff, Settings()) == from_model(diff, Settings())
        assert parse_stored(diff, Settings(max_changed_lines=1)) == from_model(
            diff, Settings(max_changed_lines=1)
        )


def test_symbols_off_stores_no_hunk_symbols(builder: RepoBuilder):
    repo = gitsource.open_repository(_history(builder).path)
    for commit in gitsource.first_parent_log(repo, "main"):
        stored = parse_stored(commit.diff, Settings(symbols=False))
        assert all(h.symbol is None for f in stored.files for h in f.hunks)


def test_lines_holding_nul_and_control_bytes_are_stored_as_the_model_reads_them(
    builder: RepoBuilder,
):
    """git prints a file as text when its first 8,000 bytes hold no NUL: its diff's lines can
    hold NUL and every control character (moby/moby's Illustrator files do)."""
    text = b"".join(b"text line %d\n" % n for n in range(800))
    odd = b"a \x00 nul\n\x00\x1e\x00\x1f\x1c\x1d\n\x0b\x0c form feed\nx\x85y\n"
    builder.commit("Before", {"art.ai": text})
    builder.commit("Odd bytes", {"art.ai": text + odd})
    builder.commit("Change them", {"art.ai": text + odd.replace(b"nul", b"NUL\x00")})
    repo = gitsource.open_repository(builder.path)
    commits = list(gitsource.first_parent_log(repo, "main"))
    assert "\x00\x1e" in commits[1].diff
    for commit in commits:
        fast = _parse_fast(commit.diff, Settings(), 20_000)
        assert fast == from_model(commit.diff, Settings()), commit.message
    assert _parse_fast(commits[1].diff, Settings(), 20_000).added_count == 4
