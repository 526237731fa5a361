"""GitHubClient (PyGithub underneath) against the local FakeGitHub server; no network."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from prdup.github import (
    Comment,
    GitHubClient,
    GitHubError,
    GitHubUnavailable,
    PullRequestMeta,
    RateLimited,
    WriteForbidden,
)
from tests.fake_github import FakeGitHub

TOKEN = "ghp_s3cretTOKENvalue0123456789abcdefXYZ"
REPO = "octo/demo"
PULLS = "/repos/octo/demo/pulls"
ENV_VARS = ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "GITHUB_ACTIONS")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server(fake_github: FakeGitHub) -> FakeGitHub:
    """The ``fake_github`` fixture (registered in tests/conftest.py), serving octo/demo."""
    assert fake_github.full_name == REPO
    return fake_github


def client(server: FakeGitHub, **kwargs: object) -> GitHubClient:
    options: dict[str, object] = {
        "token": TOKEN,
        "base_url": server.url,
        "backoff_factor": 0.01,
        "seconds_between_requests": None,
        "seconds_between_writes": None,
    }
    options.update(kwargs)
    return GitHubClient(REPO, **options)  # type: ignore[arg-type]


def add_pulls(server: FakeGitHub, count: int) -> None:
    """Pulls 1..count; a higher number was updated later."""
    for n in range(1, count + 1):
        server.add_pull(n, updated_at=f"2024-02-{n:02d}T12:00:00Z")


# ------------------------------------------------------------------------------------ listing


def test_list_pulls_follows_link_headers_over_three_pages(server: FakeGitHub) -> None:
    add_pulls(server, 7)
    gh = client(server, per_page=3)

    pulls = list(gh.list_pulls())

    assert [p.number for p in pulls] == [7, 6, 5, 4, 3, 2, 1]
    page_requests = server.requests_to(PULLS, "GET")
    assert [r.query for r in page_requests] == [
        {"state": "all", "sort": "updated", "direction": "desc", "per_page": "3"},
        {"state": "all", "sort": "updated", "direction": "desc", "per_page": "3", "page": "2"},
        {"state": "all", "sort": "updated", "direction": "desc", "per_page": "3", "page": "3"},
    ]
    assert len(server.requests) == 3  # lazy repository: no GET /repos/octo/demo
    assert all(r.token == TOKEN for r in page_requests)


def test_pull_request_fields_and_merged_state(server: FakeGitHub) -> None:
    server.add_pull(
        1,
        "Fix crash",
        "Body text",
        state="merged",
        author="bob",
        created_at="2024-03-01T10:00:00Z",
        updated_at="2024-03-02T11:00:00Z",
        merged_at="2024-03-02T11:00:00Z",
        base_ref="develop",
        head_sha="a" * 40,
        labels=["bug", "backport"],
    )
    server.add_pull(2, state="closed", body=None)
    server.add_pull(3)
    gh = client(server)

    by_number = {p.number: p for p in gh.list_pulls()}

    assert by_number[1] == PullRequestMeta(
        number=1,
        title="Fix crash",
        body="Body text",
        state="merged",
        created_at="2024-03-01T10:00:00Z",
        closed_at="2024-03-02T11:00:00Z",
        merged_at="2024-03-02T11:00:00Z",
        author="bob",
        base_ref="develop",
        head_sha="a" * 40,
        updated_at="2024-03-02T11:00:00Z",
        labels=("bug", "backport"),
    )
    assert by_number[2].state == "closed" and by_number[2].merged_at is None
    assert by_number[2].body == ""
    assert by_number[3].state == "open" and by_number[3].closed_at is None
    assert gh.pull(1) == by_number[1]
    assert server.requests_to(f"{PULLS}/1", "GET")


def test_list_pulls_state_filter(server: FakeGitHub) -> None:
    server.add_pull(1, state="merged")
    server.add_pull(2)
    gh = client(server)
    assert [p.number for p in gh.list_pulls(state="open")] == [2]
    assert [p.state for p in gh.list_pulls(state="closed")] == ["merged"]
    with pytest.raises(GitHubError, match="invalid pull request state"):
        gh.list_pulls(state="draft")


def test_incremental_listing_stops_paging_early(server: FakeGitHub) -> None:
    add_pulls(server, 9)
    gh = client(server, per_page=3)

    pulls = list(gh.list_pulls(updated_since="2024-02-05T12:00:00Z"))

    assert [p.number for p in pulls] == [9, 8, 7, 6, 5]  # the boundary itself is included
    pages = [r.query.get("page", "1") for r in server.requests_to(PULLS)]
    assert pages == ["1", "2"]  # page 3 is never requested


def test_incremental_listing_accepts_offsets(server: FakeGitHub) -> None:
    add_pulls(server, 4)
    gh = client(server)
    since = "2024-02-03T14:00:00+02:00"  # == 12:00Z
    assert [p.number for p in gh.list_pulls(updated_since=since)] == [4, 3]


def test_comments_and_labels(server: FakeGitHub) -> None:
    server.add_pull(5, labels=["duplicate"])
    server.add_comment(
        5, "first", author="carol", created_at="2024-05-01T00:00:00Z", association="MEMBER"
    )
    gh = client(server)

    comments = gh.list_comments(5)

    assert comments == [
        Comment(
            id=1001,
            body="first",
            author="carol",
            created_at="2024-05-01T00:00:00Z",
            association="MEMBER",
            node_id="IC_1001",
            updated_at="2024-05-01T00:00:00Z",
            issue=5,
        )
    ]
    assert gh.pull_labels(5) == ("duplicate",)
    assert [(r.method, r.path) for r in server.requests] == [
        ("GET", "/repos/octo/demo/issues/5/comments"),
        ("GET", "/repos/octo/demo/issues/5/labels"),
    ]


def test_create_update_delete_comment_requests(server: FakeGitHub) -> None:
    server.add_pull(3)
    gh = client(server)

    created = gh.create_comment(3, "prdup: possible duplicate of #1")
    updated = gh.update_comment(created.id, "prdup: duplicate of #2")
    gh.delete_comment(created.id)

    assert created.body == "prdup: possible duplicate of #1"
    assert created.author == "prdup-bot"
    assert created.created_at is not None and created.created_at.endswith("Z")
    assert updated == Comment(
        id=created.id,
        body="prdup: duplicate of #2",
        author="prdup-bot",
        created_at=created.created_at,
        association="NONE",
        node_id=f"IC_{created.id}",
        updated_at=updated.updated_at,
        issue=3,
    )
    assert [(r.method, r.path, r.body, r.status) for r in server.requests] == [
        (
            "POST",
            "/repos/octo/demo/issues/3/comments",
            {"body": "prdup: possible duplicate of #1"},
            201,
        ),
        (
            "PATCH",
            f"/repos/octo/demo/issues/comments/{created.id}",
            {"body": "prdup: duplicate of #2"},
            200,
        ),
        ("DELETE", f"/repos/octo/demo/issues/comments/{created.id}", None, 204),
    ]
    assert server.comments_on(3) == []


def test_update_missing_comment_is_not_found(server: FakeGitHub) -> None:
    with pytest.raises(GitHubError, match="comment 999 .*not found"):
        client(server).update_comment(999, "x")


# ------------------------------------------------------------------------------------ failures


def test_502_then_success_is_retried(server: FakeGitHub) -> None:
    add_pulls(server, 2)
    server.fail(PULLS, 502, times=2)

    pulls = list(client(server).list_pulls())

    assert [p.number for p in pulls] == [2, 1]
    assert [r.status for r in server.requests_to(PULLS)] == [502, 502, 200]


def test_persistent_5xx_gives_up_after_retries(server: FakeGitHub) -> None:
    server.add_pull(1)
    server.fail(f"{PULLS}/1", 503, times=None)

    with pytest.raises(GitHubError) as info:
        client(server, retries=2).pull(1)

    assert "server error 503" in str(info.value)
    assert len(server.requests_to(f"{PULLS}/1")) == 3  # first try + 2 retries


def test_a_post_answered_502_is_retried_and_made(server: FakeGitHub) -> None:
    """A comment GitHub answered with 502 is posted again after a backoff (were the first made
    after all, the bot's next run hides the twin): no red job on a contributor's PR."""
    server.add_pull(1)
    server.fail("/repos/octo/demo/issues/1/comments", 502, method="POST")

    client(server).create_comment(1, "hello")

    assert [r.status for r in server.requests_to(method="POST")] == [502, 201]
    assert [c["body"] for c in server.comments_on(1)] == ["hello"]


def test_a_write_that_keeps_failing_with_5xx_is_resumable(server: FakeGitHub) -> None:
    """Retries spent, a write's 5xx stops the run as a rate limit does (exit 3, green); a
    read's stays an error."""
    server.add_pull(1)
    server.fail("/repos/octo/demo/issues/1/comments", 503, method="POST", times=None)

    with pytest.raises(GitHubUnavailable, match="server error 503") as info:
        client(server, retries=2).create_comment(1, "hello")

    assert info.value.resumable
    assert len(server.requests_to(method="POST")) == 3  # the first try and 2 retries


def test_rate_limit_resetting_soon_waits_and_succeeds(server: FakeGitHub) -> None:
    add_pulls(server, 1)
    reset = int(time.time())  # GithubRetry sleeps until reset + 1 s, i.e. under a second here
    server.rate_limit(reset, PULLS)

    pulls = list(client(server, max_wait_seconds=5).list_pulls())

    assert [p.number for p in pulls] == [1]
    first, second = server.requests_to(PULLS)
    assert (first.status, second.status) == (403, 200)
    assert second.time >= reset + 1 - 0.01  # really waited for the reset


def test_429_rate_limit_resetting_soon_waits_and_succeeds(server: FakeGitHub) -> None:
    server.add_pull(4)
    reset = int(time.time())
    server.rate_limit(reset, f"{PULLS}/4", status=429)

    assert client(server, max_wait_seconds=5).pull(4).number == 4
    first, second = server.requests_to(f"{PULLS}/4")
    assert (first.status, second.status) == (429, 200)
    assert second.time >= reset + 1 - 0.01


@pytest.mark.parametrize("status", [403, 429])
def test_rate_limit_resetting_late_raises_rate_limited(server: FakeGitHub, status: int) -> None:
    add_pulls(server, 1)
    reset = int(time.time()) + 3600
    server.rate_limit(reset, PULLS, status=status)
    started = time.monotonic()

    with pytest.raises(RateLimited) as info:
        list(client(server, max_wait_seconds=60).list_pulls())

    assert time.monotonic() - started < 2  # did not wait
    assert info.value.reset_at == reset
    message = str(info.value)
    assert "rate limit exceeded" in message
    expected = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(reset))
    assert f"resets at {expected}" in message
    assert "60 s prdup is willing to wait" in message
    assert "\n" not in message
    assert len(server.requests_to(PULLS)) == 1


