"""The GitHub edge of prdup: pull-request metadata and bot comments over the REST API.

Everything goes through PyGithub; this module only configures it and turns its exceptions into
one-line, user-facing :class:`GitHubError` messages (never containing the token).

Retries and rate limits are PyGithub's own :class:`github.GithubRetry` (an ``urllib3`` ``Retry``
mounted on the HTTP session), configured with:

* ``total=retries`` and ``backoff_factor`` for 5xx answers (exponential backoff; the first retry is
  immediate, as in ``urllib3``);
* ``max_rate_limit_wait=max_wait_seconds``: on a primary rate limit (403 "API rate limit exceeded")
  GithubRetry sleeps until ``X-RateLimit-Reset`` (+1 s); if that is further away than the cap it
  raises ``RateLimitExceededExceedsMaxWait``, which becomes :class:`RateLimited` here;
* ``secondary_rate_wait`` (60 s) for secondary rate limits ("You have exceeded a secondary rate
  limit"); with ``max_wait_seconds`` below that they raise :class:`RateLimited` at once.

:class:`_Retry` extends GithubRetry only where it stops short: GitHub may also answer 429
(GithubRetry inspects 403 only), and ``Retry-After`` must respect the same cap. A POST that GitHub
answered with 5xx is retried like any request: GitHub may have made the comment all the same, and
the bot's next run hides such a twin (`prdup.comment`), where a red job on a contributor's PR
helps nobody. A write that still fails with 5xx is :class:`GitHubUnavailable`: resumable, as a
rate limit is (exit 3, a green step; the next run does it).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn
from urllib.parse import urlparse

import requests
from github import Auth, Github, GithubException, GithubRetry
from github.GithubException import (
    BadCredentialsException,
    RateLimitExceededExceedsMaxWait,
    RateLimitExceededException,
    UnknownObjectException,
)
from github.Issue import Issue
from github.IssueComment import IssueComment
from github.PullRequest import PullRequest
from urllib3.util.retry import Retry

from index.errors import PrdupError

DEFAULT_API_URL = "https://api.github.com"
ACTIONS_BOT_LOGIN = "github-actions[bot]"
USER_AGENT = "prdup (PyGithub)"

_REPO_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")


# --------------------------------------------------------------------------------------------------
# Public data and errors


@dataclass(frozen=True, slots=True)
class PullRequestMeta:
    number: int
    title: str
    body: str
    state: str  # "open" | "closed" | "merged"
    created_at: str | None  # ISO 8601, UTC, "Z" suffix (GitHub's own format)
    closed_at: str | None
    merged_at: str | None
    author: str | None
    base_ref: str | None
    head_sha: str | None
    updated_at: str | None
    labels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Comment:
    id: int
    body: str
    author: str | None
    created_at: str | None
    association: str | None = None  # GitHub's author_association: OWNER, MEMBER, NONE...
    node_id: str | None = None  # the GraphQL id, to ask what REST does not say (minimized)
    minimized: bool = False  # hidden by a maintainer; only known after `with_minimized`
    updated_at: str | None = None
    issue: int | None = None  # the issue or pull request it is on


@dataclass(frozen=True, slots=True)
class IssueMeta:
    """An issue as the sweep's dashboard needs it."""

    number: int
    title: str
    body: str
    state: str  # "open" | "closed"
    author: str | None


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """An entry of the repository's Actions cache (10 GB in all, shared by its workflows)."""

    id: int
    key: str
    size_bytes: int
    created_at: str | None
    # The ref it was saved under: its scope. A run reads the entries of its own ref and of
    # the default branch; under pull_request_target a backport PR's run saves under its base.
    ref: str | None = None


class GitHubError(PrdupError):
    """A failed GitHub call; ``str()`` is a one-line message that never contains the token."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class WriteForbidden(GitHubError):
    """GitHub refused a write (403): a read-only token, e.g. a fork's PR under `pull_request`."""


class GitHubUnavailable(GitHubError):
    """A write GitHub kept answering with 5xx, retries and all: nothing of this run is lost
    (what the index recorded stays), and the next run makes the write."""

    resumable = True


class RateLimited(GitHubError):
    """The API rate limit is exhausted and resets later than prdup is willing to wait."""

    # Not a failure: every command stops where it is, keeps what it did, and exits 3, which the
    # action reads as "green, the next run catches up" (a shared token's quota ran out).
    resumable = True

    def __init__(self, message: str, reset_at: int | None, status: int | None = None) -> None:
        super().__init__(message, status=status)
        self.reset_at = reset_at  # epoch seconds, None if GitHub did not say


# --------------------------------------------------------------------------------------------------
# Retry configuration


def _reset_backoff(headers: Any) -> float | None:
    """Seconds until ``X-RateLimit-Reset`` (+1 s, as GithubRetry does), if exhausted and stated."""
    if str(headers.get("X-RateLimit-Remaining", "")).strip() != "0":
        return None
    value = str(headers.get("X-RateLimit-Reset", "")).strip()
    if not value.isdigit():
        return None
    return max(int(value) - time.time() + 1.0, 0.0)


class _Retry(GithubRetry):
    """GithubRetry plus 429 handling and a capped ``Retry-After``."""

    def increment(  # type: ignore[override]
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: Any = None,
    ) -> Retry:
        if response is not None and response.status in (403, 429):
            retry_after = response.headers.get("Retry-After")
            if retry_after:
                self._check_wait(self.parse_retry_after(retry_after), response)
            elif response.status == 429:
                # GithubRetry only looks at 403; GitHub documents 429 for both kinds of limit.
                wait = _reset_backoff(response.headers)
                if wait is None:
                    wait = float(self.secondary_rate_wait)
                self._check_wait(wait, response)
                retry = Retry.increment(self, method, url, response, error, _pool, _stacktrace)
                backoff = max(wait, retry.get_backoff_time())
                retry.get_backoff_time = lambda: backoff  # type: ignore[method-assign]
                return retry
        return super().increment(method, url, response, error, _pool, _stacktrace)

    def _check_wait(self, wait: float, response: Any) -> None:
        if self.max_rate_limit_wait is not None and wait > self.max_rate_limit_wait:
            raise RateLimitExceededExceedsMaxWait(
                response.status, None, dict(response.headers), wait=wait
            )


def _make_retry(retries: int, backoff_factor: float, max_wait_seconds: float) -> _Retry:
    return _Retry(
        total=retries,
        backoff_factor=backoff_factor,
        status_forcelist=[*range(500, 600), 429],  # GithubRetry adds 403 itself
        allowed_methods=frozenset(Retry.DEFAULT_ALLOWED_METHODS | {"GET", "POST", "PATCH"}),
        raise_on_status=False,  # when retries run out, PyGithub raises for the last answer
        max_rate_limit_wait=max_wait_seconds,
    )


