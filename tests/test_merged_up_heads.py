"""PRs landed on a release line that is merged up into main, without GitHub's metadata.

Stories (tokio's way): release lines `1.0.x` and `1.1.x` live beside main; a PR "Merge
'v1.0.1' into '1.1.x' (#N)" merges one line's release into the next and lands by
fast-forward; a fix lands on `1.1.x` the same way, after such a merge; the lines are merged
into main at each release. Such a PR's change is its own commit(s), not the line's history
since it left main: else it "made" every fix the older line never had.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from index.indexer import index_repository
from tests.repo_builder import RepoBuilder, run_cli


def change(db: Path, number: int) -> dict:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute("SELECT * FROM changes WHERE number = ?", (number,)).fetchone()
        return dict(row) if row else {}


def files_of(db: Path, number: int) -> set[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT path FROM files WHERE change_id = (SELECT id FROM changes WHERE number = ?)",
            (number,),
        ).fetchall()
    return {path for (path,) in rows}


TIMEOUT = """def wait(timeout):
    return poll(timeout)
"""
FIXED = """def wait(timeout):
    if timeout is None:
        timeout = 30.0
    return poll(timeout)
"""


def release_lines(builder: RepoBuilder) -> tuple[str, str]:
    """main, `1.0.x` cut early, the timeout fix on main (#2), `1.1.x` cut after it; `1.0.x`
    releases v1.0.1 and main merges it. Returns (1.0.x's release, 1.1.x's tip)."""
    builder.commit("Initial", {"wait.py": TIMEOUT, "CHANGELOG.md": "# 1.0.0\n"})
    builder.checkout("1.0.x", "main")
    builder.checkout("main")
    builder.pr_branch(2, [("Default the timeout", {"wait.py": FIXED})])
    builder.merge_pr(2, how="squash")
    builder.delete_pr_branch(2)
    builder.checkout("1.1.x", "main")
    builder.commit("chore: prepare v1.1.0", {"CHANGELOG.md": "# 1.1.0\n\n# 1.0.0\n"})
    builder.checkout("1.0.x")
    release = builder.commit("chore: prepare v1.0.1", {"CHANGELOG.md": "# 1.0.1\n\n# 1.0.0\n"})
    builder.git("tag", "v1.0.1")
    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "v1.0.1", "-m", "Merge 'v1.0.1' into 'main' (#4)")
    return release, builder.head("1.1.x")


def merge_up_pr(builder: RepoBuilder, number: int, release: str, subject: str = "") -> str:
    """PR `number`: a branch from `1.1.x` merging `release`, its subject naming the PR unless
    `subject` says otherwise; landed on `1.1.x` by fast-forward, and `1.1.x` merged into main."""
    builder.checkout(f"merge-{number}", "1.1.x")
    subject = subject or f"Merge 'v1.0.1' into '1.1.x' (#{number})"
    builder.git("merge", "-q", "--no-ff", "-X", "ours", release, "-m", subject)
    head = builder.head()
    builder.git("update-ref", f"refs/pull/{number}/head", head)
    builder.checkout("1.1.x")
    builder.git("merge", "-q", "--ff-only", head)
    builder.git("branch", "-q", "-D", f"merge-{number}")
    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "1.1.x", "-m", "Merge '1.1.x' into 'main' (#9)")
    return head


def test_a_merge_up_pr_named_in_its_own_head_is_that_merge_alone(tmp_path: Path):
    builder = RepoBuilder(tmp_path / "repo")
    release, line_tip = release_lines(builder)
    head = merge_up_pr(builder, 5, release)
    # An open PR from 1.0.x makes the timeout fix #2 made on main.
    builder.pr_branch(7, [("Default the timeout to 30 s", {"wait.py": FIXED})], start="1.0.x")
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    pr5 = change(db, 5)
    assert (pr5["state"], pr5["head_sha"], pr5["base_sha"]) == ("merged", head, line_tip)
    assert "wait.py" not in files_of(db, 5)  # the fix #2 made is no work of the merge-up
    code, out, err = run_cli(
        builder.path, "check", "--db", str(db), "--pr", "7", "--format", "json"
    )
    named = [finding["pr"] for finding in json.loads(out)["findings"]]
    assert 5 not in named, out
    assert named[:1] == [2], out


def test_a_merge_up_pr_whose_subject_names_no_pr_is_that_merge_alone(tmp_path: Path):
    builder = RepoBuilder(tmp_path / "repo")
    release, line_tip = release_lines(builder)
    head = merge_up_pr(builder, 5, release, "Merge branch '1.0.x' into 1.1.x")
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    assert (change(db, 5)["head_sha"], change(db, 5)["base_sha"]) == (head, line_tip)
    assert "wait.py" not in files_of(db, 5)


def test_a_fix_landed_on_a_release_line_after_a_merge_up_is_its_own_commit(tmp_path: Path):
    builder = RepoBuilder(tmp_path / "repo")
    release, _ = release_lines(builder)
    builder.checkout("1.1.x")
    builder.git(
        "merge", "-q", "--no-ff", "-X", "ours", release, "-m", "Merge 'v1.0.1' into '1.1.x'"
    )
    line_tip = builder.head()
    head = builder.pr_branch(
        6, [("ci: pin the toolchain", {"ci.yml": "toolchain: 1.70\n"})], base="1.1.x"
    )
    builder.checkout("1.1.x")
    builder.git("merge", "-q", "--ff-only", head)  # landed by fast-forward
    builder.delete_pr_branch(6)
    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "1.1.x", "-m", "Merge '1.1.x' into 'main' (#9)")
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    pr6 = change(db, 6)
    assert (pr6["state"], pr6["base_sha"]) == ("merged", line_tip)
    assert files_of(db, 6) == {"ci.yml"}


def test_an_open_backport_to_a_release_line_is_said_as_one_without_metadata(tmp_path: Path):
    """PR 5 cherry-picks main's fix (#2) onto `tokio-1.4.x`, which has one landing of its own
    and is not merged into main: the line is read, and PR 5 is a backport (its line lacks the
    fix), not "already done in #2"."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"wait.py": TIMEOUT, "CHANGELOG.md": "# 1.4.0\n"})
    builder.checkout("tokio-1.4.x", "main")
    builder.checkout("main")
    builder.pr_branch(2, [("Default the timeout", {"wait.py": FIXED})])
    fix = builder.merge_pr(2, how="squash")
    builder.delete_pr_branch(2)
    builder.pr_branch(3, [("chore: prepare v1.4.1", {"CHANGELOG.md": "# 1.4.1\n"})],
                      base="tokio-1.4.x")  # fmt: skip
    builder.merge_pr(3, how="squash", base="tokio-1.4.x")
    builder.delete_pr_branch(3)
    builder.checkout("pr-5", "tokio-1.4.x")
    builder.git("cherry-pick", fix)
    builder.git("update-ref", "refs/pull/5/head", builder.head())
    builder.checkout("main")
    builder.git("branch", "-q", "-D", "pr-5")  # the contributor's fork holds the branch
    db = tmp_path / "index.db"

    summary = index_repository(builder.path, db_path=db)

    assert summary.targets == ["main", "tokio-1.4.x (1 PR landing of its own)"]
    assert change(db, 3)["state"] == "merged"
    assert change(db, 5)["fork_line"] == "tokio-1.4.x"
    code, out, err = run_cli(
        builder.path, "check", "--db", str(db), "--pr", "5", "--format", "json"
    )
    best = json.loads(out)["findings"][0]
    assert best["pr"] == 2 and best["verdict"] not in {"already-merged", "duplicate"}, out
    assert any("a backport, not a duplicate" in reason for reason in best["reasons"]), out


def test_a_pick_of_a_landing_onto_a_merged_up_line_is_a_port(tmp_path: Path):
    """`1.4.x` is merged up into main at each release, so git cannot tell that PR 5 is for
    it; but PR 5's commit is main's squash of #2, picked with its subject, onto a base that
    lacks it: a port of #2, not "already done in #2"."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"wait.py": TIMEOUT, "CHANGELOG.md": "# 1.4.0\n"})
    builder.checkout("1.4.x", "main")
    builder.commit("chore: prepare v1.4.1", {"CHANGELOG.md": "# 1.4.1\n"})
    builder.checkout("main")
    builder.pr_branch(2, [("Default the timeout", {"wait.py": FIXED})])
    fix = builder.merge_pr(2, how="squash")
    builder.delete_pr_branch(2)
    builder.git("merge", "-q", "--no-ff", "1.4.x", "-m", "Merge '1.4.x' into 'main'")
    builder.checkout("pr-5", "1.4.x")
    builder.git("cherry-pick", fix)
    builder.git("update-ref", "refs/pull/5/head", builder.head())
    builder.checkout("main")
    builder.git("branch", "-q", "-D", "pr-5")
    db = tmp_path / "index.db"
    index_repository(builder.path, db_path=db)

    code, out, err = run_cli(
        builder.path, "check", "--db", str(db), "--pr", "5", "--format", "json"
    )

    best = json.loads(out)["findings"][0]
    assert best["pr"] == 2 and best["verdict"] not in {"already-merged", "duplicate"}, out
    assert any("a port of #2" in reason for reason in best["reasons"]), out
    assert code == 0, err


def test_one_fix_picked_onto_two_lines_is_two_ports_not_a_resubmission(tmp_path: Path):
    """Ann picks main's fix (#2) onto `1.4.x` (#5) and onto `1.5.x` (#6), both lines merged up
    into main: the same patch by the same author, but one port per line, not #6 opened again."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"wait.py": TIMEOUT, "CHANGELOG.md": "# 1.4.0\n"})
    for line in ("1.4.x", "1.5.x"):
        builder.checkout(line, "main")
        builder.commit(f"chore: prepare {line}", {"CHANGELOG.md": f"# {line}\n"})
    builder.checkout("main")
    builder.pr_branch(2, [("Default the timeout", {"wait.py": FIXED})])
    fix = builder.merge_pr(2, how="squash")
    builder.delete_pr_branch(2)
    for number, line in ((5, "1.4.x"), (6, "1.5.x")):
        builder.git("merge", "-q", "--no-ff", "-X", "ours", line, "-m", f"Merge '{line}'")
        builder.checkout(f"pick-{number}", line)
        builder.git("cherry-pick", fix)
        builder.git("update-ref", f"refs/pull/{number}/head", builder.head())
        builder.checkout("main")
        builder.git("branch", "-q", "-D", f"pick-{number}")
    db = tmp_path / "index.db"
    index_repository(builder.path, db_path=db)

    code, out, err = run_cli(
        builder.path, "check", "--db", str(db), "--pr", "6", "--format", "json"
    )

    found = json.loads(out)["findings"]
    assert [f["pr"] for f in found if f["verdict"] in {"duplicate", "already-merged"}] == [], out
    [about_5] = [f for f in found if f["pr"] == 5]
    assert any("two ports of one change" in reason for reason in about_5["reasons"]), out


def test_a_copy_titled_as_the_landing_but_made_before_it_is_the_same_change(tmp_path: Path):
    """PR 5's commit is titled "Default the timeout (#2)" and makes #2's change, but it was
    made before #2 landed, on main itself: the author's own squash, not a pick of the landing.
    #2 landing on main is "already done" for it, not a port."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"wait.py": TIMEOUT, "CHANGELOG.md": "# 1.4.0\n"})
    builder.pr_branch(2, [("Default the timeout", {"wait.py": FIXED})])
    builder.pr_branch(5, [("Default the timeout (#2)", {"wait.py": FIXED})])
    builder.commit("Unrelated docs", {"README.md": "Waits.\n"})
    builder.merge_pr(2, how="squash")
    for number in (2, 5):
        builder.delete_pr_branch(number)
    db = tmp_path / "index.db"
    index_repository(builder.path, db_path=db)

    code, out, err = run_cli(
        builder.path, "check", "--db", str(db), "--pr", "5", "--format", "json"
    )

    best = json.loads(out)["findings"][0]
    assert (best["pr"], best["verdict"]) == (2, "already-merged"), out


def test_an_open_merge_up_pr_named_in_its_own_head_is_that_merge_alone(tmp_path: Path):
    """PR 7 merges v1.0.1 into main ("... (#7)") and is never landed: its change is what the
    merge brings to main (the release's changelog), not `1.0.x`'s history since main's fork."""
    builder = RepoBuilder(tmp_path / "repo")
    release, _ = release_lines(builder)
    builder.checkout("merge-7", "main~1")
    builder.git("merge", "-q", "--no-ff", "-X", "ours", release, "-m",
                "Merge 'v1.0.1' into 'main' (#7)")  # fmt: skip
    builder.git("update-ref", "refs/pull/7/head", builder.head())
    first_parent = builder.head("HEAD^1")
    builder.checkout("main")
    builder.git("branch", "-q", "-D", "merge-7")
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    assert (change(db, 7)["state"], change(db, 7)["base_sha"]) == ("unmerged", first_parent)


def test_a_merged_pr_checked_says_it_is_merged(tmp_path: Path):
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"wait.py": TIMEOUT})
    builder.pr_branch(2, [("Default the timeout", {"wait.py": FIXED})])
    builder.merge_pr(2, how="squash")
    db = tmp_path / "index.db"
    index_repository(builder.path, db_path=db)

    _, text, _ = run_cli(builder.path, "check", "--db", str(db), "--pr", "2")
    _, out, _ = run_cli(builder.path, "check", "--db", str(db), "--pr", "2", "--format", "json")

    assert "PR #2 (merged) against main" in text, text
    assert json.loads(out)["query"]["state"] == "merged"


