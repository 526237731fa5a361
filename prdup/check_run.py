"""The bot's check run on a PR's head: its conclusion by `fail_on`, annotations on the PR's lines.

Under `pull_request_target` a workflow's `GITHUB_SHA` is the base branch's commit, so the
`::warning` lines of `check --format github` attach there, not to the PR. A check run created
for the PR's head commit (the Checks API, as reviewdog's `github-pr-check` reporter does) shows
in the PR's checks, and its annotations sit beside the PR's changed lines.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from detector.evidence import Finding
from detector.model import Change
from prdup.escaping import MAX_TITLE, one_line
from prdup.locations import shared_regions
from prdup.render import headline

CHECK_NAME = "prdup"
MAX_ANNOTATIONS = 50  # the Checks API takes at most 50 annotations per request


@dataclass(frozen=True, slots=True)
class Annotation:
    path: str
    start_line: int
    end_line: int
    title: str
    message: str

    def to_api(self) -> dict[str, object]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "annotation_level": "warning",
            "title": self.title,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class CheckRunReport:
    """What the check run says: "success" (nothing found), "neutral" (findings, none of the
    verdicts `fail_on` names) or "failure"."""

    conclusion: str
    title: str
    summary: str
    annotations: tuple[Annotation, ...] = ()


def check_run_report(
    findings: Sequence[Finding],
    change: Change | None,
    fail_on: Collection[str],
    summary: str | None,
    shown: Sequence[Finding] = (),
) -> CheckRunReport:
    """The check run for a PR's reported findings; `summary` is the comment's markdown.
    `shown`: every finding at or above the threshold, those that decide nothing included (as
    `check` shows them): what `fail_on` is read against, so `overlap` or `related` can fail
    the run as they fail `check`, though the comment reports only what decides."""
    failing = next((f for f in (*findings, *shown) if f.verdict in fail_on), None)
    if not findings:
        if failing is not None:
            title = one_line(headline(failing), MAX_TITLE)
            return CheckRunReport("failure", title, f"{title}: `fail-on` names {failing.verdict}")
        return CheckRunReport("success", "Nothing earlier covers this change", "")
    annotations: list[Annotation] = []
    for finding in findings:
        title = one_line(f"prdup: {headline(finding)}", MAX_TITLE)
        message = "\n".join(one_line(reason) for reason in finding.reasons[:3])
        for region in shared_regions(change, finding):
            if len(annotations) < MAX_ANNOTATIONS:
                annotations.append(
                    Annotation(region.path, region.start, region.end, title, message or title)
                )
    return CheckRunReport(
        "failure" if failing is not None else "neutral",
        one_line(headline(findings[0]), MAX_TITLE),
        summary or "",
        tuple(annotations),
    )
