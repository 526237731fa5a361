"""The bot's one comment per pull request: rendered safely, kept up to date, and dismissible.

Three parts, each usable alone:

* rendering is pure: :func:`render_comment` turns a :class:`CheckResult` into markdown (or None
  when there is nothing to say). Everything that comes from a PR (titles, paths, symbols, changed
  lines) is escaped, so a PR cannot ping people, inject HTML or break the table;
* :func:`sync_comment` keeps exactly one comment per PR, found by a hidden marker *and* the bot's
  own login, and edits it only when the findings' fingerprint changed;
* dismissals: a reply ``/prdup not-duplicate #N`` or the label ``prdup: not a duplicate`` is
  recorded in the index's ``dismissals`` table, so that pair is never reported again; each run
  records the PR's commands and label as they are now, so a deleted or hidden command and a
  removed label take back what they said (see `index.github.dismissals`).

Which findings the bot reports: only those that *decide* (already-merged, superseded, duplicate,
covered) at or above ``min_score``. An "overlap" never triggers a comment, however high its
score: a bot that speaks on every PR touching a busy file is noise people learn to ignore;
``prdup check`` still lists overlaps for whoever asks.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from detector.evidence import Finding
from index.config import Settings
from index.errors import IndexMissing, PrdupError, UnknownPullRequest
from index.git import gitsource
from index.github import dismissals
from index.github.dismissals import Dismissal
from index.storage import IndexStore, default_db_path
from prdup.bot_event import MAINTAINERS, NOT_DUPLICATE_LABEL
from prdup.checking import CheckResult, check, with_change
from prdup.escaping import code_line, fence_for, inline, plain, reason_markdown
from prdup.github import Comment, GitHubClient, PullRequestMeta, WriteForbidden
from prdup.render import headline
from prdup.titles import shown_title

MARKER = "<!-- prdup:comment v1 -->"
REPLY_COMMAND = "/prdup not-duplicate"

Action = Literal["created", "updated", "unchanged", "resolved", "deleted", "none", "skipped"]

MAX_FINDINGS = 3  # earlier PRs named in one comment: the best ones; `prdup check` lists all
MAX_REASONS = 3  # the best finding's reasons listed under the headline
MAX_CELL_ITEMS = 3  # files or symbols listed in a table cell before "+N more"
MAX_ITEM = 80  # characters of one path or symbol
MAX_LINES = 12  # shared lines shown per side and finding

# Line-initial command, anywhere in a reply: "/prdup not-duplicate #12" (several numbers allowed).
# A quoted reply ("> /prdup ...") does not start the line, so quoting never repeats a command.
COMMAND_PATTERN = re.compile(
    r"^[ \t]*/prdup[ \t]+not-duplicate\b([^\n]*)", re.IGNORECASE | re.MULTILINE
)
# The PR numbers right after the command, "#12" or "12", separated by spaces or commas; later on
# the line a bare number is free text ("/prdup not-duplicate 12, it fixes 3 other things").
_NUMBERS = re.compile(r"(?:[ \t,]*#?\d+\b)+")
_FINGERPRINT_LINE = re.compile(r"<!-- prdup:fingerprint ?([0-9a-f]*) ?-->")

VERDICT_SENTENCES = {
    "already-merged": "{key} ({state}) already made this change on the target branch",
    "superseded": (
        "{key} ({state}) already rewrote, on the target branch, the lines this change edits: "
        "it no longer applies as it is"
    ),
    "duplicate": "{key} ({state}) makes the same change",
    "covered": "{key} ({state}) already contains this change, and more",
    "partly-merged": "{key} ({state}) already made part of this change on the target branch",
}


class BotLoginUnknown(PrdupError):
    """prdup cannot tell its own comment from others' without the token's login."""


@dataclass(frozen=True, slots=True)
class BotRun:
    """What one bot run on a PR did: the comment action, the body it wanted, new dismissals.

    `note` says why nothing was checked or posted (a closed PR, a PR without a diff, a
    read-only token), for the job summary. `undone` counts the pairs a removed label or a
    command no longer on the PR took back.
    """

    action: Action
    body: str | None
    dismissals: tuple[Dismissal, ...] = ()
    note: str | None = None
    undone: int = 0
    reported: tuple[Finding, ...] = ()  # what `body` reports: the action's outputs name them
    check_run: str | None = None  # the check run's conclusion, or why there is none


# --------------------------------------------------------------------------------------------------
# Rendering


def reported_findings(result: CheckResult, min_score: float, top: int | None) -> list[Finding]:
    """The findings the bot speaks about: deciding verdicts at or above `min_score`, best first."""
    deciding = [f for f in result.findings if f.decides and f.score >= min_score]
    return deciding[: min(top, MAX_FINDINGS) if top else MAX_FINDINGS]


def fingerprint(findings: Sequence[Finding]) -> str:
    """A digest of what the comment claims; "" when it claims nothing.

    The score is left out on purpose: it drifts a little whenever the index grows (rarity
    weights), and rewriting a comment for a 0.91 -> 0.92 change is noise. The comment's score is
    the one from when it was last written.
    """
    if not findings:
        return ""
    claims = [
        [
            f.verdict,
            f.candidate.key,
            f.candidate.state,
            sorted(f.shared_files),
            sorted(f.shared_symbols),
            sorted(f.shared_removed),
            sorted(f.shared_added),
        ]
        for f in findings
    ]
    return hashlib.sha1(json.dumps(claims, ensure_ascii=False).encode()).hexdigest()


def fingerprint_of(body: str) -> str | None:
    """The fingerprint a prdup comment carries on its second line; None when it has none."""
    lines = body.splitlines()
    if len(lines) < 2 or lines[0].strip() != MARKER:
        return None
    match = _FINGERPRINT_LINE.fullmatch(lines[1].strip())
    return match.group(1) if match else None


def _header(digest: str) -> list[str]:
    return [
        MARKER,
        f"<!-- prdup:fingerprint {digest} -->" if digest else "<!-- prdup:fingerprint -->",
    ]


def _cell(items: Sequence[str]) -> str:
    if not items:
        return "–"
    shown = ", ".join(inline(item, MAX_ITEM) for item in items[:MAX_CELL_ITEMS])
    extra = len(items) - MAX_CELL_ITEMS
    return shown + (f" (+{extra} more)" if extra > 0 else "")


def _title(finding: Finding, titles: Mapping[int, str] | None) -> str:
    number = finding.candidate.number
    if titles and number is not None and number in titles:
        return titles[number]
    return shown_title(finding.candidate.title, finding.candidate.title_from_commit)


def _shared_lines(finding: Finding) -> list[str]:
    removed = [code_line(t) for t in finding.shared_removed[:MAX_LINES]]
    added = [code_line(t) for t in finding.shared_added[:MAX_LINES]]
    if not removed and not added:
        return []
    body = [f"- {line}" for line in removed] + [f"+ {line}" for line in added]
    more = max(len(finding.shared_removed) - MAX_LINES, 0)
    more += max(len(finding.shared_added) - MAX_LINES, 0)
    fence = fence_for(body)
    summary = f"Changed lines shared with {finding.candidate.key}"
    summary += f" ({len(finding.shared_removed)} removed, {len(finding.shared_added)} added)"
    lines = [f"<details><summary>{plain(summary)}</summary>", "", f"{fence}diff", *body, fence]
    if more:
        lines += ["", f"… and {more} more."]
    return [*lines, "", "</details>", ""]


def _dismiss_hint(findings: Sequence[Finding]) -> str:
    numbers = [f.candidate.number for f in findings if f.candidate.number is not None]
    how = f"add the label `{NOT_DUPLICATE_LABEL}`"
    if numbers:
        how = f"reply `{REPLY_COMMAND} #{numbers[0]}` (one line per PR), or " + how
    how = how[0].upper() + how[1:]
    return (
        f"<sub>Not a duplicate? {how}; prdup will not report that pair again. prdup compares "
        "diffs in git and never runs code from this pull request.</sub>"
    )


def render_comment(
    result: CheckResult,
    min_score: float = 0.7,
    top: int | None = MAX_FINDINGS,
    titles: Mapping[int, str] | None = None,
) -> str | None:
    """The bot comment for a checked PR, or None when nothing decides.

    `titles` may override the index's titles of earlier PRs (e.g. fresher ones from GitHub).
    """
    findings = reported_findings(result, min_score, top)
    if not findings:
        return None
    best = findings[0]
    lines = [*_header(fingerprint(findings)), f"### prdup: {plain(headline(best))}", ""]
    generic = "{key} ({state}): " + best.verdict.replace("-", " ")  # a verdict new to us
    sentence = VERDICT_SENTENCES.get(best.verdict, generic).format(
        key=f"**{plain(best.candidate.key)}**", state=inline(best.candidate.state, 20)
    )
    title = _title(best, titles)
    if title:
        sentence += f": *{inline(title)}*"
    lines.append(sentence if sentence.rstrip("*").endswith((".", "!", "?")) else sentence + ".")
    if best.reasons:
        lines.append("")
        lines += [f"- {reason_markdown(reason)}" for reason in best.reasons[:MAX_REASONS]]
    lines += ["", "| verdict | PR | state | score | files | symbols |", "|---|---|---|---|---|---|"]
    for finding in findings:
        candidate = finding.candidate
        lines.append(
            f"| {inline(finding.verdict, 40)} | {plain(candidate.key)} "
            f"| {inline(candidate.state, 20)} "
            f"| {finding.score:.2f} | {_cell(finding.shared_files)} "
            f"| {_cell(finding.shared_symbols)} |"
        )
    lines.append("")
    for finding in findings:
        lines += _shared_lines(finding)
    lines.append(_dismiss_hint(findings))
    return "\n".join(lines) + "\n"


def resolved_body() -> str:
    """What an earlier comment becomes when its findings are gone (the marker stays)."""
    return "\n".join(
        [
            *_header(""),
            "**prdup**: nothing earlier covers this pull request any more (it changed, the "
            "finding was dismissed, or the earlier PR moved on).",
            "",
        ]
    )


# --------------------------------------------------------------------------------------------------
# Keeping one comment


def own_comment(
    comments: Iterable[Comment], bot_login: str, *, minimized: bool = False
) -> Comment | None:
    """The bot's comment: the marker on its first line *and* written by the bot itself.

    A marker in someone else's comment (a quote, a prank) never makes it ours. A comment a
    maintainer minimized (hid) is skipped: it is never edited again; pass ``minimized=True`` to
    find the last hidden one instead.
    """
    ours = [
        c
        for c in comments
        if _is_marked(c)
        and (c.author or "").lower() == bot_login.lower()
        and c.minimized == minimized
    ]
    if not ours:
        return None
    return ours[-1] if minimized else ours[0]


def _racing_twins(
    comments: Iterable[Comment], bot_login: str, ours: Comment | None
) -> list[Comment]:
    """The bot's visible comments besides the oldest: two runs that raced both created one
    (each listed before the other posted). The oldest stays, as links to it may."""
    if ours is None:
        return []
    return [
        c
        for c in comments
        if c.id != ours.id
        and _is_marked(c)
        and (c.author or "").lower() == bot_login.lower()
        and not c.minimized
    ]


def _is_marked(comment: Comment) -> bool:
    return comment.body.lstrip().startswith(MARKER)


def sync_comment(
    client: GitHubClient,
    number: int,
    body: str | None,
    bot_login: str | None,
    *,
    comments: Sequence[Comment] | None = None,
    on_resolve: str = "edit",
) -> Action:
    """Create, edit or leave the bot comment on PR `number` so it says `body`; returns the action.

    No findings and no comment: nothing is written ("none"). Same fingerprint: no request beyond
    listing ("unchanged"). Findings gone: the comment becomes a short note ("resolved"), or is
    deleted with ``on_resolve="delete"``. Pass `comments` when they were already listed.
    """
    if on_resolve not in ("edit", "delete"):
        raise ValueError(f"on_resolve must be 'edit' or 'delete', not {on_resolve!r}")
    if comments is None:
        comments = client.list_comments(number)
    if body is None and not any(_is_marked(c) for c in comments):
        return "none"
    if bot_login is None:
        raise BotLoginUnknown(
            "cannot tell prdup's comment from others': the token's login is unknown "
            "(GitHub's /user is not readable with it); set PRDUP_BOT_LOGIN"
        )
    ours = own_comment(comments, bot_login)
    for twin in _racing_twins(comments, bot_login, ours):
        client.delete_comment(twin.id)
    if body is None:
        if ours is None:
            return "none"  # a hidden comment stays as the maintainer left it
        if on_resolve == "delete":
            client.delete_comment(ours.id)
            return "deleted"
        if fingerprint_of(ours.body) == "":
            return "unchanged"
        client.update_comment(ours.id, resolved_body())
        return "resolved"
    if ours is None:
        hidden = own_comment(comments, bot_login, minimized=True)
        if hidden is not None and fingerprint_of(hidden.body) == fingerprint_of(body):
            return "unchanged"  # a maintainer hid this very claim: do not post it again
        client.create_comment(number, body)
        return "created"
    if fingerprint_of(ours.body) == fingerprint_of(body):
        return "unchanged"
    client.update_comment(ours.id, body)
    return "updated"


# --------------------------------------------------------------------------------------------------
# Dismissals


def reply_dismissals(
    number: int, comments: Iterable[Comment], bot_login: str | None
) -> list[Dismissal]:
    """`/prdup not-duplicate #N` (or `N`) replies on PR `number` by maintainers, oldest first.

    Only the repository's owners, members and collaborators (GitHub's `author_association`)
    may dismiss: anyone can comment on a public PR, and a stranger must not be able to hide a
    finding. The bot's own comments (which quote the command as a hint) are skipped.
    """
    found: list[Dismissal] = []
    for comment in comments:
        if _is_marked(comment) or (comment.association or "").upper() not in MAINTAINERS:
            continue
        if comment.minimized:  # hidden by a maintainer: not a command any more
            continue
        if bot_login and (comment.author or "").lower() == bot_login.lower():
            continue
        for match in COMMAND_PATTERN.finditer(comment.body):
            for other in _command_numbers(match.group(1)):
                if other != number:
                    found.append(
                        Dismissal(number, other, comment.author, comment.created_at, comment.id)
                    )
    return found


def _command_numbers(arguments: str) -> list[int]:
    """The PRs a command names: the numbers right after it ("12", "#12, #13"), and any "#N"
    later on its line ("#12 (and #13)")."""
    leading = _NUMBERS.match(arguments)
    numbers = re.findall(r"\d+", leading.group(0) if leading else "")
    numbers += re.findall(r"#(\d+)\b", arguments)
    return [int(n) for n in dict.fromkeys(numbers)]


def has_not_duplicate_label(labels: Iterable[str]) -> bool:
    """GitHub label names are unique regardless of case, so compare them that way."""
    return any(label.lower() == NOT_DUPLICATE_LABEL for label in labels)


def label_dismissals(
    number: int, findings: Iterable[Finding], by: str | None = "label", at: str | None = None
) -> list[Dismissal]:
    """The label dismisses every earlier PR the bot reports for this one."""
    at = at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [
        Dismissal(number, f.candidate.number, by, at)
        for f in findings
        if f.candidate.number is not None
    ]


def index_path(repo_path: str | Path, db_path: str | Path | None) -> Path:
    """The index file `check` would read: `db_path`, else the one inside the git directory."""
    if db_path is not None:
        return Path(db_path)
    return default_db_path(gitsource.open_repository(repo_path))


# --------------------------------------------------------------------------------------------------
# One bot run


def comment_on_pull(
    client: GitHubClient,
    number: int,
    repo_path: str | Path = ".",
    db_path: str | Path | None = None,
    settings: Settings | None = None,
    bot_login: str | None = None,
    on_resolve: str = "edit",
    check_run: bool = False,
) -> BotRun:
    """Read PR `number`'s dismissals, check it against the index, and sync the bot comment.

    Never posts on a closed or merged PR (an edit, a label or a reply there still triggers the
    workflow). A PR the index holds without a diff (empty, binary or lockfile-only) and a token
    that may not write are normal situations: the run says so in `note` instead of failing.
    """
    settings = settings or Settings()
    pull = client.pull(number)
    if pull.state != "open":
        return BotRun(
            "skipped",
            None,
            note=f"PR #{number} is {pull.state}; prdup comments only on open pull requests",
        )
    login = bot_login or client.viewer_login()
    comments = client.list_comments(number)
    if any(_is_marked(c) or COMMAND_PATTERN.search(c.body) for c in comments):
        comments = client.with_minimized(comments)
    path = index_path(repo_path, db_path)
    with IndexStore(path, create=False) as store:
        accepted, undone = _sync_dismissals(client, store, pull, comments, login)
    try:
        result = check(repo_path, path, pr=number, settings=settings)
    except UnknownPullRequest as error:
        note = f"nothing to check: {error}"
        return BotRun("skipped", None, tuple(accepted), note=note, undone=undone)
    body = render_comment(result, settings.min_score, settings.top)
    labelled: list[Dismissal] = []
    if has_not_duplicate_label(pull.labels):
        labelled = label_dismissals(
            number, reported_findings(result, settings.min_score, settings.top)
        )
        with IndexStore(path, create=False) as store:
            labelled = dismissals.record(store, labelled, dismissals.LABEL)
        body = None
    dismissed = tuple(accepted + labelled)
    reported = tuple(reported_findings(result, settings.min_score, settings.top)) if body else ()
    conclusion = None
    if check_run and pull.head_sha:
        if reported:
            result = with_change(result, repo_path, path, settings)
        conclusion = _publish_check_run(client, pull.head_sha, result, reported, body, settings)
    try:
        action = sync_comment(client, number, body, login, comments=comments, on_resolve=on_resolve)
    except WriteForbidden as error:
        note = f"could not post: {error}"
        return BotRun(
            "skipped",
            body,
            dismissed,
            note=note,
            undone=undone,
            reported=reported,
            check_run=conclusion,
        )
    return BotRun(action, body, dismissed, undone=undone, reported=reported, check_run=conclusion)


def _publish_check_run(
    client: GitHubClient,
    head_sha: str,
    result: CheckResult,
    reported: Sequence[Finding],
    body: str | None,
    settings: Settings,
) -> str:
    """The check run on the PR's head; returns its conclusion, or why it could not be made."""
    from prdup.check_run import CHECK_NAME, check_run_report

    shown = [f for f in result.findings if f.score >= settings.min_score]
    report = check_run_report(reported, result.change, settings.fail_on, body, shown)
    output = {
        "title": report.title,
        "summary": report.summary or report.title,
        "annotations": [annotation.to_api() for annotation in report.annotations],
    }
    try:
        client.create_check_run(head_sha, CHECK_NAME, report.conclusion, output)
    except WriteForbidden as error:
        return f"no check run: {error} (grant the workflow `checks: write`)"
    return report.conclusion


