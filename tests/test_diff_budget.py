"""A PR's diff read only up to its line limit: git is stopped inside a PR past it, what is kept
is the files before the one that passed it, and a PR the stored form keeps whole is read whole."""

from __future__ import annotations

import io
import sqlite3
import subprocess
from pathlib import Path

from index.config import Settings
from index.git.diff_budget import PairBudget
from index.git.gitsource import DIFF_OPTIONS, _reads, _whole_lines
from index.indexer import index_repository
from tests.repo_builder import RepoBuilder
from tests.test_index import change, rows


def lines_of(count: int, name: str) -> str:
    return "".join(f"{name}_{i} = {i}\n" for i in range(count))


def files_of(db: Path, number: int) -> list[tuple]:
    return rows(
        db,
        "SELECT f.path, f.old_path, f.status, f.skip_reason FROM files f "
        "JOIN changes c ON c.id = f.change_id WHERE c.number = ? ORDER BY f.id",
        (number,),
    )


def stored_lines(db: Path, number: int) -> int:
    return rows(db, "SELECT count(*) FROM lines WHERE change_id = ?", (change(db, number)["id"],))[
        0
    ][0]


def test_a_pr_past_its_limit_keeps_the_files_before_the_one_that_passes_it(
    builder: RepoBuilder, db_path: Path, tmp_path: Path
):
    """The files after the one that passes the limit are named from git's raw listing, as
    reading the whole diff names them (quoted paths included), and cut."""
    builder.commit("Initial", {"app.py": "x = 1\n", "old name.py": lines_of(40, "moved")})
    builder.pr_branch(
        10,
        [
            (
                "A fix, a generated table, and more",
                {
                    "a_fix.py": "fixed = True\n",
                    "b_table.py": lines_of(300, "row"),
                    "c_tiny.py": "tiny = 1\n",
                    "old name.py": None,
                    "zé dir/new name.py": lines_of(40, "moved"),
                    "zñ.py": "added = 1\n",
                },
            )
        ],
    )
    builder.pr_branch(11, [("A small change after it", {"app.py": "x = 2\n"})])
    index_repository(builder.path, db_path=db_path, settings=Settings(max_unmerged_lines=100))
    cut = change(db_path, 10)
    assert (cut["status"], cut["truncated"], cut["patch_id"]) == ("indexed", 1, None)
    assert stored_lines(db_path, 10) == 1  # a_fix.py's line
    whole_db = tmp_path / "whole.db"
    index_repository(builder.path, db_path=whole_db)
    assert [row[:3] for row in files_of(db_path, 10)] == [row[:3] for row in files_of(whole_db, 10)]
    assert [row[3] for row in files_of(db_path, 10)] == [None] + ["too many changed lines"] * 4
    assert ("c_tiny.py", "", "added") in [row[:3] for row in files_of(db_path, 10)]
    # git was stopped inside PR 10: the PRs after it are read all the same.
    after = change(db_path, 11)
    assert (after["status"], after["truncated"]) == ("indexed", 0)
    assert after["patch_id"] is not None
    assert stored_lines(db_path, 11) == 2


def test_a_pr_the_stored_form_keeps_whole_is_read_whole(builder: RepoBuilder, db_path: Path):
    """At its limit exactly, or past it only through a file the index ignores, a PR is read
    to its end: its patch identity is known."""
    builder.commit("Initial", {"app.py": "x = 1\n"})
    builder.pr_branch(10, [("At the limit", {"a.py": lines_of(100, "a")})])
    builder.pr_branch(
        11, [("A lockfile", {"app.py": "x = 3\n", "package-lock.json": lines_of(500, "pin")})]
    )
    builder.pr_branch(12, [("One past it", {"app.py": None, "a.py": lines_of(100, "a")})])
    index_repository(builder.path, db_path=db_path, settings=Settings(max_unmerged_lines=100))
    for number in (10, 11):
        whole = change(db_path, number)
        assert whole["truncated"] == 0
        assert whole["patch_id"] is not None
    assert change(db_path, 12)["truncated"] == 1
    assert files_of(db_path, 11)[0] == ("app.py", "", "modified", None)
    assert files_of(db_path, 11)[1][:3] == ("package-lock.json", "", "ignored")


def test_a_merged_pr_read_from_its_ref_keeps_its_whole_patch_identity(
    builder: RepoBuilder, db_path: Path
):
    """Landed on a branch that is no target, PR 5 is read from its ref; what landed is cut from
    a diff read whole, so its patch identity stays known."""
    builder.commit("Initial", {"app.py": "x = 1\n"})
    builder.checkout("release", "main")
    builder.checkout("main")
    builder.pr_branch(
        5, [("Two tables", {"a.py": lines_of(40, "a"), "b.py": lines_of(40, "b")})], base="release"
    )
    builder.merge_pr(5, base="release")
    builder.checkout("main")
    prs_json = builder.path.parent / "prs.json"
    prs_json.write_text('[{"number": 5, "state": "MERGED"}]')
    settings = Settings(max_changed_lines=50)
    index_repository(builder.path, db_path=db_path, prs_json=prs_json, settings=settings)
    landed = change(db_path, 5)
    assert (landed["state"], landed["truncated"]) == ("merged", 1)
    assert landed["patch_id"] is not None


