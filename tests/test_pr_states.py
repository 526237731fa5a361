"""A PR's state without GitHub's metadata: git tells merged from not merged, never open from
closed. An unmerged PR is "unmerged" (its state unknown) unless GitHub's test merge
(`refs/pull/N/merge`) is onto a target's current tip, which GitHub renews only for open PRs;
metadata given later replaces the states; an older index that said "open" for every unmerged
PR is told again; the sweep still sweeps unmerged PRs and says their states are unknown; a
title taken from a head commit is marked where it is shown."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from index.indexer import index_repository
from index.storage.schema import MIGRATIONS, _state_and_title_sources
from tests.repo_builder import RepoBuilder, run_cli
from tests.test_index import change, rows

FIX = "def total(items):\n    return sum(item.price for item in items)\n"
BROKEN = "def total(items):\n    return sum(items)\n"


@pytest.fixture
def story(builder: RepoBuilder) -> RepoBuilder:
    """PR 3 has no test merge; PR 5 was test-merged onto main over a year before main moved
    on (GitHub stopped renewing it: it may have been closed); PR 4 was test-merged onto
    main's tip."""
    builder.commit("Initial cart", {"cart.py": BROKEN, "README.md": "cart\n"})
    builder.pr_branch(3, [("Please enter the commit message for your changes", {"a.py": "a\n"})])
    builder.pr_branch(5, [("Add b", {"b.py": "b = 1\n"})])
    builder.test_merge(5)
    builder.later(400)
    builder.commit("Direct tweak", {"README.md": "the cart\n"})
    builder.pr_branch(4, [("Add c", {"c.py": "c = 1\n"})])
    builder.test_merge(4)
    return builder


def states(db: Path) -> dict[int, str]:
    return dict(rows(db, "SELECT number, state FROM changes WHERE number IS NOT NULL"))


def prs_json(path: Path, entries: list[dict]) -> Path:
    path.write_text(json.dumps(entries))
    return path


def test_an_unmerged_ref_is_unmerged_without_a_test_merge_and_open_with_one_on_the_tip(
    story: RepoBuilder, db_path: Path
):
    summary = index_repository(story.path, db_path=db_path)

    assert states(db_path) == {3: "unmerged", 4: "open", 5: "unmerged"}
    assert (summary.open, summary.closed, summary.unmerged) == (1, 0, 2)
    line = summary.line()
    assert "1 open, 0 closed, 2 unmerged" in line
    assert "\n  their states are unknown (git cannot tell open from closed" in line
    assert "prdup index --github OWNER/REPO" in line and "--prs-json FILE" in line
    # A later run reads nothing new: the count is the index's, said as such.
    again = index_repository(story.path, db_path=db_path).line()
    assert "the states of the index's 2 PRs not known as merged are unknown" in again


def test_a_test_merge_onto_a_release_line_that_stopped_moving_shows_nothing(
    builder: RepoBuilder, db_path: Path
):
    """`1.x` has not moved since PR 6 was test-merged onto its tip; main moved since: GitHub
    stopped renewing PR 6's test merge or never had to, and a closed PR keeps it. Renewed
    after main's last commit, it shows PR 6 open."""
    builder.commit("Initial cart", {"cart.py": BROKEN})
    builder.checkout("1.x", "main")
    builder.commit("1.x: pin", {"VERSION": "1.0\n"})
    builder.pr_branch(6, [("Backport b", {"b.py": "b = 1\n"})], base="1.x")
    builder.test_merge(6, onto="1.x")
    builder.checkout("main")
    builder.later(400)
    builder.commit("Main moves on", {"README.md": "cart\n"})

    index_repository(builder.path, db_path=db_path, targets=["main", "1.x"])
    assert states(db_path)[6] == "unmerged"

    builder.test_merge(6, onto="1.x")  # renewed today: GitHub does this for open PRs only
    index_repository(builder.path, db_path=db_path, targets=["main", "1.x"])
    assert states(db_path)[6] == "open"


def test_a_later_run_tells_the_states_again_from_the_test_merges(story: RepoBuilder, db_path: Path):
    index_repository(story.path, db_path=db_path)
    story.later(400)
    story.commit("Another tweak", {"README.md": "the cart, again\n"})

    again = index_repository(story.path, db_path=db_path)  # PR 4's test merge is not renewed
    assert states(db_path)[4] == "unmerged"
    assert again.unknown_states == 3

    story.test_merge(4)  # GitHub renews an open PR's test merge onto the new tip
    index_repository(story.path, db_path=db_path)
    assert states(db_path) == {3: "unmerged", 4: "open", 5: "unmerged"}


def test_metadata_given_later_replaces_the_states_and_a_run_without_it_keeps_them(
    story: RepoBuilder, db_path: Path, tmp_path: Path
):
    index_repository(story.path, db_path=db_path)
    exported = prs_json(
        tmp_path / "prs.json",
        [
            {"number": 3, "title": "Add a", "state": "CLOSED"},
            {"number": 4, "title": "Add c", "state": "CLOSED"},
            {"number": 5, "title": "Add b", "state": "OPEN"},
        ],
    )

    summary = index_repository(story.path, db_path=db_path, prs_json=exported)
    assert states(db_path) == {3: "closed", 4: "closed", 5: "open"}
    assert summary.unknown_states == 0
    assert "unknown" not in summary.line()

    story.commit("Another tweak", {"README.md": "the cart, again\n"})
    index_repository(story.path, db_path=db_path)  # no metadata this time
    assert states(db_path) == {3: "closed", 4: "closed", 5: "open"}


