"""PRs landed by rebase or cherry-pick: the copies of every commit of theirs on a target.

The story: PR 5 makes a change in three commits and is landed with "Rebase and merge" after
main moved on, so none of its commits is on main, only copies (same author, author date and
patch, new sha). prdup must know it landed, name the copy that completes it, and answer a
later PR that repeats its change "already done in #5".
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from index.indexer import index_repository
from tests.repo_builder import RepoBuilder, run_cli

CONFIG = """def load(path):
    with open(path) as handle:
        text = handle.read()
    return parse(text)


def parse(text):
    return dict(line.split("=", 1) for line in text.splitlines())
"""
STEP_1 = CONFIG.replace(
    "    with open(path) as handle:\n", "    with open(path, encoding='utf-8') as handle:\n"
)
STEP_2 = STEP_1.replace(
    '    return dict(line.split("=", 1) for line in text.splitlines())\n',
    '    pairs = [line.split("=", 1) for line in text.splitlines() if line.strip()]\n'
    "    return {key.strip(): value.strip() for key, value in pairs}\n",
)
STEP_3 = (
    STEP_2 + '\n\ndef dump(values):\n    return "\\n".join(f"{k}={v}" for k, v in values.items())\n'
)


# The reader after its second step, as a maintainer went on writing it: a `dump()` of its own,
# after a return line reworded (PR 5's third commit no longer applies to it).
DUMPED_AS_JSON = "import json\n" + STEP_2.replace(
    "    return {key.strip(): value.strip() for key, value in pairs}\n",
    "    return {k.strip(): v.strip() for k, v in pairs}\n\n\n"
    "def dump(values):\n    return json.dumps(values)\n",
)


def change(db: Path, number: int) -> dict:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute("SELECT * FROM changes WHERE number = ?", (number,)).fetchone()
        return dict(row) if row else {}


def direct_commits(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {sha for (sha,) in conn.execute("SELECT sha FROM changes WHERE kind = 'commit'")}


@pytest.fixture
def story(tmp_path: Path) -> RepoBuilder:
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Add the config reader", {"config.py": CONFIG})
    builder.pr_branch(
        5,
        [
            ("Read config files as UTF-8", {"config.py": STEP_1}),
            ("Skip blank lines and strip keys", {"config.py": STEP_2}),
            ("Add dump()", {"config.py": STEP_3}),
        ],
    )
    builder.commit("Unrelated docs", {"README.md": "Config reader.\n"})
    return builder


def landed_copies(builder: RepoBuilder) -> list[str]:
    """The target's copies of PR 5's commits, oldest first."""
    return builder.repo.git.rev_list("--reverse", "HEAD~3..HEAD").split()


def test_a_three_commit_pr_landed_by_rebase_is_merged_at_its_last_copy(
    story: RepoBuilder, tmp_path: Path
):
    head = story.head("refs/pull/5/head")
    story.merge_pr(5, how="rebase")
    copies = landed_copies(story)
    assert head not in copies  # rebased: new shas, same author dates and patches
    db = tmp_path / "index.db"

    summary = index_repository(story.path, db_path=db)

    pr5 = change(db, 5)
    assert (pr5["state"], pr5["source"]) == ("merged", "rebase")
    assert pr5["merge_commit"] == copies[-1] == story.head("main")
    assert pr5["landing_base"] == story.head(f"{copies[0]}^")
    # The copies are PR 5's change, not three direct commits of their own.
    assert not direct_commits(db) & set(copies)
    assert summary.rebased == 1
    assert "1 merged PRs (1 landed by rebase or cherry-pick)" in summary.line()


def test_a_pr_indexed_while_open_is_found_landed_by_rebase_in_a_later_run(
    story: RepoBuilder, tmp_path: Path
):
    db = tmp_path / "index.db"
    index_repository(story.path, db_path=db)
    assert change(db, 5)["state"] == "unmerged"

    story.merge_pr(5, how="rebase")
    index_repository(story.path, db_path=db)

    pr5 = change(db, 5)
    assert (pr5["state"], pr5["merge_commit"]) == ("merged", story.head("main"))


def test_a_pr_repeating_a_rebased_pr_is_already_done_in_it(story: RepoBuilder):
    story.merge_pr(5, how="rebase")
    story.commit("More docs", {"README.md": "Config reader, documented.\n"})
    # A contributor, from before PR 5 landed, makes the same two fixes in one commit.
    story.checkout("contributor", "main~5")
    story.commit("Fix config parsing", {"config.py": STEP_2})
    story.checkout("main")
    code, _, err = run_cli(story.path, "index", "--quiet")
    assert code == 0, err

    code, out, err = run_cli(story.path, "check", "--format", "json", "contributor")
    assert code == 1, err
    best = json.loads(out)["findings"][0]
    assert (best["pr"], best["verdict"]) == (5, "already-merged")
    assert best["commit"] == story.head("main~1")  # the copy that completes it
    assert any(story.head("main~1")[:7] in reason for reason in best["reasons"])


def test_a_pr_two_of_whose_three_commits_landed_is_not_merged(story: RepoBuilder, tmp_path: Path):
    """Two commits cherry-picked to main, the third not: PR 5 did not land whole."""
    first, second, _ = story.repo.git.rev_list("--reverse", "main..refs/pull/5/head").split()
    story.git("cherry-pick", first, second)
    db = tmp_path / "index.db"

    index_repository(story.path, db_path=db)

    pr5 = change(db, 5)
    assert (pr5["state"], pr5["merge_commit"]) == ("unmerged", None)
    assert len(direct_commits(db)) == 4  # the picks stay direct commits


def test_a_pr_two_of_whose_three_commits_landed_is_partly_merged_with_the_third_to_do(
    story: RepoBuilder,
):
    """Two of PR 5's three commits were cherry-picked to main: `show` and `check --pr 5` say
    what landed (each commit and its copy) and what remains (the third, with its file)."""
    first, second, third = story.repo.git.rev_list("--reverse", "main..refs/pull/5/head").split()
    story.git("cherry-pick", first, second)
    copies = story.repo.git.rev_list("--reverse", "HEAD~2..HEAD").split()
    code, out, err = run_cli(story.path, "index")
    assert code == 0, err
    assert "0 open, 0 closed, 1 unmerged, 1 landed in part" in err

    code, out, err = run_cli(story.path, "show", "5", "--format", "json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["state"] == "unmerged"  # no metadata: open or closed is not known
    assert [(c["commit"], c["landed_as"], c["target"]) for c in shown["landed_in_part"]] == [
        (first, copies[0], "main"),
        (second, copies[1], "main"),
        (third, None, "main"),
    ]
    code, out, err = run_cli(story.path, "show", "5")
    assert "#5 [unmerged, landed in part]" in out
    assert "landed in part on main: 2 commit(s) landed, 1 still to do" in out
    assert f"{third[:7]} Add dump() (config.py): still to do" in out

    code, out, err = run_cli(story.path, "check", "--pr", "5", "--format", "json")
    assert code == 0, err  # partly done: fails only with --fail-on partly-merged
    findings = json.loads(out)["findings"]
    best = findings[0]
    assert (best["verdict"], best["commit"]) == ("partly-merged", copies[1])
    assert all(copy[:10] in best["reasons"][0] for copy in copies)
    assert best["residual"] == [f"{third[:7]} Add dump() (config.py)"]
    assert any(f"still to do: {third[:7]} Add dump() (config.py)" in r for r in best["reasons"])
    # The copies are one finding: no other says what they did.
    assert [f["commit"] for f in findings].count(copies[0]) == 0


def _check_pr_5(story: RepoBuilder) -> dict:
    code, out, err = run_cli(story.path, "index", "--quiet")
    assert code == 0, err
    code, out, err = run_cli(story.path, "check", "--pr", "5", "--format", "json")
    assert code in (0, 1), err
    return json.loads(out)["findings"][0]


def test_a_part_landed_pr_whose_last_commit_main_wrote_otherwise_has_nothing_left_to_do(
    story: RepoBuilder,
):
    """Two of PR 5's commits were cherry-picked; then main wrote its own `dump()` and reworded
    the line PR 5's third commit adds after: that commit no longer applies as it is. No
    "rebase, only Add dump() is left": a part of PR 5 landed, and it is said as an overlap."""
    first, second, third = story.repo.git.rev_list("--reverse", "main..refs/pull/5/head").split()
    story.git("cherry-pick", first, second)
    story.commit("Write dump() as JSON", {"config.py": DUMPED_AS_JSON})

    best = _check_pr_5(story)

    assert (best["verdict"], best["residual"]) == ("overlap", [])
    assert any(
        third[:7] in r and "written otherwise since, so they no longer apply" in r
        for r in best["reasons"]
    )
    code, out, err = run_cli(story.path, "sweep", "--format", "json", "--exit-zero")
    assert code == 0, err
    assert json.loads(out)["partly_done"] == []  # the sweep's answer is check's


def test_a_pr_part_landed_on_a_release_line_is_judged_by_that_lines_tip(story: RepoBuilder):
    """PR 5 (for main) had two commits picked to the release line 1.x, and 1.x then wrote its
    own `dump()`: the third commit is read against 1.x's tip, where the copies are, not
    main's, and no longer applies there."""
    first, second, third = story.repo.git.rev_list("--reverse", "main..refs/pull/5/head").split()
    story.checkout("1.x", "main~1")
    story.git("cherry-pick", first, second)
    story.commit("Write dump() as JSON", {"config.py": DUMPED_AS_JSON})
    story.checkout("main")
    code, _, err = run_cli(story.path, "index", "--quiet", "--target", "main", "--target", "1.x")
    assert code == 0, err

    code, out, err = run_cli(story.path, "check", "--pr", "5", "--format", "json")

    best = json.loads(out)["findings"][0]
    assert (best["verdict"], best["residual"]) == ("overlap", [])
    assert any(
        third[:7] in r and "1.x has their lines written otherwise" in r for r in best["reasons"]
    )


