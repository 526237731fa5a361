"""`prdup index` on real repositories built in temporary folders; asserts on the database rows."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path

import pytest

from index.errors import (
    BadMetadata,
    EmptyRepository,
    IndexCorrupt,
    IndexLocked,
    MissingRevision,
    NotAGitRepository,
)
from index.indexer import index_repository
from tests.repo_builder import RepoBuilder, run_cli

PIPELINE = """class Pipeline:
    def __init__(self, config):
        self.config = config
        if config.enable_cpu_offload:
            self.offload = True
        self.ready = True

    def run(self, x):
        return x * 2
"""


def rows(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    """The query's rows; a query of `lines` reads a row per stored line (see `as_line_rows`)."""
    with sqlite3.connect(db) as conn:
        if re.search(r"\blines\b", sql):
            as_line_rows(conn, "temp.lines")
        return conn.execute(sql, params).fetchall()


def as_line_rows(conn: sqlite3.Connection, table: str) -> None:
    """`table` (change_id, file_id, side, hash): the index's line sets, a row per line, so that
    tests say in SQL what they expect of the lines."""
    from index.storage.line_sets import expand

    conn.execute(f"CREATE TABLE {table} (change_id INT, file_id INT, side TEXT, hash INT)")
    sets = conn.execute("SELECT change_id, file_id, side, hashes FROM line_sets").fetchall()
    conn.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?)", expand(sets))


def change(db: Path, number: int) -> dict:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute("SELECT * FROM changes WHERE number = ?", (number,)).fetchone()
        return dict(row) if row else {}


@pytest.fixture
def history(builder: RepoBuilder) -> RepoBuilder:
    """main with a pipeline; PR 1 merge-commit, PR 2 squash, a direct commit, PR 3 open."""
    builder.commit("Initial pipeline", {"pipeline.py": PIPELINE, "README.md": "hello\n"})
    builder.pr_branch(1, [("Double faster", {"pipeline.py": PIPELINE.replace("x * 2", "x + x")})])
    builder.merge_pr(1, how="merge")
    builder.pr_branch(2, [("Docs: say hi", {"README.md": "hello world\n"})])
    builder.merge_pr(2, how="squash")
    builder.commit("Direct tweak", {"NOTES.txt": "a note\n"})
    fixed = builder.head("main:pipeline.py")
    builder.pr_branch(
        3,
        [
            (
                "Ask the offload strategy instead of the legacy flag",
                {
                    "pipeline.py": builder.repo.git.show(fixed).replace(
                        "if config.enable_cpu_offload:", "if resolve_offload(config):"
                    )
                    + "\n"
                },
            )
        ],
    )
    return builder


def test_merged_squashed_direct_and_open_prs_are_recorded(history: RepoBuilder, db_path: Path):
    summary = index_repository(history.path, db_path=db_path)

    assert (summary.merged, summary.unmerged, summary.commits) == (2, 1, 2)
    assert change(db_path, 1)["state"] == "merged"
    assert change(db_path, 1)["source"] == "merge-commit"
    assert change(db_path, 1)["title"] == "Double faster"
    assert change(db_path, 2)["source"] == "squash"
    assert change(db_path, 2)["title"] == "Docs: say hi"
    assert change(db_path, 3)["state"] == "unmerged"
    assert change(db_path, 3)["source"] == "ref"
    direct = rows(db_path, "SELECT title FROM changes WHERE kind = 'commit' ORDER BY id")
    assert ("Direct tweak",) in direct


def test_lines_are_normalised_hashed_and_carry_their_symbol(history: RepoBuilder, db_path: Path):
    index_repository(history.path, db_path=db_path)
    pr3 = change(db_path, 3)

    texts = rows(
        db_path,
        "SELECT l.side, t.text FROM lines l JOIN line_texts t USING (hash) WHERE change_id = ?",
        (pr3["id"],),
    )
    assert ("-", "if config.enable_cpu_offload:") in texts
    assert ("+", "if resolve_offload(config):") in texts
    symbols = rows(db_path, "SELECT qualified, side FROM symbols WHERE change_id = ?", (pr3["id"],))
    # git's hunk header names the enclosing method, unqualified.
    assert ("__init__", "-") in symbols
    assert ("__init__", "+") in symbols
    assert pr3["patch_id"]
    assert rows(db_path, "SELECT count(*) FROM hunks WHERE change_id = ?", (pr3["id"],)) == [(1,)]


def test_second_run_reads_nothing_new_and_third_reads_only_new(history: RepoBuilder, db_path: Path):
    index_repository(history.path, db_path=db_path)
    before = rows(db_path, "SELECT id, number, sha FROM changes ORDER BY id")

    again = index_repository(history.path, db_path=db_path)
    assert (again.merged, again.unmerged, again.commits) == (0, 0, 0)
    assert rows(db_path, "SELECT id, number, sha FROM changes ORDER BY id") == before

    history.pr_branch(4, [("Another", {"other.py": "def other():\n    return 41 + 1\n"})])
    third = index_repository(history.path, db_path=db_path)
    assert (third.merged, third.unmerged, third.commits) == (0, 1, 0)


def test_index_writes_git_s_commit_graph_once_for_check_s_ancestry_questions(
    history: RepoBuilder, db_path: Path
):
    graph = history.path / ".git" / "objects" / "info" / "commit-graph"
    assert not graph.exists()  # a fresh clone has none
    index_repository(history.path, db_path=db_path)
    assert graph.exists()
    history.git("commit-graph", "verify")  # git reads it as its own
    written = graph.stat().st_mtime_ns
    history.pr_branch(4, [("Another", {"other.py": "def other():\n    return 41 + 1\n"})])
    index_repository(history.path, db_path=db_path)
    assert graph.stat().st_mtime_ns == written  # git's own upkeep from here on


def test_merged_pr_is_recorded_once_even_with_its_ref(history: RepoBuilder, db_path: Path):
    index_repository(history.path, db_path=db_path)
    assert rows(db_path, "SELECT count(*) FROM changes WHERE number = 2") == [(1,)]
    assert change(db_path, 2)["head_sha"] == history.head("refs/pull/2/head")


