"""Who wrote a PR that a merge commit landed, when no metadata says: the merge commit names
the maintainer who pressed the button, on the day they pressed it; the PR is its branch's
writer's, opened when they started it.

The story: greeting.py's farewell.
- Ann writes #5 (say goodbye politely) in two commits; pre-commit.ci fixes her style on top;
  the maintainer, Test Author, merges it with "Merge pull request #5".
- The maintainer later opens #9, another take on the same line: related to Ann's merged #5,
  not the maintainer's own earlier work.
- Ann opens #8, her own other take on it: a follow-up of her own merged #5.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.repo_builder import RepoBuilder, run_cli

GREETING = (
    "def farewell(name):\n    return 'bye ' + name\n\n\ndef hello(name):\n    return 'hi ' + name\n"
)
POLITE = GREETING.replace("'bye ' + name", "'Goodbye, ' + name + '.'")
STYLED = POLITE.replace("def farewell(name):", "def farewell(name: str) -> str:")
EXCLAIMED = GREETING.replace("'bye ' + name", "'Farewell, ' + name + '!'")
CHEERFUL = GREETING.replace("'bye ' + name", "'See you, ' + name + '!'")
SAME_LINE_ELSEWHERE = "#5 is by the same author: a follow-up or a resubmission, not a duplicate"


def _merged_by_maintainer(builder: RepoBuilder, keep_ref: bool) -> RepoBuilder:
    builder.commit("Add greeting", {"greeting.py": GREETING})
    base = builder.head()
    builder.commit("Add a readme", {"README": "greeting\n"})
    builder.pr_branch(
        5,
        [("Say goodbye politely", {"greeting.py": POLITE}), ("Document it", {"DOC": "Polite.\n"})],
        author="Ann",
        email="ann@ann.dev",
    )
    builder.pr_branch(
        5,
        [("[pre-commit.ci] auto fixes", {"greeting.py": STYLED})],
        start="pr-5",
        author="pre-commit-ci[bot]",
    )
    builder.merge_pr(5, how="merge", title="Say goodbye politely")  # Test Author's merge commit
    if not keep_ref:  # a mirror without GitHub's PR refs: #5 is known from its merge alone
        builder.git("update-ref", "-d", "refs/pull/5/head")
    builder.pr_branch(
        9, [("Exclaim the farewell", {"greeting.py": EXCLAIMED})], start=base, author="Test Author"
    )
    builder.pr_branch(
        8, [("Cheer the farewell", {"greeting.py": CHEERFUL})], start=base, author="Ann"
    )
    return builder


@pytest.fixture(params=[True, False], ids=["with its PR ref", "from its merge alone"])
def merged_by_maintainer(builder: RepoBuilder, request: pytest.FixtureRequest) -> RepoBuilder:
    _merged_by_maintainer(builder, keep_ref=request.param)
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    return builder


def shown(repo: Path, number: int) -> dict:
    code, out, err = run_cli(repo, "show", str(number), "--format", "json")
    assert code == 0, err
    return json.loads(out)


def reasons_about_5(repo: Path, number: int) -> list[str]:
    code, out, err = run_cli(repo, "check", "--pr", str(number), "--format", "json")
    assert code in (0, 1), err
    (finding,) = [f for f in json.loads(out)["findings"] if f["pr"] == 5]
    return finding["reasons"]


def test_a_pr_merged_by_a_maintainer_is_its_writers_from_when_they_started(
    merged_by_maintainer: RepoBuilder,
):
    row = shown(merged_by_maintainer.path, 5)
    first_commit = merged_by_maintainer.repo.git.log("-1", "--format=%aI", "pr-5~2")
    assert (row["source"], row["author"], row["author_email"]) == (
        "merge-commit",
        "Ann",
        "ann@ann.dev",
    )
    assert row["created_at"] == first_commit  # not the merge's day
    assert row["created_at"] < row["merged_at"]


def test_the_mergers_own_later_pr_is_no_follow_up_of_a_pr_they_merged(
    merged_by_maintainer: RepoBuilder,
):
    assert SAME_LINE_ELSEWHERE not in reasons_about_5(merged_by_maintainer.path, 9)


def test_the_writers_own_later_pr_is_a_follow_up_of_their_merged_pr(
    merged_by_maintainer: RepoBuilder,
):
    assert SAME_LINE_ELSEWHERE in reasons_about_5(merged_by_maintainer.path, 8)


def test_metadata_still_names_the_author(builder: RepoBuilder, tmp_path: Path):
    _merged_by_maintainer(builder, keep_ref=True)
    export = tmp_path / "prs.json"
    export.write_text(
        json.dumps(
            [
                {
                    "number": 5,
                    "state": "MERGED",
                    "author": {"login": "ann-gh"},
                    "createdAt": "2023-11-01T10:00:00Z",
                }
            ]
        )
    )
    code, _, err = run_cli(builder.path, "index", "--quiet", "--prs-json", str(export))
    assert code == 0, err
    row = shown(builder.path, 5)
    assert (row["author"], row["created_at"]) == ("ann-gh", "2023-11-01T10:00:00Z")


def test_a_pr_merged_since_the_index_is_its_writers_too(builder: RepoBuilder):
    """The index predates #5's merge: the check finds it on main by pickaxe, and who merged
    it is not who wrote it there either."""
    builder.commit("Add greeting", {"greeting.py": GREETING})
    base = builder.head()
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    builder.pr_branch(5, [("Say goodbye politely", {"greeting.py": POLITE})], author="Ann")
    builder.git("update-ref", "-d", "refs/pull/5/head")
    builder.merge_pr(5, how="merge")  # Test Author's merge commit
    builder.checkout("polite", base)  # the maintainer's own branch, the same change
    builder.commit("Polite farewell", {"greeting.py": POLITE})
    builder.checkout("main")

    code, out, err = run_cli(builder.path, "check", "polite", "--format", "json")
    assert code == 1, err
    (finding,) = [f for f in json.loads(out)["findings"] if f["pr"] == 5]
    assert finding["verdict"] == "already-merged"
    assert finding["signals"]["same_author"] is False
