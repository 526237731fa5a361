"""What git estimates of a PR's state without metadata, and what the sweep does with it: a
test merge GitHub made within a year shows a PR open; a PR with none and no commit for two
years is estimated closed, stays "unmerged", and is left out of the sweep, counted, unless
asked for; `--since` sweeps only PRs opened since a day; a title without metadata is the
first own commit's subject a person wrote."""

from __future__ import annotations

import json
from pathlib import Path

from index.indexer import index_repository
from tests.repo_builder import RepoBuilder, run_cli
from tests.test_error_messages import one_line_error
from tests.test_index import change, rows

BROKEN = "def total(items):\n    return sum(items)\n"
FIX = "def total(items):\n    return sum(item.price for item in items)\n"


def estimates(db: Path) -> dict[int, tuple[str, str | None]]:
    query = "SELECT number, state, state_estimate FROM changes WHERE number IS NOT NULL"
    return {number: (state, estimate) for number, state, estimate in rows(db, query)}


def sweep_json(repo: RepoBuilder, db: Path, *args: str) -> dict:
    code, out, err = run_cli(repo.path, "sweep", "--db", str(db), "--format", "json", *args)
    assert code in (0, 1), err
    return json.loads(out)


def _backlog(builder: RepoBuilder) -> RepoBuilder:
    """PR 7 fixed the total three years ago and was left alone (no test merge: closed, most
    likely); PR 8 makes the same fix today; #10 landed it on main."""
    builder.commit("Initial cart", {"cart.py": BROKEN})
    builder.pr_branch(7, [("Sum the prices", {"cart.py": FIX})])
    builder.later(3 * 365)
    builder.pr_branch(8, [("Fix the total", {"cart.py": FIX})])
    builder.pr_branch(10, [("Fix the total on main", {"cart.py": FIX})])
    builder.merge_pr(10, how="squash")
    return builder


def test_a_test_merge_made_within_a_year_shows_a_pr_open_though_main_moved_on(
    builder: RepoBuilder, db_path: Path
):
    builder.commit("Initial cart", {"cart.py": BROKEN})
    builder.pr_branch(4, [("Add c", {"c.py": "c = 1\n"})])
    builder.test_merge(4)
    builder.later(30)
    builder.commit("Main moves on", {"README.md": "cart\n"})

    index_repository(builder.path, db_path=db_path)
    assert estimates(db_path)[4] == ("open", "open")


def test_a_pr_quiet_for_years_is_estimated_closed_and_left_out_of_the_sweep_counted(
    builder: RepoBuilder, db_path: Path
):
    repo = _backlog(builder)
    index_repository(repo.path, db_path=db_path)
    # Only the sweep reads the estimate: `check` still checks PR 7 as a PR of unknown state.
    assert estimates(db_path) == {
        7: ("unmerged", "closed"),
        8: ("unmerged", None),
        10: ("merged", None),
    }

    report = sweep_json(repo, db_path)
    assert report["stats"]["swept"] == 1
    assert report["stats"]["estimated_closed_left_out"] == 1
    assert {item["pr"] for item in report["already_done"]} == {8}
    _, out, _ = run_cli(repo.path, "sweep", "--db", str(db_path))
    assert "1 PR(s) estimated closed" in out and "--include-estimated-closed sweeps them" in out

    report = sweep_json(repo, db_path, "--include-estimated-closed")
    assert report["stats"]["swept"] == 2
    assert {item["pr"] for item in report["already_done"]} == {7, 8}


def test_metadata_beats_the_estimate(builder: RepoBuilder, db_path: Path, tmp_path: Path):
    repo = _backlog(builder)
    exported = tmp_path / "prs.json"
    exported.write_text(json.dumps([{"number": 7, "title": "Sum the prices", "state": "OPEN"}]))
    index_repository(repo.path, db_path=db_path, prs_json=exported)

    assert estimates(db_path)[7][0] == "open"
    report = sweep_json(repo, db_path)
    assert report["stats"]["estimated_closed_left_out"] == 0
    assert {item["pr"] for item in report["already_done"]} == {7, 8}


def test_since_sweeps_only_prs_opened_on_or_after_the_day(builder: RepoBuilder, db_path: Path):
    repo = _backlog(builder)  # PR 7 opened 2023-11-14, PR 8 about 2026-11-13
    index_repository(repo.path, db_path=db_path)

    report = sweep_json(repo, db_path, "--include-estimated-closed", "--since", "2025-01-01")
    assert report["stats"]["swept"] == 1
    assert report["stats"]["opened_before_since"] == 1
    assert {item["pr"] for item in report["already_done"]} == {8}
    report = sweep_json(repo, db_path, "--include-estimated-closed", "--since", "2023-11-14")
    assert report["stats"]["swept"] == 2


def test_a_bad_since_is_one_line_and_exit_2(builder: RepoBuilder, db_path: Path):
    repo = _backlog(builder)
    index_repository(repo.path, db_path=db_path)
    err = one_line_error(*run_cli(repo.path, "sweep", "--db", str(db_path), "--since", "last year"))
    assert "--since 'last year' is not a date" in err


def test_a_title_is_the_first_own_commit_a_person_wrote(builder: RepoBuilder, db_path: Path):
    """PR 5: its author's commit, then main merged in, then pre-commit.ci's fixes on top.
    PR 6: two commits of its author's: the first names the PR. PR 9: a bot's alone."""
    builder.commit("Initial cart", {"cart.py": BROKEN})
    builder.pr_branch(5, [("Price the items", {"cart.py": FIX})])
    builder.commit("Main moves on", {"README.md": "cart\n"})
    builder.checkout("pr-5")
    builder.git("merge", "-q", "--no-ff", "-m", "Merge branch 'main' into main", "main")
    bot = {"author": "pre-commit-ci[bot]"}
    builder.pr_branch(
        5, [("[pre-commit.ci] auto fixes", {"cart.py": FIX + "\n"})], start="pr-5", **bot
    )
    builder.pr_branch(6, [("Add coupons", {"coupon.py": "C = 1\n"}), ("Fix typo", {"t.py": "t\n"})])
    builder.pr_branch(9, [("Bump the pin", {"pin.txt": "2\n"})], author="dependabot")

    index_repository(builder.path, db_path=db_path)
    assert change(db_path, 5)["title"] == "Price the items"
    assert change(db_path, 6)["title"] == "Add coupons"
    assert change(db_path, 9)["title"] == "Bump the pin"  # no person's commit: the head's
