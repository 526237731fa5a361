"""The sweep's dashboard issue, against the fake GitHub: created once, edited in place, left
alone once closed, PR text escaped, nothing posted on the pull requests.

The backlog is test_sweep's: PRs 2 and 3 redo merged PR 1's fix, PR 6 is merged PR 5's patch
again, PR 2's title carries HTML.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from index.indexer import index_repository
from prdup.dashboard import LABEL, MARKER, render_dashboard, sync_dashboard
from prdup.github import GitHubClient
from prdup.sweep import sweep
from tests.fake_github import FakeGitHub, quick_client
from tests.repo_builder import RepoBuilder, run_cli
from tests.test_bot import REPO, TOKEN
from tests.test_sweep import backlog  # noqa: F401  (a fixture)
from tests.test_sweep_triage import triage  # noqa: F401  (a fixture)

ISSUES = "/repos/octo/demo/issues"


@pytest.fixture
def swept(backlog: RepoBuilder, db_path: Path):  # noqa: F811
    index_repository(backlog.path, db_path=db_path)
    return sweep(backlog.path, db_path, jobs=1)


@pytest.fixture
def client(fake_github: FakeGitHub) -> GitHubClient:
    return quick_client(fake_github, REPO, TOKEN)


def _writes(server: FakeGitHub) -> list[tuple[str, str]]:
    return [
        (r.method, r.path)
        for r in server.requests
        if r.method in ("POST", "PATCH", "PUT", "DELETE") and r.path != "/graphql"
    ]


def test_dashboard_is_created_once_then_edited_in_place(
    swept, fake_github: FakeGitHub, client: GitHubClient
):
    assert swept.groups or swept.already_done  # the backlog has something to close

    first = sync_dashboard(client, swept, report_url="https://example.invalid/run/1")
    assert first.action == "created"
    [issue] = fake_github.issues.values()
    assert (issue["number"], issue["labels"], issue["user"]) == (first.issue, [LABEL], "prdup-bot")
    body = issue["body"]
    assert body.startswith(MARKER)
    # Every listed PR is a relative link, never a bare #N (which would reference the PR).
    assert "[#2](../pull/2)" in body and "[#6](../pull/6)" in body
    assert not re.search(r"(?<![\[\u200d])#\d", body.split("\n", 2)[2])
    assert "<script>" not in body and "&lt;script&gt;" in body  # PR 2's title, escaped
    assert "score " in body and "  - replayed at" in body  # each PR with its evidence
    assert body.count("[#2](../pull/2) (unmerged)") == 1  # done, so not listed in a group again
    assert fake_github.comments == {}  # nothing on the PRs themselves

    fake_github.clear_requests()
    again = sync_dashboard(client, swept, report_url="https://example.invalid/run/2")
    assert (again.action, again.issue) == ("unchanged", first.issue)  # same findings: no edit
    assert _writes(fake_github) == []

    # A PR is closed, the next sweep has less to say: the same issue is edited.
    fake_github.clear_requests()
    smaller = render_dashboard(swept)
    swept.groups.clear()
    updated = sync_dashboard(client, swept)
    assert (updated.action, updated.issue) == ("updated", first.issue)
    assert _writes(fake_github) == [("PATCH", f"{ISSUES}/{first.issue}")]
    assert len(fake_github.issues) == 1
    assert fake_github.issues[first.issue]["body"] != smaller


def test_a_closed_dashboard_is_left_alone_and_not_replaced(
    swept, fake_github: FakeGitHub, client: GitHubClient
):
    closed = fake_github.add_issue(
        "prdup dashboard", MARKER + "\nold", labels=[LABEL], state="closed"
    )
    run = sync_dashboard(client, swept)
    assert (run.action, run.issue) == ("skipped", closed["number"])
    assert "reopen" in (run.note or "")
    assert _writes(fake_github) == [] and len(fake_github.issues) == 1

    closed["state"] = "open"  # a maintainer reopens it: updates resume, in the same issue
    assert sync_dashboard(client, swept).action == "updated"
    assert len(fake_github.issues) == 1


def test_a_dashboard_without_its_label_is_still_the_one_edited(
    swept, fake_github: FakeGitHub, client: GitHubClient
):
    """A maintainer removed the label, or GitHub dropped it (a token that may not set labels):
    the next sweep edits the same issue, found by its author and marker, and opens no other."""
    first = sync_dashboard(client, swept)
    fake_github.issues[first.issue]["labels"] = []
    swept.groups.clear()
    again = sync_dashboard(client, swept)
    assert (again.action, again.issue) == ("updated", first.issue)
    assert len(fake_github.issues) == 1


def test_an_issue_someone_else_wrote_is_never_edited(
    swept, fake_github: FakeGitHub, client: GitHubClient
):
    prank = fake_github.add_issue("fake", MARKER + "\nhi", labels=[LABEL], author="mallory")
    run = sync_dashboard(client, swept)
    assert run.action == "created" and run.issue != prank["number"]
    assert fake_github.issues[prank["number"]]["body"] == MARKER + "\nhi"


def test_nothing_to_close_creates_no_dashboard(
    swept, fake_github: FakeGitHub, client: GitHubClient
):
    swept.groups.clear()
    swept.already_done.clear()
    assert sync_dashboard(client, swept).action == "none"
    assert fake_github.issues == {}


def test_dashboard_command(
    backlog: RepoBuilder,  # noqa: F811
    db_path: Path,
    fake_github: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
):
    index_repository(backlog.path, db_path=db_path)
    summary = tmp_path / "summary.md"
    for name, value in {
        "GITHUB_API_URL": fake_github.url,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_RUN_ID": "4242",
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_STEP_SUMMARY": str(summary),
    }.items():
        monkeypatch.setenv(name, value)

    code, out, err = run_cli(backlog.path, "dashboard", "--db", str(db_path), "--jobs", "1")
    assert code == 0, err
    [issue] = fake_github.issues.values()
    assert out.strip() == f"created dashboard octo/demo#{issue['number']}"
    assert "(https://github.example/octo/demo/actions/runs/4242)" in issue["body"]
    assert summary.read_text().startswith("**prdup**: created dashboard")

    code, out, _ = run_cli(backlog.path, "dashboard", "--db", str(db_path), "--jobs", "1")
    assert (code, out.strip()) == (0, f"unchanged dashboard octo/demo#{issue['number']}")

    monkeypatch.delenv("GITHUB_REPOSITORY")
    code, _, err = run_cli(backlog.path, "dashboard", "--db", str(db_path))
    assert code == 2 and "--github" in err


def test_the_dashboard_lists_the_classes_in_the_reports_order(triage: RepoBuilder, db_path: Path):  # noqa: F811
    """Already done (with the landing), open duplicates, partly done (what remains, file by
    file), then related work folded away: the triage story of test_sweep_triage."""
    index_repository(triage.path, db_path=db_path)
    body = render_dashboard(sweep(triage.path, db_path, jobs=1))
    headings = ["## Already done", "## Open duplicates", "## Partly done", "<details>"]
    assert [body.index(h) for h in headings] == sorted(body.index(h) for h in headings)
    assert "[#6](../pull/6) (unmerged): already done by commit `" in body
    assert ", landed as `" in body  # #2's and #9's landing commits
    partly = body[body.index("## Partly done") : body.index("<details>")]
    assert "[#40](../pull/40) (unmerged): partly done in [#41](../pull/41)" in partly
    assert "75% done" in partly and "still to do: `report.py (lines " in partly
    related = body[body.index("<details>") : body.index("</details>")]
    assert "<summary>Related work (no claim): 3 PR(s)" in related
    assert "[#31](../pull/31): overlaps [#30](../pull/30) (shares lines in load\\_x)" in related
    assert "score" not in related  # what it shares, not a score that reads as odds
