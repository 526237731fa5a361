"""PR metadata from a `gh pr list --json` export, and linked issues parsed from text."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from index.errors import BadMetadata

GH_FIELDS = "number,title,body,state,createdAt,closedAt,mergedAt,headRefOid,baseRefName,author"

# GitHub's closing keywords: https://docs.github.com/en/issues/tracking-your-work-with-issues/
# linking-a-pull-request-to-an-issue ("close", "fixes", "resolved" ... followed by a reference).
_CLOSING = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b\s*:?\s+"
    r"((?:[\w.-]+/[\w.-]+)?#\d+|https?://\S+/(?:issues|pull)/\d+)",
    re.IGNORECASE,
)
_URL_REFERENCE = re.compile(r"https?://[^/\s]+/([\w.-]+/[\w.-]+)/(?:issues|pull)/(\d+)")
_SQUASH_SUBJECT = re.compile(r"\(#(\d+)\)\s*$")
_MERGE_SUBJECT = re.compile(r"^Merge pull request #(\d+) from (\S+)")


@dataclass(frozen=True, slots=True)
class PullMetadata:
    number: int
    title: str | None
    body: str | None
    state: str | None  # "open" | "closed" | "merged"
    created_at: str | None
    closed_at: str | None
    merged_at: str | None
    head_sha: str | None
    base_ref: str | None
    author: str | None


def linked_issues(text: str | None) -> tuple[str, ...]:
    """Issues a PR says it fixes: `#12`, `owner/repo#12`, or an issue URL, normalised."""
    if not text:
        return ()
    found: list[str] = []
    for match in _CLOSING.finditer(text):
        reference = match.group(1)
        url = _URL_REFERENCE.match(reference)
        if url:
            reference = f"{url.group(1)}#{url.group(2)}"
        found.append(reference.lower())
    return tuple(dict.fromkeys(found))


def pr_number_from_subject(subject: str) -> tuple[int | None, str]:
    """The PR a target-branch commit landed, and how: `Merge pull request #N` or `... (#N)`."""
    merge = _MERGE_SUBJECT.match(subject)
    if merge:
        return int(merge.group(1)), "merge-commit"
    squash = _SQUASH_SUBJECT.search(subject)
    if squash:
        return int(squash.group(1)), "squash"
    return None, "direct"


def _state(raw: Any, merged_at: Any) -> str | None:
    if merged_at:
        return "merged"
    if not isinstance(raw, str):
        return None
    return {"OPEN": "open", "CLOSED": "closed", "MERGED": "merged"}.get(raw.upper(), raw.lower())


def _author(raw: Any) -> str | None:
    if isinstance(raw, dict):
        return raw.get("login") or raw.get("name")
    return raw if isinstance(raw, str) else None


def load_prs_json(path: Path) -> dict[int, PullMetadata]:
    """Read `gh pr list --state all --json ...` output; a malformed file is one clear error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadMetadata(f"{path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BadMetadata(f"{path}: not JSON ({error})") from None
    if not isinstance(data, list):
        raise BadMetadata(f"{path}: expected a JSON list of PRs as 'gh pr list --json' writes")
    result: dict[int, PullMetadata] = {}
    for position, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("number"), int):
            raise BadMetadata(f"{path}: entry {position} has no integer 'number'")
        result[item["number"]] = PullMetadata(
            number=item["number"],
            title=item.get("title"),
            body=item.get("body"),
            state=_state(item.get("state"), item.get("mergedAt")),
            created_at=item.get("createdAt"),
            closed_at=item.get("closedAt"),
            merged_at=item.get("mergedAt"),
            head_sha=item.get("headRefOid"),
            base_ref=item.get("baseRefName"),
            author=_author(item.get("author")),
        )
    return result