def test_a_branch_opened_as_two_prs_and_merged_by_one_lands_both(tmp_path: Path):
    """PRs 7 and 9 are one branch; the merge names #9 ("merged branch fix (PR #9)"): PR 7's
    head is that merge's second parent, so it landed there too (GitHub says merged)."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"wait.py": TIMEOUT})
    head = builder.pr_branch(7, [("Default the timeout", {"wait.py": FIXED})])
    builder.git("update-ref", "refs/pull/9/head", head)
    builder.git("merge", "-q", "--no-ff", "pr-7", "-m", "merged branch fix (PR #9)")
    landing = builder.head()
    builder.delete_pr_branch(7)
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    assert (change(db, 7)["state"], change(db, 7)["merge_commit"]) == ("merged", landing)


def test_a_pr_to_a_branch_the_clone_lacks_starts_after_the_landings_github_made_there(
    tmp_path: Path,
):
    """Dependabot's #6 bumps one action on the `1.10` line, whose branch this clone lacks;
    the line's history below it holds #5, another bump GitHub squash-merged there ("... (#5)",
    committed by GitHub). #6's change is its own commit, not #5's too (composer's bumps to
    1.10 were one "duplicate" group of thirteen)."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit(
        "Initial", {"ci.yml": "uses: actions/checkout@v6\nuses: actions/attest@v4.2.0\n"}
    )
    builder.checkout("1.10", builder.head())
    builder.write({"ci.yml": "uses: actions/checkout@v7\nuses: actions/attest@v4.2.0\n"})
    with builder.repo.git.custom_environment(
        GIT_COMMITTER_NAME="GitHub", GIT_COMMITTER_EMAIL="noreply@github.com"
    ):
        builder.repo.git.commit("-q", "-m", "Bump actions/checkout from 6 to 7 (#5)")
    squash = builder.head()
    builder.checkout("main")
    builder.pr_branch(
        6,
        [
            (
                "Bump actions/attest",
                {"ci.yml": "uses: actions/checkout@v7\nuses: actions/attest@v4.2.1\n"},
            )
        ],
        start="1.10",
    )
    builder.git("branch", "-q", "-D", "1.10")
    builder.delete_pr_branch(6)  # a fork's branch: the clone has its PR ref only
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db)

    assert (change(db, 6)["base_sha"], change(db, 6)["added"]) == (squash, 1)
    assert squash not in change(db, 6)["own_commits"]  # whose copies would land it by rebase


