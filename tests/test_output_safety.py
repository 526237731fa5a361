"""PR text in every output: escaped in markdown as the bot's comment escapes it, stripped of
escape sequences on a terminal, and linked to its PR in the HTML report.

The story: PR 30 and PR 31 (both open) make the same fix and share a line holding a pipe, a
mention and HTML. PR 30's title is hostile: it pings a team, carries HTML and a table pipe, and
hides terminal escape sequences (OSC 0 sets the window title, OSC 8 makes a link, CSI clears the
screen, 0x9b is CSI's 8-bit form).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from index.indexer import index_repository
from prdup.checking import CheckResult, check
from prdup.comment import render_comment
from prdup.render import headline, to_markdown, to_text
from tests.fake_github import FakeGitHub
from tests.repo_builder import RepoBuilder, run_cli
from tests.test_bot import FIX_20, FIX_21, LEGACY, PIPELINE

HOSTILE = (
    "Fix @octo-org/admins <img src=x onerror=alert(1)> | done "
    "\x1b]0;pwned\x07\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\\x1b[2J\x9b31m"
)
ESCAPES = ("\x1b", "\x07", "\x9b")


@pytest.fixture
def story(builder: RepoBuilder, db_path: Path) -> RepoBuilder:
    shared = '        log.warning("legacy | @admins <b>")\n'
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE})
    builder.pr_branch(30, [(HOSTILE, {"pipeline.py": PIPELINE.replace(LEGACY, FIX_20 + shared)})])
    builder.pr_branch(31, [("Same", {"pipeline.py": PIPELINE.replace(LEGACY, FIX_21 + shared)})])
    index_repository(builder.path, db_path=db_path)
    return builder


def _table_rows(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("| ")]


def _tables(markdown: str) -> list[list[str]]:
    """The markdown's tables, each its header and rows (consecutive `| ` lines)."""
    tables: list[list[str]] = [[]]
    for line in markdown.splitlines():
        if line.startswith("| "):
            tables[-1].append(line)
        elif tables[-1]:
            tables.append([])
    return [table for table in tables if table]


def test_check_markdown_escapes_pr_text(story: RepoBuilder, db_path: Path):
    code, out, err = run_cli(
        story.path, "check", "--pr", "31", "--db", str(db_path), "--format", "markdown"
    )
    assert code == 1, err
    assert "#30" in out
    assert "<img" not in out and "&lt;img" in out
    assert "@octo-org" not in out and "@\u200docto-org" in out
    assert not any(escape in out for escape in ESCAPES)
    header, *rows = _table_rows(out)
    cells = len(re.split(r"(?<!\\)\|", header))
    assert rows and all(len(re.split(r"(?<!\\)\|", row)) == cells for row in rows)


def test_check_text_strips_terminal_escape_sequences(story: RepoBuilder, db_path: Path):
    code, out, _ = run_cli(story.path, "check", "--pr", "31", "--db", str(db_path))
    assert code == 1 and "Fix @octo-org/admins" in out and "click" in out
    assert not any(escape in out for escape in ESCAPES)
    assert "]0;pwned" not in out and "evil.example" not in out

    _, shown, _ = run_cli(story.path, "show", "30", "--db", str(db_path))
    assert shown.startswith("#30 [unmerged] Fix @octo-org/admins")
    assert not any(escape in shown for escape in ESCAPES)


def test_sweep_markdown_and_text_are_safe(story: RepoBuilder, db_path: Path):
    code, out, err = run_cli(
        story.path, "sweep", "--db", str(db_path), "--format", "markdown", "--jobs", "1"
    )
    assert code == 1, err
    assert "#30" in out and "<img" not in out and "@octo-org" not in out
    assert not any(escape in out for escape in ESCAPES)
    tables = _tables(out)
    # Every row has its table's header's cells: a title's `|` is escaped, so it splits none.
    assert tables and all(
        len({len(re.split(r"(?<!\\)\|", row)) for row in table}) == 1 for table in tables
    )

    _, text, _ = run_cli(story.path, "sweep", "--db", str(db_path), "--jobs", "1")
    assert "Fix @octo-org/admins" in text
    assert not any(escape in text for escape in ESCAPES)


def test_the_html_report_links_each_pr_when_the_repository_is_known(
    story: RepoBuilder, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    monkeypatch.delenv("GITHUB_SERVER_URL", raising=False)
    report = tmp_path / "report.html"
    args = ["sweep", "--db", str(db_path), "--format", "html", "--out", str(report)]
    run_cli(story.path, *args, "--jobs", "1")
    assert "href=" not in report.read_text().split("<body", 1)[1].split("<script", 1)[0]

    run_cli(story.path, *args, "--jobs", "1", "--github", "octo/demo")
    page = report.read_text()
    for number in (30, 31):
        assert (
            f'<a class="pr" href="https://github.com/octo/demo/pull/{number}">#{number}</a>' in page
        )
    assert "<img" not in page and not any(escape in page for escape in ESCAPES)


def test_a_verdict_this_version_does_not_know_still_renders(story: RepoBuilder, db_path: Path):
    """The matcher may grow verdicts (say `half-reverted`): every renderer copes."""
    result = check(story.path, db_path, pr=31)
    [first, *rest] = result.findings
    novel = dataclasses.replace(first, verdict="half-reverted")
    renamed = CheckResult(result.query, [novel, *rest], result.warnings)

    assert headline(novel) == "Half reverted: #30"
    assert "Half reverted: #30" in to_text(renamed.query, [novel])
    assert "| half-reverted | #30 |" in to_markdown(renamed.query, [novel])
    render_comment(renamed, min_score=0.0)  # reports it only if it decides; never raises


def test_the_html_report_links_to_the_repository_the_index_imported(
    story: RepoBuilder,
    db_path: Path,
    tmp_path: Path,
    fake_github: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
):
    for name in ("GITHUB_REPOSITORY", "GITHUB_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_API_URL", fake_github.url)
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://ghe.example.com")
    fake_github.add_pull(30, author="alice")
    fake_github.add_pull(31, author="bob")
    code, _, err = run_cli(
        story.path, "index", "--github", "octo/demo", "--db", str(db_path), "--quiet"
    )
    assert code == 0, err
    report = tmp_path / "report.html"
    args = ["--db", str(db_path), "--format", "html", "--out", str(report), "--jobs", "1"]
    run_cli(story.path, "sweep", *args)
    assert 'href="https://ghe.example.com/octo/demo/pull/31">#31</a>' in report.read_text()


@pytest.mark.parametrize(
    ("path", "span"),
    [
        ("my_pkg/pipe_line.py", "`my_pkg/pipe_line.py`"),  # shown as written, not `my\_pkg`
        ("docs/<script>*@team*.md", "`docs/<script>*@team*.md`"),  # inert inside a code span
        ("odd`name.py", "``odd`name.py``"),
        ("`edge`", "`` `edge` ``"),
        ("two\nlines\u202e.py", "`two lines.py`"),
    ],
)
def test_a_path_in_a_code_span_is_shown_as_written(path: str, span: str):
    from prdup.escaping import code_span

    assert code_span(path) == span
