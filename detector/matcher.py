"""The matcher: a query change and its candidates in, ranked findings with reasons out.

Pure: it sees typed values only, so `check`, the bot and `sweep` all call this one function.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from detector import decide
from detector.evidence import (
    DECIDING_VERDICTS,
    VERDICT_ORDER,
    ChangeEvidence,
    Finding,
    Landing,
    LineWeights,
    Signals,
    TargetProbe,
)
from detector.signals import measure, shared_lines

MAX_LINES_SHOWN = 5
RECENT_GAP = 100  # PR numbers: "opened shortly before" in the reasons


@dataclass(frozen=True, slots=True)
class Query:
    """The change being checked, with where each of its lines sits (for reasons)."""

    change: ChangeEvidence
    line_text: Mapping[int, str] = field(default_factory=dict)
    line_place: Mapping[int, tuple[str, str | None]] = field(default_factory=dict)  # path, symbol
    probe: TargetProbe | None = None
    reference_number: int | None = None  # "now" in PR numbers, for proximity


def match(
    query: Query,
    candidates: Iterable[ChangeEvidence],
    weights: LineWeights,
    dismissed: frozenset[int] = frozenset(),
) -> list[Finding]:
    """Every candidate that relates to the query, best first."""
    findings: list[Finding] = []
    landed = _landing_keys(query.probe)
    seen: set[str] = set()
    for candidate in candidates:
        if _is_self(query.change, candidate) or candidate.number in dismissed:
            continue
        seen.add(candidate.key)
        signals = measure(query.change, candidate, weights, query.reference_number)
        if candidate.key in landed:
            signals = replace(signals, on_target=True)
        finding = _finding(query, candidate, signals, weights)
        if finding is not None:
            findings.append(finding)
    findings.extend(_unindexed_landings(query, seen, dismissed))
    return rank(findings)


def rank(findings: Iterable[Finding]) -> list[Finding]:
    """Deciding findings first; then by score, where scores within a hundredth are a tie that
    the stronger verdict and then the newer PR break (among identical changes, the merged one
    is the answer; the score alone would favour the newest copy)."""
    return sorted(
        findings,
        key=lambda f: (
            not f.decides,
            -round(f.score, 2),
            VERDICT_ORDER[f.verdict],
            -(f.candidate.number or 0),
        ),
    )


def _is_self(query: ChangeEvidence, candidate: ChangeEvidence) -> bool:
    if query.number is not None and candidate.number == query.number:
        return True
    return bool(query.commit and candidate.commit == query.commit)


def _landing_keys(probe: TargetProbe | None) -> dict[str, Landing]:
    if probe is None or not probe.already_there:
        return {}
    keys: dict[str, Landing] = {}
    for landing in probe.landings:
        keys[f"#{landing.number}" if landing.number is not None else landing.commit[:10]] = landing
    return keys


def _finding(
    query: Query, candidate: ChangeEvidence, signals: Signals, weights: LineWeights
) -> Finding | None:
    if not _any_evidence(signals):
        return None
    shared_removed, shared_added = shared_lines(query.change, candidate)
    score = decide.score(signals)
    verdict = decide.verdict(signals, candidate.state, score)
    return Finding(
        verdict=verdict,
        score=score,
        candidate=candidate,
        signals=signals,
        reasons=tuple(_reasons(query, candidate, signals, verdict)),
        shared_removed=_texts(shared_removed, query.line_text, weights),
        shared_added=_texts(shared_added, query.line_text, weights),
        shared_files=tuple(sorted(query.change.files & candidate.files)),
        shared_symbols=tuple(
            sorted({name for path, name in query.change.symbols & candidate.symbols})
        ),
    )


def _any_evidence(s: Signals) -> bool:
    return bool(
        s.on_target
        or s.same_patch
        or s.query_coverage
        or s.candidate_coverage
        or s.reverts
        or s.file_overlap
        or s.symbol_overlap
        or s.shared_issue
        or s.text_similarity >= 0.1
        or s.code_similarity >= 0.1
    )


def _texts(
    hashes: Iterable[int], texts: Mapping[int, str], weights: LineWeights
) -> tuple[str, ...]:
    ordered = sorted(hashes, key=lambda h: -weights(h))
    return tuple(texts[h] for h in ordered if h in texts)


def _percent(value: float) -> str:
    return f"{round(value * 100)}%"


def _reasons(query: Query, candidate: ChangeEvidence, s: Signals, verdict: str) -> Iterable[str]:
    other = candidate.key
    if s.on_target and query.probe is not None:
        yield (
            f"the target branch already has this change ({_percent(query.probe.removed_gone)} of "
            f"its removed lines are gone, {_percent(query.probe.added_present)} of its added "
            f"lines are there), put there by {other}"
        )
    if s.same_patch:
        yield f"identical patch to {other}"
    if s.removed_in_candidate:
        shared = sorted(
            shared_lines(query.change, candidate)[0], key=lambda h: -len(query.line_text.get(h, ""))
        )
        where = _where(query, shared[:1])
        yield f"{other} removes {_percent(s.removed_in_candidate)} of the same lines{where}"
    if s.added_in_candidate:
        yield f"{other} adds {_percent(s.added_in_candidate)} of the lines this change adds"
    if s.reverts >= decide.THRESHOLDS.reverting:
        yield f"this change undoes {other}: it restores what {other} removed or drops what it added"
    if verdict == "covered" or (verdict == "already-merged" and decide.is_inside_larger(s)):
        share = _percent(s.query_coverage)
        yield f"{share} of this change is contained in {other}, a larger change"
    elif s.candidate_coverage >= 0.7 and s.query_coverage < 0.7:
        yield f"this change includes {_percent(s.candidate_coverage)} of {other}"
    if s.symbol_overlap:
        names = sorted({name for _, name in query.change.symbols & candidate.symbols})
        yield f"changes the same code: {', '.join(names[:4])}"
    elif s.file_overlap:
        files = sorted(query.change.files & candidate.files)
        yield f"changes the same files: {', '.join(files[:4])}"
    if s.backport and verdict not in DECIDING_VERDICTS:
        landed = "landed on" if candidate.state == "merged" else "is for"
        yield (
            f"{other} {landed} {candidate.branch}, this change is for {query.change.branch}: "
            "a backport, not a duplicate"
        )
    if s.same_author and verdict not in DECIDING_VERDICTS:
        yield f"{other} is by the same author: a follow-up or a resubmission, not a duplicate"
    if s.file_overlap == 0 and (s.query_coverage or s.candidate_coverage):
        yield f"the lines shared with {other} are in other files"
    gap = _gap(query, candidate)
    if gap is not None and 0 < gap <= RECENT_GAP and (s.query_coverage or s.file_overlap):
        yield f"{other} was opened shortly before ({gap} PR numbers earlier)"
    if s.shared_issue:
        yield f"both reference {', '.join(sorted(query.change.issues & candidate.issues))}"
    if s.text_similarity >= 0.2:
        yield f"similar title and description (text similarity {s.text_similarity:.2f})"
    if s.unshared_code_similarity >= 0.2:
        words = sorted(
            query.change.code_terms.keys() & candidate.code_terms.keys(),
            key=lambda w: -query.change.code_terms[w] * candidate.code_terms[w],
        )
        yield (
            f"no line in common, but the same names in the changed lines: {', '.join(words[:5])} "
            f"(code similarity {s.code_similarity:.2f})"
        )


def _gap(query: Query, candidate: ChangeEvidence) -> int | None:
    if query.reference_number is None or candidate.number is None:
        return None
    return query.reference_number - candidate.number


def _where(query: Query, hashes: Sequence[int]) -> str:
    for line_hash in hashes:
        place = query.line_place.get(line_hash)
        text = query.line_text.get(line_hash)
        if place and text:
            path, symbol = place
            inside = f" ({symbol})" if symbol else ""
            return f", e.g. in {path}{inside}: `{text}`"
    return ""


def _unindexed_landings(query: Query, seen: set[str], dismissed: frozenset[int]) -> list[Finding]:
    """Landings the probe found that the index does not know (yet): still worth saying."""
    findings: list[Finding] = []
    for key, landing in _landing_keys(query.probe).items():
        if key in seen or landing.number in dismissed:
            continue
        candidate = ChangeEvidence(
            key=key,
            number=landing.number,
            commit=landing.commit,
            state="merged",
            title=landing.title,
        )
        signals = Signals(on_target=True)
        probe = query.probe
        assert probe is not None
        strength = max(probe.removed_gone, probe.added_present)
        findings.append(
            Finding(
                verdict="already-merged",
                score=0.5 + 0.45 * strength,
                candidate=candidate,
                signals=signals,
                reasons=tuple(_reasons(query, candidate, signals, "already-merged")),
                shared_removed=landing.lines,
            )
        )
    return findings