def _twins_merged_on_develop(tmp_path: Path, subject: str) -> tuple[RepoBuilder, str]:
    """PRs 7 and 9 are one branch cut from `develop` (which has work main lacks); a merge
    whose second parent is that head, with `subject`, lands it on `develop`, and `develop`
    is merged into main (zf2's git-flow)."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"wait.py": TIMEOUT})
    builder.checkout("develop", "main")
    builder.commit("Develop's own work", {"other.py": "LIMIT = 1\n"})
    head = builder.pr_branch(7, [("Default the timeout", {"wait.py": FIXED})], base="develop")
    builder.git("update-ref", "refs/pull/9/head", head)
    builder.checkout("develop")
    builder.git("merge", "-q", "--no-ff", "pr-7", "-m", subject)
    landing = builder.head()
    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "develop", "-m", "Merge branch 'develop'")
    builder.delete_pr_branch(7)
    builder.git("branch", "-q", "-D", "develop")
    return builder, landing


def test_a_branch_opened_as_two_prs_and_merged_as_one_by_its_hotfix_branch_lands_both(
    tmp_path: Path,
):
    """zf2 merges #9 through a local branch named after it ("Merge branch 'hotfix/9' into
    develop"): #7, opened from the same head, landed by that merge too."""
    builder, landing = _twins_merged_on_develop(tmp_path, "Merge branch 'hotfix/9' into develop")
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db, targets=["main"])

    for number in (7, 9):
        assert (change(db, number)["state"], change(db, number)["merge_commit"]) == (
            "merged",
            landing,
        ), number


