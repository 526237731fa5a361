"""`prdup check --format github`: findings as GitHub Actions workflow annotations.

Each finding becomes `::warning file=PATH,line=N,endLine=M,title=...::message` on the lines it
shares with the checked change, which GitHub shows beside those lines of a pull request's diff.
GitHub shows at most 10 warning annotations per step, so the best findings' places come first
and the rest are counted in a plain line. Every PR-derived text is one visible line, escaped as
the runner's command parser expects (see `prdup.escaping.workflow_data`).
"""

from __future__ import annotations

from collections.abc import Sequence

from detector.evidence import Finding
from detector.model import Change
from prdup.checking import QueryInfo
from prdup.escaping import MAX_TITLE, one_line, workflow_data, workflow_property
from prdup.locations import Region, shared_regions
from prdup.render import headline
from prdup.titles import shown_title

MAX_ANNOTATIONS = 10  # GitHub displays at most 10 warning annotations per step


def _command(region: Region | None, title: str, message: str) -> str:
    properties = []
    if region is not None:
        properties += [f"file={workflow_property(region.path)}", f"line={region.start}"]
        if region.end != region.start:
            properties.append(f"endLine={region.end}")
    properties.append(f"title={workflow_property(title)}")
    return f"::warning {','.join(properties)}::{workflow_data(message)}"


def _message(finding: Finding, region: Region | None) -> str:
    candidate = finding.candidate
    parts = [f"{headline(finding)} ({candidate.state}, score {finding.score:.2f})"]
    title = shown_title(candidate.title, candidate.title_from_commit)
    if title:
        parts[0] += f": {one_line(title, MAX_TITLE)}"
    if region is not None and (region.removed or region.added):
        shared = []
        if region.removed:
            shared.append(f"{region.removed} removed")
        if region.added:
            shared.append(f"{region.added} added")
        parts.append(f"lines shared here: {' and '.join(shared)}")
    parts += [one_line(reason) for reason in finding.reasons[:2]]
    return "\n".join(parts)  # escaped to %0A: GitHub shows the lines under each other


def to_workflow_commands(
    info: QueryInfo, findings: Sequence[Finding], change: Change | None
) -> str:
    """The annotation commands for `findings`, then one plain summary line."""
    what = f"PR #{info.number}" if info.kind == "pr" else "this change"
    if not findings:
        return f"prdup: nothing already covers {what}."
    lines: list[str] = []
    left_out = 0
    for finding in findings:
        title = f"prdup: {headline(finding)}"
        regions: list[Region | None] = list(shared_regions(change, finding)) or [None]
        for region in regions:
            if len(lines) >= MAX_ANNOTATIONS:
                left_out += 1
                continue
            lines.append(_command(region, title, _message(finding, region)))
    summary = f"prdup: {len(findings)} finding(s) for {what}"
    if left_out:
        summary += f"; {left_out} more place(s) not annotated (GitHub shows 10 per step)"
    return "\n".join([*lines, summary])