def test_rate_limit_with_retries_exhausted_raises_rate_limited(server: FakeGitHub) -> None:
    server.add_pull(1)
    reset = int(time.time()) + 30
    server.rate_limit(reset, f"{PULLS}/1", times=None)
    with pytest.raises(RateLimited) as info:
        client(server, retries=0, max_wait_seconds=60).pull(1)
    assert info.value.reset_at == reset
    assert len(server.requests) == 1


def test_bare_429_with_retries_exhausted_raises_rate_limited(server: FakeGitHub) -> None:
    server.add_pull(1)
    server.fail(f"{PULLS}/1", 429, times=None, body={"message": "Too Many Requests"})
    with pytest.raises(RateLimited, match="rate limit exceeded") as info:
        client(server, retries=0).pull(1)
    assert info.value.status == 429
    assert len(server.requests) == 1


def test_secondary_rate_limit_with_long_retry_after_raises(server: FakeGitHub) -> None:
    server.add_pull(1)
    server.secondary_rate_limit(f"{PULLS}/1", retry_after=600)
    with pytest.raises(RateLimited, match="rate limit exceeded") as info:
        client(server, max_wait_seconds=10).pull(1)
    assert info.value.reset_at is not None
    assert 590 <= info.value.reset_at - time.time() <= 610