def test_open_pr_that_lands_later_becomes_merged(history: RepoBuilder, db_path: Path):
    index_repository(history.path, db_path=db_path)
    history.merge_pr(3, how="squash")
    index_repository(history.path, db_path=db_path)
    assert change(db_path, 3)["state"] == "merged"
    assert change(db_path, 3)["source"] == "squash"
    assert rows(db_path, "SELECT count(*) FROM changes WHERE number = 3") == [(1,)]


def test_rebase_merged_pr_is_recognised_by_patch_identity(builder: RepoBuilder, db_path: Path):
    builder.commit("Initial", {"a.py": "def a():\n    return 1\n"})
    builder.pr_branch(5, [("Make a return two", {"a.py": "def a():\n    return 2\n"})])
    builder.commit("Unrelated work on main", {"b.py": "def b():\n    return 3\n"})
    builder.merge_pr(5, how="rebase")
    index_repository(builder.path, db_path=db_path)
    pr5 = change(db_path, 5)
    assert pr5["state"] == "merged"
    assert pr5["source"] == "rebase"
    assert pr5["merge_commit"] == builder.head("main")


def test_a_rebase_merged_pr_stored_cut_is_still_recognised(builder: RepoBuilder, db_path: Path):
    """A PR past `max_unmerged_lines` keeps its whole patch identity (the cut files' hunks
    count), so its rebased landing, stored whole, is the same patch."""
    from index.config import Settings

    builder.commit("Initial", {"a.py": "def a():\n    return 1\n"})
    table = "".join(f"ROW_{i} = {i}\n" for i in range(200))
    builder.pr_branch(
        5, [("Return two, with a table", {"a.py": "def a():\n    return 2\n", "t.py": table})]
    )
    builder.commit("Unrelated work on main", {"b.py": "def b():\n    return 3\n"})
    builder.merge_pr(5, how="rebase")
    index_repository(builder.path, db_path=db_path, settings=Settings(max_unmerged_lines=50))
    pr5 = change(db_path, 5)
    assert (pr5["state"], pr5["source"]) == ("merged", "rebase")
    assert pr5["merge_commit"] == builder.head("main")


def test_pr_is_not_merged_by_an_older_commit_with_the_same_patch(
    builder: RepoBuilder, db_path: Path
):
    """A line added, reverted, then proposed again: the old commit did not land the new PR."""
    builder.commit("Initial", {"a.py": "def a():\n    return 1\n"})
    builder.commit("Return two", {"a.py": "def a():\n    return 2\n"})
    builder.commit("Revert: return one", {"a.py": "def a():\n    return 1\n"})
    builder.pr_branch(6, [("Return two again", {"a.py": "def a():\n    return 2\n"})])

    index_repository(builder.path, db_path=db_path)

    pr6 = change(db_path, 6)
    assert (pr6["state"], pr6["merge_commit"]) == ("unmerged", None)
    assert rows(db_path, "SELECT count(*) FROM changes WHERE title = 'Return two'") == [(1,)]


def test_fast_forward_landed_pr_takes_over_its_commit(builder: RepoBuilder, db_path: Path):
    builder.commit("Initial", {"a.py": "def a():\n    return 1\n"})
    builder.pr_branch(6, [("Make a return three", {"a.py": "def a():\n    return 3\n"})])
    builder.merge_pr(6, how="rebase")  # nothing new on main: a fast-forward keeps the sha
    index_repository(builder.path, db_path=db_path)
    assert change(db_path, 6)["state"] == "merged"
    assert change(db_path, 6)["source"] == "fast-forward"
    assert rows(db_path, "SELECT count(*) FROM changes WHERE kind = 'commit'") == [(1,)]


def test_backport_pr_is_diffed_against_its_release_branch(builder: RepoBuilder, db_path: Path):
    builder.commit("Initial", {"a.py": "VERSION = 1\n"})
    builder.checkout("release-1.x", "main")
    builder.commit("Release fix", {"a.py": "VERSION = 1\nPATCH = 1\n"})
    builder.checkout("main")
    builder.commit("Main moves on", {"b.py": "FEATURE = True\n"})
    builder.pr_branch(7, [("Backport", {"c.py": "BACKPORT = 1\n"})], base="release-1.x")
    index_repository(builder.path, db_path=db_path)
    paths = rows(
        db_path,
        "SELECT f.path FROM files f JOIN changes c ON c.id = f.change_id WHERE c.number = 7",
    )
    assert paths == [("c.py",)]  # not a.py's release fix, not main's b.py
    assert change(db_path, 7)["base_sha"] == builder.head("release-1.x")


def test_pr_to_a_deleted_release_branch_stops_at_its_tags(builder: RepoBuilder, db_path: Path):
    """Release branches get deleted and their tags stay: the tagged history is not the PR's."""
    builder.commit("Initial", {"a.py": "VERSION = 1\n"})
    builder.checkout("release-1.x", "main")
    builder.commit("Release fix", {"a.py": "VERSION = 1\nPATCH = 1\n"})
    builder.commit("Release 1.0.1", {"CHANGELOG": "1.0.1\n"})
    builder.git("tag", "-a", "v1.0.1", "-m", "1.0.1")
    builder.checkout("main")
    builder.commit("Main moves on", {"b.py": "FEATURE = True\n"})
    builder.pr_branch(8, [("Fix on 1.x", {"c.py": "FIX = 1\n"})], base="release-1.x")
    builder.checkout("main")
    builder.git("branch", "-q", "-D", "release-1.x", "pr-8")

    index_repository(builder.path, db_path=db_path)

    paths = rows(
        db_path,
        "SELECT f.path FROM files f JOIN changes c ON c.id = f.change_id WHERE c.number = 8",
    )
    assert paths == [("c.py",)]  # not the release's a.py and CHANGELOG
    assert change(db_path, 8)["base_sha"] == builder.head("v1.0.1^{commit}")


