"""An index knows which repository it holds (its history's root commits), and says what a
shallow clone leaves unknown."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from index.errors import ForeignIndex
from index.indexer import index_repository
from tests.repo_builder import RepoBuilder, run_cli

FIX = "def double(x):\n    return x * 2\n"


def story(builder: RepoBuilder) -> RepoBuilder:
    """main: PR 1 merge-commit, PR 2 squash, a direct commit, then PR 3 merged at the tip."""
    builder.commit("Initial", {"calc.py": FIX, "README.md": "calc\n"})
    builder.pr_branch(1, [("Add halving", {"calc.py": FIX + "def half(x):\n    return x / 2\n"})])
    builder.merge_pr(1)
    builder.pr_branch(2, [("Document calc", {"README.md": "calc: double and half\n"})])
    builder.merge_pr(2, how="squash")
    builder.commit("Direct tweak", {"NOTES.txt": "a note\n"})
    builder.pr_branch(3, [("Say hello", {"hello.py": "print('hello, calc users')\n"})])
    builder.merge_pr(3)
    return builder


def dump(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return list(conn.iterdump())


def meta(db: Path, key: str) -> str | None:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


@pytest.fixture
def other(tmp_path: Path) -> RepoBuilder:
    """An unrelated project."""
    other = RepoBuilder(tmp_path / "other")
    other.commit("Another project", {"main.go": "package main\n"})
    other.commit("Grow it", {"main.go": "package main\n\nfunc main() {}\n"})
    return other


def test_another_repositorys_index_is_refused_with_one_line(
    builder: RepoBuilder, other: RepoBuilder, db_path: Path
):
    story(builder)
    index_repository(builder.path, db_path=db_path)
    assert meta(db_path, "root_commits") == builder.head("main~3^1")  # "Initial"
    before = dump(db_path)

    code, out, err = run_cli(other.path, "index", "--db", str(db_path))

    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "another repository" in err and str(db_path) in err
    assert dump(db_path) == before  # nothing of the other project was written
    with pytest.raises(ForeignIndex):
        index_repository(other.path, db_path=db_path)
    code, _, err = run_cli(other.path, "check", "--db", str(db_path))
    assert code == 2 and err.count("\n") == 1 and "another repository" in err
    code, _, err = run_cli(other.path, "sweep", "--db", str(db_path), "--repo", str(other.path))
    assert code == 2 and "another repository" in err


def test_a_clone_of_the_same_repository_uses_the_index(builder: RepoBuilder, db_path: Path):
    story(builder)
    index_repository(builder.path, db_path=db_path)
    clone = builder.ci_clone(builder.path.parent / "clone")
    clone.checkout("work", "origin/main")
    clone.commit("Work in the clone", {"calc.py": FIX.replace("x * 2", "x + x")})
    summary = index_repository(clone.path, db_path=db_path, targets=["main"])
    assert summary.unchanged == 3  # the same PRs, nothing read twice
    code, _, err = run_cli(clone.path, "check", "--db", str(db_path))
    assert code in (0, 1) and "another repository" not in err


def test_an_index_from_before_roots_were_recorded_records_them_and_keeps_its_rows(
    builder: RepoBuilder, db_path: Path
):
    story(builder)
    index_repository(builder.path, db_path=db_path)
    with sqlite3.connect(db_path) as conn:
        conn.execute("DELETE FROM meta WHERE key = 'root_commits'")
        changes = conn.execute("SELECT * FROM changes ORDER BY id").fetchall()
    index_repository(builder.path, db_path=db_path)
    assert meta(db_path, "root_commits") == builder.head("main~3^1")
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT * FROM changes ORDER BY id").fetchall() == changes


def shallow_clone(builder: RepoBuilder, depth: int = 1) -> Path:
    path = builder.path.parent / "shallow"
    builder.git("clone", "-q", "--depth", str(depth), f"file://{builder.path}", str(path))
    return path


def test_a_shallow_clone_says_what_it_cannot_know_until_unshallowed(
    builder: RepoBuilder, db_path: Path
):
    story(builder)
    shallow = shallow_clone(builder)

    code, _, err = run_cli(shallow, "index", "--db", str(db_path))

    assert code == 0
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "shallow clone" in warnings[0]
    assert "merged before the cut are unknown" in warnings[0]
    assert "git fetch --unshallow" in warnings[0]
    summary = err[err.index("indexed") :]
    assert "0 merged PRs (after a shallow clone's cut; earlier ones unknown)" in summary
    assert "1 skipped (1 at a shallow clone's cut (its change is unknown))" in summary
    with sqlite3.connect(db_path) as conn:  # the cut commit is not taken for PR 3's change
        assert conn.execute("SELECT kind, status, number FROM changes").fetchall() == [
            ("commit", "skipped", None)
        ]
    work = RepoBuilder(shallow)
    work.checkout("halve", "HEAD")
    work.commit("Add tripling", {"calc.py": FIX + "def triple(x):\n    return x * 3\n"})
    code, _, err = run_cli(shallow, "check", "--db", str(db_path), "--target", "main")
    assert code in (0, 1)
    assert err.count("shallow clone") == 1 and "git fetch --unshallow" in err

    work.git("fetch", "-q", "--unshallow")
    code, _, err = run_cli(shallow, "index", "--db", str(db_path))

    assert code == 0 and "shallow clone" not in err
    assert "3 merged PRs, 0 open, 0 closed, 2 direct commits" in err
    with sqlite3.connect(db_path) as conn:
        rows = conn.execute("SELECT number, state, status FROM changes WHERE kind = 'pr'")
        assert sorted(rows.fetchall()) == [(n, "merged", "indexed") for n in (1, 2, 3)]
        assert not conn.execute("SELECT 1 FROM changes WHERE status = 'skipped'").fetchall()
    assert meta(db_path, "root_commits") == builder.head("main~3^1")
    code, _, err = run_cli(shallow, "check", "--db", str(db_path), "--target", "main")
    assert code in (0, 1) and "shallow clone" not in err