def test_a_part_landed_pr_whose_last_commit_main_made_anyway_is_done(story: RepoBuilder):
    """Two of PR 5's commits were cherry-picked; a maintainer's own commit (with a README
    line of its own, so no copy of the third) added the same `dump()`: all of PR 5 is on
    main, its two commits as copies and the third's lines as they are."""
    first, second, third = story.repo.git.rev_list("--reverse", "main..refs/pull/5/head").split()
    story.git("cherry-pick", first, second)
    story.commit("Add dump() and say so", {"config.py": STEP_3, "README.md": "Reads and dumps.\n"})

    best = _check_pr_5(story)

    assert (best["verdict"], best["residual"]) == ("already-merged", [])
    assert any(third[:7] in r and "has their lines anyway" in r for r in best["reasons"])


def test_a_part_landed_prs_commits_that_undo_each_other_are_not_still_to_do(tmp_path: Path):
    """PR 7 fixes the reader, adds a debugging script and takes it out again, then skips
    blank lines; only the first fix was cherry-picked. What is still to do is the last
    commit: the script is in no version of PR 7's change."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Add the config reader", {"config.py": CONFIG})
    builder.pr_branch(
        7,
        [
            ("Read config files as UTF-8", {"config.py": STEP_1}),
            ("Debug the reader", {"debug.py": "from config import load\nprint(load('a.cfg'))\n"}),
            ("Remove the debugging script", {"debug.py": None}),
            ("Skip blank lines and strip keys", {"config.py": STEP_2}),
        ],
    )
    first, debug, undebug, last = builder.repo.git.rev_list(
        "--reverse", "main..refs/pull/7/head"
    ).split()
    builder.git("cherry-pick", first)
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    code, out, err = run_cli(builder.path, "check", "--pr", "7", "--format", "json")

    best = json.loads(out)["findings"][0]
    assert best["verdict"] == "partly-merged"
    assert best["residual"] == [f"{last[:7]} Skip blank lines and strip keys (config.py)"]
    assert any(
        "later commits undid them" in r and debug[:7] in r and undebug[:7] in r
        for r in best["reasons"]
    )
    # The sweep reads the PR's commits against the tip too, though no other candidate of
    # PR 7's is worth replaying: its answer is check's.
    code, out, err = run_cli(builder.path, "sweep", "--format", "json", "--exit-zero")
    assert code == 0, err
    (swept,) = json.loads(out)["partly_done"]
    assert swept["reasons"] == best["reasons"]


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


@pytest.mark.parametrize(
    ("subject", "files"),
    [
        ("Add a logo", {"logo.png": PNG}),
        ("Move the reader", {"config.py": None, "src/config.py": STEP_3}),
        ("Pin the dependencies", {"poetry.lock": "[[package]]\nname = 'x'\n"}),
    ],
    ids=["binary-file", "rename", "ignored-lock-file"],
)
def test_a_part_landed_prs_commit_no_replay_can_read_stays_to_do(
    tmp_path: Path, subject: str, files: dict
):
    """Two of PR 5's commits were cherry-picked; its fourth adds a binary file, only moves a
    file, or changes a lock file prdup ignores: nothing of it can be replayed at the tip, and
    nothing of it is on main, so it stays to do, in `check` and in the sweep alike (never
    "already done" for want of lines to look at)."""
    story = RepoBuilder(tmp_path / "repo")
    story.commit("Add the config reader", {"config.py": CONFIG})
    story.pr_branch(
        5,
        [
            ("Read config files as UTF-8", {"config.py": STEP_1}),
            ("Skip blank lines and strip keys", {"config.py": STEP_2}),
            ("Add dump()", {"config.py": STEP_3}),
            (subject, files),
        ],
    )
    story.commit("Unrelated docs", {"README.md": "Config reader.\n"})
    first, second, *_ = story.repo.git.rev_list("--reverse", "main..refs/pull/5/head").split()
    story.git("cherry-pick", first, second)

    best = _check_pr_5(story)

    assert best["verdict"] == "partly-merged", best
    assert any(subject in line for line in best["residual"]), best
    code, out, err = run_cli(story.path, "sweep", "--format", "json", "--exit-zero")
    assert code == 0, err
    swept = json.loads(out)
    assert [e["pr"] for e in swept["partly_done"]] == [5], swept
    assert swept["already_done"] == [], swept


def test_a_pr_landed_in_part_then_whole_is_merged_and_no_longer_in_part(
    story: RepoBuilder, tmp_path: Path
):
    first, second, third = story.repo.git.rev_list("--reverse", "main..refs/pull/5/head").split()
    story.git("cherry-pick", first, second)
    db = tmp_path / "index.db"
    index_repository(story.path, db_path=db)
    story.git("cherry-pick", third)

    summary = index_repository(story.path, db_path=db)

    assert change(db, 5)["merge_commit"] == story.head("main")
    assert summary.landed_in_part == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM part_landings").fetchone() == (0,)


def test_a_commit_amended_as_it_landed_is_still_the_prs_commit(story: RepoBuilder, tmp_path: Path):
    """PR 5's first two commits are cherry-picked to main; the maintainer edits the third as
    it lands (`git commit -C`: its author, author date and subject kept, its patch not). PR 5
    landed whole, at that commit, not in part with its third commit still to do."""
    first, second, third = story.repo.git.rev_list("--reverse", "main..refs/pull/5/head").split()
    story.git("cherry-pick", first, second)
    story.git("cherry-pick", "--no-commit", third)
    story.write({"config.py": STEP_3.replace("def dump(values):", "def dump(values: dict):")})
    story.git("commit", "-q", "-C", third)
    db = tmp_path / "index.db"

    summary = index_repository(story.path, db_path=db)

    pr5 = change(db, 5)
    assert (pr5["state"], pr5["merge_commit"]) == ("merged", story.head("main"))
    assert summary.landed_in_part == 0


def test_another_pr_repeating_a_commit_that_landed_in_part_is_already_done_in_its_copy(
    story: RepoBuilder,
):
    """PR 5's first commit was cherry-picked to main; PR 9, by someone else, makes that same
    fix: already done in the copy on main."""
    first = story.repo.git.rev_list("--reverse", "main..refs/pull/5/head").split()[0]
    story.git("cherry-pick", first)
    copy = story.head("main")
    story.pr_branch(9, [("Open config as UTF-8", {"config.py": STEP_1})], start="main~2")
    code, _, err = run_cli(story.path, "index", "--quiet")
    assert code == 0, err

    code, out, err = run_cli(story.path, "check", "--pr", "9", "--format", "json")
    assert code == 1, err
    best = json.loads(out)["findings"][0]
    assert (best["verdict"], best["commit"]) == ("already-merged", copy)


def test_a_pr_opened_after_its_commits_landed_is_not_landed_by_them(tmp_path: Path):
    """A backport opened once the fix was on main carries cherry-picks of it: those copies are
    older than the PR, an earlier change, not its landing."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Add the config reader", {"config.py": CONFIG})
    release = builder.head()
    builder.commit("Read config files as UTF-8", {"config.py": STEP_1})
    builder.commit("Skip blank lines and strip keys", {"config.py": STEP_2})
    fixes = builder.repo.git.rev_list("--reverse", f"{release}..main").split()
    builder.checkout("pr-9", release)
    builder.git("cherry-pick", *fixes)
    builder.git("update-ref", "refs/pull/9/head", builder.head())
    builder.checkout("main")
    db = tmp_path / "index.db"
    index_repository(builder.path, db_path=db)

    assert change(db, 9)["merge_commit"] is None


