"""Whitespace counts where it is the change.

Lines are compared normalised, so that a line another change re-indented is the same line.
But in a hunk that changes whitespace alone, normalised removed and added lines are the same
lines: the hunk would say nothing, and any change touching those lines would look like it. Such
a hunk is compared as written. Each story is a real repository, indexed and checked for real.
"""

from __future__ import annotations

import sqlite3

from detector.model import line_keys, parse_patch
from index.config import Settings
from index.git.stored_diff import parse_stored
from index.storage.schema import MIGRATIONS, _whitespace_only_hunks
from tests.repo_builder import RepoBuilder
from tests.test_replay_verdicts import check_json, index

MODULE = "".join(f"def f{i}(x):   \n    return x + {i}\n\n\n" for i in range(8))
STRIPPED = MODULE.replace("   \n", "\n")


def _two_prs(builder: RepoBuilder, landed: str, ours: str) -> dict:
    """#10 lands `landed`; #11, cut before it, makes `ours`: #11's first finding."""
    builder.commit("Add the module", {"m.py": MODULE})
    base = builder.head()
    builder.pr_branch(10, [("Tidy the module", {"m.py": landed})])
    builder.merge_pr(10)
    builder.pr_branch(11, [("Tidy the module too", {"m.py": ours})], start=base)
    index(builder)
    _, found = check_json(builder.path, "--pr", "11")
    return found[0]


def test_the_same_trailing_whitespace_stripped_twice_is_already_done(builder: RepoBuilder):
    """Normalised, each hunk removed and added one line: nothing to find."""
    first = _two_prs(builder, STRIPPED, STRIPPED)
    assert (first["pr"], first["verdict"]) == (10, "already-merged")
    assert "identical patch to #10" in first["reasons"]


def test_the_same_reindent_is_already_done(builder: RepoBuilder):
    reindented = MODULE.replace("    return", "  return")
    first = _two_prs(builder, reindented, reindented)
    assert (first["pr"], first["verdict"]) == (10, "already-merged")


def test_another_indentation_of_the_same_lines_is_no_identical_patch(builder: RepoBuilder):
    """#10 indents with tabs, #11 with two spaces, both to tidy the module: not the same
    patch, and #11's lines are not there; #10 rewrote them for the same purpose first."""
    first = _two_prs(
        builder, MODULE.replace("    return", "\treturn"), MODULE.replace("    return", "  return")
    )
    assert first["pr"] == 10
    assert first["verdict"] == "superseded"
    assert "already rewrote 8 of the 8 lines" in first["reasons"][0]
    assert not first["signals"]["same_patch"]
    assert not any("identical patch" in reason for reason in first["reasons"])


def test_stripping_whitespace_is_not_done_by_a_landing_that_kept_it(builder: RepoBuilder):
    """#10 changed the code of those lines and kept their trailing whitespace: #11's change
    is not made there (normalised, its hunks would read as lines already in place)."""
    landed = MODULE.replace("return x + ", "return x - ")
    first = _two_prs(builder, landed, STRIPPED)
    assert first["verdict"] not in ("already-merged", "duplicate", "covered", "partly-merged")


def test_the_index_and_the_model_key_a_whitespace_hunk_alike():
    """The indexer's fast parse and the model give one hunk identity and the same line hashes
    (a `\\ No newline` marker and carriage returns included)."""
    diff = (
        "diff --git a/m.py b/m.py\nindex 1111111..2222222 100644\n--- a/m.py\n+++ b/m.py\n"
        "@@ -1,2 +1,2 @@\n-def f(x):  \r\n-    return x\n+def f(x):\r\n+\treturn x\n"
        "\\ No newline at end of file\n"
        "@@ -9 +9 @@\n-y = 1\n+y = 2\n"
    )
    model = parse_patch(diff).files[0]
    stored = parse_stored(diff, Settings()).files[0]
    assert [hunk.content_hash for hunk in model.hunks] == [h.content_hash for h in stored.hunks]
    whitespace, code = model.hunks
    assert [line.normalised for line in whitespace.lines] == [
        "def f(x):  ",
        "    return x",
        "def f(x):",
        "\treturn x",
    ]
    assert [line.normalised for line in code.lines] == ["y = 1", "y = 2"]
    assert set(stored.removed) == {line.hash for line in model.hunks[0].removed} | {
        code.removed[0].hash
    }


def test_a_hunk_with_a_change_besides_whitespace_is_normalised():
    """Re-indenting a block and changing one of its lines is a change of code: its lines are
    compared normalised, so the same edit indented otherwise is the same lines."""
    assert line_keys(["-", "-", "+", "+"], ["  a(1)", "  b()", "    a(2)", "    b()"]) == [
        "a(1)",
        "b()",
        "a(2)",
        "b()",
    ]


def test_an_older_index_that_may_hold_whitespace_hunks_is_read_again(builder: RepoBuilder):
    """An index from before whitespace hunks were keyed as written holds such a hunk as a line
    removed and added by one change: it is out of date until the next `prdup index`."""
    _two_prs(builder, STRIPPED, STRIPPED)
    db = builder.path / ".git" / "prdup.db"
    with sqlite3.connect(db) as conn:
        hashes = conn.execute(
            "SELECT hashes FROM line_sets WHERE side = '+' ORDER BY change_id DESC LIMIT 1"
        ).fetchone()[0]
        # As the older index stored it: the removed side holds the added side's lines.
        conn.execute("UPDATE line_sets SET hashes = ? WHERE side = '-'", (hashes,))
        before = MIGRATIONS.index(_whitespace_only_hunks)  # the version without it
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(before),))
    code, found = check_json(builder.path, "--pr", "11")
    assert code in (0, 1)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'reread_all'").fetchone() == ("1",)
    index(builder)
    _, found = check_json(builder.path, "--pr", "11")
    assert (found[0]["pr"], found[0]["verdict"]) == (10, "already-merged")
