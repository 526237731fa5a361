"""A small, real HTTP server that answers like GitHub's REST API, for tests.

It runs ``http.server.ThreadingHTTPServer`` on 127.0.0.1 (ephemeral port) in a thread, keeps pull
requests and comments of one repository in memory, records every request, and can be scripted to
fail (5xx, rate limits, 404, anything). JSON shapes follow GitHub's REST documentation closely
enough for PyGithub to parse them.

Use the ``fake_github`` fixture (register it with ``from tests.fake_github import fake_github`` in
``tests/conftest.py``) or ``with FakeGitHub() as server: ...``; pass ``server.url`` as ``base_url``.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from prdup.github import GitHubClient

DOCS = "https://docs.github.com/rest"
RATE_LIMIT_MESSAGE = (
    "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get "
    "a higher rate limit. Check out the documentation for more details.)"
)
SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def iso(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _now() -> str:
    return iso(datetime.now(UTC))


@dataclass
class Request:
    """One request as the server saw it."""

    method: str
    path: str  # without query string
    query: dict[str, str]
    body: Any  # parsed JSON, raw text if not JSON, None if empty
    headers: dict[str, str]  # lower-cased names
    time: float
    authorizations: list[str] = field(default_factory=list)  # every Authorization header sent
    status: int | None = None  # answer status, filled in once answered

    @property
    def token(self) -> str | None:
        """The token from the Authorization header ("token X" / "Bearer X"), if any."""
        value = self.headers.get("authorization")
        if not value:
            return None
        return value.split(None, 1)[1] if " " in value else value


@dataclass
class Fault:
    """A scripted answer: the next ``times`` requests matching method/path get it."""

    status: int
    path: str | re.Pattern[str] | None = None  # exact path, regex (fullmatch), None = any
    method: str | None = None
    times: int | None = 1  # None = forever
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    hits: int = 0
    after: int = 0  # let this many matching requests through first (fail "on page 3")
    passed: int = 0

    def matches(self, method: str, path: str) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.method is not None and self.method.upper() != method:
            return False
        if self.path is None:
            return True
        if isinstance(self.path, re.Pattern):
            return self.path.fullmatch(path) is not None
        return self.path == path

    def applies(self, method: str, path: str) -> bool:
        """Whether this request gets the fault (counting the ones let through first)."""
        if not self.matches(method, path):
            return False
        if self.passed < self.after:
            self.passed += 1
            return False
        self.hits += 1
        return True


class FakeGitHub:
    """GitHub REST API double for one repository (``owner/name``)."""

    def __init__(
        self, repo: str = "octo/demo", viewer: str = "prdup-bot", api_prefix: str = ""
    ) -> None:
        self.full_name = repo
        self.api_prefix = api_prefix.rstrip("/")  # e.g. "/api/v3" like GitHub Enterprise
        self.viewer = viewer  # login returned by GET /user, author of created comments
        self.pulls: dict[int, dict[str, Any]] = {}
        self.comments: dict[int, dict[str, Any]] = {}  # id -> {"issue": n, ...}
        self.requests: list[Request] = []
        self.faults: list[Fault] = []
        # If non-empty, any other presented token gets 401 "Bad credentials".
        self.valid_tokens: set[str] = set()
        # Simulate Actions' GITHUB_TOKEN or a GitHub App installation token: GET /user answers
        # 403 "Resource not accessible by integration"; GraphQL's `viewer` still answers.
        self.user_forbidden = False
        # GitHub Enterprise without GraphQL, or a proxy that blocks it: POST /graphql answers 404.
        self.graphql_missing = False
        # The app a created comment is "performed via" (REST `performed_via_github_app`), if any.
        self.viewer_app: str | None = None
        # comment id -> reactions created on it, as {"content": ..., "user": login}
        self.reactions: dict[int, list[dict[str, Any]]] = {}
        # Issues (not pull requests), numbered after the pulls as GitHub numbers both.
        self.issues: dict[int, dict[str, Any]] = {}
        # Check runs created (POST .../check-runs bodies, with their ids).
        self.check_runs: list[dict[str, Any]] = []
        # The Actions cache: {"id", "key", "size_in_bytes", "ref", "created_at"}, oldest first.
        self.caches: list[dict[str, Any]] = []
        self._caches_made = 0
        self._next_comment_id = 1001
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------------------- lifecycle

    @property
    def origin(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeGitHub is not started")
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    @property
    def url(self) -> str:
        """The API base URL (what GitHubClient takes as ``base_url``)."""
        return self.origin + self.api_prefix

    def start(self) -> FakeGitHub:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------------------- state

    @property
    def repo_path(self) -> str:
        return f"/repos/{self.full_name}"

    def add_pull(
        self,
        number: int,
        title: str | None = None,
        body: str | None = "",
        *,
        state: str = "open",  # "open" | "closed" | "merged"
        author: str | None = "alice",
        created_at: str | None = None,
        updated_at: str | None = None,
        closed_at: str | None = None,
        merged_at: str | None = None,
        base_ref: str = "main",
        head_sha: str | None = None,
        labels: tuple[str, ...] | list[str] = (),
    ) -> dict[str, Any]:
        """Add a pull request; timestamps default to EPOCH + ``number`` hours."""
        created = created_at or iso(EPOCH + timedelta(hours=number))
        updated = updated_at or created
        if state == "merged":
            merged_at = merged_at or updated
        if state in ("closed", "merged"):
            closed_at = closed_at or merged_at or updated
        pull = {
            "number": number,
            "title": title if title is not None else f"Pull request {number}",
            "body": body,
            "state": "open" if state == "open" else "closed",
            "user": author,
            "created_at": created,
            "updated_at": updated,
            "closed_at": closed_at,
            "merged_at": merged_at,
            "base_ref": base_ref,
            "head_sha": head_sha or f"{number:040x}",
            "labels": list(labels),
        }
        with self._lock:
            self.pulls[number] = pull
        return pull

    def add_cache(
        self, key: str, size: int = 94_000_000, ref: str = "refs/heads/main"
    ) -> dict[str, Any]:
        """An entry saved under `ref` (its scope), as GitHub lists it; ids grow, as GitHub's."""
        with self._lock:
            number = 700 + self._caches_made
            self._caches_made += 1
        entry = {"id": number, "key": key, "size_in_bytes": size, "ref": ref}
        self.caches.append({**entry, "created_at": _now()})
        return entry

    def add_comment(
        self,
        number: int,
        body: str,
        *,
        author: str | None = None,
        created_at: str | None = None,
        association: str = "NONE",
        app: str | None = None,
        minimized: str | None = None,  # GitHub's minimizedReason: "OUTDATED", "SPAM", ...
    ) -> dict[str, Any]:
        with self._lock:
            comment_id = self._next_comment_id
            self._next_comment_id += 1
            created = created_at or _now()
            comment = {
                "id": comment_id,
                "issue": number,
                "body": body,
                "user": author if author is not None else self.viewer,
                "created_at": created,
                "updated_at": created,
                "author_association": association,
                "app": app,
                "minimized": minimized,
            }
            self.comments[comment_id] = comment
            return comment

    def set_labels(self, number: int, labels: list[str], updated_at: str | None = None) -> None:
        """Label or unlabel a pull request; like GitHub, that counts as an update of it."""
        with self._lock:
            pull = self.pulls[number]
            pull["labels"] = list(labels)
            pull["updated_at"] = updated_at or _now()

    def edit_comment(self, comment_id: int, body: str, updated_at: str | None = None) -> None:
        with self._lock:
            comment = self.comments[comment_id]
            comment["body"] = body
            comment["updated_at"] = updated_at or _now()

    def add_issue(
        self,
        title: str,
        body: str = "",
        *,
        author: str | None = None,
        state: str = "open",
        labels: tuple[str, ...] | list[str] = (),
    ) -> dict[str, Any]:
        """An issue, numbered after every pull request and issue so far; by the viewer."""
        with self._lock:
            number = max([0, *self.pulls, *self.issues]) + 1
            issue = {
                "number": number,
                "title": title,
                "body": body,
                "state": state,
                "user": author if author is not None else self.viewer,
                "labels": list(labels),
                "created_at": _now(),
                "updated_at": _now(),
            }
            self.issues[number] = issue
            return issue

    def comments_on(self, number: int) -> list[dict[str, Any]]:
        with self._lock:
            return [c for c in self.comments.values() if c["issue"] == number]

    # ---------------------------------------------------------------------------- faults

    def fail(
        self,
        path: str | re.Pattern[str] | None,
        status: int = 502,
        times: int | None = 1,
        *,
        method: str | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
        after: int = 0,
    ) -> Fault:
        """Next ``times`` requests to ``path`` answer ``status`` (None times = forever), once
        ``after`` of them went through."""
        if body is None:
            body = {"message": _REASONS.get(status, "Error"), "documentation_url": DOCS}
        fault = Fault(status, path, method, times, body, dict(headers or {}), after=after)
        with self._lock:
            self.faults.append(fault)
        return fault

    def not_found(self, path: str | re.Pattern[str] | None, times: int | None = None) -> Fault:
        return self.fail(path, 404, times)

    def rate_limit(
        self,
        reset: float,
        path: str | re.Pattern[str] | None = None,
        times: int | None = 1,
        *,
        status: int = 403,
        method: str | None = None,
        after: int = 0,
    ) -> Fault:
        """Primary rate limit: ``status``, X-RateLimit-Remaining 0, reset at epoch ``reset``."""
        headers = {
            "X-RateLimit-Limit": "60",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Used": "60",
            "X-RateLimit-Reset": str(int(reset)),
            "X-RateLimit-Resource": "core",
        }
        body = {"message": RATE_LIMIT_MESSAGE, "documentation_url": DOCS}
        return self.fail(
            path, status, times, method=method, body=body, headers=headers, after=after
        )

    def secondary_rate_limit(
        self,
        path: str | re.Pattern[str] | None = None,
        times: int | None = 1,
        *,
        retry_after: int | None = None,
        status: int = 403,
        after: int = 0,
    ) -> Fault:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        body = {"message": SECONDARY_RATE_LIMIT_MESSAGE, "documentation_url": DOCS}
        return self.fail(path, status, times, body=body, headers=headers, after=after)

    def clear_faults(self) -> None:
        """The limit has reset, the outage is over: every scripted fault is gone."""
        with self._lock:
            self.faults.clear()

    # ---------------------------------------------------------------------------- inspection

    def requests_to(self, path: str | None = None, method: str | None = None) -> list[Request]:
        with self._lock:
            return [
                r
                for r in self.requests
                if (path is None or r.path == path) and (method is None or r.method == method)
            ]

    def clear_requests(self) -> None:
        with self._lock:
            self.requests.clear()

    # ---------------------------------------------------------------------------- JSON shapes

    def _user(self, login: str | None) -> dict[str, Any] | None:
        if login is None:
            return None
        uid = sum(login.encode()) + 1000
        return {
            "login": login,
            "id": uid,
            "node_id": f"U_{uid}",
            "type": "Bot" if login.endswith("[bot]") else "User",
            "site_admin": False,
            "url": f"{self.url}/users/{login}",
            "html_url": f"https://github.com/{login}",
        }

    def _repo_json(self) -> dict[str, Any]:
        owner, name = self.full_name.split("/", 1)
        return {
            "id": 4242,
            "node_id": "R_4242",
            "name": name,
            "full_name": self.full_name,
            "owner": self._user(owner),
            "private": False,
            "html_url": f"https://github.com/{self.full_name}",
            "url": f"{self.url}{self.repo_path}",
            "default_branch": "main",
        }

    def _label_json(self, name: str) -> dict[str, Any]:
        lid = sum(name.encode())
        return {
            "id": lid,
            "node_id": f"LA_{lid}",
            "url": f"{self.url}{self.repo_path}/labels/{name}",
            "name": name,
            "color": "ededed",
            "default": False,
            "description": None,
        }

    def _pull_json(self, pull: dict[str, Any], full: bool = False) -> dict[str, Any]:
        n = pull["number"]
        data: dict[str, Any] = {
            "url": f"{self.url}{self.repo_path}/pulls/{n}",
            "id": 500000 + n,
            "node_id": f"PR_{n}",
            "html_url": f"https://github.com/{self.full_name}/pull/{n}",
            "issue_url": f"{self.url}{self.repo_path}/issues/{n}",
            "comments_url": f"{self.url}{self.repo_path}/issues/{n}/comments",
            "number": n,
            "state": pull["state"],
            "locked": False,
            "title": pull["title"],
            "user": self._user(pull["user"]),
            "body": pull["body"],
            "labels": [self._label_json(name) for name in pull["labels"]],
            "created_at": pull["created_at"],
            "updated_at": pull["updated_at"],
            "closed_at": pull["closed_at"],
            "merged_at": pull["merged_at"],
            "merge_commit_sha": pull["head_sha"] if pull["merged_at"] else None,
            "draft": False,
            "head": {
                "label": f"{pull['user'] or 'ghost'}:feature-{n}",
                "ref": f"feature-{n}",
                "sha": pull["head_sha"],
                "user": self._user(pull["user"]),
            },
            "base": {
                "label": f"{self.full_name.split('/')[0]}:{pull['base_ref']}",
                "ref": pull["base_ref"],
                "sha": "0" * 40,
                "user": self._user(self.full_name.split("/")[0]),
            },
            "author_association": "CONTRIBUTOR",
        }
        if full:
            data["merged"] = pull["merged_at"] is not None
            data["comments"] = len(self.comments_on(n))
        return data

    def _comment_json(self, comment: dict[str, Any]) -> dict[str, Any]:
        cid, n = comment["id"], comment["issue"]
        return {
            "id": cid,
            "node_id": f"IC_{cid}",
            "url": f"{self.url}{self.repo_path}/issues/comments/{cid}",
            "html_url": f"https://github.com/{self.full_name}/pull/{n}#issuecomment-{cid}",
            "issue_url": f"{self.url}{self.repo_path}/issues/{n}",
            "body": comment["body"],
            "user": self._user(comment["user"]),
            "created_at": comment["created_at"],
            "updated_at": comment["updated_at"],
            "author_association": comment.get("author_association", "NONE"),
            "performed_via_github_app": self._app_json(comment.get("app")),
        }

    def _app_json(self, slug: str | None) -> dict[str, Any] | None:
        if slug is None:
            return None
        return {"id": sum(slug.encode()), "slug": slug, "node_id": f"A_{slug}", "name": slug}

    # ---------------------------------------------------------------------------- routing

    def _answer(self, req: Request) -> tuple[int, dict[str, str], Any]:
        """(status, extra headers, JSON body or None) for one request."""
        with self._lock:
            for fault in self.faults:
                if fault.applies(req.method, req.path):
                    return fault.status, dict(fault.headers), fault.body

            token = req.token
            if req.path == self._graphql_path() and req.method == "POST":
                if token is not None and self.valid_tokens and token not in self.valid_tokens:
                    return _error(401, "Bad credentials")
                if token is None:
                    return _error(401, "This endpoint requires you to be authenticated.")
                if self.graphql_missing:
                    return _error(404, "Not Found")
                return self._graphql(req)

            path = req.path
            if self.api_prefix:
                if not path.startswith(self.api_prefix + "/"):
                    return _error(404, "Not Found")
                path = path[len(self.api_prefix) :]

            token = req.token
            if token is not None and self.valid_tokens and token not in self.valid_tokens:
                return _error(401, "Bad credentials")

            if path == "/user" and req.method == "GET":
                if token is None:
                    return _error(401, "Requires authentication")
                if self.user_forbidden:
                    return _error(403, "Resource not accessible by integration")
                return 200, {}, self._user(self.viewer)

            prefix = self.repo_path
            if path != prefix and not path.startswith(prefix + "/"):
                return _error(404, "Not Found")
            return self._route_repo(req, path[len(prefix) :])

    def _route_repo(self, req: Request, sub: str) -> tuple[int, dict[str, str], Any]:
        method = req.method
        if issue_answer := self._route_issues(req, sub):
            return issue_answer
        if sub == "" and method == "GET":
            return 200, {}, self._repo_json()
        if sub == "/pulls" and method == "GET":
            return self._list_pulls(req)
        if m := re.fullmatch(r"/pulls/(\d+)", sub):
            pull = self.pulls.get(int(m[1]))
            if pull is None or method != "GET":
                return _error(404, "Not Found")
            return 200, {}, self._pull_json(pull, full=True)
        if sub == "/check-runs" and method == "POST":
            body = req.body if isinstance(req.body, dict) else {}
            if not body.get("name") or not body.get("head_sha"):
                return _error(422, "Invalid request.")
            run = {"id": 5000 + len(self.check_runs), **body}
            self.check_runs.append(run)
            return (
                201,
                {},
                {**run, "url": f"{self.url}/repos/{self.full_name}/check-runs/{run['id']}"},
            )
        if sub == "/actions/caches" and method == "GET":
            prefix = req.query.get("key", "")
            items = [c for c in self.caches if c["key"].startswith(prefix)]
            page, per_page = int(req.query.get("page", "1")), int(req.query.get("per_page", "30"))
            shown = items[(page - 1) * per_page : page * per_page]
            return 200, {}, {"total_count": len(items), "actions_caches": shown}
        if (m := re.fullmatch(r"/actions/caches/(\d+)", sub)) and method == "DELETE":
            kept = [c for c in self.caches if c["id"] != int(m[1])]
            if len(kept) == len(self.caches):
                return _error(404, "Not Found")
            self.caches[:] = kept
            return 204, {}, None
        if sub == "/issues/comments" and method == "GET":
            return self._list_repo_comments(req)
        if m := re.fullmatch(r"/issues/(\d+)/comments", sub):
            number = int(m[1])
            if number not in self.pulls:
                return _error(404, "Not Found")
            if method == "GET":
                items = [self._comment_json(c) for c in self.comments_on(number)]
                return self._paginate(req, items)
            if method == "POST":
                body = req.body if isinstance(req.body, dict) else {}
                if not isinstance(body.get("body"), str):
                    return _error(422, 'Invalid request. "body" wasn\'t supplied.')
                created = self.add_comment(number, body["body"], app=self.viewer_app)
                return 201, {}, self._comment_json(created)
        if m := re.fullmatch(r"/issues/comments/(\d+)", sub):
            comment = self.comments.get(int(m[1]))
            if comment is None:
                return _error(404, "Not Found")
            if method == "GET":
                return 200, {}, self._comment_json(comment)
            if method == "PATCH":
                body = req.body if isinstance(req.body, dict) else {}
                if not isinstance(body.get("body"), str):
                    return _error(422, 'Invalid request. "body" wasn\'t supplied.')
                comment["body"] = body["body"]
                comment["updated_at"] = _now()
                return 200, {}, self._comment_json(comment)
            if method == "DELETE":
                del self.comments[comment["id"]]
                return 204, {}, None
        if (m := re.fullmatch(r"/issues/comments/(\d+)/reactions", sub)) and method == "POST":
            if int(m[1]) not in self.comments:
                return _error(404, "Not Found")
            content = req.body.get("content") if isinstance(req.body, dict) else None
            existing = self.reactions.setdefault(int(m[1]), [])
            for reaction in existing:  # GitHub answers 200 with the reaction already there
                if (reaction["content"], reaction["user"]) == (content, self.viewer):
                    return 200, {}, {**reaction, "user": self._user(self.viewer)}
            reaction = {"id": 9000 + len(self.reactions), "content": content, "user": self.viewer}
            existing.append(reaction)
            return 201, {}, {**reaction, "user": self._user(self.viewer), "created_at": _now()}
        if (m := re.fullmatch(r"/issues/(\d+)/labels", sub)) and method == "GET":
            pull = self.pulls.get(int(m[1]))
            if pull is None:
                return _error(404, "Not Found")
            return self._paginate(req, [self._label_json(name) for name in pull["labels"]])
        return _error(404, "Not Found")

    def _issue_json(self, issue: dict[str, Any]) -> dict[str, Any]:
        n = issue["number"]
        return {
            "url": f"{self.url}{self.repo_path}/issues/{n}",
            "id": 700000 + n,
            "node_id": f"I_{n}",
            "html_url": f"https://github.com/{self.full_name}/issues/{n}",
            "comments_url": f"{self.url}{self.repo_path}/issues/{n}/comments",
            "number": n,
            "state": issue["state"],
            "title": issue["title"],
            "body": issue["body"],
            "user": self._user(issue["user"]),
            "labels": [self._label_json(name) for name in issue["labels"]],
            "created_at": issue["created_at"],
            "updated_at": issue["updated_at"],
            "closed_at": issue["updated_at"] if issue["state"] == "closed" else None,
            "comments": 0,
            "locked": False,
            "author_association": "NONE",
        }

    def _route_issues(self, req: Request, sub: str) -> tuple[int, dict[str, str], Any] | None:
        """Issues proper: list (by state, labels, creator), create, read, edit. None: not one."""
        if sub == "/issues" and req.method == "GET":
            state = req.query.get("state", "open")
            wanted = {name for name in req.query.get("labels", "").split(",") if name}
            creator = req.query.get("creator")
            found = [
                self._issue_json(issue)
                for issue in sorted(self.issues.values(), key=lambda i: i["number"])
                if (state == "all" or issue["state"] == state)
                and wanted <= set(issue["labels"])
                and (creator is None or issue["user"] == creator)
            ]
            if req.query.get("direction", "desc") == "desc":
                found.reverse()
            return self._paginate(req, found)
        if sub == "/issues" and req.method == "POST":
            body = req.body if isinstance(req.body, dict) else {}
            if not isinstance(body.get("title"), str) or not body["title"]:
                return _error(422, "Validation Failed")
            created = self.add_issue(
                body["title"], body.get("body") or "", labels=body.get("labels") or []
            )
            return 201, {}, self._issue_json(created)
        match = re.fullmatch(r"/issues/(\d+)", sub)
        if match is None or int(match[1]) not in self.issues:
            return None
        issue = self.issues[int(match[1])]
        if req.method == "GET":
            return 200, {}, self._issue_json(issue)
        if req.method == "PATCH":
            body = req.body if isinstance(req.body, dict) else {}
            for key in ("title", "body", "state"):
                if isinstance(body.get(key), str):
                    issue[key] = body[key]
            issue["updated_at"] = _now()
            return 200, {}, self._issue_json(issue)
        return None

    def _graphql_path(self) -> str:
        # GitHub serves GraphQL at /graphql; GitHub Enterprise at /api/graphql beside /api/v3.
        return self.api_prefix.removesuffix("/v3") + "/graphql"

    def _graphql(self, req: Request) -> tuple[int, dict[str, str], Any]:
        """The two GraphQL queries prdup asks: `viewer { login }` and comments by node id."""
        body = req.body if isinstance(req.body, dict) else {}
        query = str(body.get("query") or "")
        variables = body.get("variables") or {}
        data: dict[str, Any] = {}
        if re.search(r"\bviewer\s*\{", query):
            data["viewer"] = {"login": self.viewer}
        if re.search(r"\bnodes\s*\(", query):
            by_node = {f"IC_{c['id']}": c for c in self.comments.values()}
            data["nodes"] = [
                None
                if (c := by_node.get(node)) is None
                else {
                    "id": node,
                    "isMinimized": c.get("minimized") is not None,
                    "minimizedReason": (c.get("minimized") or "").lower() or None,
                }
                for node in variables.get("ids", [])
            ]
        if not data:
            return 200, {}, {"errors": [{"message": "fake GitHub: unknown query"}]}
        return 200, {}, {"data": data}

    def _list_pulls(self, req: Request) -> tuple[int, dict[str, str], Any]:
        state = req.query.get("state", "open")
        if state not in ("open", "closed", "all"):
            return _error(422, "Validation Failed")
        sort = req.query.get("sort", "created")
        key = "updated_at" if sort == "updated" else "created_at"
        default_direction = "desc" if sort == "created" else "asc"
        descending = req.query.get("direction", default_direction) == "desc"
        pulls = [p for p in self.pulls.values() if state == "all" or p["state"] == state]
        pulls.sort(key=lambda p: (p[key], p["number"]), reverse=descending)
        return self._paginate(req, [self._pull_json(p) for p in pulls])

    def _list_repo_comments(self, req: Request) -> tuple[int, dict[str, str], Any]:
        """GET /repos/{owner}/{repo}/issues/comments: every issue's and PR's comments,
        `since` (updated at or after), sorted by `sort` (created or updated) in `direction`
        (ascending by default)."""
        key = "updated_at" if req.query.get("sort") == "updated" else "created_at"
        descending = req.query.get("direction", "asc") == "desc"
        since = req.query.get("since")
        comments = [c for c in self.comments.values() if not since or c["updated_at"] >= since]
        comments.sort(key=lambda c: (c[key], c["id"]), reverse=descending)
        return self._paginate(req, [self._comment_json(c) for c in comments])

    def _paginate(self, req: Request, items: list[Any]) -> tuple[int, dict[str, str], Any]:
        try:
            per_page = min(max(int(req.query.get("per_page", "30")), 1), 100)
            page = max(int(req.query.get("page", "1")), 1)
        except ValueError:
            return _error(422, "Validation Failed")
        last = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(page - 1) * per_page : page * per_page]

        def link(target: int) -> str:
            query = dict(req.query, page=str(target))
            return f"<{self.origin}{req.path}?{urlencode(query)}>"

        links = []
        if page < last:
            links += [f'{link(page + 1)}; rel="next"', f'{link(last)}; rel="last"']
        if page > 1:
            links += [f'{link(1)}; rel="first"', f'{link(page - 1)}; rel="prev"']
        headers = {"Link": ", ".join(links)} if links else {}
        return 200, headers, chunk