def test_a_pr_rebased_onto_a_maintained_branch_by_a_merge_tool_and_merged_up_is_landed(
    story: RepoBuilder, tmp_path: Path
):
    """Symfony's way: the merge tool rebases the PR onto the oldest maintained branch and
    merges it there as `bug #5 ...`; that branch is merged up into main. Nothing of PR 5 is on
    main's first-parent line, and its head is on no branch."""
    before = story.head("main")
    story.checkout("1.x", "main")
    story.checkout("tool", "refs/pull/5/head")
    story.git("rebase", "-q", "1.x")
    story.checkout("1.x")
    story.git("merge", "-q", "--no-ff", "tool", "-m", "bug #5 [Config] Fix parsing (contributor)")
    landing = story.head()
    story.checkout("main")
    story.git("merge", "-q", "--no-ff", "1.x", "-m", "Merge branch '1.x'")
    story.git("branch", "-q", "-D", "tool", "pr-5")
    db = tmp_path / "index.db"

    summary = index_repository(story.path, db_path=db)

    assert summary.targets == ["main"]
    pr5 = change(db, 5)
    assert (pr5["state"], pr5["source"], pr5["merge_commit"]) == ("merged", "merge-tool", landing)
    # A contributor's branch from before it makes the same fixes: already done in #5.
    story.checkout("contributor", before)
    story.commit("Fix config parsing", {"config.py": STEP_2})
    story.checkout("main")
    code, out, err = run_cli(
        story.path, "check", "--db", str(db), "--format", "json", "contributor"
    )
    assert code == 1, err
    best = json.loads(out)["findings"][0]
    assert (best["pr"], best["verdict"], best["commit"]) == (5, "already-merged", landing)