# The schema version of an index written before states and titles had sources.
BEFORE_SOURCES = MIGRATIONS.index(_state_and_title_sources)


def test_an_index_that_said_open_for_every_unmerged_pr_is_told_again(
    story: RepoBuilder, db_path: Path, tmp_path: Path
):
    """An index from an older prdup: no state or title sources, "open" for every unmerged PR
    (PR 6's title and state imported from GitHub); `check` reads it as it was, and the next
    `prdup index` leaves the rows a fresh index would hold."""
    story.pr_branch(6, [("wip", {"d.py": "d = 1\n"})])
    imported = prs_json(
        tmp_path / "prs.json",
        [{"number": 6, "title": "Add d", "state": "OPEN", "baseRefName": "main"}],
    )
    fresh = tmp_path / "fresh.db"
    index_repository(story.path, db_path=fresh, prs_json=imported)
    index_repository(story.path, db_path=db_path, prs_json=imported)
    with sqlite3.connect(db_path) as conn:
        conn.executescript(
            f"""
            ALTER TABLE changes DROP COLUMN state_source;
            ALTER TABLE changes DROP COLUMN title_source;
            UPDATE changes SET state = 'open' WHERE state = 'unmerged';
            UPDATE meta SET value = '{BEFORE_SOURCES}' WHERE key = 'schema_version';
            """
        )

    code, _, err = run_cli(story.path, "check", "--pr", "3", "--db", str(db_path))
    assert code in (0, 1), err  # opening it upgrades it
    assert states(db_path) == {3: "open", 4: "open", 5: "open", 6: "open"}

    summary = index_repository(story.path, db_path=db_path)

    assert states(db_path) == {3: "unmerged", 4: "open", 5: "unmerged", 6: "open"}
    assert summary.unknown_states == 2
    sources = "SELECT number, state, state_source, title, title_source FROM changes ORDER BY id"
    assert rows(db_path, sources) == rows(fresh, sources)
    assert change(db_path, 3)["title_source"] == "commit"
    assert change(db_path, 6)["title_source"] is None  # GitHub's title


def _duplicates(builder: RepoBuilder) -> RepoBuilder:
    """PRs 7 and 8 make the same fix; PR 9 makes a fix main already has."""
    builder.commit("Initial cart", {"cart.py": BROKEN})
    builder.pr_branch(7, [("Sum the prices", {"cart.py": FIX})])
    builder.pr_branch(8, [("Fix the total", {"cart.py": FIX})])
    builder.pr_branch(10, [("Fix the total on main", {"cart.py": FIX})])
    builder.merge_pr(10, how="squash")
    return builder


def test_the_sweep_sweeps_prs_of_unknown_state_and_says_their_states_are_unknown(
    builder: RepoBuilder, db_path: Path
):
    repo = _duplicates(builder)
    index_repository(repo.path, db_path=db_path)
    assert states(db_path) == {7: "unmerged", 8: "unmerged", 10: "merged"}

    code, out, err = run_cli(repo.path, "sweep", "--db", str(db_path), "--format", "json")
    report = json.loads(out)
    assert report["stats"]["swept"] == 2
    assert report["stats"]["unknown_states"] == 2
    done = {item["pr"] for item in report["already_done"]}
    assert done == {7, 8}  # already on main through #10, though their states are unknown

    code, out, err = run_cli(repo.path, "sweep", "--db", str(db_path))
    assert "the states of 2 of the swept PRs are unknown" in out
    assert "--github OWNER/REPO" in out


def test_titles_taken_from_a_head_commit_are_marked_where_shown(
    story: RepoBuilder, db_path: Path, tmp_path: Path
):
    exported = prs_json(tmp_path / "prs.json", [{"number": 4, "title": "Add c", "state": "OPEN"}])
    index_repository(story.path, db_path=db_path, prs_json=exported)

    _, shown, _ = run_cli(story.path, "show", "3", "--db", str(db_path))
    assert shown.splitlines()[0] == (
        "#3 [unmerged] Please enter the commit message for your changes (head commit's subject)"
    )
    _, shown, _ = run_cli(story.path, "show", "4", "--db", str(db_path))
    assert shown.splitlines()[0] == "#4 [open] Add c"


def test_a_candidate_title_from_a_head_commit_is_marked_in_checks_output(
    builder: RepoBuilder, db_path: Path
):
    builder.commit("Initial cart", {"cart.py": BROKEN})
    builder.pr_branch(7, [("Sum the prices", {"cart.py": FIX})])
    builder.pr_branch(8, [("Fix the total", {"cart.py": FIX})])
    builder.pr_branch(10, [("Fix the total on main", {"cart.py": FIX + "# done\n"})])
    builder.merge_pr(10, how="squash")
    index_repository(builder.path, db_path=db_path)

    _, out, _ = run_cli(builder.path, "check", "--pr", "8", "--db", str(db_path))
    assert "Duplicate of #7  [unmerged, score" in out
    assert "Sum the prices (head commit's subject)" in out
    json_args = ("--format", "json", "--min-score", "0")
    _, out, _ = run_cli(builder.path, "check", "--pr", "8", "--db", str(db_path), *json_args)
    marked = {f["pr"]: f["title_from_commit"] for f in json.loads(out)["findings"]}
    assert marked[7] is True
    assert marked[10] is False  # the squash commit's subject is the title GitHub wrote