def test_renames_binary_and_non_utf8_are_recorded_without_failing(
    builder: RepoBuilder, db_path: Path
):
    body = "def keep():\n" + "".join(f"    value_{i} = {i}\n" for i in range(30))
    builder.commit("Initial", {"old_name.py": body, "logo.png": b"\x89PNG\r\n\x1a\n\x00\x01"})
    builder.pr_branch(
        8,
        [
            (
                "Rename, new logo, latin-1 text",
                {
                    "old_name.py": None,
                    "new_name.py": body + "    value_x = 99\n",
                    "logo.png": b"\x89PNG\r\n\x1a\n\x00\x02\x03",
                    "latin.txt": "caf\xe9 cr\xe8me\n".encode("latin-1"),
                },
            )
        ],
    )
    summary = index_repository(builder.path, db_path=db_path)
    assert summary.unmerged == 1
    files = dict(
        (path, (old, status))
        for path, old, status in rows(
            db_path,
            "SELECT f.path, f.old_path, f.status FROM files f "
            "JOIN changes c ON c.id = f.change_id WHERE c.number = 8",
        )
    )
    assert files["new_name.py"] == ("old_name.py", "renamed")
    assert files["logo.png"][1] == "binary"
    assert "latin.txt" in files
    texts = [t for (t,) in rows(db_path, "SELECT text FROM line_texts")]
    assert "value_x = 99" in texts
    assert any(t.startswith("caf") for t in texts)


def test_lockfiles_are_ignored_by_default(builder: RepoBuilder, db_path: Path):
    builder.commit("Initial", {"app.py": "x = 1\n"})
    builder.pr_branch(
        9,
        [
            (
                "Bump deps",
                {"poetry.lock": "".join(f"pkg{i} = 1\n" for i in range(50)), "app.py": "x = 2\n"},
            )
        ],
    )
    index_repository(builder.path, db_path=db_path)
    status = dict(
        rows(
            db_path,
            "SELECT f.path, f.status FROM files f JOIN changes c ON c.id = f.change_id "
            "WHERE c.number = 9",
        )
    )
    assert status == {"poetry.lock": "ignored", "app.py": "modified"}


def test_huge_pr_is_stored_truncated(builder: RepoBuilder, db_path: Path):
    from index.config import Settings

    builder.commit("Initial", {"app.py": "x = 1\n"})
    builder.pr_branch(
        10,
        [
            (
                "Generate a lot",
                {
                    "big.py": "".join(f"value_{i} = {i}\n" for i in range(3000)),
                    "a_small.py": "y = 2\n",  # before big.py in git's order: kept
                },
            )
        ],
    )
    index_repository(builder.path, db_path=db_path, settings=Settings(max_changed_lines=1000))
    pr = change(db_path, 10)
    assert pr["truncated"] == 1
    assert pr["status"] == "indexed"
    assert rows(db_path, "SELECT count(*) FROM lines WHERE change_id = ?", (pr["id"],)) == [(1,)]


def test_an_unmerged_pr_is_stored_truncated_sooner_than_what_landed(
    builder: RepoBuilder, db_path: Path
):
    """Past `max_unmerged_lines`, an open PR keeps only the files before the one that passes
    it; a merged PR of the same size keeps every line up to `max_changed_lines`."""
    from index.config import Settings

    def generated(name: str) -> dict[str, str]:
        lines = "".join(f"{name}_{i} = {i}\n" for i in range(300))
        return {f"{name}.py": lines, f"a_{name}_tiny.py": f"{name} = 1\n"}

    builder.commit("Initial", {"app.py": "x = 1\n"})
    builder.pr_branch(10, [("Generate the merged lot", generated("merged"))])
    builder.merge_pr(10)
    builder.pr_branch(11, [("Generate the open lot", generated("open"))])
    settings = Settings(max_changed_lines=1000, max_unmerged_lines=100)
    index_repository(builder.path, db_path=db_path, settings=settings)
    merged, unmerged = change(db_path, 10), change(db_path, 11)
    assert (merged["state"], merged["truncated"], merged["status"]) == ("merged", 0, "indexed")
    assert (unmerged["state"], unmerged["truncated"], unmerged["status"]) == (
        "unmerged",
        1,
        "indexed",
    )
    lines = "SELECT count(*) FROM lines WHERE change_id = ?"
    assert rows(db_path, lines, (merged["id"],)) == [(301,)]
    assert rows(db_path, lines, (unmerged["id"],)) == [(1,)]  # a_open_tiny.py's line
    # A file cut is one row that says why; `prdup show` lists it once, with the reason.
    files = (
        "SELECT path, old_path, status, skip_reason FROM files WHERE change_id = ? ORDER BY path"
    )
    assert rows(db_path, files, (unmerged["id"],)) == [
        ("a_open_tiny.py", "", "added", None),
        ("open.py", "", "added", "too many changed lines"),
    ]
    code, out, _ = run_cli(builder.path, "show", "11", "--db", str(db_path))
    assert code == 0
    assert "file: open.py [added; too many changed lines]" in out
    assert "file: a_open_tiny.py [added]" in out
    assert out.count("open.py") == 1


def test_show_names_a_renamed_files_old_path(builder: RepoBuilder, db_path: Path):
    """An unrenamed file's old path is stored empty and read back as its path."""
    body = "".join(f"value_{i} = {i}\n" for i in range(20))
    builder.commit("Initial", {"app.py": "x = 1\n", "old_name.py": body})
    changed = body.replace("value_3 = 3", "value_3 = 33")
    builder.pr_branch(
        12,
        [("Rename and change", {"old_name.py": None, "new_name.py": changed, "app.py": "x = 2\n"})],
    )
    index_repository(builder.path, db_path=db_path)
    code, out, _ = run_cli(builder.path, "show", "12", "--db", str(db_path))
    assert code == 0, out
    assert "file: new_name.py (from old_name.py) [renamed]" in out
    assert "file: app.py [modified]" in out


