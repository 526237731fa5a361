"""Which branch is the target: the remote's default branch, never the one checked out.

The story: the project (`upstream`, a RepoBuilder) has PR 1 merged and PR 2 open. A contributor
clones it the way CI checkouts do (no `origin/HEAD`), works on a feature branch, and runs
`prdup index` there.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from index.errors import MissingRevision
from index.indexer import index_repository
from tests.repo_builder import RepoBuilder, run_cli

APP = "def greet(name):\n    return 'hello ' + name\n\n\ndef part(x):\n    return x[1:]\n"
PART_FIX = APP.replace("x[1:]", "x[2:]")
GREET_FIX = PART_FIX.replace("'hello ' + name", "f'hello {name}'")  # on top of PART_FIX


def merged_targets(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {t for (t,) in conn.execute("SELECT target FROM changes WHERE state = 'merged'")}


def state_of(db: Path, number: int) -> str:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT state FROM changes WHERE number = ?", (number,)).fetchone()[0]


def recorded_shas(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT sha, head_sha, merge_commit FROM changes").fetchall()
    return {sha for row in rows for sha in row if sha}


@pytest.fixture
def upstream(builder: RepoBuilder) -> RepoBuilder:
    """The project: PR 1 merged, PR 2 open (it makes the greeting an f-string)."""
    builder.commit("Add the app", {"app.py": APP})
    builder.pr_branch(1, [("Skip two characters", {"app.py": PART_FIX})])
    builder.merge_pr(1, how="merge")
    builder.pr_branch(2, [("Use an f-string", {"app.py": GREET_FIX})])
    return builder


def test_a_ci_clone_on_a_feature_branch_indexes_the_remote_default_branch(
    upstream: RepoBuilder, tmp_path: Path
):
    clone = upstream.ci_clone(tmp_path / "clone")
    clone.checkout("feature", "origin/main")
    # The contributor's commit makes PR 2's change: were the branch the target, PR 2 would
    # be recorded as merged by it, for good.
    own = clone.commit("Use an f-string", {"app.py": GREET_FIX})
    db = tmp_path / "index.db"

    summary = index_repository(clone.path, db_path=db)

    assert summary.targets == ["main (origin/main)"]
    assert summary.line().startswith(
        "indexed main (origin/main): 1 merged PRs, 0 open, 0 closed, 1 unmerged"
    )
    assert summary.warnings == []  # no local main to differ from
    assert merged_targets(db) == {"main"}
    assert own not in recorded_shas(db)
    assert state_of(db, 1) == "merged"
    assert state_of(db, 2) == "unmerged"

    code, out, err = run_cli(clone.path, "check", "--db", str(db), "--format", "json")
    assert code == 1, err
    result = json.loads(out)
    assert result["query"]["target"] == "main"
    assert result["query"]["head"] == own
    assert (result["findings"][0]["pr"], result["findings"][0]["verdict"]) == (2, "duplicate")


def test_a_local_main_behind_the_remote_is_not_read(upstream: RepoBuilder, tmp_path: Path):
    clone = upstream.ci_clone(tmp_path / "clone")
    clone.git("remote", "set-head", "origin", "main")  # as `git clone` leaves it
    clone.checkout("main", "origin/main")
    upstream.merge_pr(2, how="merge")  # lands after the clone last pulled main
    clone.fetch()
    db = tmp_path / "index.db"

    code, _, err = run_cli(clone.path, "index", "--db", str(db))

    assert code == 0, err
    assert state_of(db, 2) == "merged"
    assert "indexed main (origin/main): 2 merged PRs" in err
    assert "prdup: warning: local main is 2 commit(s) behind origin/main; read origin/main" in err
    code, out, err = run_cli(clone.path, "check", "--db", str(db), "--pr", "2")
    assert "warning" not in err  # the remote's main was read: nothing to warn about


def test_local_commits_on_main_are_not_merged(upstream: RepoBuilder, tmp_path: Path):
    clone = upstream.ci_clone(tmp_path / "clone")
    clone.checkout("main", "origin/main")
    own = clone.commit("Use an f-string", {"app.py": GREET_FIX})
    db = tmp_path / "index.db"

    summary = index_repository(clone.path, db_path=db)

    assert summary.warnings == [
        "local main has 1 commit(s) that origin/main lacks (not counted as merged); "
        "read origin/main"
    ]
    assert own not in recorded_shas(db)
    assert state_of(db, 2) == "unmerged"
    code, out, err = run_cli(clone.path, "check", "--db", str(db), "--format", "json")
    assert code == 1, err
    assert "prdup: warning: local main has 1 commit(s) that origin/main lacks" in err
    result = json.loads(out)
    assert result["query"]["head"] == own  # main's own commit is checked against origin/main
    assert result["findings"][0]["pr"] == 2


def test_a_stale_fork_is_passed_over_for_upstream(upstream: RepoBuilder, tmp_path: Path):
    fork = tmp_path / "fork.git"
    upstream.git("clone", "-q", "--bare", str(upstream.path), str(fork))
    upstream.merge_pr(2, how="squash")  # the fork's main never heard of it
    clone = RepoBuilder(tmp_path / "clone")
    clone.add_remote("origin", fork)
    clone.add_remote("upstream", upstream.path)
    clone.checkout("feature", "upstream/main")
    db = tmp_path / "index.db"

    summary = index_repository(clone.path, db_path=db)

    assert summary.targets == ["main (upstream/main)"]
    assert summary.warnings == [
        "origin/main is 1 commit(s) behind upstream/main; read upstream/main"
    ]
    assert state_of(db, 2) == "merged"


def test_a_mirror_clone_reads_the_branch_its_head_names(builder: RepoBuilder, tmp_path: Path):
    builder.commit("Add the app", {"app.py": APP})
    builder.git("branch", "-m", "develop")
    mirror = tmp_path / "mirror.git"
    builder.git("clone", "-q", "--mirror", str(builder.path), str(mirror))
    (mirror / "config").unlink()  # snapshots of mirrors come without one

    summary = index_repository(mirror, db_path=tmp_path / "index.db")

    assert summary.targets == ["develop"]


def test_without_remotes_a_local_main_is_the_target_not_the_checked_out_branch(
    builder: RepoBuilder, db_path: Path
):
    builder.commit("Add the app", {"app.py": APP})
    builder.checkout("feature", "main")
    own = builder.commit("Skip two", {"app.py": PART_FIX})

    summary = index_repository(builder.path, db_path=db_path)

    assert summary.targets == ["main"]
    assert own not in recorded_shas(db_path)


def test_no_target_found_is_a_one_line_error(builder: RepoBuilder, db_path: Path):
    builder.commit("Add the app", {"app.py": APP})
    builder.git("branch", "-m", "feature")  # checked out, but no sign it is the default branch

    with pytest.raises(MissingRevision, match="--target BRANCH"):
        index_repository(builder.path, db_path=db_path)
    code, out, err = run_cli(builder.path, "index", "--db", str(db_path))
    assert code == 2
    assert out == ""
    assert err.startswith("prdup: error: no default branch found")
    assert err.count("\n") == 1 and "Traceback" not in err

    summary = index_repository(builder.path, db_path=db_path, targets=["feature"])
    assert summary.targets == ["feature"]


def test_check_names_its_target_and_warns_when_it_was_not_indexed(
    upstream: RepoBuilder, db_path: Path
):
    upstream.checkout("release-1", "main")
    upstream.commit("Release 1", {"VERSION": "1\n"})
    upstream.checkout("main")
    run_cli(upstream.path, "index", "--quiet", "--db", str(db_path))

    code, out, err = run_cli(upstream.path, "check", "--db", str(db_path), "--pr", "2")
    assert "PR #2 against main (" in out
    assert "warning" not in err

    args = ("check", "--db", str(db_path), "--pr", "2", "--target", "release-1")
    code, out, err = run_cli(upstream.path, *args)
    assert "PR #2 against release-1 (" in out
    expected = (
        "prdup: warning: the index was built for main, not release-1: PRs merged into "
        "release-1 may count as open; run 'prdup index --target main --target release-1'"
    )
    assert expected in err.splitlines()
    code, out, _ = run_cli(upstream.path, *args, "--format", "json")
    result = json.loads(out)
    assert result["query"]["target"] == "release-1"
    assert expected.removeprefix("prdup: warning: ") in result["warnings"]


def test_index_says_which_long_lived_branch_a_named_target_keeps_merging_in(
    builder: RepoBuilder, db_path: Path
):
    """Fixes land on `stable` and `stable` is merged into main again and again. With no flags
    their squashes, in main's history off its first-parent line, land them; with main named
    as the only target the index says what that leaves out, naming the flag to add."""
    builder.commit("Add the app", {"app.py": APP})
    builder.checkout("stable", "main")
    builder.checkout("main")
    squashes = []
    for number, fixed in ((5, PART_FIX), (6, GREET_FIX)):
        builder.pr_branch(number, [(f"Fix {number}", {"app.py": fixed})], base="stable")
        squashes.append(builder.merge_pr(number, how="squash", base="stable"))
        builder.checkout("main")
        builder.git("merge", "-q", "--no-ff", "stable", "-m", "Merge branch 'stable'")
    builder.checkout("feature", "main")  # a one-off branch merged once is no release line
    builder.commit("Docs", {"README.md": "Hi\n"})
    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "feature", "-m", "Merge branch 'feature'")

    code, _, err = run_cli(builder.path, "index", "--quiet", "--db", str(db_path))
    assert (code, err) == (0, "")
    with sqlite3.connect(db_path) as conn:
        landed = conn.execute(
            "SELECT number, state, source, merge_commit FROM changes WHERE number IN (5, 6)"
        ).fetchall()
    assert sorted(landed) == [
        (5, "merged", "squash", squashes[0]),
        (6, "merged", "squash", squashes[1]),
    ]

    db_path.unlink()
    code, _, err = run_cli(
        builder.path, "index", "--quiet", "--db", str(db_path), "--target", "main"
    )
    hint = (
        "prdup: warning: main merges 'stable' (2 merges): commits made there count only as "
        "parts of those merges (a PR that landed there, only where a commit names it); index "
        "them too with --target main --target stable"
    )
    assert (code, err.splitlines()) == (0, [hint])

    db_path.unlink()
    args = ("index", "--quiet", "--db", str(db_path), "--target", "main", "--target", "stable")
    code, _, err = run_cli(builder.path, *args)
    assert (code, err) == (0, "")
    assert state_of(db_path, 5) == "merged"


def test_a_named_target_the_repository_lacks_is_an_error_and_loses_nothing(
    upstream: RepoBuilder, db_path: Path
):
    """`--target nosuchbranch` (a typo): `check` would call every PR unmerged against it and
    say "nothing already covers PR #2". It is a one-line error instead (exit 2), for `check`
    with a PR, a branch or a patch, for the pre-push hook and for `index`; the index keeps
    every row it had."""
    run_cli(upstream.path, "index", "--quiet", "--db", str(db_path))
    with sqlite3.connect(db_path) as conn:
        before = conn.execute("SELECT * FROM changes ORDER BY id").fetchall()
    patch = upstream.path / "fix.patch"
    patch.write_text(upstream.repo.git.diff("main", "refs/pull/2/head") + "\n")
    db = ("--db", str(db_path))
    for args in (
        ("check", *db, "--pr", "2", "--target", "nosuchbranch"),
        ("check", *db, "--diff", str(patch), "--target", "nosuchbranch"),
        ("check", *db, "refs/pull/2/head", "--target", "nosuchbranch"),
        ("pre-push", *db, "--target", "nosuchbranch"),
        ("index", *db, "--quiet", "--target", "nosuchbranch"),
    ):
        code, out, err = run_cli(upstream.path, *args)
        assert (code, out) == (2, ""), args
        assert err.startswith("prdup: error: target nosuchbranch: no such branch"), args
        assert err.count("\n") == 1 and "Traceback" not in err, args

    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT * FROM changes ORDER BY id").fetchall() == before
