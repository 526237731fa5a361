"""Findings as text for a terminal, as JSON (a stable, versioned surface), and as markdown."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from detector.evidence import Finding
from prdup.checking import QueryInfo
from prdup.escaping import inline, plain, reason_markdown, terminal
from prdup.titles import shown_title

SCHEMA_VERSION = 1
HEADLINES = {
    "already-merged": "Already done in {key}",
    "superseded": "Superseded by {key}",
    "duplicate": "Duplicate of {key}",
    "covered": "Covered by {key}",
    "partly-merged": "Partly done in {key}",
    "overlap": "Overlaps {key}",
    "related": "Related to {key}",
}


def headline(finding: Finding) -> str:
    """ "Duplicate of #12"; a verdict this version does not know reads "Partly merged: #12"."""
    key = finding.candidate.key
    if finding.candidate.number is None and finding.candidate.commit:
        key = f"commit {finding.candidate.commit[:10]}"
    generic = finding.verdict.replace("-", " ").capitalize() + ": {key}"
    return HEADLINES.get(finding.verdict, generic).format(key=key)


def finding_json(finding: Finding) -> dict[str, Any]:
    candidate = finding.candidate
    return {
        "pr": candidate.number,
        "commit": candidate.commit,
        "state": candidate.state,
        "title": candidate.title,
        "title_from_commit": candidate.title_from_commit,
        "verdict": finding.verdict,
        "score": round(finding.score, 4),
        "reasons": list(finding.reasons),
        "shared_removed_lines": list(finding.shared_removed[:20]),
        "shared_added_lines": list(finding.shared_added[:20]),
        "shared_files": list(finding.shared_files),
        "shared_symbols": list(finding.shared_symbols),
        "residual": list(finding.residual),
        "remaining": [asdict(hunk) for hunk in finding.remaining],
        "gone_files": list(finding.gone_files),
        "rewritten": [asdict(hunk) for hunk in finding.rewritten],
        "also_identical": list(finding.also_identical),
        "also_opened_as": list(finding.also_opened_as),
        "signals": asdict(finding.signals),
    }


def query_json(info: QueryInfo) -> dict[str, Any]:
    return {k: v for k, v in asdict(info).items()}


def to_json(info: QueryInfo, findings: Sequence[Finding], warnings: Sequence[str] = ()) -> str:
    return json.dumps(
        {
            "schema_version": SCHEMA_VERSION,
            "query": query_json(info),
            "findings": [finding_json(f) for f in findings],
            "warnings": list(warnings),
        },
        indent=2,
    )


def nothing_to_compare_json(note: str) -> str:
    """The JSON document of a check with nothing to compare (an empty or binary-only change, a
    PR without a diff): a consumer reading stdout always gets a document, never empty output."""
    return json.dumps(
        {
            "schema_version": SCHEMA_VERSION,
            "query": None,
            "findings": [],
            "warnings": [],
            "nothing_to_compare": note,
        },
        indent=2,
    )


def _describe(info: QueryInfo) -> str:
    against = f" against {info.target}" if info.target else ""
    if info.kind == "pr":
        # A merged PR is checked against what came before it: say so, its findings read so.
        landed = " (merged)" if info.state == "merged" else ""
        return f"PR #{info.number}{landed}{against}"
    if info.kind == "branch":
        return f"{info.rev}{against}"
    return f"the patch{against}"


def shared_in_words(
    removed: Sequence[str], added: Sequence[str], files: Sequence[str], symbols: Sequence[str]
) -> str:
    """What a finding that decides nothing shares, in place of a score that would read as the
    odds of a duplicate: "shares lines in parse", "the same code: parse", "the same file: a.py"."""
    where = f" in {symbols[0]}" if symbols else ""
    if removed or added:
        return f"shares lines{where}"
    if symbols:
        return f"the same code: {symbols[0]}"
    if files:
        more = f" and {len(files) - 1} more" if len(files) > 1 else ""
        return f"the same file: {files[0]}{more}"
    return "related text"


def _standing(finding: Finding) -> str:
    """A deciding finding's score; what a finding that decides nothing shares."""
    if finding.decides:
        return f"score {finding.score:.2f}"
    return shared_in_words(
        finding.shared_removed, finding.shared_added, finding.shared_files, finding.shared_symbols
    )


def to_text(info: QueryInfo, findings: Sequence[Finding]) -> str:
    """For a terminal: PR text (titles, reasons, lines) loses its escape sequences."""
    size = f"{info.files} file(s), +{info.added} -{info.removed}"
    if not findings:
        return f"prdup: nothing already covers {_describe(info)} ({size})."
    lines = [f"prdup: {_describe(info)} ({size})", ""]
    for finding in findings:
        candidate = finding.candidate
        title = shown_title(candidate.title, candidate.title_from_commit)
        lines.append(
            f"{terminal(headline(finding))}  [{terminal(candidate.state)}, "
            f"{terminal(_standing(finding))}]" + (f"  {terminal(title)}" if title else "")
        )
        lines.extend(f"  - {terminal(reason)}" for reason in finding.reasons)
        for text in finding.shared_removed[:3]:
            lines.append(f"      -  {terminal(text)}")
        for text in finding.shared_added[:3]:
            lines.append(f"      +  {terminal(text)}")
        lines.append("")
    return "\n".join(lines).rstrip()


def to_markdown(info: QueryInfo, findings: Sequence[Finding]) -> str:
    """For a PR description or a job summary: PR text escaped as the bot's comment escapes it."""
    # A PR number prdup writes itself stays a link; branch names are escaped like PR text.
    what = f"PR #{info.number}" if info.kind == "pr" else inline(_describe(info))
    if not findings:
        return f"**prdup**: nothing already covers {what}."
    lines = [f"**prdup** found earlier work that covers {what}:", ""]
    lines.append("| verdict | PR | state | score | title | why |")
    lines.append("|---|---|---|---|---|---|")
    for finding in findings:
        candidate = finding.candidate
        why = "; ".join(reason_markdown(reason, in_table=True) for reason in finding.reasons[:2])
        lines.append(
            f"| {inline(finding.verdict, 40)} | {plain(candidate.key)} "
            f"| {inline(candidate.state, 20)} | {finding.score:.2f} "
            f"| {inline(shown_title(candidate.title, candidate.title_from_commit))} "
            f"| {why} |"
        )
    return "\n".join(lines)