def test_prs_json_metadata_and_linked_issues(history: RepoBuilder, db_path: Path, tmp_path: Path):
    export = tmp_path / "prs.json"
    export.write_text(
        json.dumps(
            [
                {
                    "number": 3,
                    "title": "Stop reading enable_cpu_offload",
                    "body": "Fixes #42 and closes octo/repo#7",
                    "state": "OPEN",
                    "createdAt": "2024-01-02T00:00:00Z",
                    "closedAt": None,
                    "mergedAt": None,
                    "headRefOid": history.head("refs/pull/3/head"),
                    "baseRefName": "main",
                    "author": {"login": "contributor"},
                },
                {
                    "number": 11,
                    "title": "Never pushed here",
                    "body": "",
                    "state": "CLOSED",
                    "createdAt": "2024-01-03T00:00:00Z",
                    "closedAt": "2024-01-04T00:00:00Z",
                    "mergedAt": None,
                    "headRefOid": "0" * 40,
                    "baseRefName": "main",
                    "author": {"login": "someone"},
                },
            ]
        )
    )
    summary = index_repository(history.path, db_path=db_path, prs_json=export)
    pr3 = change(db_path, 3)
    assert pr3["title"] == "Stop reading enable_cpu_offload"
    assert pr3["author"] == "contributor"
    issues = sorted(
        i
        for (i,) in rows(db_path, "SELECT issue FROM issue_refs WHERE change_id = ?", (pr3["id"],))
    )
    assert issues == ["#42", "octo/repo#7"]
    assert change(db_path, 11)["status"] == "metadata-only"
    assert change(db_path, 11)["state"] == "closed"
    assert summary.metadata_only == 1


def test_malformed_prs_json_fails_before_writing(
    history: RepoBuilder, db_path: Path, tmp_path: Path
):
    index_repository(history.path, db_path=db_path)
    before = rows(db_path, "SELECT * FROM changes ORDER BY id")
    bad = tmp_path / "prs.json"
    bad.write_text("{not json")
    with pytest.raises(BadMetadata, match="not JSON"):
        index_repository(history.path, db_path=db_path, prs_json=bad)
    bad.write_text(json.dumps([{"title": "no number"}]))
    with pytest.raises(BadMetadata, match="no integer 'number'"):
        index_repository(history.path, db_path=db_path, prs_json=bad)
    assert rows(db_path, "SELECT * FROM changes ORDER BY id") == before


