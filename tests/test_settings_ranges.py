"""Settings outside their range are refused with the valid range, from a flag, a file or the
environment: they would otherwise hide every finding or break every check silently."""

from __future__ import annotations

import pytest

from tests.repo_builder import RepoBuilder, run_cli


@pytest.fixture
def indexed(builder: RepoBuilder) -> RepoBuilder:
    builder.commit("Start", {"a.py": "x = 1\n"})
    builder.pr_branch(1, [("Change x", {"a.py": "x = 2\n"})])
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    return builder


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--top", "-1"], "--top -1 is out of range; expected a whole number of at least 1"),
        (["--min-score", "2"], "--min-score 2.0 is out of range; expected a score from 0 to 1"),
        (["--min-score", "nan"], "--min-score nan is out of range"),
    ],
)
def test_an_out_of_range_flag_is_one_clear_line_and_exit_2(
    indexed: RepoBuilder, flags: list[str], expected: str
):
    code, out, err = run_cli(indexed.path, "check", "--pr", "1", *flags)
    assert code == 2
    assert out == ""
    assert expected in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("file", "text", "expected"),
    [
        (".prdup.toml", "top = -3\n", "top = -3 is out of range"),
        (".prdup.toml", "min_score = 5\n", "min_score = 5.0 is out of range"),
        (".prdup.toml", "max_changed_lines = 0\n", "max_changed_lines = 0 is out of range"),
        ("pyproject.toml", "[tool]\nprdup = 3\n", "[tool.prdup] must be a table of settings"),
    ],
)
def test_an_out_of_range_setting_in_a_file_names_the_file_and_the_range(
    indexed: RepoBuilder, file: str, text: str, expected: str
):
    (indexed.path / file).write_text(text)
    code, _, err = run_cli(indexed.path, "check", "--pr", "1")
    assert code == 2
    assert expected in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_an_out_of_range_environment_variable_is_refused(
    indexed: RepoBuilder, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PRDUP_TOP", "0")
    code, _, err = run_cli(indexed.path, "check", "--pr", "1")
    assert code == 2
    assert "PRDUP_TOP: top = 0 is out of range" in err