_REASONS = {
    401: "Bad credentials",
    403: "Forbidden",
    404: "Not Found",
    422: "Validation Failed",
    500: "Internal Server Error",
    502: "Server Error",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def _error(status: int, message: str) -> tuple[int, dict[str, str], Any]:
    return status, {}, {"message": message, "documentation_url": DOCS}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeGitHub  # set on the per-server subclass
    server_version = "FakeGitHub/1.0"

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean (and tokens out of logs)

    def _handle(self) -> None:
        split = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any = None
        if raw:
            text = raw.decode("utf-8", "replace")
            try:
                body = json.loads(text)
            except ValueError:
                body = text
        req = Request(
            method=self.command,
            path=split.path,
            query=dict(parse_qsl(split.query, keep_blank_values=True)),
            body=body,
            headers={k.lower(): v for k, v in self.headers.items()},
            time=time.time(),
            authorizations=self.headers.get_all("Authorization") or [],
        )
        with self.fake._lock:
            self.fake.requests.append(req)
        try:
            status, headers, payload = self.fake._answer(req)
        except Exception as exc:  # a bug in the fake: answer 500 visibly rather than hang
            status, headers, payload = 500, {}, {"message": f"fake server error: {exc!r}"}
        req.status = status
        data = b"" if payload is None or status == 204 else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        headers.setdefault("X-RateLimit-Limit", "5000")
        headers.setdefault("X-RateLimit-Remaining", "4999")
        headers.setdefault("X-RateLimit-Reset", str(int(time.time()) + 3600))
        headers.setdefault("X-GitHub-Api-Version-Selected", "2022-11-28")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if data:
            self.wfile.write(data)


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    """A started FakeGitHub serving ``octo/demo``; ``.url`` is the API base URL."""
    server = FakeGitHub()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def quick_client(server: FakeGitHub, repo: str, token: str) -> GitHubClient:
    """A client of the fake server that neither paces its requests nor waits long between
    retries: what the bot's tests need (pacing and backoff have tests of their own)."""
    return GitHubClient(
        repo,
        token=token,
        base_url=server.url,
        backoff_factor=0.01,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )
