"""The sweep's dashboard: one issue that lists the open PRs to close, kept up to date in place.

It lists the sweep's classes in the report's order: PRs already done (with the landing), groups
of open duplicates (the PR to keep, the PRs to close), PRs partly done (where, and what remains,
file by file), and related work, collapsed.

Like Renovate's dependency dashboard, prdup keeps exactly one issue and edits it after each
sweep; nothing is posted on the pull requests themselves. The issue is found by the hidden
marker on its first line *and* the token's own login, among the issues with its label
(`prdup: dashboard`, so one short listing finds it) and, when none has it (the label removed,
or dropped by GitHub for a token that may not set labels), among the issues the bot opened: an
issue someone else wrote is never edited, whatever it carries.

The rule for a closed dashboard: a maintainer who closes it wants the sweep to stop writing
there, so a closed dashboard is left as it is and no new one is created; reopening it resumes
the updates. Without findings no dashboard is created (an empty one is noise), but an existing
one is updated to say the backlog is clear.

PR numbers are relative links (`[#12](../pull/12)`), never bare `#12` references: a reference
would add an entry to every listed PR's timeline at each edit, which is posting on them.
Titles, reasons and paths come from PRs and are escaped as in the bot's comment.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from detector.grouping import Group
from prdup.escaping import code_span, inline, reason_markdown
from prdup.github import GitHubClient, IssueMeta, WriteForbidden
from prdup.render import HEADLINES, shared_in_words
from prdup.sweep import SweepResult, SweptFinding
from prdup.titles import shown_title

MARKER = "<!-- prdup:dashboard v1 -->"
LABEL = "prdup: dashboard"
TITLE = "prdup dashboard: pull requests that are already done or duplicated"
MAX_BODY = 60_000  # GitHub refuses issue bodies over 65,536 characters
MAX_REASONS = 2  # evidence lines under each PR
MAX_FILES = 3
MAX_REMAINING = 8  # files listed under a partly done PR
MAX_SPANS = 6  # line spans listed for one of them (the report has all)

DashboardAction = Literal["created", "updated", "unchanged", "none", "skipped"]


@dataclass(frozen=True, slots=True)
class DashboardRun:
    """What one dashboard update did, on which issue, and why when it did nothing."""

    action: DashboardAction
    issue: int | None
    note: str | None = None


# --------------------------------------------------------------------------------- rendering


def _link(number: int | None, commit: str | None = None) -> str:
    if number is None:
        return f"commit `{(commit or '')[:10]}`"
    return f"[#{number}](../pull/{number})"


def _title(result: SweepResult, number: int) -> str:
    pull = result.pulls.get(number)
    title = shown_title(pull.title, pull.title_from_commit) if pull else ""
    return f" *{inline(title)}*" if title else ""


def _state(result: SweepResult, number: int) -> str:
    pull = result.pulls.get(number)
    return inline(pull.state if pull else "unknown", 20)


def _verdict(found: SweptFinding) -> str:
    words = HEADLINES.get(found.verdict, found.verdict.replace("-", " ") + ": {key}")
    return inline(words.format(key="").rstrip(": ").lower(), 40)


def _evidence(found: SweptFinding | None) -> list[str]:
    if found is None:
        return []
    lines = [f"  - {reason_markdown(reason)}" for reason in found.reasons[:MAX_REASONS]]
    if found.shared_files:
        files = ", ".join(code_span(path, 80) for path in found.shared_files[:MAX_FILES])
        more = len(found.shared_files) - MAX_FILES
        lines.append(f"  - files: {files}" + (f" (+{more} more)" if more > 0 else ""))
    return lines


def open_groups(result: SweepResult) -> list[tuple[int, tuple[int, ...]]]:
    """(PR to keep, PRs to close) of each group: its members are the PRs whose own answer is
    "duplicate" or "covered" (a PR already done is listed once, under "already done")."""
    return [(g.keep, g.members[1:]) for g in result.groups if len(g.members) > 1]


def _keep_note(result: SweepResult, group: Group) -> str:
    found = result.keep_landed(group)
    return f", itself {_verdict(found)} {_link(found.pr, found.commit)}" if found else ""


def _groups(result: SweepResult) -> list[list[str]]:
    blocks = []
    for index, group in enumerate(result.groups, 1):
        keep, members = group.keep, group.members[1:]
        block = [
            f"### Group {index}: keep {_link(keep)} ({_state(result, keep)}"
            f"{_keep_note(result, group)}){_title(result, keep)}",
            "",
        ]
        for number in members:
            found = result.answer(number)
            why = (
                f"{_verdict(found)} {_link(found.pr, found.commit)}, score {found.score:.2f}"
                if found
                else ""
            )
            block.append(
                f"- {_link(number)} ({_state(result, number)}): {why} —{_title(result, number)}"
            )
            block += _evidence(found)
        blocks.append([*block, ""])
    return blocks


def _done(result: SweepResult) -> list[list[str]]:
    blocks = []
    for done in result.already_done:
        by = _link(done.by, done.commit)
        found = result.answer(done.pr)
        by_state = f" ({_state(result, done.by)})" if done.by is not None else ""
        landed = f", landed as `{done.commit[:10]}`" if done.by is not None and done.commit else ""
        through = (
            f", through {_link(done.through)} (the same change, itself done by it)"
            if done.through is not None
            else ""
        )
        line = (
            f"- {_link(done.pr)} ({_state(result, done.pr)}): already done by {by}{by_state}"
            f"{landed}{through}, score {done.score:.2f} —{_title(result, done.pr)}"
        )
        blocks.append([line, *_evidence(found)])
    return blocks


def _partly(result: SweepResult, superseded: bool = False) -> list[list[str]]:
    """Partly done PRs (or, `superseded`, the superseded ones): what landed, what is left."""
    blocks = []
    for number, found in result.superseded if superseded else result.partly_done:
        done = f", {found.share_done}" if found.share_done is not None and not superseded else ""
        landed = f" as `{found.commit[:10]}`" if found.pr is not None and found.commit else ""
        says = "superseded by" if superseded else "partly done in"
        line = (
            f"- {_link(number)} ({_state(result, number)}): {says} "
            f"{_link(found.pr, found.commit)}{landed}{done} —{_title(result, number)}"
        )
        remaining = [
            f"  - still to do: `{inline(item, 160)}`" for item in found.remaining_text(MAX_SPANS)
        ]
        blocks.append([line, *remaining[:MAX_REMAINING]])
        if len(remaining) > MAX_REMAINING:
            blocks[-1].append(f"  - and {len(remaining) - MAX_REMAINING} more file(s)")
        blocks[-1] += [f"  - {inline(said, 300)}" for said in found.not_to_apply]
    return blocks


def _related(result: SweepResult) -> list[list[str]]:
    """Related PRs say what they share, not a score that would read as the odds of a
    duplicate."""
    return [
        [
            f"- {_link(number)}: {_verdict(found)} {_link(found.pr, found.commit)} ("
            + inline(
                shared_in_words(
                    found.shared_removed,
                    found.shared_added,
                    found.shared_files,
                    found.shared_symbols,
                )
            )
            + f") —{_title(result, number)}"
        ]
        for number, found in result.related
    ]


def _fitting(blocks: list[list[str]], budget: int) -> tuple[list[str], int]:
    """As many blocks as fit in `budget` characters; and how many were left out."""
    lines: list[str] = []
    used = 0
    for position, block in enumerate(blocks):
        size = sum(len(line) + 1 for line in block)
        if used + size > budget:
            return lines, len(blocks) - position
        lines += block
        used += size
    return lines, 0


def render_dashboard(result: SweepResult, report_url: str | None = None) -> str:
    """The dashboard's body (markdown). Its second line fingerprints what it lists (not the
    link to the run, which changes every time), so a sweep that found the same edits nothing."""
    digest = hashlib.sha1(_body(result, None).encode()).hexdigest()
    return f"{MARKER}\n<!-- prdup:fingerprint {digest} -->\n{_body(result, report_url)}"


def _body(result: SweepResult, report_url: str | None) -> str:
    stats = result.stats
    groups = open_groups(result)
    partly, related = result.partly_done, result.related
    body = [
        "prdup's scheduled sweep checks every open pull request against the merged and open "
        "ones, and lists here those a maintainer can close or rebase. This issue is edited in "
        "place after each sweep; nothing is posted on the pull requests. Not a duplicate? Reply "
        "`/prdup not-duplicate #N` on the PR, or add the label `prdup: not a duplicate`.",
        "",
        f"**{stats.swept} open PRs swept**: {len(result.already_done)} PR(s) already done on "
        f"the target, {len(result.superseded)} superseded by a landing, {len(groups)} group(s) "
        f"of open duplicates, {len(partly)} PR(s) partly done, {len(related)} with related work."
        + (
            f" [The full report]({report_url}) is the run's `prdup-sweep-report` artifact."
            if report_url
            else ""
        ),
        "",
    ]
    if not groups and not result.already_done and not result.superseded and not partly:
        body += ["Nothing to close: no open PR is already done, duplicated or partly done.", ""]
    budget = MAX_BODY - sum(len(line) + 1 for line in body)
    sections = [
        ("## Already done on the target: can be closed", _done(result), "PR(s)", 3),
        (
            "## Superseded: a landing rewrote their lines; close, or rebase what is wanted",
            _partly(result, superseded=True),
            "PR(s)",
            5,
        ),
        (
            "## Open duplicates: keep one of each group, close the others",
            _groups(result),
            "group(s)",
            3,
        ),
        ("## Partly done: rebase, only what remains is still to do", _partly(result), "PR(s)", 5),
    ]
    for heading, blocks, unit, share in sections:
        if not blocks:
            continue
        lines, left = _fitting(blocks, budget // share)
        body += [heading, "", *lines]
        body += [f"… and {left} more {unit} in the report.", ""] if left else [""]
    if related:
        lines, left = _fitting(_related(result), budget // 10)
        body += [
            "<details><summary>Related work (no claim): "
            f"{len(related)} PR(s) touching the same code or issue</summary>",
            "",
            *lines,
        ]
        body += [f"… and {left} more PR(s) in the report.", ""] if left else [""]
        body += ["</details>", ""]
    return "\n".join(body).rstrip() + "\n"


def _fingerprint(body: str) -> str | None:
    lines = body.splitlines()
    if len(lines) < 2 or lines[0].strip() != MARKER:
        return None
    return lines[1].strip()


# --------------------------------------------------------------------------------- updating


def find_dashboard(issues: Iterable[IssueMeta], bot_login: str) -> IssueMeta | None:
    """The bot's dashboard among labelled issues: marked, written by the bot; the newest."""
    ours = [
        issue
        for issue in issues
        if issue.body.lstrip().startswith(MARKER)
        and (issue.author or "").lower() == bot_login.lower()
    ]
    return max(ours, key=lambda issue: issue.number, default=None)


