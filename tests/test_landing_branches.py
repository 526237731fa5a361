"""What landed where, with `prdup index` and no flags.

Stories: a project keeps a maintained release line `1.x` that PRs land on and that main does
not merge; another merges its PRs into `develop` and merges `develop` into main at each
release, so no PR merge is on main's first-parent line.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from index.git.landing_branches import MIN_LANDINGS
from index.indexer import index_repository
from tests.repo_builder import RepoBuilder


def change(db: Path, number: int) -> dict:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute("SELECT * FROM changes WHERE number = ?", (number,)).fetchone()
        return dict(row) if row else {}


def land_on(builder: RepoBuilder, branch: str, numbers: range) -> None:
    for number in numbers:
        builder.pr_branch(
            number, [(f"Fix {number}", {f"fix_{number}.py": f"FIX = {number}\n"})], base=branch
        )
        builder.merge_pr(number, how="merge", base=branch)
        builder.delete_pr_branch(number)


def test_a_release_line_prs_land_on_is_read_without_being_named(tmp_path: Path):
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    builder.checkout("1.x", "main")
    land_on(builder, "1.x", range(10, 10 + MIN_LANDINGS))
    # A feature branch that took one stacked PR is no line PRs land on.
    builder.checkout("feature", "main")
    land_on(builder, "feature", range(40, 41))
    builder.checkout("main")
    builder.commit("Work on main", {"app.py": "VERSION = 2\n"})
    db = tmp_path / "index.db"

    summary = index_repository(builder.path, db_path=db)

    assert summary.targets == ["main", f"1.x ({MIN_LANDINGS} PR landings of its own)"]
    assert f"indexed main, 1.x ({MIN_LANDINGS} PR landings of its own):" in summary.line()
    for number in range(10, 10 + MIN_LANDINGS):
        pr = change(db, number)
        assert (pr["state"], pr["target"]) == ("merged", "1.x")
    assert change(db, 40)["state"] == "unmerged"


def test_a_named_target_is_read_alone(tmp_path: Path):
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    builder.checkout("1.x", "main")
    land_on(builder, "1.x", range(10, 10 + MIN_LANDINGS))
    builder.checkout("main")

    summary = index_repository(builder.path, db_path=tmp_path / "index.db", targets=["main"])

    assert summary.targets == ["main"]


def test_a_pr_merged_into_develop_then_merged_up_is_landed_at_its_own_merge(tmp_path: Path):
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    builder.checkout("develop", "main")
    builder.pr_branch(7, [("Fix the parser", {"parse.py": "STRICT = True\n"})], base="develop")
    landing = builder.merge_pr(7, how="merge", base="develop")
    builder.delete_pr_branch(7)
    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "develop", "-m", "Merge branch 'develop'")
    builder.git("branch", "-q", "-D", "develop")  # nothing but main is left
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    pr7 = change(db, 7)
    assert (pr7["state"], pr7["merge_commit"]) == ("merged", landing)


def test_a_merge_that_only_carried_a_prs_head_is_not_its_landing(tmp_path: Path):
    """A maintainer's branch merged the PR's head along with work of their own: no subject
    names the PR, so no merge is its landing; its own commit, which the target holds, is."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    head = builder.pr_branch(8, [("Fix the parser", {"parse.py": "STRICT = True\n"})])
    builder.checkout("cache", "main")
    builder.commit("Cache things", {"cache.py": "CACHE = {}\n"})
    builder.git("merge", "-q", "--no-ff", "pr-8", "-m", "Merge branch 'topic' into cache")
    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "cache", "-m", "Merge branch 'cache'")
    builder.git("branch", "-q", "-D", "cache", "pr-8")
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    pr8 = change(db, 8)
    assert (pr8["state"], pr8["merge_commit"], pr8["source"]) == ("merged", head, "fast-forward")