def _sync_dismissals(
    client: GitHubClient,
    store: IndexStore,
    pull: PullRequestMeta,
    comments: Sequence[Comment],
    login: str | None,
) -> tuple[list[Dismissal], int]:
    """Record the PR's commands and label as they are now; returns the commands accepted in
    this run and how many pairs were taken back.

    A command no longer on the PR (deleted, edited away, hidden) and a label no longer on it
    take back what they dismissed. Each accepted command gets a thumbs-up once, also when an
    import recorded it first.
    """
    replies = reply_dismissals(pull.number, comments, login)
    new, undone = dismissals.replace_commands(store, pull.number, replies)
    if not has_not_duplicate_label(pull.labels):
        undone += dismissals.undo_label(store, pull.number)
    waiting = {d.comment_id for d in replies if d.comment_id is not None}
    waiting -= dismissals.acknowledged(store, waiting)
    reacted = _acknowledge(client, sorted(waiting))
    dismissals.acknowledge(store, reacted)
    accepted = [d for d in replies if d in new or d.comment_id in reacted]
    return accepted, undone


def _acknowledge(client: GitHubClient, comment_ids: Sequence[int]) -> list[int]:
    """A thumbs-up on each reply whose command was recorded, so its author sees it worked;
    returns those that got it."""
    reacted = []
    for comment_id in comment_ids:
        # A read-only token cannot react: the dismissal is recorded all the same, and the
        # next run with a token that can write reacts.
        with contextlib.suppress(WriteForbidden):
            client.add_reaction(comment_id, "+1")
            reacted.append(comment_id)
    return reacted


def labelled_findings(
    repo_path: str | Path,
    db_path: str | Path | None,
    number: int,
    settings: Settings,
    at: str | None = None,
) -> list[Dismissal] | None:
    """What the label on PR `number` dismisses: every earlier PR the bot reports for it now.

    None when the index cannot check the PR (not indexed, or without a diff yet).
    """
    try:
        result = check(repo_path, db_path, pr=number, settings=settings)
    except (IndexMissing, UnknownPullRequest):
        return None
    return label_dismissals(
        number, reported_findings(result, settings.min_score, settings.top), at=at
    )


__all__ = [
    "MARKER",
    "NOT_DUPLICATE_LABEL",
    "REPLY_COMMAND",
    "BotLoginUnknown",
    "COMMAND_PATTERN",
    "BotRun",
    "Dismissal",
    "comment_on_pull",
    "labelled_findings",
    "fingerprint",
    "fingerprint_of",
    "inline",
    "render_comment",
    "reply_dismissals",
    "resolved_body",
    "sync_comment",
]