# --------------------------------------------------------------------------------------------------
# Helpers


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _parse_iso(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise GitHubError(f"invalid timestamp {value!r}: expected ISO 8601") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _fmt_epoch(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _fmt_duration(seconds: float) -> str:
    seconds = max(int(round(seconds)), 0)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def _header(headers: Any, name: str) -> str | None:
    if not headers:
        return None
    for key, value in dict(headers).items():
        if str(key).lower() == name.lower():
            return str(value)
    return None


def _gh_message(exc: GithubException) -> str:
    data = exc.data
    if isinstance(data, dict) and data.get("message"):
        return _one_line(str(data["message"]))
    return _one_line(exc.message or "")


def _pull_meta(pr: PullRequest) -> PullRequestMeta:
    merged_at = _iso(pr.merged_at)
    state = pr.state
    if state == "closed" and merged_at is not None:
        state = "merged"
    return PullRequestMeta(
        number=pr.number,
        title=pr.title or "",
        body=pr.body or "",
        state=state,
        created_at=_iso(pr.created_at),
        closed_at=_iso(pr.closed_at),
        merged_at=merged_at,
        author=pr.user.login if pr.user is not None else None,
        base_ref=pr.base.ref if pr.base is not None else None,
        head_sha=pr.head.sha if pr.head is not None else None,
        updated_at=_iso(pr.updated_at),
        labels=tuple(label.name for label in pr.labels or ()),
    )


_ISSUE_URL = re.compile(r"/issues/(\d+)$")


def _comment(c: IssueComment) -> Comment:
    issue = _ISSUE_URL.search(c.issue_url or "")
    return Comment(
        id=c.id,
        body=c.body or "",
        author=c.user.login if c.user is not None else None,
        created_at=_iso(c.created_at),
        association=c.author_association,
        node_id=c.node_id,
        updated_at=_iso(c.updated_at),
        issue=int(issue.group(1)) if issue else None,
    )


def _issue(issue: Issue) -> IssueMeta:
    return IssueMeta(
        number=issue.number,
        title=issue.title or "",
        body=issue.body or "",
        state=issue.state,
        author=issue.user.login if issue.user is not None else None,
    )


# --------------------------------------------------------------------------------------------------
# Client


class GitHubClient:
    """The few GitHub calls prdup makes, for one repository."""

    def __init__(
        self,
        repo: str,
        token: str | None = None,
        base_url: str | None = None,
        max_wait_seconds: float = 60.0,
        retries: int = 3,
        *,
        backoff_factor: float = 0.5,
        per_page: int = 100,
        timeout: int = 15,
        seconds_between_requests: float | None = 0.25,
        seconds_between_writes: float | None = 1.0,
    ) -> None:
        """
        ``repo`` is "owner/name". ``token`` defaults to ``$GITHUB_TOKEN``, then ``$GH_TOKEN``;
        ``base_url`` to ``$GITHUB_API_URL``, then https://api.github.com (set it for GitHub
        Enterprise, e.g. https://ghe.example.com/api/v3). ``max_wait_seconds`` caps how long a rate
        limit may block; ``retries``/``backoff_factor`` govern 5xx retries. The
        ``seconds_between_*`` throttles are PyGithub's (GitHub asks for >= 1 s between writes).
        """
        repo = repo.strip()
        if not _REPO_RE.match(repo):
            raise GitHubError(f"invalid GitHub repository {repo!r}: expected 'owner/name'")
        if token is None:
            token = os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or None
        if base_url is None:
            base_url = os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL
        base_url = base_url.strip().rstrip("/")
        parsed = urlparse(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise GitHubError(
                f"invalid GitHub API URL {base_url!r}: expected http(s)://host[/path]"
            )
        if max_wait_seconds < 0 or retries < 0 or backoff_factor < 0:
            raise GitHubError("max_wait_seconds, retries and backoff_factor must not be negative")

        self.repo = repo
        self.base_url = base_url
        self.per_page = per_page
        self.max_wait_seconds = float(max_wait_seconds)
        self.retries = retries
        self._token = token or None
        self._gh = Github(
            auth=Auth.Token(self._token) if self._token else None,
            base_url=base_url,
            timeout=timeout,
            user_agent=USER_AGENT,
            per_page=per_page,
            retry=_make_retry(retries, backoff_factor, self.max_wait_seconds),
            seconds_between_requests=seconds_between_requests,
            seconds_between_writes=seconds_between_writes,
            lazy=True,  # no request until data is needed; errors surface inside _errors()
        )
        self._repo = self._gh.get_repo(repo)

    @classmethod
    def from_environment(cls, repo: str) -> GitHubClient:
        """A client configured only from the environment (token, API URL)."""
        return cls(repo)

    @property
    def authenticated(self) -> bool:
        return self._token is not None

    def __repr__(self) -> str:
        return (
            f"GitHubClient(repo={self.repo!r}, base_url={self.base_url!r}, "
            f"authenticated={self.authenticated})"
        )

    # ---------------------------------------------------------------------------------- calls

    def viewer_login(self) -> str | None:
        """Login of the token's user or bot; None without a token or when GitHub will not say.

        GraphQL's ``viewer`` answers for every token kind: personal tokens, Actions'
        ``GITHUB_TOKEN`` (``github-actions[bot]``) and GitHub App installation tokens
        (``name[bot]``), whereas REST ``/user`` answers 403 to the last two. ``/user`` is only the
        fallback where GraphQL is missing (some GitHub Enterprise proxies).
        """
        if not self.authenticated:
            return None
        try:
            with self._errors("the token's login (GraphQL viewer)"):
                _, data = self._gh.requester.graphql_query("query { viewer { login } }", {})
                login = ((data.get("data") or {}).get("viewer") or {}).get("login")
                if login:
                    return str(login)
        except RateLimited:
            raise
        except GitHubError as exc:
            if exc.status not in (400, 403, 404):
                raise
        try:
            with self._errors("the authenticated user"):
                return self._gh.get_user().login
        except RateLimited:
            raise
        except GitHubError as exc:
            if exc.status not in (403, 404):
                raise
            if os.environ.get("GITHUB_ACTIONS") == "true":
                return ACTIONS_BOT_LOGIN
            return None

    def with_minimized(self, comments: list[Comment]) -> list[Comment]:
        """`comments` with ``minimized`` set from GraphQL (REST does not say); one request.

        Where GraphQL is unavailable every comment is taken as shown, as before.
        """
        ids = [c.node_id for c in comments if c.node_id]
        if not ids:
            return comments
        query = (
            "query($ids: [ID!]!) { nodes(ids: $ids) { ... on IssueComment { id isMinimized } } }"
        )
        hidden: set[str] = set()
        try:
            with self._errors("which comments are hidden (GraphQL)"):
                for start in range(0, len(ids), 100):  # GraphQL takes at most 100 node ids
                    _, data = self._gh.requester.graphql_query(
                        query, {"ids": ids[start : start + 100]}
                    )
                    for node in (data.get("data") or {}).get("nodes") or []:
                        if node and node.get("isMinimized"):
                            hidden.add(str(node.get("id")))
        except RateLimited:
            raise
        except GitHubError as exc:
            if exc.status not in (400, 403, 404):
                raise
            return comments
        return [replace(c, minimized=c.node_id in hidden) for c in comments]

    def list_pulls(
        self, state: str = "all", updated_since: str | None = None
    ) -> Iterator[PullRequestMeta]:
        """Pull requests, most recently updated first.

        With ``updated_since`` (ISO 8601) iteration stops at the first pull request updated before
        it, so no further pages are requested (incremental import).
        """
        if state not in ("open", "closed", "all"):
            raise GitHubError(f"invalid pull request state {state!r}: use open, closed or all")
        since = _parse_iso(updated_since) if updated_since else None
        return self._iter_pulls(state, since)

    def _iter_pulls(self, state: str, since: datetime | None) -> Iterator[PullRequestMeta]:
        with self._errors(f"pull requests of {self.repo}"):
            pulls = self._repo.get_pulls(state=state, sort="updated", direction="desc")
            for pr in pulls:
                if since is not None and pr.updated_at is not None and pr.updated_at < since:
                    return
                yield _pull_meta(pr)

    def pulls_page(self, page: int) -> list[PullRequestMeta]:
        """Page `page` (from 0) of every pull request, most recently updated first.

        Asked for by number, so an import interrupted by the rate limit resumes where it
        stopped. A PR updated meanwhile moves to the front: pages shift back, so a resumed
        listing may see a PR twice but skips none (the moved one is newer than the listing).
        """
        with self._errors(f"pull requests of {self.repo}"):
            pulls = self._repo.get_pulls(state="all", sort="updated", direction="desc")
            return [_pull_meta(pr) for pr in pulls.get_page(page)]

    def comments_page(self, since: str | None, page: int = 0) -> list[Comment]:
        """Page `page` (from 0) of the comments on the repository's issues and pull requests
        updated at or after `since`, least recently updated first (one listing for the whole
        repository: what changed since the last import, in a few requests).

        GitHub's `since` reads "updated after": it is asked for one second earlier, so no
        comment updated in that very second is missed (one read twice changes nothing).
        """
        when = _parse_iso(since) - timedelta(seconds=1) if since else None
        with self._errors(f"comments in {self.repo}"):
            if when is None:
                comments = self._repo.get_issues_comments(sort="updated", direction="asc")
            else:
                comments = self._repo.get_issues_comments(
                    sort="updated", direction="asc", since=when
                )
            return [_comment(c) for c in comments.get_page(page)]

    def pull(self, number: int) -> PullRequestMeta:
        with self._errors(f"pull request #{number} in {self.repo}"):
            return _pull_meta(self._repo.get_pull(number))

    def list_comments(self, number: int) -> list[Comment]:
        """Issue (conversation) comments on a pull request, oldest first."""
        with self._errors(f"comments of #{number} in {self.repo}"):
            return [_comment(c) for c in self._repo.get_issue(number).get_comments()]

    def create_comment(self, number: int, body: str) -> Comment:
        with self._errors(f"#{number} in {self.repo}", action="commenting on"):
            return _comment(self._repo.get_issue(number).create_comment(body))

    def update_comment(self, comment_id: int, body: str) -> Comment:
        with self._errors(f"comment {comment_id} in {self.repo}", action="updating"):
            comment = self._issue_comment(comment_id)
            comment.edit(body)
            return _comment(comment)

    def delete_comment(self, comment_id: int) -> None:
        with self._errors(f"comment {comment_id} in {self.repo}", action="deleting"):
            self._issue_comment(comment_id).delete()

    def add_reaction(self, comment_id: int, content: str = "+1") -> None:
        """React to an issue comment (GitHub answers 200 instead of 201 if it already exists)."""
        with self._errors(f"comment {comment_id} in {self.repo}", action="reacting to"):
            self._issue_comment(comment_id).create_reaction(content)

    def pull_labels(self, number: int) -> tuple[str, ...]:
        with self._errors(f"labels of #{number} in {self.repo}"):
            return tuple(label.name for label in self._repo.get_issue(number).get_labels())

    # ------------------------------------------------------------------ check runs

    def create_check_run(
        self,
        head_sha: str,
        name: str,
        conclusion: str,
        output: dict[str, Any],
    ) -> int:
        """A completed check run on `head_sha` (needs `checks: write`); returns its id."""
        with self._errors(f"a check run on {head_sha[:12]} in {self.repo}", action="creating"):
            run = self._repo.create_check_run(
                name=name,
                head_sha=head_sha,
                status="completed",
                conclusion=conclusion,
                output=output,
            )
            return int(run.id)

    # ------------------------------------------------------------------ the Actions cache

    def cache_entries(self, prefix: str) -> list[CacheEntry]:
        """Actions cache entries whose key starts with `prefix` (GitHub matches keys by prefix)."""
        entries: list[CacheEntry] = []
        with self._errors(f"the Actions cache of {self.repo}"):
            for page in range(1, 1000):
                _, data = self._repo.requester.requestJsonAndCheck(
                    "GET",
                    f"{self._repo.url}/actions/caches",
                    parameters={"key": prefix, "per_page": 100, "page": page},
                )
                listed = data.get("actions_caches") or []
                entries += [
                    CacheEntry(
                        id=int(item["id"]),
                        key=str(item["key"]),
                        size_bytes=int(item.get("size_in_bytes") or 0),
                        created_at=item.get("created_at"),
                        ref=item.get("ref"),
                    )
                    for item in listed
                    if str(item.get("key", "")).startswith(prefix)
                ]
                if len(listed) < 100:
                    break
        return entries

    def delete_cache_entry(self, entry_id: int) -> bool:
        """Delete one entry; False where it was gone already (another run deleted it first:
        its 404 is the same outcome, not an error)."""
        try:
            with self._errors(f"cache entry {entry_id} of {self.repo}", action="deleting"):
                self._repo.requester.requestJsonAndCheck(
                    "DELETE", f"{self._repo.url}/actions/caches/{entry_id}"
                )
        except GitHubError as error:
            if error.status == 404:
                return False
            raise
        return True

    # ------------------------------------------------------------------ issues (the dashboard)

    def labelled_issues(self, label: str) -> list[IssueMeta]:
        """Issues (not pull requests) carrying `label`, open and closed, oldest first.

        A label narrows the listing to a page, where listing every issue of a busy repository
        would take hundreds.
        """
        with self._errors(f"issues labelled {label!r} in {self.repo}"):
            found = self._repo.get_issues(
                state="all", labels=[label], sort="created", direction="asc"
            )
            return [_issue(issue) for issue in found if issue.pull_request is None]

    def issues_created_by(self, login: str) -> list[IssueMeta]:
        """Issues (not pull requests) `login` opened, open and closed, oldest first."""
        with self._errors(f"issues opened by {login} in {self.repo}"):
            # PyGithub takes a login string here (its docs say so), though its hint names only
            # NamedUser; getting a NamedUser would cost a request that fails for app bots.
            found = self._repo.get_issues(
                state="all",
                creator=login,  # type: ignore[arg-type]
                sort="created",
                direction="asc",
            )
            return [_issue(issue) for issue in found if issue.pull_request is None]

    def create_issue(self, title: str, body: str, labels: tuple[str, ...] = ()) -> IssueMeta:
        with self._errors(f"an issue in {self.repo}", action="creating"):
            return _issue(self._repo.create_issue(title=title, body=body, labels=list(labels)))

    def update_issue(self, number: int, body: str) -> None:
        with self._errors(f"issue #{number} in {self.repo}", action="updating"):
            # A lazy Issue: PATCH /repos/{owner}/{repo}/issues/{number} without a GET first.
            Issue(self._repo.requester, url=f"{self._repo.url}/issues/{number}").edit(body=body)

    # ---------------------------------------------------------------------------------- internals

    def _issue_comment(self, comment_id: int) -> IssueComment:
        # PyGithub reaches issue comments only through an Issue; build the lazy object directly
        # (PATCH/DELETE /repos/{owner}/{repo}/issues/comments/{id}) to avoid a pointless GET.
        return IssueComment(
            self._repo.requester, url=f"{self._repo.url}/issues/comments/{comment_id}"
        )

    def _scrub(self, text: str) -> str:
        if self._token:
            text = text.replace(self._token, "***")
        return _one_line(text)

    @contextmanager
    def _errors(self, what: str, action: str = "reading") -> Iterator[None]:
        """Translate PyGithub / requests failures into GitHubError with a one-line message."""
        try:
            yield
        except GitHubError:
            raise
        except GithubException as exc:
            self._raise_for(exc, what, action)
        except requests.RequestException as exc:
            reason = type(exc).__name__
            raise GitHubError(
                self._scrub(
                    f"could not reach GitHub at {self.base_url} while {action} {what} ({reason})"
                )
            ) from None

    def _raise_for(self, exc: GithubException, what: str, action: str) -> NoReturn:
        status = exc.status
        message = _gh_message(exc)
        detail = f": {message}" if message else ""

        def fail(text: str) -> GitHubError:
            return GitHubError(self._scrub(text), status=status)

        remaining = _header(exc.headers, "X-RateLimit-Remaining")
        if (
            isinstance(exc, RateLimitExceededException)
            or status == 429
            or (status == 403 and remaining == "0")
        ):
            raise self._rate_limited(exc) from None
        if isinstance(exc, BadCredentialsException) or status == 401:
            if self.authenticated:
                hint = "the token is invalid or expired; check GITHUB_TOKEN / GH_TOKEN"
            else:
                hint = "set GITHUB_TOKEN or GH_TOKEN"
            raise fail(f"GitHub rejected the credentials ({status}{detail}); {hint}") from None
        if status == 403 and action != "reading":
            raise WriteForbidden(
                self._scrub(
                    f"GitHub denied {action} {what} (403{detail}); the token is read-only here "
                    "(a pull request from a fork under `pull_request`?) or lacks the "
                    "pull-requests: write permission"
                ),
                status=status,
            ) from None
        if status == 403:
            raise fail(
                f"GitHub denied {action} {what} (403{detail}); "
                "the token may lack the needed permission or scope"
            ) from None
        if isinstance(exc, UnknownObjectException) or status == 404:
            hint = "" if self.authenticated else "; private repositories need GITHUB_TOKEN"
            raise fail(f"{what} not found on {self.base_url} (404){hint}") from None
        if isinstance(status, int) and status >= 500:
            text = (
                f"GitHub server error {status} while {action} {what}"
                f" (gave up after {self.retries} retries)"
            )
            if action != "reading":
                # A write: the next run makes it (the index keeps what this one recorded).
                raise GitHubUnavailable(self._scrub(text), status=status) from None
            raise fail(text) from None
        raise fail(f"GitHub refused {action} {what} ({status}{detail})") from None

    def _rate_limited(self, exc: GithubException) -> RateLimited:
        now = time.time()
        reset_header = _header(exc.headers, "X-RateLimit-Reset")
        retry_after = _header(exc.headers, "Retry-After")
        wait = exc.wait if isinstance(exc, RateLimitExceededExceedsMaxWait) else None
        reset_at: int | None = None
        if _header(exc.headers, "X-RateLimit-Remaining") == "0" and (reset_header or "").isdigit():
            reset_at = int(reset_header or 0)  # primary limit: the window's reset
        elif wait is not None:
            reset_at = int(now + wait)  # secondary limit: Retry-After or GitHub's "a minute"
        elif retry_after and retry_after.strip().isdigit():
            reset_at = int(now + int(retry_after))
        text = "GitHub API rate limit exceeded"
        if reset_at is not None:
            text += f"; it resets at {_fmt_epoch(reset_at)} (in {_fmt_duration(reset_at - now)})"
        else:
            text += "; reset time unknown"
        if wait is not None:
            text += f", beyond the {_fmt_duration(self.max_wait_seconds)} prdup is willing to wait"
        return RateLimited(self._scrub(text), reset_at=reset_at, status=exc.status)


__all__ = [
    "ACTIONS_BOT_LOGIN",
    "Comment",
    "GitHubClient",
    "GitHubError",
    "IssueMeta",
    "PullRequestMeta",
    "RateLimited",
    "WriteForbidden",
]
