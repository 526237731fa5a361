"""A cold GitHub import that meets the rate limit keeps every page and resumes where it stopped.

The story: a repository with 250 pull requests (three pages of 100) and 150 comments (two
pages), one of them a maintainer's `/prdup not-duplicate`. GitHub runs out of requests half
way, once while listing the pull requests and once while reading the comments. The first run
ends with one line saying how far it got and when to run again; the next run resumes and ends
with exactly the index an uninterrupted import builds.
"""

from __future__ import annotations

import re
import sqlite3
import time
from datetime import timedelta
from pathlib import Path

import pytest

from index.storage.store import IndexStore
from prdup.github import GitHubClient
from prdup.github_import import import_metadata
from tests.fake_github import EPOCH, FakeGitHub, iso
from tests.repo_builder import RepoBuilder, run_cli

TOKEN = "ghp_importTOKEN0123456789abcdef"
REPO = "octo/demo"
PULLS = "/repos/octo/demo/pulls"
COMMENTS = "/repos/octo/demo/issues/comments"


@pytest.fixture(autouse=True)
def _github_env(fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GH_TOKEN", "GITHUB_ACTIONS", "GITHUB_REPOSITORY", "PRDUP_BOT_LOGIN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_API_URL", fake_github.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)


@pytest.fixture
def repo(builder: RepoBuilder) -> RepoBuilder:
    builder.commit("Start", {"app.py": "VALUE = 1\n"})
    return builder


@pytest.fixture
def busy(fake_github: FakeGitHub) -> FakeGitHub:
    for number in range(1, 251):
        fake_github.add_pull(
            number,
            f"Change {number}",
            body=f"Fixes #{number + 1000}",
            state=("open", "closed", "merged")[number % 3],
            author=f"user{number % 7}",
            updated_at=iso(EPOCH + timedelta(minutes=number)),
        )
    for position in range(150):
        fake_github.add_comment(
            1 + position % 250,
            f"Looks fine ({position})",
            author="reviewer",
            created_at=iso(EPOCH + timedelta(hours=10, minutes=position)),
        )
    fake_github.add_comment(
        30,
        "/prdup not-duplicate 31",
        author="maint",
        association="MEMBER",
        created_at=iso(EPOCH + timedelta(hours=20)),
    )
    return fake_github


def index_from_github(repo: RepoBuilder, db: Path) -> tuple[int, str]:
    code, _, err = run_cli(repo.path, "index", "--github", REPO, "--db", str(db), "--quiet")
    return code, err


def snapshot(db: Path) -> dict[str, list[tuple]]:
    """Everything an import decides, in a comparable form."""
    queries = {
        "changes": "SELECT number, kind, state, status, source, title, body, author, created_at,"
        " closed_at, merged_at, base_ref FROM changes ORDER BY number, sha",
        "issues": "SELECT c.number, i.issue FROM issue_refs i JOIN changes c ON c.id = i.change_id"
        " ORDER BY 1, 2",
        "dismissals": "SELECT number, other, by, source, pr, comment_id FROM dismissals"
        " ORDER BY 1, 2",
        "staged": "SELECT * FROM github_pulls ORDER BY number",
        "meta": "SELECT key, value FROM meta WHERE key LIKE 'github:%' ORDER BY key",
    }
    with sqlite3.connect(db) as conn:
        return {name: conn.execute(sql).fetchall() for name, sql in queries.items()}


@pytest.mark.parametrize(
    ("where", "limit"),
    [
        (PULLS, "403, X-RateLimit-Remaining: 0"),
        (COMMENTS, "429, Retry-After"),
    ],
)
def test_a_cold_import_stopped_by_the_rate_limit_resumes_and_ends_as_an_uninterrupted_one(
    repo: RepoBuilder, tmp_path: Path, busy: FakeGitHub, where: str, limit: str
):
    reference, resumed = tmp_path / "reference.db", tmp_path / "resumed.db"
    assert index_from_github(repo, reference) == (0, "")
    busy.clear_requests()

    # One page goes through, then GitHub says: no more requests for an hour.
    if limit.startswith("403"):
        busy.rate_limit(time.time() + 3600, path=where, times=None, after=1)
    else:
        busy.secondary_rate_limit(where, times=None, retry_after=3600, status=429, after=1)
    code, err = index_from_github(repo, resumed)

    assert code == 3  # not an error: run again after the reset (the action stays green)
    assert err.startswith("prdup: stopped: ")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "rate limit exceeded" in err
    assert re.search(r"resets at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in \d+ min\)", err)
    if where == PULLS:
        assert "kept what it read, 100 pull requests (1 page) and 0 comments" in err
        assert len(snapshot(resumed)["staged"]) == 100  # the page that arrived is kept
    else:
        assert "250 pull requests (3 pages) and 100 comments (1 page)" in err
        assert len(snapshot(resumed)["staged"]) == 250
    assert TOKEN not in err

    busy.clear_faults()  # the hour has passed
    busy.clear_requests()
    assert index_from_github(repo, resumed) == (0, "")

    if where == PULLS:  # resumed at the second page, then once more from the top
        pages = [r.query.get("page", "1") for r in busy.requests_to(PULLS)]
        assert pages == ["2", "3", "1"]
    else:  # from the last comment read, not from the first
        assert busy.requests_to(COMMENTS)[0].query.get("since", "").startswith("2024-01-01T11:")
    assert snapshot(resumed) == snapshot(reference)
    assert (30, 31) in {(row[0], row[1]) for row in snapshot(resumed)["dismissals"]}


def test_updates_during_the_wait_are_not_lost(repo: RepoBuilder, tmp_path: Path, busy: FakeGitHub):
    """A PR updated while the import waited for the reset moves to the front of the listing:
    the resumed listing does not see it, the new one after it does."""
    db = tmp_path / "index.db"
    busy.rate_limit(time.time() + 3600, path=PULLS, times=None, after=1)
    assert index_from_github(repo, db)[0] != 0

    busy.clear_faults()
    busy.add_pull(120, "Change 120, retitled", updated_at=iso(EPOCH + timedelta(days=30)))
    assert index_from_github(repo, db) == (0, "")

    with IndexStore(db) as store:
        assert store.changes.row(120)["title"] == "Change 120, retitled"
        assert store.changes.row(1)["title"] == "Change 1"
        assert store.get_meta(f"github:{REPO}:updated_since") == "2024-01-31T00:00:00Z"


def test_comments_of_one_second_beyond_a_page_are_read_by_page(
    repo: RepoBuilder, db_path: Path, fake_github: FakeGitHub
):
    """Comments are read from the last update seen; when a whole page shares one second, the
    import steps by page number instead of asking for the same page again."""
    fake_github.add_pull(1)
    fake_github.add_pull(2)
    same_second = "2024-02-01T00:00:00Z"
    for _ in range(5):
        fake_github.add_comment(1, "a remark", author="reviewer", created_at=same_second)
    fake_github.add_comment(
        1, "/prdup not-duplicate 2", author="maint", association="OWNER", created_at=same_second
    )
    client = GitHubClient(
        REPO,
        token=TOKEN,
        base_url=fake_github.url,
        per_page=2,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )

    import_metadata(REPO, repo.path, db_path, client=client)

    pages = [r.query.get("page", "1") for r in fake_github.requests_to(COMMENTS)]
    # The first page again from its last update (the same second), then page by page; the
    # sixth comment fills the third page, so a fourth (empty) one ends the listing.
    assert pages == ["1", "1", "2", "3", "4"]
    with IndexStore(db_path) as store:
        assert set(store.rows("SELECT number, other FROM dismissals")) == {(1, 2), (2, 1)}


@pytest.mark.parametrize(
    ("failure", "code"),
    [("unreachable", 3), ("server error", 3), ("bad token", 2)],
)
def test_github_failing_still_indexes_git(
    repo: RepoBuilder,
    tmp_path: Path,
    fake_github: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    failure: str,
    code: int,
):
    """GitHub out of reach, failing or refusing the token: the repository's own history is
    indexed all the same; the one line says what was not imported, and out of reach or failing
    is resumable (exit 3, the next run imports), a refused token an error to fix (exit 2)."""
    repo.pr_branch(7, [("Value two", {"app.py": "VALUE = 2\n"})])
    repo.merge_pr(7)
    if failure == "unreachable":
        monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # the discard port: refused
    elif failure == "server error":
        fake_github.fail(PULLS, 502, times=None)
    else:
        fake_github.fail(None, 401, times=None, body={"message": "Bad credentials"})
    db = tmp_path / "index.db"

    exit_code, err = index_from_github(repo, db)

    assert exit_code == code
    [line] = err.strip().splitlines()
    assert line.endswith("git was indexed, the GitHub import was not")
    shown, out, _ = run_cli(repo.path, "show", "7", "--db", str(db), "--format", "json")
    assert shown == 0 and '"state": "merged"' in out