def test_a_branch_carrying_another_authors_landed_commits_lands_only_its_own(tmp_path: Path):
    """PR 7's branch carries copies of PR 5's two commits (Ann's) under its own one (Bob's),
    and all three were rebased onto main: PR 5 landed by its copies, PR 7 by its own commit;
    Ann's copies are not Bob's work."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Add the config reader", {"config.py": CONFIG})
    ann = builder.pr_branch(
        5,
        [
            ("Read config files as UTF-8", {"config.py": STEP_1}),
            ("Skip blank lines and strip keys", {"config.py": STEP_2}),
        ],
        author="Ann",
        email="ann@example.org",
    )
    builder.pr_branch(7, [("Add dump()", {"config.py": STEP_3})], start=ann, author="Bob")
    builder.commit("Unrelated docs", {"README.md": "Config reader.\n"})
    builder.merge_pr(7, how="rebase")  # Ann's two commits and Bob's, copied onto main
    for number in (5, 7):
        builder.delete_pr_branch(number)
    db = tmp_path / "index.db"

    summary = index_repository(builder.path, db_path=db)

    copies = landed_copies(builder)
    assert (change(db, 5)["merge_commit"], change(db, 5)["landing_base"]) == (
        copies[1],
        builder.head(f"{copies[0]}^"),
    )
    assert (change(db, 7)["merge_commit"], change(db, 7)["landing_base"]) == (copies[2], None)
    assert "2 merged PRs (2 landed by rebase or cherry-pick), 0 open" in summary.line()


def test_an_index_that_recorded_no_own_commits_finds_a_rebase_landing_on_its_next_run(
    story: RepoBuilder, tmp_path: Path
):
    """An index written before PRs' own commits were recorded (the column empty) records them
    on its next run, and a landing by rebase that this run reads is found."""
    db = tmp_path / "index.db"
    index_repository(story.path, db_path=db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE changes SET own_commits = NULL")
    story.merge_pr(5, how="rebase")

    index_repository(story.path, db_path=db)

    assert change(db, 5)["merge_commit"] == story.head("main")


def test_a_pr_whose_authors_commit_landed_but_not_the_commit_it_carries_is_not_landed(
    tmp_path: Path,
):
    """PR 8 carries Ann's unlanded commit under Bob's own one; only Bob's was cherry-picked to
    main: the change PR 8 proposes did not land."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Add the config reader", {"config.py": CONFIG})
    ann = builder.pr_branch(
        4, [("Read config files as UTF-8", {"config.py": STEP_1})], author="Ann", email="a@x.org"
    )
    builder.pr_branch(8, [("Add dump()", {"dump.py": "DUMP = 1\n"})], start=ann, author="Bob")
    builder.commit("Unrelated docs", {"README.md": "Config reader.\n"})
    builder.git("cherry-pick", builder.head("refs/pull/8/head"))
    for number in (4, 8):
        builder.delete_pr_branch(number)
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    assert change(db, 8)["merge_commit"] is None


