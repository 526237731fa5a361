"""`prdup check --format sarif`: findings as SARIF 2.1.0, for GitHub code scanning.

One result per finding, its rule the finding's verdict (`prdup/duplicate`, ...), its locations
the checked change's lines that the earlier PR shares (`prdup.locations`). Code scanning shows
a result on a pull request where its first location is one of the PR's changed lines; a
fingerprint of the verdict, the earlier PR and the file keeps an alert the same alert from one
run to the next. Messages are plain text (SARIF's `message.text`), PR text made one visible line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from detector.evidence import DECIDING_VERDICTS, Finding
from detector.model import Change
from prdup.checking import QueryInfo
from prdup.escaping import MAX_TITLE, one_line
from prdup.locations import Region, shared_regions
from prdup.render import headline
from prdup.titles import shown_title

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
RULE_PREFIX = "prdup/"

# One rule per verdict: what a maintainer does about a result depends on it.
RULES: dict[str, tuple[str, str]] = {
    "already-merged": (
        "Already done by an earlier merged pull request",
        "The target branch already has this change: an earlier merged PR made it. Close this "
        "PR, or keep only what remains.",
    ),
    "superseded": (
        "Superseded by an earlier merged pull request",
        "A merged PR already rewrote, its own way, the lines this change edits (or made most of "
        "it, the rest written otherwise since): it no longer applies as it is. Close it as "
        "superseded, or rebase what is still wanted.",
    ),
    "partly-merged": (
        "Partly done by an earlier merged pull request",
        "A real part of this change is already on the target branch; rebase and keep what remains.",
    ),
    "duplicate": (
        "Duplicate of another pull request",
        "Another open (or closed) PR makes the same change.",
    ),
    "covered": (
        "Contained in a larger pull request",
        "Another PR's larger change contains all of this one.",
    ),
    "overlap": (
        "Overlaps another pull request",
        "Another PR changes the same code differently, undoes it, or made it on another "
        "release line: worth knowing, not a duplicate.",
    ),
    "related": (
        "Related to another pull request",
        "Only text, a linked issue or identifiers are shared with another PR.",
    ),
}


def _tool_version() -> str:
    try:
        return version("prdup")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0"


def rule_id(verdict: str) -> str:
    return RULE_PREFIX + verdict


def _rule(verdict: str) -> dict[str, Any]:
    short, full = RULES.get(verdict, (verdict.replace("-", " ").capitalize(), verdict))
    level = "warning" if verdict in DECIDING_VERDICTS else "note"
    return {
        "id": rule_id(verdict),
        "name": "".join(word.capitalize() for word in verdict.split("-")),
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "defaultConfiguration": {"level": level},
    }


def _location(region: Region) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": region.path, "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": region.start, "endLine": region.end},
        }
    }


def _message(finding: Finding) -> str:
    candidate = finding.candidate
    text = f"{headline(finding)} ({candidate.state}, score {finding.score:.2f})"
    title = shown_title(candidate.title, candidate.title_from_commit)
    if title:
        text += f": {one_line(title, MAX_TITLE)}"
    reasons = [one_line(reason) for reason in finding.reasons[:3]]
    return ". ".join([text, *reasons])


def _fingerprint(finding: Finding, first: Region | None) -> str:
    key = [finding.verdict, finding.candidate.key, first.path if first else ""]
    return hashlib.sha1(json.dumps(key).encode()).hexdigest()


def _result(finding: Finding, change: Change | None, rules: dict[str, int]) -> dict[str, Any]:
    regions = shared_regions(change, finding)
    result: dict[str, Any] = {
        "ruleId": rule_id(finding.verdict),
        "ruleIndex": rules[finding.verdict],
        "level": "warning" if finding.decides else "note",
        "message": {"text": _message(finding)},
        "locations": [_location(region) for region in regions],
        "partialFingerprints": {
            "prdupFinding/v1": _fingerprint(finding, regions[0] if regions else None)
        },
        "properties": {
            "pr": finding.candidate.number,
            "commit": finding.candidate.commit,
            "state": finding.candidate.state,
            "score": round(finding.score, 4),
            "sharedFiles": [one_line(path) for path in finding.shared_files],
        },
    }
    return result


def to_sarif(info: QueryInfo, findings: Sequence[Finding], change: Change | None) -> str:
    """A SARIF 2.1.0 log with one run of prdup over the checked change."""
    verdicts = list(dict.fromkeys([*RULES, *(f.verdict for f in findings)]))
    rules = {verdict: index for index, verdict in enumerate(verdicts)}
    log = {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "prdup",
                        "version": _tool_version(),
                        "rules": [_rule(verdict) for verdict in verdicts],
                    }
                },
                "results": [_result(f, change, rules) for f in findings],
                "properties": {
                    "query": {"kind": info.kind, "number": info.number, "target": info.target}
                },
            }
        ],
    }
    return json.dumps(log, indent=2)
