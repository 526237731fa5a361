"""A shared line is not the change: a candidate is this change only where it holds most of
the change's own work, its code and its tests.

A change's code decides what it is, and a fix whose test is still to write is done. But a
21-file test migration whose only line of code is an import another PR also dropped is many
times what that PR did: that PR is no duplicate of it, and its landing made a part of it.
Each story is a real repository, indexed and checked through the CLI.
"""

from __future__ import annotations

from tests.repo_builder import RepoBuilder
from tests.test_replay_verdicts import check_json, index

UTIL = "import os\nimport sys\n\n\ndef double(x):\n    return x * 2\n"
UTIL_TIDIED = "import os\n\n\ndef double(x):\n    return x * 2\n"
FILES = 8


def _unittest(i: int) -> str:
    return (
        "import unittest\n\nfrom app.util import double\n\n\n"
        f"class DoubleTest{i}(unittest.TestCase):\n"
        f"    def test_double_{i}(self):\n"
        f"        self.assertEqual(double({i}), {2 * i})\n"
    )


def _pytest(i: int) -> str:
    return (
        f"from app.util import double\n\n\ndef test_double_{i}():\n"
        f"    assert double({i}) == {2 * i}\n"
    )


def _migration(builder: RepoBuilder, land: bool) -> dict:
    """#10 drops the unused `sys` import; #11, cut before it, moves eight test files to
    pytest and drops the same import on the way. #11's first finding."""
    tests = {f"tests/test_double_{i}.py": _unittest(i) for i in range(FILES)}
    builder.commit("Add double and its tests", {"app/util.py": UTIL, **tests})
    base = builder.head()
    builder.pr_branch(10, [("Drop the unused sys import", {"app/util.py": UTIL_TIDIED})])
    if land:
        builder.merge_pr(10)
    migrated = {f"tests/test_double_{i}.py": _pytest(i) for i in range(FILES)}
    builder.pr_branch(
        11, [("Move the tests to pytest", {"app/util.py": UTIL_TIDIED, **migrated})], start=base
    )
    index(builder)
    _, found = check_json(builder.path, "--pr", "11")
    assert found[0]["pr"] == 10
    return found[0]


def test_an_open_pr_sharing_one_import_line_is_no_duplicate_of_a_test_migration(
    builder: RepoBuilder,
):
    first = _migration(builder, land=False)
    assert first["verdict"] == "overlap"
    assert any("is not in #10: a part of it, not the same change" in r for r in first["reasons"])


def test_a_landing_that_made_one_import_line_of_a_test_migration_made_a_part(
    builder: RepoBuilder,
):
    first = _migration(builder, land=True)
    assert first["verdict"] == "partly-merged"
    assert len(first["residual"]) == FILES  # every test file is still to do


def test_a_fix_landed_without_its_test_is_still_already_done(builder: RepoBuilder):
    """The landing made the fix; this change also adds a test of it: done, with its test as
    what is left (a fix and its test are no change many times larger than the fix)."""
    builder.commit("Add double", {"app/util.py": UTIL.replace("x * 2", "x + x + 1")})
    base = builder.head()
    builder.pr_branch(10, [("Fix double", {"app/util.py": UTIL})])
    builder.merge_pr(10)
    builder.pr_branch(
        11,
        [("Fix double, with a test", {"app/util.py": UTIL, "tests/test_double.py": _pytest(3)})],
        start=base,
    )
    index(builder)
    _, found = check_json(builder.path, "--pr", "11")
    assert (found[0]["pr"], found[0]["verdict"]) == (10, "already-merged")
    assert found[0]["residual"] == ["tests/test_double.py (new file)"]