def test_a_landing_in_several_goes_replays_only_the_run_that_completes_it():
    """Copies of a PR's three commits landed as c1, then someone else's x, then c2 and c3: the
    landed change replayed is the run c2, c3 (from c2's parent), never a range holding x."""
    from index.git.rebase_landings import (
        OwnCommit,
        TargetCommit,
        UnlandedPull,
        find_rebase_landings,
    )

    own = [
        OwnCommit(f"p{i}", f"2024-01-0{i}T00:00:00+00:00", "2024-01-05T00:00:00+00:00")
        for i in (1, 2, 3)
    ]
    pull = UnlandedPull(7, "2024-01-05T00:00:00+00:00", None, None, tuple(own))

    def copy(row: int, sha: str, parent: str, of: int) -> TargetCommit:
        authored = f"2024-01-0{of}T00:00:00+00:00" if of else "2023-12-01T00:00:00+00:00"
        return TargetCommit(row, sha, parent, authored, f"2024-02-0{row}T00:00:00+00:00", "main")

    commits = [
        copy(1, "c1", "b", 1),
        copy(2, "x", "c1", 0),
        copy(3, "c2", "x", 2),
        copy(4, "c3", "c2", 3),
    ]
    same_patch = {"p1": "A", "c1": "A", "p2": "B", "c2": "B", "p3": "C", "c3": "C", "x": "X"}
    [landed] = find_rebase_landings([pull], commits, lambda shas: same_patch)

    assert (landed.landing.sha, landed.start) == ("c3", "x")
    assert [c.sha for c in landed.copies] == ["c1", "c2", "c3"]