def test_a_pr_pulled_from_its_fork_or_merged_into_a_line_by_branch_name_is_landed_there(
    tmp_path: Path,
):
    """Maintainers who merged PRs by hand: #20's head pulled from its fork into a local branch
    (`git pull URL topic`), which was merged into develop; #21's pulled straight onto main
    from its author's branch `hotfix/19` (named after an issue, not a PR); #22's local branch
    merged into develop by its topic name. No subject names the PR, yet each merge took the
    PR's head as it was: each PR is merged, at its own head (a merge that names no PR is no
    change of its own: the commits it brought are read one by one) or at the merge that took
    its head; no merge is a direct commit of its own, nor a PR #19's."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    builder.checkout("develop", "main")
    builder.pr_branch(20, [("Fix the parser", {"parse.py": "STRICT = True\n"})], base="develop")
    builder.checkout("ann-parser", "develop")
    pulled = "Merge branch 'parser' of https://github.com/ann/app into ann-parser"
    builder.git("merge", "-q", "--no-ff", "pr-20", "-m", pulled)
    landing_20 = builder.head()
    builder.checkout("develop")
    builder.git("merge", "-q", "--no-ff", "ann-parser", "-m", "Merge branch 'ann-parser'")
    builder.pr_branch(22, [("Log less", {"log.py": "LEVEL = 'warn'\n"})], base="develop")
    builder.git("merge", "-q", "--no-ff", "pr-22", "-m", "Merge branch 'hotfix/log' into develop")
    landing_22 = builder.head()
    builder.checkout("main")
    builder.pr_branch(21, [("Tidy the docs", {"README.md": "tidy\n"})])
    pulled = "Merge branch 'hotfix/19' of git://github.com/bob/app"  # named after an issue
    builder.git("merge", "-q", "--no-ff", "pr-21", "-m", pulled)
    landing_21 = builder.head()
    builder.git("merge", "-q", "--no-ff", "develop", "-m", "Merge branch 'develop'")
    builder.git("branch", "-q", "-D", "ann-parser", "pr-20", "pr-21", "pr-22")
    heads = {n: builder.head(f"refs/pull/{n}/head") for n in (20, 21, 22)}
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    merges = {20: landing_20, 21: landing_21, 22: landing_22}
    for number, merge in merges.items():
        row = change(db, number)
        assert row["state"] == "merged", number
        assert row["merge_commit"] in (heads[number], merge), number  # its head, or what took it
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT kind, number FROM changes WHERE kind = 'commit' AND sha IN (?, ?, ?)",
            tuple(merges.values()),
        ).fetchall()
    assert rows == [] and change(db, 19) == {}


def test_the_merge_that_names_a_pr_is_its_landing_before_an_earlier_pull_of_its_head(
    tmp_path: Path,
):
    """A contributor pulled #23's head into their own branch before GitHub's merge of #23 into
    develop; both reached main. The merge that names #23 is its landing."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    builder.checkout("develop", "main")
    builder.pr_branch(23, [("Fix the parser", {"parse.py": "STRICT = True\n"})], base="develop")
    builder.checkout("bob-cache", "develop")
    pulled = "Merge branch 'parser' of https://github.com/ann/app into bob-cache"
    builder.git("merge", "-q", "--no-ff", "pr-23", "-m", pulled)
    landing = builder.merge_pr(23, how="merge", base="develop")
    builder.git("merge", "-q", "--no-ff", "bob-cache", "-m", "Merge branch 'bob-cache'")
    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "develop", "-m", "Merge branch 'develop'")
    builder.git("branch", "-q", "-D", "bob-cache", "develop")
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    assert (change(db, 23)["state"], change(db, 23)["merge_commit"]) == ("merged", landing)


def test_a_merge_that_names_the_pr_on_a_line_is_its_landing_before_the_pull_of_its_head(
    tmp_path: Path,
):
    """The maintainer pulled #40's head into a local branch `hotfix/40`, added a fix of their
    own, and merged that branch into develop: the merge into develop names #40 and is its
    landing, not the pull before it."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    builder.checkout("develop", "main")
    builder.pr_branch(40, [("Fix the parser", {"parse.py": "STRICT = True\n"})], base="develop")
    builder.checkout("hotfix/40", "develop")
    pulled = "Merge branch 'parser' of https://github.com/ann/app into hotfix/40"
    builder.git("merge", "-q", "--no-ff", "pr-40", "-m", pulled)
    builder.commit("Tidy the parser fix", {"parse.py": "STRICT = True\nLAX = False\n"})
    builder.checkout("develop")
    builder.git(
        "merge", "-q", "--no-ff", "hotfix/40", "-m", "Merge branch 'hotfix/40' into develop"
    )
    landing = builder.head()
    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "develop", "-m", "Merge branch 'develop'")
    builder.git("branch", "-q", "-D", "hotfix/40", "develop", "pr-40")
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    assert (change(db, 40)["state"], change(db, 40)["merge_commit"]) == ("merged", landing)


def test_a_merge_that_pulled_a_prs_head_lands_it_and_not_an_earlier_pr_with_its_patch(
    tmp_path: Path,
):
    """#50 and #51 make the same fix in commits of their own; main pulled #51's head from its
    fork. #51 landed (at its own commit, which that merge brought); #50, whose patch it
    equals, did not land there."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    fix = {"parse.py": "STRICT = True\n"}
    builder.pr_branch(50, [("Fix the parser", fix)])
    head_51 = builder.pr_branch(51, [("Make the parser strict", fix)])
    pulled = "Merge branch 'strict' of https://github.com/carol/app"
    builder.git("merge", "-q", "--no-ff", "pr-51", "-m", pulled)
    landing = builder.head()
    builder.git("branch", "-q", "-D", "pr-50", "pr-51")
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    assert landing != head_51
    assert (change(db, 51)["state"], change(db, 51)["merge_commit"]) == ("merged", head_51)
    assert change(db, 50)["merge_commit"] is None