def test_a_merge_named_after_a_twin_pr_is_the_heads_merger(tmp_path: Path):
    """Symfony's merge tool lands #9 on `develop` ("bug #9 ..."); #7 is the same branch: the
    merge that names #9 merged #7's head as well, so #7's change starts where that merge's
    branch left `develop`, as #9's does, not where `develop` left main."""
    builder, landing = _twins_merged_on_develop(tmp_path, "bug #9 [Wait] Default the timeout")
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db, targets=["main"])

    assert change(db, 7)["merge_commit"] == landing
    assert change(db, 7)["base_sha"] == change(db, 9)["base_sha"] == builder.head(f"{landing}^")


def test_a_stacked_prs_merge_is_not_the_landing_of_the_pr_below_it(tmp_path: Path):
    """PR 9 is stacked on PR 7 (its branch is #7's head and one commit more). #7 lands on the
    release line `1.x` by a merge of its own; #9's merge brings #7's head into main as well.
    #7's landing is its own merge, and its change its own commit, not #9's."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Initial", {"wait.py": TIMEOUT, "notes.txt": "a\n"})
    builder.checkout("1.x", "main")
    builder.checkout("main")
    builder.pr_branch(7, [("Default the timeout", {"wait.py": FIXED})])
    builder.pr_branch(9, [("Note b", {"notes.txt": "a\nb\n"})], start="pr-7")
    own = builder.merge_pr(7, base="1.x")
    stacked = builder.merge_pr(9)
    db = tmp_path / "index.db"

    index_repository(builder.path, db_path=db, targets=["main", "1.x"])

    assert change(db, 7)["merge_commit"] == own
    assert change(db, 9)["merge_commit"] == stacked
    assert files_of(db, 7) == {"wait.py"}