def sync_dashboard(
    client: GitHubClient,
    result: SweepResult,
    bot_login: str | None = None,
    report_url: str | None = None,
) -> DashboardRun:
    """Create the dashboard once, then edit it in place; leave a closed one alone."""
    from prdup.comment import BotLoginUnknown

    login = bot_login or client.viewer_login()
    if login is None:
        raise BotLoginUnknown(
            "cannot tell prdup's dashboard from other issues: the token's login is unknown; "
            "set PRDUP_BOT_LOGIN"
        )
    body = render_dashboard(result, report_url)
    # By its label first (one page); a dashboard whose label was removed, or never set (a token
    # that may not set labels makes GitHub drop them), is found among the bot's own issues.
    found = find_dashboard(client.labelled_issues(LABEL), login) or find_dashboard(
        client.issues_created_by(login), login
    )
    try:
        if found is None:
            nothing = not (result.already_done or result.superseded or result.partly_done)
            if not open_groups(result) and nothing:
                return DashboardRun("none", None, "nothing to close, and no dashboard yet")
            created = client.create_issue(TITLE, body, labels=(LABEL,))
            return DashboardRun("created", created.number)
        if found.state != "open":
            note = f"the dashboard #{found.number} is closed; reopen it to resume updates"
            return DashboardRun("skipped", found.number, note)
        if _fingerprint(found.body) == _fingerprint(body):
            return DashboardRun("unchanged", found.number)
        client.update_issue(found.number, body)
        return DashboardRun("updated", found.number)
    except WriteForbidden as error:
        raise WriteForbidden(
            f"{error} (the dashboard needs the issues: write permission)", error.status
        ) from None