def test_where_a_pr_passes_its_limit_does_not_depend_on_how_git_s_output_is_read(
    builder: RepoBuilder,
):
    builder.commit(
        "Initial",
        {"app.py": "x = 1\n", "package-lock.json": "{}\n", "c.sql": "-- a comment\n" * 30},
    )
    heads = [
        builder.pr_branch(10, [("Small", {"app.py": "x = 2\n"})]),
        builder.pr_branch(11, [("Big", {"a.py": lines_of(30, "a"), "b.py": lines_of(30, "b")})]),
        builder.pr_branch(12, [("Ignored", {"package-lock.json": lines_of(80, "pin")})]),
        # Removed lines that read like a diff's `---` header are not counted.
        builder.pr_branch(13, [("Comments", {"c.sql": "select 1;\n" * 20})]),
    ]
    base = builder.head("main")
    printed = subprocess.run(
        ["git", "diff-tree", "--stdin", "--raw", *DIFF_OPTIONS],
        cwd=builder.path,
        input="".join(f"{head} {base}\n" for head in heads).encode(),
        capture_output=True,
        check=True,
    ).stdout
    settings = Settings()
    limits = dict.fromkeys(heads, 40)
    whole = PairBudget(limits, settings.is_ignored)
    assert whole(printed) is None  # the last PR ends in this block: nothing to stop
    assert whole.passed == {heads[1]: 1}  # in b.py: 30 + 30 lines past 40
    for size in range(1, 200):
        budget = PairBudget(limits, settings.is_ignored)
        for block in _whole_lines(_reads(io.BytesIO(printed), size)):
            budget(block)
        assert budget.passed == whole.passed, size


def test_a_huge_pr_landed_by_rebase_is_still_found_by_its_patch(
    builder: RepoBuilder, db_path: Path
):
    """Its identity needs every hunk: a PR read in part whose files a target commit changes
    exactly is read whole after all, and its rebased landing is the same patch."""
    builder.commit("Initial", {"a.py": "def a():\n    return 1\n"})
    builder.pr_branch(
        5,
        [("Two, and a table", {"a.py": "def a():\n    return 2\n", "t.py": lines_of(200, "row")})],
    )
    builder.pr_branch(
        6,
        [
            (
                "Three, and a table",
                {"a.py": "def a():\n    return 3\n", "u.py": lines_of(200, "row")},
            )
        ],
    )
    builder.commit("Unrelated work on main", {"b.py": "def b():\n    return 3\n"})
    builder.merge_pr(5, how="rebase")
    index_repository(builder.path, db_path=db_path, settings=Settings(max_unmerged_lines=50))
    landed, open_pr = change(db_path, 5), change(db_path, 6)
    assert (landed["state"], landed["source"]) == ("merged", "rebase")
    assert (open_pr["truncated"], open_pr["patch_id"]) == (1, None)
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT count(*) FROM changes WHERE kind = 'commit'").fetchone()[0] == 2


def test_a_huge_pr_read_in_part_while_open_is_found_when_it_lands_by_rebase_later(
    builder: RepoBuilder, db_path: Path
):
    """Indexed open, PR 5 was read only up to its limit and stored no patch identity; the run
    that indexes its rebased landing reads it whole, and finds it landed there."""
    builder.commit("Initial", {"a.py": "def a():\n    return 1\n"})
    builder.pr_branch(
        5, [("Two, and a table", {"a.py": "def a():\n    return 2\n", "t.py": lines_of(200, "r")})]
    )
    settings = Settings(max_unmerged_lines=50)
    index_repository(builder.path, db_path=db_path, settings=settings)
    assert (change(db_path, 5)["state"], change(db_path, 5)["patch_id"]) == ("unmerged", None)
    builder.commit("Unrelated work on main", {"b.py": "def b():\n    return 3\n"})
    builder.merge_pr(5, how="rebase")
    index_repository(builder.path, db_path=db_path, settings=settings)
    landed = change(db_path, 5)
    assert (landed["state"], landed["source"]) == ("merged", "rebase")
    assert landed["merge_commit"] == builder.head("main")


def test_a_stopped_git_leaves_no_process_behind(builder: RepoBuilder, db_path: Path):
    """Each PR prints far more than a pipe holds, so git is killed while still writing; each
    git killed is reaped (an unreaped child stays a zombie until this process ends)."""
    builder.commit("Initial", {"app.py": "x = 1\n"})
    for number in range(10, 14):
        builder.pr_branch(number, [(f"Big {number}", {f"f{number}.py": lines_of(20_000, "v")})])
    before = _git_zombies()
    index_repository(builder.path, db_path=db_path, settings=Settings(max_unmerged_lines=100))
    assert [change(db_path, n)["truncated"] for n in range(10, 14)] == [1, 1, 1, 1]
    assert _git_zombies() == before


def _git_zombies() -> int:
    """This process's children that are git and have exited unreaped."""
    import os

    found = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            name, _, rest = stat.partition(" (")[2].rpartition(")")
            state, parent = rest.split()[:2]
            found += name == "git" and state == "Z" and int(parent) == os.getpid()
    return found