def test_a_comment_under_a_secondary_rate_limit_waits_or_stops_resumably(
    server: FakeGitHub,
) -> None:
    """A write GitHub slows down (a secondary limit, `Retry-After: 1`) is made after the wait;
    one told to wait past the cap stops as a rate limit does (resumable: exit 3, green)."""
    server.add_pull(1)
    comments = "/repos/octo/demo/issues/1/comments"
    server.secondary_rate_limit(comments, retry_after=1)
    client(server, max_wait_seconds=10).create_comment(1, "hello")
    assert [r.status for r in server.requests_to(method="POST")] == [403, 201]

    server.secondary_rate_limit(comments, retry_after=600, times=None)
    with pytest.raises(RateLimited) as info:
        client(server, max_wait_seconds=10).create_comment(1, "again")
    assert info.value.resumable
    assert [c["body"] for c in server.comments_on(1)] == ["hello"]


def test_404_is_a_not_found_error(server: FakeGitHub) -> None:
    with pytest.raises(GitHubError) as info:
        client(server).pull(999)
    assert "not found" in str(info.value)
    assert "#999" in str(info.value)
    assert info.value.status == 404
    assert not isinstance(info.value, RateLimited)


def test_unknown_repository_is_not_found(server: FakeGitHub) -> None:
    gh = GitHubClient("octo/missing", token=TOKEN, base_url=server.url)
    with pytest.raises(GitHubError, match="octo/missing not found"):
        list(gh.list_pulls())