def test_a_squash_that_lands_one_pr_is_no_copy_for_another_with_the_same_commit(tmp_path: Path):
    """PR 5's commit was picked onto main as `Fix parsing (#5)` (keeping its author date and
    patch); PR 6, opened later from the same commit, is not landed by #5's landing."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Add the config reader", {"config.py": CONFIG})
    head = builder.pr_branch(5, [("Fix parsing", {"config.py": STEP_2})])
    builder.commit("Unrelated docs", {"README.md": "Config reader.\n"})
    builder.git("cherry-pick", head)
    builder.git("commit", "-q", "--amend", "-m", "Fix parsing (#5)")
    builder.git("update-ref", "refs/pull/6/head", head)
    builder.delete_pr_branch(5)
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    assert change(db, 5)["merge_commit"] == builder.head("main")
    assert change(db, 6)["merge_commit"] is None


@pytest.mark.parametrize("pick", [["cherry-pick", "-x"], ["cherry-pick"]], ids=["-x", "plain"])
@pytest.mark.parametrize("with_metadata", [False, True], ids=["refs", "github"])
def test_a_backport_landed_on_a_release_line_by_cherry_pick_is_merged_there(
    tmp_path: Path, pick: list[str], with_metadata: bool
):
    """PR 20 is merged on main; a bot opens PR 21 for the maintained line 1.x, cherry-picks
    of PR 20's two commits (keeping their author), and a maintainer lands it there with
    `git cherry-pick` rather than GitHub's button: PR 21 is merged on 1.x at the last pick,
    PR 20 stays merged on main at its merge. (GitHub calls PR 21 closed and names the bot.)"""
    from tests.test_landing_branches import land_on

    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Add the config reader", {"config.py": CONFIG})
    builder.checkout("1.x", "main")
    land_on(builder, "1.x", range(10, 15))  # a line PRs land on: a target of its own
    builder.checkout("main")
    fix = builder.pr_branch(
        20,
        [
            ("Read config files as UTF-8", {"config.py": STEP_1}),
            ("Skip blank lines and strip keys", {"config.py": STEP_2}),
        ],
    )
    merge = builder.merge_pr(20, how="merge")
    builder.checkout("backport-21", "1.x")
    builder.git("cherry-pick", "-x", f"{fix}~1", fix)
    builder.git("update-ref", "refs/pull/21/head", builder.head())
    builder.checkout("1.x")
    builder.commit("Release notes", {"NOTES.md": "1.1\n"})
    builder.git(*pick, "refs/pull/21/head~1", "refs/pull/21/head")
    landing = builder.head("1.x")
    builder.checkout("main")
    builder.git("branch", "-q", "-D", "backport-21", "pr-20")
    opened = builder.repo.git.log("-1", "--format=%cI", "refs/pull/21/head")
    export = tmp_path / "prs.json"
    export.write_text(
        json.dumps(
            [
                {
                    "number": 20,
                    "state": "MERGED",
                    "baseRefName": "main",
                    "author": {"login": "contributor"},
                },
                {
                    "number": 21,
                    "state": "CLOSED",
                    "createdAt": opened,
                    "baseRefName": "1.x",
                    "author": {"login": "backport-bot"},
                },
            ]
        )  # fmt: skip
    )
    db = tmp_path / "index.db"

    summary = index_repository(builder.path, db_path=db, prs_json=export if with_metadata else None)

    assert summary.targets == ["main", "1.x (5 PR landings of its own)"]
    pr21 = change(db, 21)
    assert (pr21["state"], pr21["target"], pr21["merge_commit"]) == ("merged", "1.x", landing)
    pr20 = change(db, 20)
    assert (pr20["state"], pr20["target"], pr20["merge_commit"]) == ("merged", "main", merge)


def test_a_prs_commits_made_in_one_second_are_kept_parents_first():
    """A rebase writes many commits in one second; ordered by time, then by sha, a child can
    come before its parent. A PR's commits are listed parents first (as `show` lists them)."""
    from index.indexer import _parents_first

    graph = {"c1": ("base",), "b2": ("c1",), "a3": ("b2",)}

    assert _parents_first(["a3", "b2", "c1"], graph) == ["c1", "b2", "a3"]


