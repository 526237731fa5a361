"""The matcher: a query change and its candidates in, ranked findings with reasons out.

Pure: it sees typed values only, so `check`, the bot and `sweep` all call this one function.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from detector import decide
from detector.evidence import (
    DECIDING_VERDICTS,
    OPEN_STATES,
    VERDICT_ORDER,
    ChangeEvidence,
    Finding,
    LineWeights,
    PartLanded,
    PrCommit,
    Proof,
    QueryLineWeights,
    RemainingHunk,
    RestAtTip,
    Signals,
    TargetProbe,
    TipReplay,
    Verdict,
)
from detector.replay import HunkCount, HunkReplay, Leftover, Replay, places
from detector.signals import measure, shared_lines
from detector.text import shared_subject

if TYPE_CHECKING:
    from detector.replay import Replay

MAX_LINES_SHOWN = 5
RECENT_GAP = 100  # PR numbers: "opened shortly before" in the reasons
_TAKES_OVER = (
    "this change takes over {other} (its title or description says so): it carries that "
    "work on, it does not repeat it"
)
_TAKEN_OVER = "{other} takes over this change (its title or description says so)"
_REOPENED = "{other} is this change's branch opened as another PR (the same head commit)"
# The reason a rule overriding the replay gives (the rules are `decide.overriding_rule`'s; the
# others, a revert, a backport or the same author, have reasons of their own below).
_OVERRIDE_REASONS = {
    "own-landing": (
        "{other} is where this change's own commits landed: it is merged, not done by another"
    ),
    "after-query": "{other} {came} after this change landed: it cannot have done it first",
    "undone": (
        "{other} made this change and is in this change's base: it was undone since, "
        "so the change is not done"
    ),
    "other-line": "{other} landed on {line}, not on this change's branch: a port",
    "reverted": (
        "{other} made this change, and {reverted} reverted it since: the branch does not have "
        "it, so it is not done"
    ),
    "opened-later": (
        "{other} was opened after this change (a later PR number), and this change landed: "
        "{other} repeats it, it did not do it first"
    ),
    "sibling-port": (
        "{other} picks the same landed commit onto another base: two ports of one change to "
        "two lines, not one change opened twice"
    ),
    "picks-landing": (
        "this change's branch picks {other}'s landing commit onto a base that lacks it: a port "
        "of {other}, not a repeat"
    ),
    "sliver": (
        "{other}'s branch has this change among much other work (it is {share} of {other}): "
        "carried along, not made there"
    ),
    "cut": (
        "{other} is too large to be indexed whole: how much of it this change makes is not "
        "known, so holding this change proves no duplicate"
    ),
    "unlanded": (
        "{other} is merged, but its head is on no branch and no commit is known to have landed "
        "it: what landed, and where, is not known"
    ),
    "others-work": (
        "{other} landed as its branch's own commits, and the ones that made this change are "
        "other people's: carried along on that branch, not {other}'s work"
    ),
    "restores": (
        "{other} reverts a later commit, and so brings back what this change makes: that was "
        "made before, by another change"
    ),
    "stacked": (
        "this change's branch is built on {other}'s commits: it carries that work, it does not "
        "repeat it"
    ),
    "carries-landing": (
        "{other}'s branch carries this change's own landing (its squash or merge commit, or a "
        "copy of it): it did not make this change"
    ),
    "carries-candidate": (
        "this change's branch carries {other}'s landing commit (its squash or merge, made on a "
        "branch the index does not follow): it brings {other} along, it does not repeat it"
    ),
    "not-own": (
        "the commits of {other}'s branch that made this change are not its own work (copies "
        "of commits already merged, or brought in from other branches): carried along, not "
        "made there"
    ),
    "carried": (
        "{other}'s branch carries copies of merged commits, and the target already has this "
        "change: it came from there"
    ),
    "takes-over": _TAKES_OVER,
    "other-version": "{other} pins {pins}: another version, a competing change, not this one",
}
MAX_REPLAYS = 8  # candidates replayed per check: the few that could decide
PROVEN_SCORE = 0.95  # a claim the replay proved is shown whatever the shared share
PARTLY_SCORE = 0.8


@dataclass(frozen=True, slots=True)
class Query:
    """The change being checked, with where each of its lines sits (for reasons)."""

    change: ChangeEvidence
    line_text: Mapping[int, str] = field(default_factory=dict)
    line_place: Mapping[int, tuple[str, str | None]] = field(default_factory=dict)  # path, symbol
    probe: TargetProbe | None = None
    reference_number: int | None = None  # "now" in PR numbers, for proximity
    # Some of this PR's own commits are on the target as copies (the index's record).
    landed_in_part: PartLanded | None = None
    # What a hunk header of this change may be called in reasons, by (path, header symbol): the
    # headers that define what they name (`def load`, not `module Rails` or a call), and the
    # section titles of documents (not the nearest line of prose git's header quotes).
    definitions: frozenset[tuple[str, str]] = frozenset()
    sections: Mapping[tuple[str, str], str] = field(default_factory=dict)


def match(
    query: Query,
    candidates: Iterable[ChangeEvidence],
    weights: LineWeights,
    dismissed: frozenset[int] = frozenset(),
) -> list[Finding]:
    """Every candidate that relates to the query, best first, by the evidence in the index.

    These verdicts are provisional where the repository is at hand: `settle` then decides the
    claims that need proof by what replaying the change at each candidate shows.
    """
    findings: list[Finding] = []
    weights = QueryLineWeights.of(weights, query.change)
    for candidate in candidates:
        if _is_self(query.change, candidate) or candidate.number in dismissed:
            continue
        signals = measure(query.change, candidate, weights, query.reference_number)
        finding = _finding(query, candidate, signals, weights)
        if finding is not None:
            findings.append(finding)
    return rank(fold_part_landing(query, findings), query.reference_number)


# Why a candidate may decide once replayed, each by what the index's evidence shows: the same
# change by its verdict, the same patch, the same fix written differently (it shares removed
# lines), a real share of the change's lines, or the same file with code like it.
REPLAY_REASONS: tuple[tuple[str, Callable[[Finding], bool]], ...] = (
    ("index verdict", lambda f: f.decides),
    ("same patch", lambda f: f.signals.same_patch),
    ("removed lines", lambda f: f.signals.removed_in_candidate > 0),
    ("a tenth of the lines", lambda f: f.signals.query_coverage >= 0.1),
    ("file and code", lambda f: f.signals.file_overlap > 0 and f.signals.code_similarity >= 0.3),
    ("the same new file", lambda f: f.signals.same_new_file),
)


def replay_reasons(finding: Finding) -> list[str]:
    """The `REPLAY_REASONS` that hold for this candidate (none for one whose own commits are
    proven landed by git's patch identity: nothing to replay)."""
    if finding.landed_commits:
        return []
    return [name for name, holds in REPLAY_REASONS if holds(finding)]


def stands_alone(finding: Finding, replaying: bool) -> bool:
    """A finding that makes no claim, asks no replay (where there is a repository to replay
    in) and folds into no other (an identical patch, a PR's own copy): placed among a change's
    other findings by `rank_key`, it changes none of them, and `settle` keeps it as it is. The
    sweep adds such a finding of a new change to a PR's cached ones."""
    return not (
        finding.decides
        or (replaying and replay_reasons(finding))
        or finding.signals.same_patch
        or finding.landed_commits
    )


def worth_replaying(findings: Sequence[Finding], limit: int = MAX_REPLAYS) -> list[Finding]:
    """The few candidates that could decide (`replay_reasons`): those the index's evidence
    calls the same change, then those sharing the most with it."""
    chosen = [f for f in findings if f.decides] + [f for f in findings if not f.decides]
    return [f for f in chosen if replay_reasons(f)][:limit]


def settle(
    query: Query,
    findings: Iterable[Finding],
    proofs: Mapping[str, Proof],
    landings: Iterable[tuple[ChangeEvidence, Proof]] = (),
    rest: RestAtTip | None = None,
) -> list[Finding]:
    """Final verdicts where the change could be replayed: a candidate decides only by what its
    replay proved (`proofs`, by candidate key); one that was not replayed does not decide.
    `landings` are target commits the index does not know that the replay showed did it;
    `rest` this change's own commits that have no copy on its branch, each replayed at the
    branch's tip (`fold_part_landing`)."""
    settled = [
        f if f.landed_commits else _proven(query, f, proofs.get(f.candidate.key)) for f in findings
    ]
    seen = {f.candidate.key for f in settled}
    for candidate, proof in landings:
        if candidate.key not in seen:
            seen.add(candidate.key)
            # The index has no lines of it to compare; who wrote it is still known (a PR's
            # author landing its own change by hand is not another change).
            signals = Signals(same_author=bool(query.change.identities & candidate.identities))
            unknown = Finding("related", decide.score(signals), candidate, signals, ())
            settled.append(_proven(query, unknown, proof))
    kept = [f for f in settled if f.decides or _any_evidence(f.signals)]
    return fold_identical(
        fold_reopened(rank(fold_part_landing(query, kept, rest), query.reference_number))
    )


@dataclass(frozen=True, slots=True)
class RestOfPart:
    """A part-landed PR's commits with no copy on its branch, each by what the branch's tip
    says of its own patch (`Leftover.at_tip`, as of a landing's rest): written otherwise where
    the tip rewrote code of it since (or, nothing of it still applying, anything of it);
    still to do where some of it would still apply; nothing to apply where its files are gone;
    on the tip already where its lines are there. A commit git could not judge (not replayed:
    a binary file, a rename, a cut diff) stays to do. A commit the PR's later commits undid
    (git: the PR's head has its files as its base had them) leaves nothing."""

    to_do: tuple[PrCommit, ...]
    written_otherwise: tuple[PrCommit, ...] = ()
    files_gone: tuple[PrCommit, ...] = ()
    on_tip: tuple[PrCommit, ...] = ()
    undone: tuple[PrCommit, ...] = ()

    @classmethod
    def of(cls, part: PartLanded, rest: RestAtTip) -> RestOfPart:
        kinds = ("to_do", "otherwise", "gone", "on", "undone")
        sorted_: dict[str, list[PrCommit]] = {k: [] for k in kinds}
        for commit in part.remaining:
            at_tip = rest.replays.get(commit.sha)
            key = "undone" if commit.sha in rest.undone else "to_do"
            if key == "to_do" and at_tip is not None:
                left = Leftover.at_tip(at_tip.replay, at_tip.gone)
                if left.rewritten_since(at_tip.replay) or (left.rewritten and not left.still):
                    key = "otherwise"
                elif not left.still and left.gone:
                    key = "gone"
                elif not left.still and left.on_tip:
                    key = "on"
            sorted_[key].append(commit)
        return cls(*(tuple(sorted_[k]) for k in kinds))

    @property
    def verdict(self) -> Verdict:
        """Some of it written otherwise on the tip since: a part proven, no verdict (as for a
        landing's rest, `Leftover.rewritten_since`); else partly merged while something of
        it still applies (or only gone files are left); else, all of it on the tip: done,
        across the copies and the tip."""
        if self.written_otherwise:
            return "overlap"
        return "partly-merged" if self.to_do or self.files_gone else "already-merged"


def fold_part_landing(
    query: Query, findings: list[Finding], rest: RestAtTip | None = None
) -> list[Finding]:
    """Where this PR's own commits landed in part (copies on the target with their patch, by
    git's patch identity: the index's record, `Query.landed_in_part`), one finding at the copy
    of the last one that landed names every copy and what is left (`RestOfPart`, by the
    branch's tip where `rest` replayed the commits without a copy there); the copies' own
    findings fold into it (each alone is this PR's own work, not another's change)."""
    part = query.landed_in_part
    if part is None or not part.landed:
        return findings
    copies = {c.landed_as for c in part.landed}
    kept = [f for f in findings if f.landed_commits or f.candidate.commit not in copies]
    folded = [f for f in kept if f.landed_commits]
    if folded and rest is None:
        return kept  # folded before the replays (`match`); judged again with the tip
    kept = [f for f in kept if not f.landed_commits]
    last = part.landed[-1]
    assert last.landed_as is not None
    base = next((f for f in [*folded, *findings] if f.candidate.commit == last.landed_as), None)
    candidate = (
        base.candidate
        if base is not None
        else ChangeEvidence(
            key=last.landed_as[:10],
            commit=last.landed_as,
            state="merged",
            title=last.subject,
            branch=part.target,
        )
    )
    left = RestOfPart.of(part, rest or RestAtTip())
    signals = base.signals if base is not None else Signals()
    if left.verdict == "overlap":
        signals = replace(signals, landed_part=True)
    residual = tuple(_commit_line(c) for c in left.to_do) if left.verdict == "partly-merged" else ()
    gone = (
        _gone_files(left.files_gone, rest or RestAtTip()) if left.verdict == "partly-merged" else ()
    )
    finding = Finding(
        verdict=left.verdict,
        score=max(
            base.score if base is not None else 0.0,
            PROVEN_SCORE if left.verdict == "already-merged" else PARTLY_SCORE,
        ),
        candidate=candidate,
        signals=signals,
        reasons=tuple(_part_reasons(part, left, left.verdict)),
        shared_removed=base.shared_removed if base is not None else (),
        shared_added=base.shared_added if base is not None else (),
        shared_files=base.shared_files if base is not None else (),
        shared_symbols=base.shared_symbols if base is not None else (),
        residual=residual,
        gone_files=gone,
        landed_commits=tuple((c.sha, c.landed_as) for c in part.landed if c.landed_as),
    )
    return [*kept, finding]


def _gone_files(commits: Iterable[PrCommit], rest: RestAtTip) -> tuple[str, ...]:
    """The files the tip no longer has of a part-landed PR's commits with nothing to apply."""
    paths: dict[str, None] = {}
    for commit in commits:
        at_tip = rest.replays.get(commit.sha)
        if at_tip is not None:
            paths.update(dict.fromkeys(sorted(at_tip.gone)))
    return tuple(paths)


def _part_reasons(part: PartLanded, left: RestOfPart, verdict: str) -> Iterable[str]:
    where = part.target or "the target"
    landed = part.landed
    shown = ", ".join(
        f"{c.sha[:7]} ({c.subject}) as {(c.landed_as or '')[:10]}" for c in landed[:4]
    )
    more = f" and {len(landed) - 4} more" if len(landed) > 4 else ""
    yield (
        f"{len(landed)} of this change's commits landed on {where} with the same patch "
        f"(cherry-picked or rebased, by git's patch-id): {shown}{more}"
    )
    for commits, said in (
        (left.to_do, "still to do" if verdict in DECIDING_VERDICTS else "would still apply"),
        (
            left.written_otherwise,
            f"and {where} has their lines written otherwise since, so they no longer apply "
            "as they are",
        ),
        (left.files_gone, f"in files {where} no longer has (nothing to apply)"),
        (left.on_tip, f"but {where} has their lines anyway"),
        (left.undone, "and this change's later commits undid them"),
    ):
        if commits:
            listed = ", ".join(_commit_line(c) for c in commits[:4])
            more = f" and {len(commits) - 4} more" if len(commits) > 4 else ""
            yield f"not on {where}, {said}: {listed}{more}"


def _commit_line(commit: PrCommit) -> str:
    """`26594bc Add dump() (config.py)`: a commit still to do, as the residual lists it."""
    files = ", ".join(commit.files[:4]) + (
        f" and {len(commit.files) - 4} more" if len(commit.files) > 4 else ""
    )
    return f"{commit.sha[:7]} {commit.subject}" + (f" ({files})" if files else "")


def _proven(query: Query, finding: Finding, proof: Proof | None) -> Finding:
    """`finding` as the replay decides it; without a replay it cannot decide."""
    candidate, signals = finding.candidate, finding.signals
    if proof is None:
        if not finding.decides:
            return finding
        verdict = decide.nearby(signals)
        return replace(
            finding, verdict=verdict, reasons=tuple(_reasons(query, candidate, signals, verdict))
        )
    replay = proof.replay
    signals = replace(
        signals,
        replayed=True,
        replay_done=replay.done_share,
        replay_complete=replay.complete,
        made_again=proof.made_again_by is not None,
    )
    direct = candidate.number is None
    verdict = decide.proven_verdict(
        signals,
        candidate.state,
        proof,
        query.change.state,
        direct,
        may_supersede=may_supersede(query, candidate),
        files_supersede=may_supersede_by_files(query, candidate, replay),
    )
    # Two open PRs making one change: the later one is the copy to close, not this one (a
    # bot commenting on both would otherwise ask to close both). Its author's own later
    # resubmission is the exception: that one replaces this one.
    later_copy = verdict == "duplicate" and _opened_later(query.change, candidate, signals)
    if later_copy:
        verdict = decide.nearby(signals)
    score = finding.score
    if verdict == "already-merged":
        signals = replace(signals, on_target=True)
    elif verdict == "superseded" and replay.superseded:
        signals = replace(signals, bumped_past=True)
    elif _rest_rewritten(proof, verdict, _overridden(signals, candidate, proof, query)):
        signals = replace(signals, landed_part=True)
    # What the candidate did not do is still to do, unless it took this change over (and
    # left the rest out on purpose), or its bot generated the same block again since, or it
    # superseded the change (what of it would still apply is its tests or docs of lines
    # rewritten since: said, never as still to do).
    still_to_do = (
        verdict in DECIDING_VERDICTS
        and verdict != "superseded"
        and not _regenerated(signals, verdict)
        and not (
            signals.taken_over
            and decide.overriding_rule(signals, candidate.state, proof, query.change.state, direct)
            is None
        )
    )
    superseded = verdict == "superseded"
    # The new files both create are the competing versions, not work still to do.
    rest = _without_competing_files(proof) if _competes(verdict, candidate, replay) else proof
    if verdict in ("already-merged", "superseded", "duplicate", "covered"):
        score = max(score, PROVEN_SCORE)
    elif verdict == "partly-merged":
        score = max(score, PARTLY_SCORE)
    reasons = tuple(_reasons(query, candidate, signals, verdict, proof))
    if later_copy:
        reasons = (
            f"#{candidate.number} makes this change too and was opened after this one: this "
            "one came first, so it is not the one to close",
            *reasons,
        )
    return replace(
        finding,
        verdict=verdict,
        score=score,
        signals=signals,
        reasons=reasons,
        residual=_still_to_do(rest, signals.same_patch) if still_to_do else (),
        remaining=remaining_hunks(rest.replay, proof.tip) if still_to_do else (),
        gone_files=gone_files(rest.replay, proof.tip) if still_to_do or superseded else (),
        rewritten=rewritten_hunks(rest.replay, proof.tip) if still_to_do or superseded else (),
    )


# A merge of one branch into another (`Merge branch '2.3' into 2.7`, a release line merged
# up): it brings lines that other changes made, it makes none of its own.
_BRANCH_MERGE = re.compile(r"^Merge (?:remote-tracking )?(?:branch|tag)s? ", re.IGNORECASE)
SUPERSEDE_SIZE = 10  # a landing this many times the change's size is a mass change
SUPERSEDE_WINDOW = timedelta(days=183)  # "landed while it was open", without a closing date


def may_supersede(query: Query, candidate: ChangeEvidence) -> bool:
    """The guards a landing that rewrote this change's lines must pass before it can
    supersede it (`supersede_guards`), and a shared place: changing a definition or a document
    section this change changes (a header naming only the enclosing module is no shared
    place), or a title naming the same thing these lines are (`same_subject`), where a file
    has no definitions or sections to name (LICENSE, a template, a script's body)."""
    if not supersede_guards(query, candidate):
        return False
    return bool(shared_places(query, candidate) or same_subject(query, candidate))


def same_subject(query: Query, candidate: ChangeEvidence) -> tuple[str, ...]:
    """The rare words of this change's title, naming its paths or lines, that the
    candidate's title names too: both say what they change, and it is the same thing."""
    return shared_subject(query.change.rare_title_words, candidate.title)


def _competes(verdict: str, candidate: ChangeEvidence, replay: Replay) -> bool:
    """A duplicate of an unlanded PR by the new files both create, each its own way (the same
    page translated twice), nothing of this change made there as it is."""
    return (
        verdict == "duplicate"
        and candidate.state != "merged"
        and replay.created_the_files
        and not any(h.turned for h in replay.deciding)
    )


def _without_competing_files(proof: Proof) -> Proof:
    """The proof with the hunks that create a file the candidate creates otherwise set apart:
    what is left of this change beside the competing files."""
    kept = tuple(h for h in proof.replay.hunks if not h.created_otherwise)
    return replace(proof, replay=Replay(commit=proof.replay.commit, hunks=kept))


def may_supersede_by_files(query: Query, candidate: ChangeEvidence, replay: Replay) -> bool:
    """The guards a candidate that created this change's new files otherwise must pass: those
    files being most of the candidate too (a page added beside a large feature is that
    feature's, not a competing page), and, for a landing, those of `supersede_guards`. Two
    unlanded PRs compete, whenever each was opened, where the files are documents (the same
    page translated twice): two creating one test or module file may be two features that
    chose one name (fastapi #15970's tests of a helper and #5114's feature, each a
    `tests/test_concurrency.py`)."""
    created = sum(
        h.created_otherwise for h in {h.path: h for h in replay.created_otherwise}.values()
    )
    theirs = candidate.lines_changed
    if theirs is None or not 0 < theirs <= 2 * created:
        return False
    if candidate.state != "merged":
        return replay.created_the_pages
    return supersede_guards(query, candidate)


def supersede_guards(query: Query, candidate: ChangeEvidence) -> bool:
    """A PR's own landing (not a merge that only brought the lines from another branch),
    opened before this change or landed within about half a year of it being opened (a
    rewrite years later is another purpose), at most ten times this change's size (a rename,
    a reformat or a mass removal rewrites everything)."""
    ours, theirs = query.change.lines_changed, candidate.lines_changed
    return bool(ours) and theirs is not None and _refused(query, candidate) is None


def _refused(query: Query, candidate: ChangeEvidence) -> str | None:
    """Which guard of `supersede_guards` refuses the candidate, in the words of a reason;
    None where none does (sizes not known on both sides are left to `supersede_guards`)."""
    other = candidate.key
    if (
        candidate.state != "merged"
        or candidate.number is None
        or _BRANCH_MERGE.match(candidate.title)
    ):
        return f"but {other} is no PR's own landing"
    if not _opened_or_landed_in_time(query.change, candidate):
        return f"but {other} landed long after this change was opened: another purpose, maybe"
    ours, theirs = query.change.lines_changed, candidate.lines_changed
    if ours and theirs is not None and theirs > SUPERSEDE_SIZE * ours:
        return (
            f"but as part of a change {theirs // ours} times this one's size, which rewrites "
            "what it passes"
        )
    return None


def _opened_later(query: ChangeEvidence, candidate: ChangeEvidence, signals: Signals) -> bool:
    """An open PR opened after this one (by PR number, the order GitHub opened them), which
    is not its author's resubmission of this change: the first PR is kept, whatever the later
    one adds (tests, a changelog entry, another fix beside it), so no later PR is named as
    the one to close this one into. (One that holds it inside a change at least twice its
    size is "covered", not this.)"""
    return (
        candidate.state != "merged"
        and query.number is not None
        and (candidate.number or 0) > query.number
        and not signals.resubmitted
    )


def _opened_or_landed_in_time(query: ChangeEvidence, candidate: ChangeEvidence) -> bool:
    if query.number is None or (candidate.number or 0) < query.number:
        return True  # a branch not yet proposed, or a PR opened before this one
    opened, landed = _when(query.created_at), _when(candidate.merged_at)
    return opened is not None and landed is not None and landed - opened <= SUPERSEDE_WINDOW


def _when(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def remaining_hunks(replay: Replay, tip: TipReplay | None = None) -> tuple[RemainingHunk, ...]:
    """The hunks `Replay.residual` names, as values: those carrying changed lines that the
    candidate did not do (the sweep reports them file by file, line by line), less those the
    branch's tip holds anyway or that touch files it no longer has."""
    hunks = (
        Leftover.of(replay, tip.replay, tip.gone).still
        if tip is not None
        else [h for h in replay.hunks if h.weight and not h.turned]
    )
    if replay.superseded:
        hunks = [h for h in hunks if not h.superseded_by]
    return tuple(RemainingHunk(h.path, h.first_line, h.last_line, h.new_file) for h in hunks)


def gone_files(replay: Replay, tip: TipReplay | None) -> tuple[str, ...]:
    """The files of the hunks the candidate did not do that the branch's tip no longer has,
    in the change's order: `remaining_hunks` leaves them out, as there is nothing to apply."""
    if tip is None:
        return ()
    gone = Leftover.of(replay, tip.replay, tip.gone).gone
    return tuple(dict.fromkeys(h.path for h in gone))


def rewritten_hunks(replay: Replay, tip: TipReplay | None) -> tuple[RemainingHunk, ...]:
    """The hunks the candidate did not do that the branch's tip has written otherwise since
    (`Leftover.rewritten`): `remaining_hunks` leaves them out, as they no longer apply."""
    if tip is None:
        return ()
    rewritten = Leftover.of(replay, tip.replay, tip.gone).rewritten
    return tuple(RemainingHunk(h.path, h.first_line, h.last_line, h.new_file) for h in rewritten)


def _still_to_do(proof: Proof, same_patch: bool) -> tuple[str, ...]:
    """What the replay's hunk count leaves, less what the branch's tip holds anyway."""
    count = HunkCount.of(proof.replay, same_patch)
    tip = proof.tip
    if proof.replay.superseded:
        return places(
            h for h in proof.replay.hunks if h.weight and not h.turned and not h.superseded_by
        )
    if tip is None or count.whole:
        return count.residual
    return places(Leftover.of(proof.replay, tip.replay, tip.gone).still)


def rank(findings: Iterable[Finding], reference: int | None = None) -> list[Finding]:
    """Best evidence first (`rank_key`)."""
    return sorted(findings, key=lambda f: rank_key(f, reference))


def rank_key(finding: Finding, reference: int | None = None) -> tuple[float, ...]:
    """Where a finding stands among a change's findings, as numbers (the sweep keeps it with
    a cached finding, to place a new change's finding among them as `check` would).

    Deciding findings first, the whole change proven (an identical patch or a complete
    replay, or the target holding it across landings) before a part of it; among those
    "already done" before an open duplicate, one landing that did it all before several, an
    identical patch before a replay, and among identical patches the original (the one that
    landed, then the earliest). Then by score, where scores within a hundredth are a tie that
    the landing that came first breaks (the PR that made the lines, before the merge-ups,
    release PRs and backports that carried them later), then the stronger verdict, then a PR
    opened before this one (`reference`, its number: the earlier PRs are what was there
    first), then the newer PR (among copies of one change, the newest is more often the one
    its author meant)."""
    f = finding
    return (
        not f.decides,
        _evidence_tier(f),
        VERDICT_ORDER[f.verdict] if f.decides else 0,
        f.signals.made_again,  # after the landing that made it again, which the line holds
        _across(f),
        not f.signals.same_patch,
        *_original_first(f),
        -round(f.score, 2),
        *_landed_first(f),
        VERDICT_ORDER[f.verdict],
        reference is not None and (f.candidate.number or 0) > reference,
        -(f.candidate.number or 0),
    )


def _landed_first(finding: Finding) -> tuple[int, float]:
    """Deciding findings of landed PRs by when they landed, the first first; others tie."""
    landed = finding.candidate.merged_at if finding.decides else None
    if not landed:
        return (finding.decides, 0.0)
    when = _when(landed)
    return (1, 0.0) if when is None else (0, when.timestamp())


def _rest_rewritten(proof: Proof, verdict: str, overridden: bool) -> bool:
    """A part landed, and the tip rewrote code of the rest since (`Leftover.rewritten_since`):
    no verdict, but a part of the change proven. Not where a rule overrides the
    replay (a port, a revert since): that rule's reason is the finding's."""
    tip, replay = proof.tip, proof.replay
    return (
        not overridden
        and verdict not in DECIDING_VERDICTS
        and tip is not None
        and replay.partial
        and Leftover.of(replay, tip.replay, tip.gone).rewritten_since(replay)
    )


def _overridden(signals: Signals, candidate: ChangeEvidence, proof: Proof, query: Query) -> bool:
    """A rule overrides the replay for this candidate (`decide.overriding_rule`)."""
    direct = candidate.number is None
    rule = decide.overriding_rule(signals, candidate.state, proof, query.change.state, direct)
    return rule is not None


def _evidence_tier(finding: Finding) -> int:
    """0: the whole change is proven there; 1: a part of it (also where that decides nothing:
    the rest rewritten on the tip since); 2: nothing decides."""
    s = finding.signals
    if not finding.decides:
        return 1 if s.landed_part else 2
    if s.same_patch or s.replay_complete or not s.replayed:
        return 0
    if finding.verdict == "already-merged":
        return 0  # the whole change is on the target: its landing and others made it
    if s.bumped_past:
        return 0  # the whole change is past: every version it bumps, the landing bumped higher
    return 1


def _across(finding: Finding) -> bool:
    """Done across changes (this landing did a part, others the rest): ranked after a landing
    that did the whole change on its own."""
    s = finding.signals
    return (
        finding.verdict == "already-merged"
        and s.replayed
        and not (s.replay_complete or s.same_patch)
    )


def _original_first(finding: Finding) -> tuple[int, int]:
    if not finding.signals.same_patch:
        return (0, 0)
    number = finding.candidate.number or 0
    # Of the same author's resubmissions, the newest is the one kept.
    return (finding.candidate.state != "merged", -number if finding.signals.resubmitted else number)


def fold_identical(findings: list[Finding]) -> list[Finding]:
    """Copies of one identical patch are one finding: the original, "also identical: #A, #B"."""
    first = next((f for f in findings if f.decides and f.signals.same_patch), None)
    if first is None:
        return findings
    copies = [
        f
        for f in findings
        if f is not first and f.decides and f.signals.same_patch and f.candidate.number
    ]
    if not copies:
        return findings
    numbers = tuple(f.candidate.number for f in copies if f.candidate.number is not None)
    also = f"also identical: {', '.join(f'#{n}' for n in numbers)}"
    merged = replace(first, also_identical=numbers, reasons=(*first.reasons, also))
    return [merged if f is first else f for f in findings if f not in copies]


def fold_reopened(findings: list[Finding]) -> list[Finding]:
    """One branch opened as several PRs (one head commit) is one change, so one finding: the
    PR that matters, "also opened as #Y", at its own place in the ranking.

    The one named: a deciding finding before one that is not; then the PR that landed (the
    first); then one still open; then a closed one (the newest of each). A twin is folded into
    a deciding finding only where it decides or shares lines with this change itself: the
    sweep reads every such candidate (`could_decide`), so its deciding findings stay `check`'s.
    """
    twins: dict[str, list[Finding]] = {}
    for finding in findings:
        head = finding.candidate.head_commit
        if head and finding.candidate.number is not None and not finding.landed_commits:
            twins.setdefault(head, []).append(finding)
    folded: dict[int, Finding] = {}
    gone: set[int] = set()
    for group in twins.values():
        if len(group) < 2:
            continue
        kept = min(group, key=_matters)
        others = [f for f in group if f is not kept and _folds_into(f, kept)]
        if not others:
            continue
        numbers = tuple(sorted(f.candidate.number for f in others if f.candidate.number))
        also = f"also opened as {_and([f'#{n}' for n in numbers])} (the same head commit)"
        folded[id(kept)] = replace(kept, also_opened_as=numbers, reasons=(*kept.reasons, also))
        gone.update(id(f) for f in others)
    return [folded.get(id(f), f) for f in findings if id(f) not in gone]


def _matters(finding: Finding) -> tuple[bool, int, int]:
    """Of one branch's PRs, the one to name first (the smallest): the first that landed, else
    the newest (as ranking ties go to the newer PR: of an author's copies of one change, the
    newest is more often the one meant, and the one kept open)."""
    state = finding.candidate.state
    number = finding.candidate.number or 0
    landed = state == "merged"
    return (
        not finding.decides,
        0 if landed else 1 if state in OPEN_STATES else 2,
        number if landed else -number,
    )


def _folds_into(twin: Finding, kept: Finding) -> bool:
    s = twin.signals
    return not kept.decides or twin.decides or s.same_patch or s.query_coverage > 0


def _is_self(query: ChangeEvidence, candidate: ChangeEvidence) -> bool:
    """The query itself: the same PR, or (for a branch or commit) the same commit. Two PRs
    with one head commit are two PRs (one resubmits the other)."""
    if query.number is not None and candidate.number is not None:
        return candidate.number == query.number
    return bool(query.commit and candidate.commit == query.commit)


def _same_work(query: Query, candidate: ChangeEvidence, s: Signals) -> str:
    """How two changes are one piece of work resubmitted, in words."""
    if _same_head(query, candidate):
        return "the same head commit"
    if s.same_patch:
        return "the same patch"
    return "the same lines of the same files rewritten again, by a bot"


def _same_head(query: Query, candidate: ChangeEvidence) -> bool:
    """Two PRs of one head commit: one branch opened twice (reopened as a new PR)."""
    head = query.change.head_commit
    return bool(head and head == candidate.head_commit)


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
        shared_symbols=shared_places(query, candidate),
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
        or s.replay_done > 0  # the replay found some of it there (its own landing, say)
    )


def _texts(
    hashes: Iterable[int], texts: Mapping[int, str], weights: LineWeights
) -> tuple[str, ...]:
    ordered = sorted(hashes, key=lambda h: -weights(h))
    return tuple(texts[h] for h in ordered if h in texts)


def _percent(value: float) -> str:
    return f"{round(value * 100)}%"


def _reasons(
    query: Query,
    candidate: ChangeEvidence,
    s: Signals,
    verdict: str,
    proof: Proof | None = None,
) -> Iterable[str]:
    other = candidate.key
    # One branch opened as another PR; a resubmission's own reason below says so itself.
    reopened = _same_head(query, candidate) and not (s.resubmitted or s.resubmits)
    if reopened:
        yield _REOPENED.format(other=other)
    if proof is not None:
        yield from _replay_reasons(query, candidate, s, verdict, proof)
    if s.same_patch:
        yield f"identical patch to {other}"
    if proof is not None and proof.stacked and verdict == "partly-merged":
        yield (
            f"this change's branch is built on {other}'s commits, which landed: rebase, and what "
            "is still to do is this change's own work"
        )
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
    if s.takes_over and proof is None:
        yield _TAKES_OVER.format(other=other)
    if s.taken_over and proof is None:
        yield _TAKEN_OVER.format(other=other)
    contained = verdict == "covered" or (verdict == "already-merged" and decide.is_inside_larger(s))
    # A takeover's replay says what went on there, not how much of it the takeover holds.
    if contained and not (s.taken_over and proof is not None):
        share = _percent(s.query_coverage)
        yield f"{share} of this change is contained in {other}, a larger change"
    elif s.candidate_coverage >= 0.7 and s.query_coverage < 0.7 and not s.candidate_cut:
        yield f"this change includes {_percent(s.candidate_coverage)} of {other}"
    if s.candidate_cut and (s.query_coverage or s.candidate_coverage):
        yield f"{other} is too large to be indexed whole: only the lines of its first files count"
    code, sections = _shared_names(query, candidate) if s.symbol_overlap else ((), ())
    if code:
        yield f"changes the same code: {', '.join(code[:4])}"
    if sections:
        yield f"changes the same section: {', '.join(sections[:4])}"
    if s.file_overlap and not (code or sections):
        files = sorted(query.change.files & candidate.files)
        yield f"changes the same files: {', '.join(files[:4])}"
    if s.backport and verdict not in DECIDING_VERDICTS:
        landed = "landed on" if candidate.state == "merged" else "is for"
        yield (
            f"{other} {landed} {candidate.branch}, this change is for {query.change.branch}: "
            "a backport, not a duplicate"
        )
    if s.port and not s.backport and verdict not in DECIDING_VERDICTS:
        landed = "landed on" if candidate.state == "merged" else "is for"
        yield (
            f"{other} {landed} {candidate.branch}, this change is for {query.change.branch}, "
            "and one ports the other: a port, not a duplicate"
        )
    if s.resubmitted and verdict in DECIDING_VERDICTS:
        yield (
            f"resubmitted by the same author as {other} ({_same_work(query, candidate, s)}): "
            f"close this one, {other} is the newer"
        )
    elif s.resubmits and verdict not in DECIDING_VERDICTS:
        yield (
            f"this change resubmits {other} (the same author, "
            f"{_same_work(query, candidate, s)}): {other} is the one to close"
        )
    elif (
        proof is not None
        and candidate.state == "merged"
        and verdict not in DECIDING_VERDICTS
        and decide.revised_by_author(s, proof)
    ):
        yield (
            f"{other} is this change's author's own later PR, which landed a part of it: what "
            "it left out, its author left out"
        )
    elif s.same_author and verdict not in DECIDING_VERDICTS and not reopened:
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


def _shared_names(
    query: Query, candidate: ChangeEvidence
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The definitions both change (by name), and the document sections (by title and file)
    where both change a line under the same header; other shared headers name nothing."""
    shared = query.change.symbols & candidate.symbols
    code = sorted({name for path, name in shared if (path, name) in query.definitions})
    sections = sorted(
        {f"{query.sections[place]} ({place[0]})" for place in shared if place in query.sections}
    )
    return tuple(code), tuple(sections)


def shared_places(query: Query, candidate: ChangeEvidence) -> tuple[str, ...]:
    """The shared definitions and document sections, as the reasons name them."""
    code, sections = _shared_names(query, candidate)
    return (*code, *sections)


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


def _replay_reasons(
    query: Query, candidate: ChangeEvidence, s: Signals, verdict: str, proof: Proof
) -> Iterable[str]:
    """What replaying this change at the candidate showed, in words a maintainer can check
    with `git show`; where a rule overrides the replay, the rule's reason instead."""
    other = candidate.key
    replay = proof.replay
    merged = candidate.state == "merged"
    where = f"at {replay.commit[:10]}, where {other} landed" if merged else f"at {other}'s head"
    came = "landed" if merged else "was opened"
    if proof.reached_after_query:
        came = "reached this change's branch (by a merge)"
    count = HunkCount.of(replay, s.same_patch)
    direct = candidate.number is None
    rule = decide.overriding_rule(s, candidate.state, proof, query.change.state, direct)
    turned = replay.complete or replay.partial
    # A part landed, and the tip has the rest written otherwise: no verdict, and the reasons
    # say why.
    stale = _rest_rewritten(proof, verdict, rule is not None)
    if rule in _OVERRIDE_REASONS and (turned or rule not in ("sliver", "carried", "cut")):
        yield _OVERRIDE_REASONS[rule].format(
            other=other,
            line=proof.other_line,
            share=_percent(s.candidate_coverage),
            came=came,
            pins=_pins_text(replay),
            reverted=proof.reverted_by,
        )
        return
    taken_over = s.taken_over and rule is None
    if taken_over:
        yield _TAKEN_OVER.format(other=other)
    if turned and proof.carries_query and not merged and not _same_head(query, candidate):
        yield f"{other}'s branch carries this change's own commits"
    if replay.superseded and verdict == "superseded":
        yield from _superseded_reasons(other, replay, where)
    elif verdict == "superseded":
        yield _superseded_by(other, replay, where, count)
        if replay.partial and replay.rewritten_rest:
            yield (
                f"{other} rewrote the rest its own way as it landed: "
                f"{', '.join(places(list(replay.rewritten_rest))[:4])}"
            )
        if replay.rewrote and not replay.partial and replay.agreeing_words:
            named = ", ".join(f"`{word}`" for word in replay.agreeing_words[:3])
            yield f"the same purpose: this change and {other} both bring {named} in there"
        elif replay.rewrote and not replay.partial and s.same_subject:
            named = ", ".join(f"`{word}`" for word in s.same_subject)
            yield f"the same purpose: this change's title and {other}'s both name {named}"
    elif _competes(verdict, candidate, replay):
        paths = list(dict.fromkeys(h.path for h in replay.created_otherwise))
        yield (
            f"both add {_and(paths)}, each with lines of its own (replayed {where}): the same "
            "new file(s) written twice, of which one can go in"
        )
        proof = _without_competing_files(proof)
        replay, count = proof.replay, HunkCount.of(proof.replay, s.same_patch)
    elif _regenerated(s, verdict):
        yield (
            f"regenerated by {other}: the same bot rewrote every line this change rewrites, in "
            f"the same files, and that landed ({replay.commit[:10]}, where {other} landed): "
            "this change's version is stale"
        )
    elif count.total and stale:
        yield (
            f"replayed {where}: {count.done} of {count.total} hunk(s) are there "
            f"({_percent(count.share)} of the changed lines), and the tip rewrote some of "
            "the rest since, so it no longer applies as it is: whether what is left is still "
            "wanted is for a maintainer to read"
        )
    elif count.total:
        yield f"replayed {where}: {_hunks_there(count, replay, verdict in DECIDING_VERDICTS)}"
        if count.whole and rule is None and decide.lacks_most_of_the_work(replay, count):
            yield (
                f"but {_percent(1 - replay.work_share)} of this change's own work (its code "
                f"and tests) is not in {other}: a part of it, not the same change"
            )
    if merged and replay.rewrote and verdict not in DECIDING_VERDICTS and rule is None:
        yield _rewrote_since(other, replay, _not_proven(query, candidate))
    if proof.made_again_by and verdict == "already-merged":
        yield (
            f"{other}'s change was taken off again after it landed, and "
            f"{proof.made_again_by} made it again: the target holds {proof.made_again_by}'s"
        )
    if s.same_patch and count.total and not count.whole and not replay.already_before:
        yield (
            f"{other} has this very patch, but it is not all there {where}: what did not keep "
            "the change did not make it"
        )
    if taken_over and verdict in DECIDING_VERDICTS:
        if not count.whole:
            yield (
                f"the other {count.total - count.done} hunk(s) are what {other} left out or "
                "rewrote when it took this change over, not work still to do"
            )
        return  # nothing is still to do: the rest was the takeover's to keep or leave
    if (
        proof.tip is not None
        and (verdict in DECIDING_VERDICTS or stale)
        and not count.whole
        and not _regenerated(s, verdict)
    ):
        yield from _tip_reasons(other, proof.replay, proof.tip, verdict)
    residual = () if _regenerated(s, verdict) else _still_to_do(proof, s.same_patch)
    if residual and (verdict in DECIDING_VERDICTS or stale):
        shown = ", ".join(residual[:4])
        more = f" and {len(residual) - 4} more" if len(residual) > 4 else ""
        said = (
            "still to do"
            if verdict in DECIDING_VERDICTS and verdict != "superseded"
            else "would still apply as it is"
        )
        yield f"not in {other}, {said}: {shown}{more}"
    elif (
        count.residual
        and count.done
        and not _regenerated(s, verdict)
        and not (proof.tip is not None and (verdict in DECIDING_VERDICTS or stale))
    ):
        # A part is there, too little to decide: say which part is not (the same line added
        # to three lists, where the other PR added it to one). Where the rest is on the
        # branch's tip, the tip's reasons say where it is, and since which commit.
        shown = ", ".join(count.residual[:4])
        more = f" and {len(count.residual) - 4} more" if len(count.residual) > 4 else ""
        yield f"not in {other}: {shown}{more}"


def _regenerated(signals: Signals, verdict: str) -> bool:
    """Already done because its bot generated the same block again since, and that landed:
    nothing of this version of it is left to do."""
    return verdict == "already-merged" and signals.regenerated


def _pins_text(replay: Replay) -> str:
    """`filelock ==3.20.1 (this change: ==3.20.3)`, for each package pinned otherwise."""
    return ", ".join(
        f"{pin.package} {pin.theirs} (this change: {pin.ours})" for pin in replay.competing_pins
    )


def _superseded_reasons(other: str, replay: Replay, where: str) -> Iterable[str]:
    """A bump the candidate bumped higher: each of its lines, and what the candidate wrote."""
    bumps = [h for h in replay.hunks if h.superseded_by]
    lines = list(dict.fromkeys(line for h in bumps for line in h.superseded_by))
    shown = ", ".join(f"`{line}`" for line in lines[:3])
    more = f" and {len(lines) - 3} more" if len(lines) > 3 else ""
    yield (
        f"superseded by {other} (the same package bumped again, to a later version: "
        f"{shown}{more}), replayed {where}: {', '.join(places(bumps)[:4])}"
    )


def _superseded_by(other: str, replay: Replay, where: str, count: HunkCount) -> str:
    """Why a landing supersedes the change: it made most of it (the rest written otherwise
    since), it created the files the change creates, or it rewrote the lines the change
    edits, quoted with what it wrote there."""
    if replay.created_the_files and not replay.rewrote:
        paths = list(dict.fromkeys(h.path for h in replay.created_otherwise))
        return (
            f"superseded by {other}: {other} already added {_and(paths)} with lines of its "
            f"own (landed {replay.commit[:10]}): this change adds the same file(s) again"
        )
    if replay.partial:
        return (
            f"superseded by {other}: replayed {where}, {count.done} of {count.total} hunk(s) "
            f"are there ({_percent(count.share)} of the changed lines), and nothing of the "
            "rest applies as it is"
        )
    hunks = [h for h in replay.deciding if h.rewritten]
    removed = sum(h.removed_lines for h in replay.deciding if h.removed_lines)
    rewritten = sum(h.rewritten_lines for h in hunks)
    first = hunks[0]
    wrote = [line.strip() for line in first.rewritten_as if line.strip()][:2]
    now = f", now `{'` / `'.join(wrote)}`" if wrote else ", now deleted"
    return (
        f"superseded by {other}: {other} (landed {replay.commit[:10]}) already rewrote "
        f"{rewritten} of the {removed} lines this change removes, its own way, e.g. "
        f"{places([first])[0]}{now}"
    )


def _rewrote_since(other: str, replay: Replay, unproven: str) -> str:
    """A landing rewrote the lines this change edits, without what a superseding one needs
    (`unproven`: which of it is missing)."""
    hunks = [h for h in replay.deciding if h.rewritten]
    return (
        f"{other} rewrote these lines since (landed {replay.commit[:10]}): this change no "
        f"longer applies as it is there ({', '.join(places(hunks)[:4])}), {unproven}"
    )


def _not_proven(query: Query, candidate: ChangeEvidence) -> str:
    """Why a landing that rewrote this change's lines does not supersede it, in the order
    `may_supersede` and the purpose test ask: a guard that refuses it (`_refused`), no place
    both change, else no words agreeing on the purpose."""
    refused = _refused(query, candidate)
    if refused is not None:
        return refused
    if not (shared_places(query, candidate) or same_subject(query, candidate)):
        return "but in no definition or section both change, and neither title names the other's"
    return f"and nothing shows {candidate.key} was made for the same purpose"


def _tip_reasons(other: str, replay: Replay, tip: TipReplay, verdict: str) -> Iterable[str]:
    """What of the rest the branch's tip holds anyway, and since which commits."""
    left = Leftover.of(replay, tip.replay, tip.gone)
    rest = {h.path for h in (*left.on_tip, *left.rewritten, *left.still)}
    moved = sorted((path, there) for path, there in tip.moved.items() if path in rest)
    if moved:
        listed = _and([f"{path} to {there}" for path, there in moved])
        yield (
            f"{tip.branch} has moved {listed} since this change's base: its rest there "
            "was replayed where the file went"
        )
    if left.on_tip:
        since = list(
            dict.fromkeys(tip.landed_by.get((h.path, h.first_line), "") for h in left.on_tip)
        )
        # The landing's own commit, named by its sha where its subject names no PR, is `other`.
        named = list(
            dict.fromkeys(
                other if replay.commit.startswith(label) else label for label in since if label
            )
        )
        others = [label for label in named if label != other]
        shown, more = _first_places(left.on_tip)
        if verdict == "already-merged" and others:
            yield f"already done across {_and([other, *others])}: the rest is on {tip.branch}"
        there = f" (first there at {_and(named)})" if named else ""
        yield f"already on {tip.branch}{there}, so not still to do: {shown}{more}"
    if left.rewritten:
        shown, more = _first_places(left.rewritten)
        yield (
            f"not in {other}, and {tip.branch} has those lines written otherwise (by {other} "
            f"or since), so it no longer applies as it is: {shown}{more}"
        )
    if left.gone:
        files = sorted({h.path for h in left.gone})
        more = f" and {len(files) - 4} more" if len(files) > 4 else ""
        yield (
            f"not in {other}, in files {tip.branch} no longer has (nothing to apply): "
            f"{', '.join(files[:4])}{more}"
        )


def _first_places(hunks: Sequence[HunkReplay], most: int = 4) -> tuple[str, str]:
    """The first `most` files of these hunks in words, and " and N more" files past them (a
    count of files, as the words list files: five hunks of one file are no "1 more")."""
    listed = places(hunks)
    more = f" and {len(listed) - most} more" if len(listed) > most else ""
    return ", ".join(listed[:most]), more


def _and(names: Sequence[str], most: int = 4) -> str:
    """`#1, #2 and #3`; past `most` names, `#1, #2, #3, #4 and 5 more`."""
    if len(names) > most:
        return f"{', '.join(names[:most])} and {len(names) - most} more"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _hunks_there(count: HunkCount, replay: Replay, decides: bool) -> str:
    """The replay's hunk count in words, from the accounting the verdict was read from."""
    already = "already " if decides else ""
    if count.whole:
        written = " (the same lines replaced with the same names)" if replay.same_names else ""
        identity = " (its identical patch, kept where it landed)" if count.by_identity else ""
        if not count.others:
            return f"all {count.total} hunk(s) of the change are {already}there{written}{identity}"
        return (
            f"all {count.total} hunk(s) of the change's code are {already}there{written}"
            f"{identity}; {count.others} more hunk(s) in tests, docs or comments are not"
        )
    if decides:
        return (
            f"{count.done} of {count.total} hunk(s) are already there "
            f"({_percent(count.share)} of the changed lines)"
        )
    return f"{count.done} of {count.total} hunk(s) are there, so not the same change"