def test_scripted_404_fault(server: FakeGitHub) -> None:
    server.add_pull(1)
    server.not_found("/repos/octo/demo/issues/1/labels")
    with pytest.raises(GitHubError, match="labels of #1 .*not found"):
        client(server).pull_labels(1)


def test_bad_credentials_message(server: FakeGitHub) -> None:
    server.valid_tokens = {"some-other-token"}
    with pytest.raises(GitHubError) as info:
        client(server).pull(1)
    message = str(info.value)
    assert "rejected the credentials" in message
    assert "GITHUB_TOKEN" in message
    assert info.value.status == 401


def test_forbidden_is_explained(server: FakeGitHub) -> None:
    server.add_pull(1)
    server.fail(
        "/repos/octo/demo/issues/1/comments",
        403,
        method="POST",
        body={"message": "Resource not accessible by integration"},
    )
    with pytest.raises(GitHubError) as info:
        client(server).create_comment(1, "hi")
    assert "denied commenting on #1" in str(info.value)
    assert "permission" in str(info.value)
    assert isinstance(info.value, WriteForbidden)  # the bot notes it and exits 0
    assert len(server.requests_to(method="POST")) == 1

    server.fail("/repos/octo/demo/issues/1/comments", 403, method="GET")
    with pytest.raises(GitHubError) as info:
        client(server).list_comments(1)
    assert not isinstance(info.value, WriteForbidden)  # a token that cannot even read: an error


def test_unreachable_server(server: FakeGitHub) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    gh = GitHubClient(
        REPO, token=TOKEN, base_url=f"http://127.0.0.1:{port}", retries=1, backoff_factor=0.01
    )
    with pytest.raises(GitHubError, match="could not reach GitHub"):
        gh.pull(1)