def test_a_commit_that_landed_as_another_prs_squash_is_not_still_to_do(story: RepoBuilder):
    """PR 5's second commit was also proposed alone as PR 6 and landed as `... (#6)` (its
    author date and patch kept); its first commit was cherry-picked. PR 5 landed in part: the
    first as its pick, and only the third is still to do (the second is on main, as #6)."""
    first, second, third = story.repo.git.rev_list("--reverse", "main..refs/pull/5/head").split()
    story.git("cherry-pick", first)
    pick = story.head("main")
    story.git("update-ref", "refs/pull/6/head", second)
    story.git("cherry-pick", second)
    story.git("commit", "-q", "--amend", "-m", "Skip blank lines and strip keys (#6)")
    code, _, err = run_cli(story.path, "index", "--quiet")
    assert code == 0, err

    code, out, err = run_cli(story.path, "show", "5", "--format", "json")
    assert code == 0, err
    part = json.loads(out)["landed_in_part"]
    assert [(c["commit"], c["landed_as"]) for c in part] == [(first, pick), (third, None)]


def test_of_two_versions_of_a_commit_the_one_whose_patch_landed_is_landed(tmp_path: Path):
    """PR 5 proposes a commit; its author amends it (same author date and subject, another
    patch) and opens PR 6 with it, which is cherry-picked to main. PR 6 landed, with its very
    patch; PR 5, an earlier version, did not, though it was opened first."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Add the config reader", {"config.py": CONFIG})
    first = builder.pr_branch(5, [("Fix parsing", {"config.py": STEP_1})], author="Ann")
    builder.checkout("pr-6", first)
    builder.write({"config.py": STEP_2})
    builder.git("commit", "-q", "--amend", "-C", first)
    builder.git("update-ref", "refs/pull/6/head", builder.head())
    builder.checkout("main")
    builder.commit("Unrelated docs", {"README.md": "Config reader.\n"})
    builder.git("cherry-pick", builder.head("refs/pull/6/head"))
    for number in (5, 6):
        builder.delete_pr_branch(number)
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    assert change(db, 6)["merge_commit"] == builder.head("main")
    assert change(db, 5)["merge_commit"] is None


def test_of_two_prs_with_the_same_commits_the_one_the_landing_closes_landed(tmp_path: Path):
    """The author opened #30 and again #31 from the same commit; the copy on main says
    `Closes #31`: #31 landed there, not the first opened. Likewise #32 and #33 (two commits
    each) squashed into one commit that closes #33."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Add the config reader", {"config.py": CONFIG, "notes.txt": "a\n"})
    head = builder.pr_branch(30, [("Fix parsing", {"config.py": STEP_2})])
    builder.git("update-ref", "refs/pull/31/head", head)
    two = builder.pr_branch(
        32, [("Note b", {"notes.txt": "a\nb\n"}), ("Note c", {"notes.txt": "a\nb\nc\n"})]
    )
    builder.git("update-ref", "refs/pull/33/head", two)
    builder.commit("Unrelated docs", {"README.md": "Config reader.\n"})
    builder.git("cherry-pick", head)
    builder.git("commit", "-q", "--amend", "-m", "Fix parsing\n\nCloses #31")
    copy = builder.head()
    builder.git("merge", "-q", "--squash", "pr-32")
    builder.git("commit", "-q", "-m", "Notes b and c\n\nCloses #33")
    squash = builder.head()
    builder.git("branch", "-q", "-D", "pr-30", "pr-32")
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    assert (change(db, 31)["merge_commit"], change(db, 30)["merge_commit"]) == (copy, None)
    assert (change(db, 33)["merge_commit"], change(db, 32)["merge_commit"]) == (squash, None)


