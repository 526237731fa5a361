"""What a new user meets in the first hour: one way to name the repository, help that says
what it does, and settings mistakes that are said, not ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.repo_builder import RepoBuilder, run_cli


@pytest.fixture
def repo(builder: RepoBuilder) -> RepoBuilder:
    builder.commit("Start", {"a.py": "def a():\n    return 1\n"})
    builder.pr_branch(1, [("Return two", {"a.py": "def a():\n    return 2\n"})])
    builder.merge_pr(1)
    return builder


def test_index_takes_the_repository_as_every_command_does(repo: RepoBuilder, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, _, err = run_cli(elsewhere, "index", "--repo", str(repo.path), "--quiet")
    assert code == 0, err
    code, out, _ = run_cli(elsewhere, "show", "1", "--repo", str(repo.path))
    assert code == 0 and "#1" in out
    code, _, err = run_cli(elsewhere, "index", str(repo.path), "--repo", str(elsewhere))
    assert code == 2 and "PATH or --repo" in err


def test_a_repository_given_where_a_revision_goes_is_said(repo: RepoBuilder, tmp_path: Path):
    run_cli(repo.path, "index", "--quiet")
    code, out, err = run_cli(tmp_path, "check", str(repo.path))
    assert code == 2 and out == ""
    assert f"prdup check --repo {repo.path}" in err


def test_the_help_says_the_exit_codes_and_the_defaults(repo: RepoBuilder):
    _, check_help, _ = run_cli(repo.path, "check", "--help")
    assert "2 on errors" in " ".join(check_help.split())
    _, show_help, _ = run_cli(repo.path, "show", "--help")
    assert "[default: text]" in show_help
    _, index_help, _ = run_cli(repo.path, "index", "--help")
    assert "createdAt,closedAt" in "".join(index_help.split())  # no break inside a word


def test_a_broken_settings_file_is_named(repo: RepoBuilder):
    (repo.path / ".prdup.toml").write_text("min_score = = 0.5\n")
    code, _, err = run_cli(repo.path, "index", "--quiet")
    assert code == 2 and f"{repo.path / '.prdup.toml'}: cannot read prdup settings" in err


def test_an_unknown_prdup_variable_is_an_error_and_prdup_db_is_the_index(
    repo: RepoBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PRDUP_MINSCORE", "0.5")
    code, _, err = run_cli(repo.path, "index", "--quiet")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "unknown environment variable PRDUP_MINSCORE" in err and "PRDUP_MIN_SCORE" in err
    monkeypatch.delenv("PRDUP_MINSCORE")

    monkeypatch.setenv("PRDUP_DB", str(tmp_path / "shared.db"))
    assert run_cli(repo.path, "index", "--quiet")[0] == 0
    assert (tmp_path / "shared.db").is_file()
    assert run_cli(repo.path, "show", "1")[0] == 0


def test_output_piped_into_a_reader_that_stops_early_ends_quietly(builder: RepoBuilder):
    """`prdup show N | head -3`: the reader closes the pipe; prdup stops as git does, with no
    "internal error" (its output is larger than a pipe holds, so the write does fail)."""
    import subprocess
    import sys

    builder.commit("Start", {"README.md": "hello\n"})
    files: dict[str, str | bytes | None] = {
        f"pkg/module_{i:04}.py": f"X = {i}\n" for i in range(1500)
    }
    builder.pr_branch(1, [("Add many modules", files)])
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    root = Path(__file__).resolve().parent.parent
    reader = subprocess.Popen(
        [sys.executable, str(root / "cli.py"), "show", "1"],
        cwd=builder.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert reader.stdout is not None and reader.stderr is not None
    assert reader.stdout.read(100).startswith(b"#1 ")
    reader.stdout.close()
    err_text = reader.stderr.read().decode()
    assert reader.wait() == 141, err_text
    assert err_text == ""