def test_bad_repositories_and_targets(tmp_path: Path, builder: RepoBuilder, db_path: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(NotAGitRepository):
        index_repository(plain, db_path=db_path)
    with pytest.raises(EmptyRepository):
        index_repository(builder.path, db_path=db_path)
    builder.commit("Initial", {"a.py": "x = 1\n"})
    with pytest.raises(MissingRevision, match="no-such-branch"):
        index_repository(builder.path, db_path=db_path, targets=["no-such-branch"])


def test_locked_index_is_reported_and_left_intact(history: RepoBuilder, db_path: Path):
    index_repository(history.path, db_path=db_path)
    before = rows(db_path, "SELECT count(*) FROM lines")
    history.pr_branch(12, [("More", {"more.py": "def more():\n    return 12\n"})])
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(IndexLocked, match="locked"):
            index_repository(history.path, db_path=db_path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert rows(db_path, "SELECT count(*) FROM lines") == before


def test_corrupt_index_is_reported(history: RepoBuilder, db_path: Path):
    db_path.write_bytes(b"this is not an sqlite database at all" * 100)
    with pytest.raises(IndexCorrupt, match="damaged"):
        index_repository(history.path, db_path=db_path)


def test_pr_ref_to_missing_object_is_skipped(history: RepoBuilder, db_path: Path):
    refs = Path(history.repo.git_dir) / "refs" / "pull" / "13"
    refs.mkdir(parents=True)
    (refs / "head").write_text("1234567890123456789012345678901234567890\n")
    summary = index_repository(history.path, db_path=db_path)
    assert summary.unmerged == 1  # PR 3 still indexed
    skipped = change(db_path, 13)  # recorded with its reason, for `prdup show 13`
    assert (skipped["status"], skipped["sha"], skipped["head_sha"]) == ("skipped", None, None)
    assert "is missing from the repository" in skipped["skip_reason"]


@pytest.mark.parametrize("batch_size", [100, 1])
def test_missing_blobs_skip_only_their_commit_and_pr(
    builder: RepoBuilder, db_path: Path, batch_size: int
):
    """Snapshots and partial clones lack some blobs: git stops there, prdup goes on."""
    builder.commit("Initial", {"a.py": "A = 1\n"})
    builder.commit("Big generated file", {"big.txt": "x" * 5000 + "\n"})
    builder.commit("After the big file", {"c.py": "C = 3\n"})
    builder.pr_branch(31, [("Touches the big file", {"big.txt": "y" * 5000 + "\n"})])
    builder.pr_branch(32, [("Fine PR", {"d.py": "D = 4\n"})])
    builder.delete_blob("main:big.txt")
    builder.delete_blob("refs/pull/31/head:big.txt")

    summary = index_repository(builder.path, db_path=db_path, batch_size=batch_size)

    assert summary.skipped["git object missing"] == 2
    titles = {t for (t,) in rows(db_path, "SELECT title FROM changes WHERE status = 'indexed'")}
    assert {"Initial", "After the big file", "Fine PR"} <= titles
    assert change(db_path, 31)["skip_reason"] == "git object missing"
    assert change(db_path, 32)["status"] == "indexed"


def test_mode_only_and_submodule_changes_are_recorded(builder: RepoBuilder, db_path: Path):
    builder.commit("Initial", {"run.sh": "echo hi\n"})
    builder.checkout("pr-14", "main")
    builder.git("update-index", "--chmod=+x", "run.sh")
    sub_commit = builder.head()
    builder.git("update-index", "--add", "--cacheinfo", f"160000,{sub_commit},vendor/lib")
    builder.git("commit", "-q", "-m", "Make run.sh executable and add a submodule")
    builder.git("update-ref", "refs/pull/14/head", builder.head())
    builder.git("checkout", "-q", "-f", "main")  # the index changed the mode, not the file

    summary = index_repository(builder.path, db_path=db_path)

    assert summary.unmerged == 1
    pr = change(db_path, 14)
    assert pr["status"] == "indexed"
    paths = {p for (p,) in rows(db_path, "SELECT path FROM files WHERE change_id = ?", (pr["id"],))}
    assert "run.sh" in paths
    assert rows(db_path, "SELECT count(*) FROM lines WHERE change_id = ?", (pr["id"],)) == [(0,)]


def _busy_history(builder: RepoBuilder) -> RepoBuilder:
    """Twelve squash-merged PRs editing two Python files, a rename, and two open PRs."""
    source = {"pkg/a.py": PIPELINE, "pkg/b.py": PIPELINE.replace("Pipeline", "Stage")}
    builder.commit("Initial", dict(source))
    for number in range(1, 13):
        path = "pkg/a.py" if number % 2 else "pkg/b.py"
        source[path] = source[path].replace(
            "        self.ready = True\n",
            f"        self.ready = True\n        self.step{number} = {number}\n",
        )
        builder.pr_branch(number, [(f"Step {number}", {path: source[path]})])
        builder.merge_pr(number, how="squash")
    builder.commit("Move b", {"pkg/b.py": None, "pkg/stage.py": source["pkg/b.py"]})
    builder.pr_branch(20, [("Open a", {"pkg/a.py": source["pkg/a.py"].replace("x * 2", "x")})])
    builder.pr_branch(21, [("Open s", {"pkg/stage.py": source["pkg/b.py"] + "\nX = 1\n"})])
    return builder


def postings(db: Path) -> list[tuple[int, list[int]]]:
    """`line_changes` decoded: each hash with its entries, sorted."""
    from index.storage.line_postings import unpack

    return [
        (h, sorted(unpack(blob)))
        for h, blob in rows(db, "SELECT hash, changes FROM line_changes ORDER BY hash")
    ]


def postings_of_lines(db: Path) -> list[tuple[int, list[int]]]:
    """What `line_changes` must hold: an entry per line row, as a first run's end builds it."""
    found: dict[int, list[int]] = {}
    for line_hash, value in rows(db, "SELECT hash, change_id * 2 + (side = '+') FROM lines"):
        found.setdefault(line_hash, []).append(value)
    return sorted((h, sorted(values)) for h, values in found.items())


ROWS_TO_COMPARE = (
    "SELECT c.sha, c.number, c.state, c.patch_id, c.status FROM changes c ORDER BY c.sha, c.number",
    "SELECT c.sha, s.path, s.qualified, s.kind, s.side FROM symbols s "
    "JOIN changes c ON c.id = s.change_id ORDER BY 1, 2, 3, 4, 5",
    "SELECT c.sha, h.old_start, h.new_start, h.symbol, h.content_hash FROM hunks h "
    "JOIN changes c ON c.id = h.change_id ORDER BY 1, 2, 3",
    "SELECT c.sha, l.side, l.hash FROM lines l JOIN changes c ON c.id = l.change_id "
    "ORDER BY 1, 2, 3",
)


def test_batches_of_any_size_write_the_same_rows(builder: RepoBuilder, tmp_path: Path):
    """A transaction per change or per hundred changes: the index is the same."""
    repo = _busy_history(builder).path
    large, small = tmp_path / "large.db", tmp_path / "small.db"

    index_repository(repo, db_path=large)
    summary = index_repository(repo, db_path=small, batch_size=3)

    assert (summary.merged, summary.unmerged) == (12, 2)
    kinds = "SELECT COUNT(*) FROM symbols WHERE kind IN ('definition', 'context')"
    assert rows(small, kinds)[0][0] >= 12
    for sql in ROWS_TO_COMPARE:
        assert rows(small, sql) == rows(large, sql)


def test_no_symbols_are_stored_when_symbols_are_off(builder: RepoBuilder, db_path: Path):
    from index.config import Settings

    index_repository(_busy_history(builder).path, db_path=db_path, settings=Settings(symbols=False))

    assert rows(db_path, "SELECT count(*) FROM changes")[0][0] >= 13
    assert rows(db_path, "SELECT count(*) FROM symbols") == [(0,)]
    assert rows(db_path, "SELECT count(*) FROM hunks WHERE symbol IS NOT NULL") == [(0,)]


def test_author_emails_are_recorded_and_filled_in_for_old_rows(history: RepoBuilder, db_path: Path):
    first = index_repository(history.path, db_path=db_path)
    # A first run's merged PRs are new, though their refs are read after the history found them.
    assert first.merged > 0 and first.unchanged == 0 and "0 unchanged" in first.line()
    emails = rows(db_path, "SELECT number, author_email FROM changes WHERE number IS NOT NULL")
    assert emails and all(email == "author@example.com" for _, email in emails)

    with sqlite3.connect(db_path) as conn:  # an index written before the column existed
        conn.execute("UPDATE changes SET author_email = NULL")
    summary = index_repository(history.path, db_path=db_path)

    assert summary.unchanged > 0 and summary.merged == 0  # nothing re-read...
    assert rows(db_path, "SELECT COUNT(*) FROM changes WHERE author_email IS NULL") == [(0,)]


def _code_words(db: Path) -> dict[int, list[tuple[str, int]]]:
    """Each change's packed code words, most used first."""
    found = {}
    from index.storage.packed import unsqueeze

    for change_id, packed in rows(db, "SELECT change_id, words FROM change_words"):
        parts = unsqueeze(packed).split(" ")
        found[change_id] = list(zip(parts[::2], map(int, parts[1::2]), strict=True))
    return found


def test_code_words_are_counted_per_change_and_filled_in_for_old_rows(
    history: RepoBuilder, db_path: Path
):
    index_repository(history.path, db_path=db_path)
    pr3 = change(db_path, 3)
    words = dict(_code_words(db_path)[pr3["id"]])
    # camelCase and snake_case parts too: `resolve_offload` is found as `offload` elsewhere
    assert {"resolve_offload", "resolve", "offload", "enable_cpu_offload", "config"} <= set(words)
    assert words["config"] == 2  # in the removed and in the added line
    with_words = len(_code_words(db_path))
    assert rows(db_path, "SELECT value FROM meta WHERE key = 'code_word_changes'") == [
        (str(with_words),)
    ]
    assert rows(db_path, "SELECT df FROM code_word_df WHERE word = 'resolve_offload'") == [(1,)]
    vector = dict(
        rows(db_path, "SELECT word, weight FROM code_terms WHERE change_id = ?", (pr3["id"],))
    )
    assert "resolve_offload" in vector
    assert sum(w * w for w in vector.values()) == pytest.approx(1.0)  # weighed, normalised
    before = _code_words(db_path)

    with sqlite3.connect(db_path) as conn:  # an index written before words were counted
        conn.execute("DELETE FROM change_words")
        conn.execute("DELETE FROM code_word_df")
        conn.execute("UPDATE changes SET words_counted = 0")  # as the migration leaves it
    summary = index_repository(history.path, db_path=db_path)

    assert summary.unchanged > 0 and summary.merged == 0  # nothing re-read from git...
    assert _code_words(db_path) == before
    assert rows(db_path, "SELECT count(*) FROM changes WHERE words_counted = 0") == [(0,)]
    again = dict(
        rows(db_path, "SELECT word, weight FROM code_terms WHERE change_id = ?", (pr3["id"],))
    )
    assert again == pytest.approx(vector)


def test_code_vectors_are_all_weighed_again_once_the_index_has_grown(
    history: RepoBuilder, db_path: Path
):
    """Document frequencies drift as changes arrive: past a tenth more, every vector is redone."""
    index_repository(history.path, db_path=db_path)
    pr3 = change(db_path, 3)["id"]
    first = rows(db_path, "SELECT word, weight FROM code_terms WHERE change_id = ?", (pr3,))
    for number in (4, 5):  # two more changes that use PR 3's words, so its weights move
        body = f"def resolve_offload_{number}(config):\n    return resolve_offload(config)\n"
        history.pr_branch(number, [(f"Helper {number}", {f"helper{number}.py": body})])
    index_repository(history.path, db_path=db_path)

    meta = dict(rows(db_path, "SELECT key, value FROM meta WHERE key LIKE 'code_%'"))
    assert meta["code_terms_documents"] == meta["code_word_changes"]
    again = dict(rows(db_path, "SELECT word, weight FROM code_terms WHERE change_id = ?", (pr3,)))
    assert again.keys() == dict(first).keys() and again != dict(first)


def _index_names(db: Path) -> set[str]:
    return {name for (name,) in rows(db, "SELECT name FROM sqlite_master WHERE type = 'index'")}


def test_first_run_builds_lookup_indexes_at_its_end_even_after_an_interruption(
    builder: RepoBuilder, tmp_path: Path
):
    """A first run appends rows without the lookup indexes; stopped half-way, the next run
    builds them, resumes, and ends with the rows of a run that was never stopped."""
    from index.storage.schema import LOOKUP_INDEXES

    repo = _busy_history(builder).path
    whole, stopped = tmp_path / "whole.db", tmp_path / "stopped.db"
    index_repository(repo, db_path=whole)
    assert set(LOOKUP_INDEXES) <= _index_names(whole)

    batches: list[str] = []

    def stop_after_two_batches(phase: str, done: int, total: int | None) -> None:
        batches.extend([phase] if phase.startswith("history of") else [])
        if len(batches) == 2:  # the first batch is written by then
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        index_repository(repo, db_path=stopped, batch_size=2, progress=stop_after_two_batches)
    assert rows(stopped, "SELECT count(*) FROM lines")[0][0] > 0
    assert not set(LOOKUP_INDEXES) & _index_names(stopped)

    index_repository(repo, db_path=stopped)

    assert set(LOOKUP_INDEXES) <= _index_names(stopped)
    for sql in ROWS_TO_COMPARE:
        assert rows(stopped, sql) == rows(whole, sql)
    for db in (whole, stopped):
        assert postings(db) == postings_of_lines(db) != []


def test_progress_is_plain_lines_off_a_terminal_and_nothing_when_quiet(
    builder: RepoBuilder, tmp_path: Path
):
    import io

    from prdup.progress import IndexProgress
    from tests.repo_builder import run_cli

    repo = _busy_history(builder).path
    stream = io.StringIO()
    with IndexProgress(stream=stream) as progress:  # a StringIO is no terminal
        index_repository(repo, db_path=tmp_path / "a.db", batch_size=3, progress=progress)
    lines = stream.getvalue().splitlines()
    # The first report of each phase is printed; later ones wait a few seconds.
    assert lines[0] == "prdup index: git's commit-graph (once per clone)"
    assert lines[1] == "prdup index: history of main 3/14"
    assert "prdup index: PR diffs 2/2" in lines
    assert lines[-1].startswith("prdup index: rarity and text model")  # a heartbeat may follow

    code, out, err = run_cli(repo, "index", "--db", str(tmp_path / "b.db"), "--quiet")
    assert (code, out, err) == (0, "", "")
    code, _, err = run_cli(repo, "index", "--db", str(tmp_path / "c.db"))
    assert code == 0 and "prdup index: history of main" in err and ": 12 merged" in err


def test_plain_progress_gives_a_rate_and_what_is_left_and_a_heartbeat_between_reports():
    """A CI log: a line per interval with the pace, and while a step reports nothing, a line
    saying it is still under way (here an interval of 0.05 s stands for a few seconds)."""
    import io

    from prdup.progress import IndexProgress

    stream = io.StringIO()
    with IndexProgress(stream=stream, live=False, every=0.05) as progress:
        progress("PR refs", 0, 1000)
        time.sleep(1.1)
        deadline = time.monotonic() + 10
        while "PR refs 500/1000" not in stream.getvalue() and time.monotonic() < deadline:
            progress("PR refs", 500, 1000)
            time.sleep(0.1)
        while "model (" not in stream.getvalue() and time.monotonic() < deadline:
            progress("rarity and text model", 0, None)
            time.sleep(0.6)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "prdup index: PR refs 0/1000"
    paced = [line for line in lines if line.startswith("prdup index: PR refs 500/1000")]
    assert re.fullmatch(r"prdup index: PR refs 500/1000 \(\d+/s, about \d+ s left\)", paced[0])
    assert any(re.search(r"rarity and text model \(\d+ s in this step\)", line) for line in lines)


def test_a_pr_landed_as_a_rewritten_commit_that_closes_it_is_merged_there(tmp_path: Path):
    """Projects that land PRs by rebasing with rewritten messages leave no sha of the PR on
    main, only "Closes #N". #110 landed so (its author's commit, reworded, a comment added); a
    commit that closes #112 while doing something else is not #112's landing. A maintainer's
    own commit that closes #113 and holds every line #113 adds and removes (a note beside
    them) lands #113: its change is on main by that commit. One that closes #114 with only
    part of #114's lines (its own value) is a change of its own, and so is one that closes
    #115 rewriting its whole file, #115's line with it."""
    from tests.test_check import LEGACY, PIPELINE

    builder = RepoBuilder(tmp_path / "repo")
    builder.commit(
        "Add the pipeline",
        {"pipelines/pipeline.py": PIPELINE, "notes.txt": "a\n", "app.py": "VALUE = 1\n"},
    )
    base = builder.head()
    fix = PIPELINE.replace(LEGACY, "        if config.offload_strategy == 'cpu':\n")
    builder.pr_branch(110, [("Read the strategy", {"pipelines/pipeline.py": fix})])
    builder.pr_branch(112, [("Note b", {"notes.txt": "a\nb\n"})])
    builder.pr_branch(113, [("Raise the value", {"app.py": "VALUE = 2\n"})])
    builder.pr_branch(114, [("Two limits", {"limits.py": "LOW = 0\nHIGH = 10\n"})], start=base)
    builder.pr_branch(115, [("Retry", {"app.py": "VALUE = 1\nRETRIES = 3\n"})], start=base)
    builder.write({"pipelines/pipeline.py": "# strategy\n" + fix})
    builder.git(
        "commit",
        "-q",
        "--author",
        "Contributor 110 <author@example.com>",
        "-m",
        "fix(pipeline): read the offload strategy\n\nCloses #110",
    )
    landing = builder.head()
    builder.commit("docs: tidy\n\nCloses #112", {"README.md": "tidy\n"})
    builder.commit(
        "Raise the value to 2 (as #113 asked)\n\nCloses #113", {"app.py": "VALUE = 2\n# done\n"}
    )
    raised = builder.head()
    builder.commit("Limits\n\nCloses #114", {"limits.py": "LOW = 0\nHIGH = 100\n"})
    rework = "".join(f"SETTING_{n} = {n}\n" for n in range(6))
    builder.commit("Rework the settings\n\nCloses #115", {"app.py": rework + "RETRIES = 3\n"})
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    for number, commit in ((110, landing), (113, raised)):
        code, out, _ = run_cli(builder.path, "show", str(number))
        assert "[merged]" in out and commit in out, (number, out)
    for number in (112, 114, 115):
        code, out, _ = run_cli(builder.path, "show", str(number))
        assert "[merged]" not in out, (number, out)


def test_a_closing_commit_by_the_pr_authors_email_lands_it_in_the_first_run(
    builder: RepoBuilder, db_path: Path
):
    """The PR's author landed it under another name with the same e-mail: the first run
    already knows (authors' e-mails are read before landings are matched), and a second run
    with nothing new changes nothing."""
    body = "".join(f"def step_{i}(x):\n    return x + {i}\n" for i in range(20))
    fix = body.replace("return x + 7", "return x - 7")
    builder.commit("Start", {"calc.py": body})
    builder.pr_branch(
        120,
        [("Fix the sign of step_7", {"calc.py": fix})],
        author="Jane Doe",
        email="jane@mail.test",
    )
    builder.write({"calc.py": "# signs checked\n" + fix})
    builder.git(
        "commit", "-q", "--author", "jdoe <jane@mail.test>", "-m", "Fix step_7\n\nCloses #120"
    )
    landing = builder.head()
    index_repository(builder.path, db_path=db_path)
    row = change(db_path, 120)
    assert (row["state"], row["source"], row["merge_commit"]) == ("merged", "closes", landing)
    everything = "SELECT * FROM changes ORDER BY id"
    before = rows(db_path, everything)
    index_repository(builder.path, db_path=db_path)
    assert rows(db_path, everything) == before


def test_a_landed_pr_whose_commit_closes_another_lands_it_too(builder: RepoBuilder, db_path: Path):
    """A maintainer made #140's typo fix in a PR of their own (#142), whose commit says
    `Closes #140` and `Closes #141`, and landed it: #142's landing holds every line #140 adds
    and removes, so it lands #140 too; #140 says it closes #138, the same fix opened before,
    which is then landed by it as well, in the same run. #142 holds only one of #141's two
    lines: #141 is not landed by it. A second run with nothing new changes nothing."""
    guide = "".join(f"Step {n}: an step to take.\n" for n in range(8))
    builder.commit("Start", {"guide.md": guide, "notes.md": "a\n"})
    fixed = guide.replace("Step 3: an step", "Step 3: a step")
    builder.pr_branch(138, [("Step 3: a typo", {"guide.md": fixed})])
    builder.pr_branch(140, [("Fix a typo in step 3\n\nCloses #138", {"guide.md": fixed})])
    both = fixed.replace("Step 5: an step", "Step 5: a step")
    builder.pr_branch(141, [("Fix steps 3 and 5", {"guide.md": both, "notes.md": "a\nb\n"})])
    builder.pr_branch(
        142,
        [("docs: fix a typo in the guide\n\nCloses #140\nCloses #141", {"guide.md": both})],
        author="Maintainer",
        email="maintainer@mail.test",
    )
    landing = builder.merge_pr(142, how="rebase")
    index_repository(builder.path, db_path=db_path)
    assert change(db_path, 142)["merge_commit"] == landing
    for number in (140, 138):
        row = change(db_path, number)
        assert (row["state"], row["source"], row["merge_commit"]) == (
            "merged",
            "closed-along",
            landing,
        )
    assert change(db_path, 141)["merge_commit"] is None
    everything = "SELECT * FROM changes ORDER BY id"
    before = rows(db_path, everything)
    index_repository(builder.path, db_path=db_path)
    assert rows(db_path, everything) == before


def test_a_pr_commit_reworded_by_hand_that_closes_it_is_its_landing(
    builder: RepoBuilder, db_path: Path
):
    """A maintainer amended #130's commit before pushing it (its text rewritten, no line left as
    the PR had it): the author and author date git keeps, the file and `Closes #130` make it
    #130's landing. #131's author's own later commit that closes it in the same file, made
    afresh (another author date), is a change of its own; so is the commit with #132's author
    date that closes #132 in another file."""
    guide = "".join(f"Step {i}: do the thing number {i}.\n" for i in range(12))
    builder.commit("Start", {"guide.md": guide, "notes.md": "first note\n"})
    pr_130 = builder.pr_branch(
        130, [("docs: explain step 3", {"guide.md": guide + "Note that step 3 is slow.\n"})]
    )
    builder.pr_branch(
        131, [("docs: explain step 5", {"guide.md": guide + "Step 5 needs a network.\n"})]
    )
    pr_132 = builder.pr_branch(
        132, [("docs: explain step 7", {"guide.md": guide + "Step 7 may be skipped.\n"})]
    )

    def authored(head: str) -> str:
        return builder.repo.git.log("-1", "--format=%ad", "--date=raw", head)

    def land(message: str, files: dict[str, str], number: int, date: str | None) -> str:
        builder.write(files)
        author = ["--author", f"Contributor {number} <author@example.com>"]
        dated = ["--date", date] if date else []  # else made now
        builder.git("commit", "-q", *author, *dated, "-m", message)
        return builder.head()

    reworded = guide + "Step 3 takes a while: expect minutes, not seconds.\n"
    landing = land(
        "docs(guide): step 3 is slow\n\nCloses #130", {"guide.md": reworded}, 130, authored(pr_130)
    )
    land(
        "docs(guide): step 5\n\nCloses #131", {"guide.md": reworded + "Networked: 5.\n"}, 131, None
    )
    land("docs: notes\n\nCloses #132", {"notes.md": "first note\nsecond\n"}, 132, authored(pr_132))
    index_repository(builder.path, db_path=db_path)

    row = change(db_path, 130)
    assert (row["state"], row["source"], row["merge_commit"]) == ("merged", "closes", landing)
    for number in (131, 132):
        row = change(db_path, number)
        assert (row["state"], row["merge_commit"]) == ("unmerged", None), number


def test_a_pr_whose_head_moves_to_another_authors_commit_takes_that_author(
    builder: RepoBuilder, db_path: Path
):
    """Alice opens PR 3 (a tidy-up) and PR 7 (a fix). Carol takes PR 3 over and pushes the very
    same fix to it: the two PRs are duplicates by different people, not Alice's own pair."""
    body = "".join(f"def step_{i}(x):\n    return x + {i}\n" for i in range(20))
    fix = body.replace("return x + 7", "return x - 7")
    builder.commit("Start", {"calc.py": body})
    alice = {"author": "Alice", "email": "alice@mail.test"}
    builder.pr_branch(3, [("Tidy step_2", {"calc.py": body.replace("x + 2", "2 + x")})], **alice)
    builder.pr_branch(7, [("Fix the sign of step_7", {"calc.py": fix})], **alice)
    index_repository(builder.path, db_path=db_path)
    carol = {"author": "Carol", "email": "carol@mail.test"}
    builder.pr_branch(3, [("step_7 subtracts", {"calc.py": fix})], **carol)
    index_repository(builder.path, db_path=db_path)
    row = change(db_path, 3)
    assert (row["author"], row["author_email"]) == ("Carol", "carol@mail.test")
    code, out, err = run_cli(
        builder.path, "check", "--pr", "7", "--format", "json", "--db", str(db_path)
    )
    findings = {f["pr"]: f for f in json.loads(out)["findings"]}
    assert findings[3]["verdict"] == "duplicate", err
    assert not findings[3]["signals"]["same_author"]


def test_a_merged_pr_whose_commit_was_rebased_onto_main_is_landed_there(tmp_path: Path):
    """GitHub says #115 merged ("Rebase and merge": new commits, no PR number in them); the
    commit on main with #115's whole patch is its landing."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Start", {"app.py": "VALUE = 1\n"})
    builder.pr_branch(115, [("Raise the value", {"app.py": "VALUE = 2\n"})])
    builder.commit("Raise the value", {"app.py": "VALUE = 2\n"})
    landing = builder.head()
    builder.delete_pr_branch(115)
    prs_json = tmp_path / "prs.json"
    prs_json.write_text(json.dumps([{"number": 115, "state": "MERGED"}]))
    code, _, err = run_cli(builder.path, "index", "--quiet", "--prs-json", str(prs_json))
    assert code == 0, err

    code, out, _ = run_cli(builder.path, "show", "115")
    assert "[merged]" in out and landing in out


def test_a_commit_lands_one_pr_even_when_two_propose_its_patch(tmp_path: Path):
    """#150 and #151 propose the same one-line fix; GitHub calls both merged; main has one
    commit with that patch, by #150's author. It is #150's landing; #151 is then told its
    change is already done in #150."""
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Start", {"app.py": "VALUE = 1\n"})
    start = builder.head()
    builder.pr_branch(150, [("Raise the value", {"app.py": "VALUE = 2\n"})])
    builder.pr_branch(151, [("Bump the value", {"app.py": "VALUE = 2\n"})], start=start)
    builder.checkout("main")
    builder.git("cherry-pick", "pr-150")
    landing = builder.head()
    for number in (150, 151):
        builder.delete_pr_branch(number)
    prs = [
        {"number": n, "state": "MERGED", "createdAt": f"2023-11-01T0{n - 150}:00:00Z"}
        for n in (150, 151)
    ]
    prs_json = tmp_path / "prs.json"
    prs_json.write_text(json.dumps(prs))
    code, _, err = run_cli(builder.path, "index", "--quiet", "--prs-json", str(prs_json))
    assert code == 0, err

    _, out, _ = run_cli(builder.path, "show", "150")
    assert f"merge_commit: {landing}" in out
    _, out, _ = run_cli(builder.path, "show", "151")
    assert "merge_commit" not in out
    code, out, err = run_cli(builder.path, "check", "--pr", "151", "--format", "json")
    found = json.loads(out)["findings"]
    assert found and found[0]["pr"] == 150 and found[0]["verdict"] == "already-merged", found