def test_token_never_appears_in_errors_reprs_or_logs(
    server: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.add_pull(1)
    gh = client(server, retries=1)
    errors: list[GitHubError] = []

    def attempt(call: object) -> None:
        try:
            call()  # type: ignore[operator]
        except GitHubError as exc:
            errors.append(exc)

    attempt(lambda: gh.pull(404))
    server.fail(f"{PULLS}/1", 500, times=None)
    attempt(lambda: gh.pull(1))
    server.faults.clear()
    server.rate_limit(time.time() + 3600, f"{PULLS}/1")
    attempt(lambda: gh.pull(1))
    server.valid_tokens = {"other"}
    attempt(lambda: gh.pull(1))
    server.valid_tokens = set()
    server.fail(None, 422, body={"message": f"echoed {TOKEN} back"})
    attempt(lambda: gh.create_comment(1, "x"))

    assert len(errors) == 5
    assert all(r.token == TOKEN for r in server.requests)  # the token really was sent
    for exc in errors:
        for text in (str(exc), repr(exc), repr(exc.args)):
            assert TOKEN not in text
        assert "\n" not in str(exc)
    assert "***" in str(errors[-1])
    assert TOKEN not in repr(gh)
    assert TOKEN not in caplog.text


# ------------------------------------------------------------------------------------ identity


def test_viewer_login_asks_graphql_which_answers_every_token_kind(
    server: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert client(server).viewer_login() == "prdup-bot"
    [asked] = server.requests
    assert (asked.method, asked.path, asked.token) == ("POST", "/graphql", TOKEN)
    assert "viewer" in asked.body["query"]

    server.clear_requests()
    assert client(server, token=None).viewer_login() is None
    assert server.requests == []  # no token: not even asked

    # A GitHub App installation token: REST /user is forbidden, GraphQL's viewer is the app's bot.
    server.user_forbidden = True
    server.viewer = "prdup-app[bot]"
    server.clear_requests()
    assert client(server).viewer_login() == "prdup-app[bot]"
    assert server.requests_to("/user") == []


def test_viewer_login_falls_back_to_rest_where_graphql_is_missing(
    server: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.graphql_missing = True
    assert client(server).viewer_login() == "prdup-bot"
    assert [r.path for r in server.requests] == ["/graphql", "/user"]

    server.user_forbidden = True
    assert client(server).viewer_login() is None
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert client(server).viewer_login() == "github-actions[bot]"


def test_viewer_login_on_github_enterprise_asks_api_graphql() -> None:
    with FakeGitHub(api_prefix="/api/v3") as server:
        assert client(server).viewer_login() == "prdup-bot"
        assert [r.path for r in server.requests] == ["/api/graphql"]


def test_viewer_login_rate_limited_still_raises(server: FakeGitHub) -> None:
    server.rate_limit(time.time() + 3600, "/graphql", status=403)
    with pytest.raises(RateLimited):
        client(server).viewer_login()


def test_minimized_comments_are_marked(server: FakeGitHub) -> None:
    server.add_pull(5)
    server.add_comment(5, "shown")
    server.add_comment(5, "hidden", minimized="OUTDATED")
    gh = client(server)

    comments = gh.with_minimized(gh.list_comments(5))

    assert [(c.body, c.minimized) for c in comments] == [("shown", False), ("hidden", True)]
    server.graphql_missing = True  # without GraphQL every comment counts as shown
    assert [c.minimized for c in gh.with_minimized(gh.list_comments(5))] == [False, False]


# ------------------------------------------------------------------------------------ config


def test_env_precedence(server: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    server.add_pull(1)
    monkeypatch.setenv("GITHUB_API_URL", server.url)
    monkeypatch.setenv("GITHUB_TOKEN", "from-github-token")
    monkeypatch.setenv("GH_TOKEN", "from-gh-token")

    gh = GitHubClient.from_environment(REPO)
    assert gh.base_url == server.url
    gh.pull(1)
    assert server.requests[-1].token == "from-github-token"

    monkeypatch.delenv("GITHUB_TOKEN")
    GitHubClient.from_environment(REPO).pull(1)
    assert server.requests[-1].token == "from-gh-token"

    GitHubClient(REPO, token="explicit").pull(1)
    assert server.requests[-1].token == "explicit"

    monkeypatch.delenv("GH_TOKEN")
    anonymous = GitHubClient.from_environment(REPO)
    assert not anonymous.authenticated
    anonymous.pull(1)
    assert server.requests[-1].token is None
    assert len(server.requests) == 4


def test_default_base_url_without_env() -> None:
    gh = GitHubClient(REPO)  # constructing makes no request
    assert gh.base_url == "https://api.github.com"
    assert not gh.authenticated


def test_enterprise_base_path() -> None:
    with FakeGitHub(REPO, api_prefix="/api/v3") as ghe:
        add_pulls(ghe, 5)
        gh = client(ghe, per_page=2)
        assert len(list(gh.list_pulls())) == 5
        assert {r.path for r in ghe.requests} == {"/api/v3/repos/octo/demo/pulls"}
        assert len(ghe.requests) == 3


def test_invalid_arguments() -> None:
    with pytest.raises(GitHubError, match="owner/name"):
        GitHubClient("not-a-repo")
    with pytest.raises(GitHubError, match="API URL"):
        GitHubClient(REPO, base_url="ftp://example.com")
    with pytest.raises(GitHubError, match="ISO 8601"):
        GitHubClient(REPO).list_pulls(updated_since="yesterday")


def test_fake_server_pagination_shape(server: FakeGitHub) -> None:
    """The fake's Link header is GitHub-shaped (next/last, then first/prev)."""
    import urllib.request

    add_pulls(server, 5)
    with urllib.request.urlopen(f"{server.url}{PULLS}?per_page=2&page=2") as response:
        link = response.headers["Link"]
    assert link == (
        f'<{server.url}{PULLS}?per_page=2&page=3>; rel="next", '
        f'<{server.url}{PULLS}?per_page=2&page=3>; rel="last", '
        f'<{server.url}{PULLS}?per_page=2&page=1>; rel="first", '
        f'<{server.url}{PULLS}?per_page=2&page=1>; rel="prev"'
    )