def test_a_forks_own_squash_carried_in_by_another_pr_does_not_land_the_pr_it_names(
    tmp_path: Path,
):
    """PR 9's branch holds `Tidy (#3)`, a squash of its fork's own PR 3; it shares no line
    with this repository's PR 3, which stays unlanded."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    builder.pr_branch(3, [("Add a parser", {"parse.py": "STRICT = True\n"})])
    builder.pr_branch(
        9,
        [
            ("Tidy (#3)", {"tidy.py": "TIDY = 1\n"}),
            ("Add the CLI", {"cli.py": "MAIN = 1\n"}),
        ],
    )
    builder.merge_pr(9, how="merge")
    builder.delete_pr_branch(3)
    builder.delete_pr_branch(9)
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    pr3 = change(db, 3)
    assert (pr3["state"], pr3["merge_commit"]) == ("unmerged", None)


def test_a_line_whose_tip_a_later_pr_was_opened_from_is_still_read(tmp_path: Path):
    """A PR opened later straight from `17.03.x`'s tip (its head is that merge) takes nothing
    from the line: its landings are still the line's."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    builder.checkout("17.03.x", "main")
    land_on(builder, "17.03.x", range(10, 12))
    builder.git("update-ref", "refs/pull/40/head", builder.head("17.03.x"))
    builder.checkout("main")
    builder.commit("Work on main", {"app.py": "VERSION = 2\n"})
    db = tmp_path / "index.db"

    summary = index_repository(builder.path, db_path=db)

    assert summary.targets == ["main", "17.03.x (2 PR landings of its own)"]
    assert change(db, 10)["state"] == "merged"


def test_commits_naming_the_pr_a_branch_is_the_head_of_are_no_landings(tmp_path: Path):
    """A contributor's branch in the repository holds PR 8's commits, each titled "(#8)" (its
    earlier squashes re-applied), and one other PR's squash: one landing, not five."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    builder.checkout("work/steal", "main")
    for step in range(4):
        builder.commit(f"rt: stealing step {step} (#8)", {"steal.py": f"STEP = {step}\n"})
    builder.commit("test: drop a flaky task (#3)", {"test_steal.py": "FLAKY = False\n"})
    builder.commit("wip: fast path", {"steal.py": "STEP = 9\n"})
    builder.git("update-ref", "refs/pull/8/head", builder.head())
    builder.checkout("main")
    builder.commit("Work on main", {"app.py": "VERSION = 2\n"})
    db = tmp_path / "index.db"

    summary = index_repository(builder.path, db_path=db)

    assert summary.targets == ["main"]
    assert change(db, 8)["state"] == "unmerged"


def test_a_branch_named_by_a_bare_number_needs_the_landings_of_any_branch(tmp_path: Path):
    """`26258` (an issue's number, or a date) is no release line by its name: one landing does
    not make it a line PRs land on, as it does for `1.4.x`."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    for branch, number in (("26258", 10), ("1.4.x", 20)):
        builder.checkout(branch, "main")
        land_on(builder, branch, range(number, number + 1))
    builder.checkout("main")
    builder.commit("Work on main", {"app.py": "VERSION = 2\n"})

    summary = index_repository(builder.path, db_path=tmp_path / "index.db")

    assert summary.targets == ["main", "1.4.x (1 PR landing of its own)"]


def test_a_squash_titled_with_a_gh_reference_lands_the_pr_it_names(tmp_path: Path):
    """Some projects' squash titles end with GitHub's other way to write a reference, "(GH-N)"
    (psf/black, CPython): that commit is PR N's landing, as "(#N)" is. Without it, PR N
    stayed in the open backlog, "partly done" in an earlier PR with its own patch."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"app.py": "VERSION = 1\n"})
    builder.pr_branch(7, [("Check the formatting in CI", {"ci.py": "CHECK = True\n"})])
    builder.git("merge", "-q", "--squash", "pr-7")
    # Edited as it landed: no patch of the PR's is on main, only the title names it.
    builder.write({"ci.py": "CHECK = True  # on every PR\n"})
    builder.git("add", "ci.py")
    builder.git("commit", "-q", "-m", "Enforce no formatting changes for PRs via CI (GH-7)")
    landing = builder.head()
    index_repository(builder.path, builder.path / "prdup.db")
    row = change(builder.path / "prdup.db", 7)
    assert (row["state"], row["merge_commit"]) == ("merged", landing), row