def test_a_pr_landed_in_part_then_closed_by_a_commit_in_one_run_is_merged_only(
    story: RepoBuilder, tmp_path: Path
):
    """Two of PR 5's commits are picked onto main, then a maintainer commits the rest saying
    "Closes #5": a first run finds it merged and records no landing in part for it (a later
    run, which reads only what changed, would drop such rows: both runs must agree)."""
    first, second, _ = story.repo.git.rev_list("--reverse", "main..refs/pull/5/head").split()
    story.git("cherry-pick", first, second)
    story.write({"config.py": STEP_3})
    story.git("commit", "-q", "--author", "Contributor 5 <author@example.com>", "-m",
              "Add dump() to the config reader\n\nCloses #5")  # fmt: skip
    db = tmp_path / "index.db"

    summary = index_repository(story.path, db_path=db)

    assert (change(db, 5)["state"], change(db, 5)["source"]) == ("merged", "closes")
    assert summary.landed_in_part == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM part_landings").fetchone() == (0,)


def test_an_identical_pr_is_not_landed_by_the_pick_of_another_prs_commit(tmp_path: Path):
    """PR 30 and PR 31, by two contributors, make the same one-line fix. PR 30 is merged on
    main, and its commit is cherry-picked onto the maintained line 1.x (its author kept); PR
    31 is closed. The pick on 1.x has PR 31's patch too, but it is PR 30's commit: PR 31 did
    not land by it (ember.js #4223 was "merged on release-1-13" by #4214's pick, and so no
    duplicate of #4214 but its "backport"). PR 31 is already done in PR 30."""
    from tests.test_landing_branches import land_on

    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Add the config reader", {"config.py": CONFIG})
    builder.checkout("1.x", "main")
    land_on(builder, "1.x", range(10, 15))
    builder.checkout("main")
    fix = builder.pr_branch(30, [("Read config files as UTF-8", {"config.py": STEP_1})])
    builder.pr_branch(31, [("Open the config with an encoding", {"config.py": STEP_1})])
    builder.merge_pr(30, how="merge")
    builder.checkout("1.x")
    builder.git("cherry-pick", fix)
    builder.checkout("main")
    builder.git("branch", "-q", "-D", "pr-30", "pr-31")
    export = tmp_path / "prs.json"
    export.write_text(
        json.dumps(
            [
                {"number": 30, "state": "MERGED", "baseRefName": "main"},
                {"number": 31, "state": "CLOSED", "baseRefName": "main"},
            ]
        )
    )
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db, prs_json=export)

    assert change(db, 31)["state"] == "closed"
    code, out, err = run_cli(
        builder.path, "check", "--db", str(db), "--pr", "31", "--format", "json"
    )
    assert code == 1, err
    best = json.loads(out)["findings"][0]
    assert (best["pr"], best["verdict"]) == (30, "already-merged"), best
