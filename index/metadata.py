"""PR metadata from a `gh pr list --json` export, and linked issues parsed from text."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
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


# What maintainers and contributors write when a PR takes over another one's work (moby's
# "Carry #123", symfony's "Replaces #123" and "Continuation of #123", "Finishes #123"),
# then the PRs it names: `#N`, `PR #N`, a pull request's URL, a list of them.
_TAKEOVER = re.compile(
    r"\b(?:carr(?:y|ies|ying)(?:\s+(?:of|over))?|finish(?:es|ing)?|take[sn]?\s+over|taking\s+over"
    r"|took\s+over|supersed(?:e|es|ing)|replac(?:e|es|ing)|replacement\s+(?:for|of)"
    r"|continu(?:es|ing)|continuation\s+of|(?:rebased\s+version|resubmission|redo)\s+of"
    r"|rebase[sd]?(?:\s+of)?"
    r"|resubmits?|redoes|revives?)\b"
    r"[\s:]+(?:the\s+)?(?:(?:pr|pull\s+request)\s*)?"
    r"((?:#\d+|https?://\S+/pull/\d+)(?:(?:\s*[,&+]\s*|\s+and\s+)(?:#\d+|https?://\S+/pull/\d+))*)",
    re.IGNORECASE,
)
TEXTS_KEPT = 8192  # descriptions whose takeovers are kept (`taken_over`)
_PR_NUMBER = re.compile(r"(?:#|/pull/)(\d+)")


@functools.lru_cache(maxsize=TEXTS_KEPT)
def taken_over(text: str | None) -> tuple[int, ...]:
    """The PRs a PR's title or description says it takes over ("Carry #12", "Finishes #12",
    "Replaces #12 and #14", "Continuation of https://github.com/o/r/pull/12"): their work goes
    on in it. A reference to a PR that was merged is a follow-up; the matcher tells them apart.
    Kept by text: a sweep reads the same candidates' descriptions query after query.
    """
    if not text:
        return ()
    found = [
        int(number)
        for match in _TAKEOVER.finditer(text)
        for number in _PR_NUMBER.findall(match.group(1))
    ]
    return tuple(dict.fromkeys(found))


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


# Merge-tool subjects that name the PR they land, each with the PR number as group 1.
LANDING_SUBJECTS = (
    (re.compile(r"^Merge pull request #(\d+)\b"), "merge-commit"),
    (re.compile(r"\(#(\d+)\)\s*$"), "squash"),
    # GitHub's other way to write a reference, which some projects' squash titles end with
    # (psf/black's "Enforce no formatting changes for PRs via CI (GH-2951)"; CPython's too).
    (re.compile(r"\(GH-(\d+)\)\s*$"), "squash"),
    # Symfony's merge tool: "bug #58638 [FrameworkBundle] fix ... (xabbuh)", and its older
    # "merged branch user/topic (PR #1234)".
    (re.compile(r"^(?:bug|feature|minor|security|major|patch) #(\d+) "), "merge-tool"),
    (re.compile(r"^merged branch \S+ \(PR #(\d+)\)"), "merge-tool"),
    # Git-flow maintainers who merge a PR through a local branch named after it (zf2); a fork's
    # branch pulled by URL is named by its author, often after an issue (`PULLED_BRANCH`).
    (re.compile(r"^Merge branch '(?:hotfix|feature)/(\d+)'(?! of )"), "merge-tool"),
)
# Merges that only carry one long-lived branch into another ("Merge branch '2.8' into 3.4"):
# every change in them landed, and was indexed, on the other branch already.
BRANCH_SYNC = re.compile(
    r"^(?:Merge (?:remote-tracking )?branch '(?:origin/)?(?:\d+(?:\.\d+)*|main|master|develop|dev"
    r"|trunk)'|merged \d+(?:\.\d+)+\b)"
)


# A merge of one of this repository's own branches by name (not "... of https://fork").
MERGED_BRANCH = re.compile(
    r"^Merge (?:remote-tracking )?branch '(?:origin/|upstream/)?([^']+)'(?: into \S+)?$"
)


# git's subject for a pull of another repository's branch (`git pull URL branch`, as GitHub
# told maintainers to merge a PR by hand): "Merge branch 'topic' of https://host/user/repo",
# "... of git://...", "... of github.com:user/repo", optionally "into X".
PULLED_BRANCH = re.compile(
    r"^Merge branch '[^']+' of (?:[\w+.-]+://|[\w.-]+@[\w.-]+:|[\w-]+(?:\.[\w-]+)+:)\S+"
    r"(?: into \S+)?$"
)


def landing_pr(subject: str) -> tuple[int | None, str]:
    for pattern, how in LANDING_SUBJECTS:
        match = pattern.search(subject)
        if match:
            return int(match.group(1)), how
    return None, "direct"


def earlier(when: str | None, than: str | None) -> bool:
    """True when both ISO 8601 times are known and `when` is before `than`."""
    if not (when and than):
        return False
    try:
        return instant(when) < instant(than)
    except ValueError:  # an unreadable date decides nothing
        return False


def instant_or_zero(when: str | None) -> float:
    """A time as seconds since the epoch, for ordering; 0 when unknown or unreadable."""
    try:
        return instant(when).timestamp() if when else 0.0
    except ValueError:
        return 0.0


def instant(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def names_pr(subject: str, number: int | None) -> bool:
    """The subject names PR `number` as `#N`, or merges a branch named after it
    (`Merge branch 'hotfix/#6464-...'`, `Merge branch 'merge-5041'`, `pr/5041`)."""
    if number is None:
        return False
    named = rf"(?:#|(?<![\w.])(?:pr|pull|merge)[-/_]?){number}(?!\d)"
    return re.search(named, subject or "", re.IGNORECASE) is not None
