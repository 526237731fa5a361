"""Score and verdict for one candidate, from its signals.

The score is a logistic model over the signals; its weights ship as data (`weights.json`) so
they can be refitted on the benchmark and still be read by a person. The verdict is a rule over
the same signals: what the evidence says happened, not just how much it says.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from detector.evidence import Proof, Signals, Verdict
from detector.replay import HunkCount, Leftover, Replay
from detector.versions import at_least

WEIGHTS_FILE = Path(__file__).with_name("weights.json")
FEATURES = (
    "query_coverage",
    "removed_in_candidate",
    "candidate_coverage",
    "added_in_candidate",
    "same_patch",
    "hunk_overlap",
    "file_overlap",
    "symbol_overlap",
    "shared_issue",
    "text_similarity",
    "reverts",
    "removed_coverage",
    "recent_overlap",
    "same_author",
    "proximity",
    "unshared_code_similarity",
)


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Where a share of lines becomes a claim; named so the rules below read as sentences."""

    contained: float = 0.7  # this much of the change found in the candidate: it is covered
    same_fix: float = 0.6  # this much of the removed lines also removed: the same fix
    removal_part: float = 0.2  # ...and make up this much of the change
    rare_line_share: float = 0.01  # ...provided one is in at most 1% of changes (or 5)
    larger: float = 0.5  # the candidate holds this change and at least as much again
    own_part: float = 0.3  # for the score alone to decide, this much of the change is shared
    sweeping: float = 0.05  # shared lines under this share of the candidate: no decision
    reverting: float = 0.5
    related_text: float = 0.35
    most: float = 0.5  # a landing that made more than this share of the change made most of it
    agreeing_text: float = 0.35  # titles and descriptions this alike say the same purpose


THRESHOLDS = Thresholds()
# Of a change's own work (code and tests), the share a candidate must hold to be the change.
MOST_OF_THE_WORK = 0.5
MANY_TIMES = 4  # hunks of a change's own work against those a candidate did: a sliver of it
NO_SHARED_LINE_SCALE = 0.69  # a candidate sharing no line scores below the default 0.7


@cache
def decide_threshold() -> float:
    """The score from which shared code is enough to decide (calibrated on the benchmark)."""
    return float(json.loads(WEIGHTS_FILE.read_text()).get("decide_threshold", 1.01))


@cache
def model() -> tuple[float, dict[str, float]]:
    data = json.loads(WEIGHTS_FILE.read_text())
    # A feature the file does not name (added since it was fitted) counts for nothing.
    return float(data["intercept"]), {
        name: float(data["weights"].get(name, 0.0)) for name in FEATURES
    }


def features(signals: Signals) -> list[float]:
    return [float(getattr(signals, name)) for name in FEATURES]


def score(signals: Signals) -> float:
    """Probability-like score in [0, 1] that the candidate already covers the change."""
    intercept, weights = model()
    z = intercept + sum(weights[name] * float(getattr(signals, name)) for name in FEATURES)
    if signals.on_target:
        z = max(z, 2.0)
    probability = 1.0 / (1.0 + math.exp(-z))
    if not signals.shares_lines:
        # Files, words and recency alone rank nearby work (duplicates by intent are found only
        # so) but never reach the default threshold: a PR opened just before in the same
        # function would otherwise score 0.99.
        probability *= NO_SHARED_LINE_SCALE
    return probability


def verdict(signals: Signals, candidate_state: str, score: float = 0.0) -> Verdict:
    """What happened, by the evidence: the same change, a containing one, or only nearby work.

    A deciding verdict needs shared code: the same patch, shared lines, or the target already
    holding the change. Rules name the clear cases; beyond them the fitted score decides, at
    the threshold calibrated with it (`decide_threshold` in weights.json).
    """
    t = THRESHOLDS
    if signals.reverts >= t.reverting and signals.reverts > signals.query_coverage:
        return "overlap"  # it undoes the candidate: the opposite of already done
    if signals.backport and not signals.on_target:
        # The same change for an older release line: the candidate's branch has it, the one
        # this change is for does not. Backports repeat merged changes on purpose.
        return nearby(signals)
    if signals.port and not signals.on_target:
        return nearby(signals)  # the same change made on purpose for another release line
    if signals.takes_over and not signals.on_target:
        return nearby(signals)  # it says it takes the candidate's work over: not a repeat
    if signals.resubmitted:
        # The author's same work opened again later: this one is the copy to close.
        return "duplicate"
    if signals.same_author and not signals.on_target:
        # The author's own earlier PR: a follow-up, a port to another branch, or the one their
        # resubmission replaces (that earlier PR is the one to close, not this one).
        return nearby(signals)
    if not (signals.same_patch or signals.on_target) and signals.file_overlap == 0:
        # The shared lines sit in other files (an import, a docblock line): not the same change.
        return nearby(signals)
    if not (signals.same_patch or signals.on_target) and signals.candidate_coverage < t.sweeping:
        # What is shared is a sliver of the candidate: a file move, a mass reformat or a
        # regenerated file takes every line with it, and that is not "the same change".
        return nearby(signals)
    if not signals.same_patch and signals.candidate_cut and candidate_state != "merged":
        # An unmerged change too large to be stored whole (a branch carrying other work): how
        # much of it this change makes is unknown, so its lines cannot tell "the same change"
        # from a sliver of it. The same patch still decides; a landed one is replayed.
        return nearby(signals)
    same_change = signals.same_patch or (
        signals.query_coverage >= t.contained and signals.candidate_coverage >= t.contained
    )
    # The same rare lines removed, and they are a real part of this change (not one line taken
    # out in passing by a change that mostly adds something else) or the additions agree too.
    same_fix = (
        signals.removed_in_candidate >= t.same_fix
        and signals.distinctive_removed
        and (signals.removed_coverage >= t.removal_part or signals.added_in_candidate >= 0.3)
    )
    contained = is_contained(signals)
    landed = signals.on_target or candidate_state == "merged"
    inside_larger = is_inside_larger(signals)
    # The score alone decides only when a real part of *this* change is in the candidate: a
    # large change that merely contains a merged one is not "already done".
    shares_code = signals.same_patch or signals.query_coverage >= t.own_part or signals.on_target
    confident = shares_code and score >= decide_threshold()
    if same_change or (same_fix and not inside_larger) or (confident and not inside_larger):
        return "already-merged" if landed else "duplicate"
    if contained:
        # Inside a larger change: if that landed, so did all of this one ("Already done in #N",
        # as part of more); if it is still open, this is covered by it.
        return "already-merged" if landed else "covered"
    if signals.on_target:
        return "already-merged"
    return nearby(signals)


Override = Literal[
    "reverts",
    "backport",
    "port",
    "takes-over",
    "same-author",
    "undone",
    "other-line",
    "own-landing",
    "after-query",
    "sliver",
    "cut",
    "carries-query",
    "carries-landing",
    "carries-candidate",
    "reverted",
    "not-own",
    "carried",
    "stacked",
    "unlanded",
    "others-work",
    "restores",
    "other-version",
    "picks-landing",
    "sibling-port",
    "opened-later",
]


def overriding_rule(
    signals: Signals,
    candidate_state: str,
    proof: Proof,
    query_state: str = "open",
    direct_commit: bool = False,
) -> Override | None:
    """Which rule says the candidate cannot be "the same change" whatever its replay shows, if
    one does. One place for these, so the verdict and its reasons never disagree."""
    landed = candidate_state == "merged"
    if signals.reverts >= THRESHOLDS.reverting and signals.reverts > signals.query_coverage:
        return "reverts"
    if signals.backport:
        return "backport"  # a backport repeats a change on purpose
    if signals.port:
        return "port"  # so does a port to another release line, said as such
    if proof.sibling_port:
        return "sibling-port"  # the same landed commit picked onto two lines: two ports
    if signals.takes_over:
        # This change says it takes the candidate's work over ("Carry #N"): it carries that
        # work on, it does not repeat it.
        return "takes-over"
    if signals.resubmitted and not landed:
        # The same work by the same author, opened again later: of the two open PRs this one is
        # to close, whatever else holds its commits (the newer one carries them, as it should).
        return None
    if signals.taken_over and not _refuses_takeover(landed, proof):
        # The candidate says it takes this change over: who wrote it, whose commits made it
        # and what else its branch carries are what a takeover is; the replay says how much
        # of this change went on there (`proven_verdict`).
        return None
    if signals.same_author and not landed:
        # The author's own open PR is one they know; their own *merged* change is worth
        # naming: the target has it, proven.
        return "same-author"
    if proof.own_landing or (direct_commit and signals.same_author):
        # Where this change's own commits landed (merged by hand, or rebased onto the target
        # as its author's commit with no PR of its own): this PR is merged; no other change
        # did it first.
        return "own-landing"
    if proof.after_query:
        # This change landed first: a change that landed later, or was opened later, cannot
        # have done it first.
        return "after-query"
    if landed and proof.in_query_base:
        return "undone"  # made, and undone before this change started
    if landed and proof.reverted_by:
        return "reverted"  # made, and reverted since: the target does not have it
    if landed and proof.other_line:
        return "other-line"  # made on another release line: a port
    if landed and proof.picks_landing:
        return "picks-landing"  # its commit picked onto a base without it: a port
    if landed and proof.unlanded:
        return "unlanded"  # what its head holds is not what landed, or not where
    if landed and proof.others_work:
        return "others-work"  # its branch's commits that did it are someone else's
    if proof.restores:
        return "restores"  # a revert brings back what something earlier had made
    if competing_bump(proof, landed):
        return "other-version"  # the same package pinned to another version: competing bumps
    if (
        not landed
        and not signals.same_patch
        and signals.candidate_coverage < THRESHOLDS.sweeping
        and not proof.replay.created_the_pages
    ):
        # An unmerged branch of which this change is a sliver: a branch that squashed or
        # merged the target in carries everything; it proves nothing about this change.
        # (Sharing no line, two PRs that create the same new pages are no sliver of each
        # other: `proven_verdict` weighs them.)
        return "sliver"
    if proof.via_target:
        return "carried"  # copies of merged commits brought it, not the candidate's own work
    if (
        proof.stacked
        and not landed
        and not (candidate_state == "closed" and query_state == "merged")
    ):
        # This change is built on the candidate's unmerged commits: it carries that work, it
        # does not repeat it. (Once the candidate lands, the rest is "partly done: rebase".)
        # A takeover that landed is the exception: the closed PR's work landed through it.
        return "stacked"
    if proof.carries_query:
        # Its unmerged branch holds this change's own commits: built on this change (stacked),
        # or carrying it along after it landed. (A takeover that landed them is replayed at
        # its landing, where they are its work done.)
        return "carries-query"
    if proof.carries_landing:
        # Its change holds this change's own squash or merge commit (or a copy of it): it
        # carries what landed, it did not make it.
        return "carries-landing"
    if proof.carries_candidate and not landed:
        # This change's own commits include the candidate's landing, made on a branch the index
        # does not follow (a branch synced into another carries the landings made there): it
        # brings the candidate along, it does not repeat it.
        return "carries-candidate"
    if proof.opened_later and not landed:
        # This change landed; the candidate was opened after it (GitHub numbers PRs in order):
        # it repeats this change, it did not do it first.
        return "opened-later"
    if proof.not_own and not landed:
        # A swollen range: the commits of it that touch this change's lines are copies of
        # merged work or came in from other branches. What a PR changed is its own work.
        return "not-own"
    if not landed and not signals.same_patch and signals.candidate_cut:
        # An unmerged branch too large to be stored whole: mostly a branch carrying other
        # work, and how much of it this change makes is unknown. Its head holding this change
        # proves no more than its lines do.
        return "cut"
    return None


def _refuses_takeover(landed: bool, proof: Proof) -> bool:
    """What a candidate that says it takes this change over still cannot be: this change's
    own landing, a change after it landed (a follow-up "finishing" merged work), one undone
    since, or a landing on another line or of what its head does not hold."""
    return bool(
        proof.own_landing
        or proof.after_query
        or (landed and (proof.in_query_base or proof.other_line or proof.unlanded))
    )


def proven_verdict(
    signals: Signals,
    candidate_state: str,
    proof: Proof,
    query_state: str = "open",
    direct_commit: bool = False,
    may_supersede: bool = False,
    files_supersede: bool = False,
) -> Verdict:
    """The verdict once this change has been replayed at the candidate: "already done" only
    where the candidate's own commit turned this change's hunks from not there to there, and
    "superseded" only where it made most of them, or rewrote the very lines they edit for the
    same purpose, and nothing of the rest still applies on the branch.

    Shared lines, a tip that lacks the removed lines or a high score only choose whom to
    replay; the replay decides. What it cannot show (another file, a copy, a re-indent, code
    rewritten since for another purpose) never turns. `may_supersede`: the candidate passes
    the guards a rewrite needs before it can supersede (`detector.matcher.may_supersede`);
    `files_supersede`, those of a landing that created this change's new files otherwise.
    """
    if overriding_rule(signals, candidate_state, proof, query_state, direct_commit) is not None:
        return nearby(signals)
    landed = candidate_state == "merged"
    replay = proof.replay
    if signals.resubmitted and not landed:
        return "duplicate"  # the same work proposed again later by its author: close this one
    if landed and replay.superseded:
        # A dependency bump whose lines the candidate bumped higher since: the target is past
        # it, nothing of it is left to apply (a bump bot closes its older PR as "Superseded").
        return "superseded"
    if landed and signals.regenerated:
        # A bot's block its bot generated again since: nothing of it is left to apply.
        return "already-merged"
    # The same accounting the reasons print: an identical patch decides only where the
    # candidate's landing kept it (a merge whose conflict resolution threw it away did not).
    count = HunkCount.of(replay, signals.same_patch)
    if signals.taken_over and count.done:
        # It took this change over, and some of it went on there: this change's work is done
        # there (landed) or goes on there; what the takeover left out is not work to do.
        return "already-merged" if landed else "covered"
    if count.whole and lacks_most_of_the_work(replay, count):
        # Its code is there, but most of its own work (a migration of many test files beside
        # one shared import line) is not: a landing did a part of it; an open PR is not it.
        return "partly-merged" if landed else nearby(signals)
    if count.whole:
        if landed and proof.stacked and count.others:
            # Built on the candidate's commits, which landed: what it did is carried here, and
            # the tests and docs it did not do are this change's own work, still to do.
            return "partly-merged"
        if landed:
            return "already-merged"
        return "covered" if is_inside_larger(signals) else "duplicate"
    if replay.partial and landed:
        return _part_landed(signals, proof, may_supersede)
    # A closed PR whose commits this landed change carries (a takeover): its work landed here,
    # whatever this change added beside it.
    took_over = proof.stacked and candidate_state == "closed" and query_state == "merged"
    if (
        replay.partial
        and replay.done_share >= THRESHOLDS.contained
        and (replay.left_where_it_wrote or took_over)
        and not lacks_most_of_the_work(replay, count)
    ):
        # An open PR that already makes most of this change, what it left written its own way
        # where it wrote (what remains is listed): the same change, as "contained" means
        # elsewhere; there is no landing to rebase onto. A part in a file it never touched is
        # work it did not do: then it is a part, not the change.
        return "covered" if is_inside_larger(signals) else "duplicate"
    if landed and rewritten_for_the_same_purpose(signals, proof, may_supersede):
        # It rewrote, its own way, most of the lines this change edits, for the same purpose,
        # and nothing of this change still applies on the branch: superseded by it.
        return "superseded"
    if landed and created_the_same_files(proof, files_supersede):
        # Most of this change is new files the landing created first at the same paths (the
        # same page translated twice): adding them again would not apply.
        return "superseded"
    if not landed and files_supersede and proof.replay.created_the_files:
        # Most of this change, and most of the unlanded candidate, is new files both create at
        # the same paths, each with lines of its own (the same page translated twice by two
        # people): competing versions of one change, of which one can go in.
        return "duplicate"
    return nearby(signals)


def lacks_most_of_the_work(replay: Replay, count: HunkCount) -> bool:
    """The change is many times what the candidate did of it: less than half of its own work
    by weight (`Replay.work_share`), and under a quarter of its code and test hunks, whatever
    share of its code it did. A fix done with its test still to write is done; a 21-file test
    migration sharing one import line is not. An identical patch holds all of it."""
    if count.by_identity:
        return False
    work = replay.own_work
    done = sum(1 for h in work if h.turned)
    return replay.work_share < MOST_OF_THE_WORK and done * MANY_TIMES < len(work)


def created_the_same_files(proof: Proof, files_supersede: bool) -> bool:
    """Most of this change is new files that the landing created first, with lines of its
    own, the guards of `files_supersede` hold, and the tip applies nothing of this change."""
    return files_supersede and proof.replay.created_the_files and _nothing_left(proof)


def _part_landed(signals: Signals, proof: Proof, may_supersede: bool = False) -> Verdict:
    """A landing did a real part: what the rest is on the branch's tip decides. All of it on
    the tip: done, across changes. The landing rewrote all the rest its own way as it landed,
    and nothing of it applies: superseded (it made the whole change, part as it is). Most of
    the change landed and nothing of the rest applies as it is (rewritten on the tip since,
    or in files gone): superseded, or done where nothing was rewritten. Some of it rewritten
    and some still applying: no verdict. Its author's own later PR landed the part: their
    revised version. Else partly done."""
    replay, tip = proof.replay, proof.tip
    left = Leftover.of(replay, tip.replay, tip.gone) if tip is not None else None
    if left is not None and left.done_on_tip(replay):
        # What this landing left is on the branch's tip anyway, put there by other changes
        # (git's own evidence: the lines are there): done, across those changes.
        return "already-merged"
    # What the landing made is this change's own only where its branch does not carry the
    # landing's commits (a branch cut from a copy of another PR's branch made none of it).
    most = replay.done_share > THRESHOLDS.most and not proof.carries_its_commits
    if left is not None and left.nothing_applies(replay):
        if (
            may_supersede
            and replay.rewritten_rest
            and not proof.carries_its_commits
            and _text_agrees(signals, replay)
        ):
            # The hunks it did not make as they are, it rewrote its own way at their place as
            # it landed: the same change, done its way (the part made as it is says the
            # purpose), and nothing of it applies any more (a maintainer closes it as
            # superseded by #N: fastapi #12590, two of five hunks of a page's includes made
            # as they are by #12588, the rest written its own way).
            return "superseded"
        if left.rewritten_since(replay):
            # The rest was written otherwise since: with most of the change landed, nothing
            # is left to apply, and a maintainer closes it as superseded; with a smaller part
            # landed, whether the rest is still wanted is for a maintainer to read. So too
            # where the landing holds under a quarter of its own work, its tests with its code,
            # by weight (a 2,500-line test suite beside a two-hunk fix the landing made:
            # fastapi #14293): that work is no rest to drop.
            if most and replay.work_share * MANY_TIMES >= 1:
                return "superseded"
            return nearby(signals)
        if left.gone and most and replay.done_share >= THRESHOLDS.contained:  # 70%
            # The rest is only in files the branch deleted since, and the landing holds the
            # change as "contained" means (70%): nothing is left to do. Less, and the rest is
            # work of its own that had nowhere to go (ansible #6162's security groups, beside
            # the VPC subnets #7051 made, in a module moved out of the repository).
            return "already-merged"
    elif left is not None and left.rewritten_since(replay):
        # Some of the rest still applies as text, some the tip rewrote: the part that applies
        # is mostly the change's own version of what was rewritten (read by hand on two
        # sweeps: 16 of 20 such "still to do" lists were not wanted), so no "rebase, only X is
        # left": worth knowing, no verdict.
        return nearby(signals)
    if revised_by_author(signals, proof):
        # Its author's own later PR, which landed a part: their revised version; what it left
        # out, its author left out. No "rebase, only X is left".
        return nearby(signals)
    return "partly-merged"


def rewritten_for_the_same_purpose(signals: Signals, proof: Proof, may_supersede: bool) -> bool:
    """The landing rewrote at least half of the lines this change removes (exact lines, at
    their place, where they still were just before it), text agrees on the purpose (a word
    this change brings into a string is in the landing's new strings there, or the titles
    and descriptions are alike), the guards of `may_supersede` hold, and the tip applies
    nothing of this change (`_nothing_left`)."""
    replay = proof.replay
    if not (may_supersede and replay.rewrote):
        return False
    if not _text_agrees(signals, replay):
        return False
    return _nothing_left(proof)


def _text_agrees(signals: Signals, replay: Replay) -> bool:
    """Words agree on the purpose of the lines the landing rewrote (`Replay.agreeing_words`),
    or the titles and descriptions are alike."""
    return bool(replay.agreeing_words) or signals.text_similarity >= THRESHOLDS.agreeing_text


def _nothing_left(proof: Proof) -> bool:
    """The branch's tip applies nothing of this change (every carrying hunk done, on the tip,
    rewritten there or in a file gone), and what the landing made is not its own commits
    carried on this change's branch."""
    tip = proof.tip
    if tip is None or proof.carries_its_commits:
        return False
    return Leftover.of(proof.replay, tip.replay, tip.gone).nothing_applies(proof.replay)


def revised_by_author(signals: Signals, proof: Proof) -> bool:
    """The candidate is this change's author's own PR opened after it, and it did a part of
    this change: the author's revised version, not a first step with the rest to follow."""
    return signals.same_author and proof.opened_after and proof.replay.partial


def competing_bump(proof: Proof, landed: bool) -> bool:
    """The candidate pins a package this change pins to another version: two bumps of one
    dependency compete, neither is the other. A landed bump at least as high as this one's
    is no competitor: it supersedes this bump (that case is not decided here)."""
    competing = proof.replay.competing_pins
    if not competing:
        return False
    return not (landed and all(at_least(pin.theirs, pin.ours) for pin in competing))


def is_contained(signals: Signals) -> bool:
    """Most of this change is in the candidate. Only when what is shared is specific: a one-line
    change of a common line (`* {@inheritdoc}`) sits inside hundreds of unrelated changes."""
    t = THRESHOLDS
    return signals.query_coverage >= t.contained and (
        signals.distinctive_shared or signals.same_patch
    )


def is_inside_larger(signals: Signals) -> bool:
    """Contained in a candidate that also does at least as much again."""
    return is_contained(signals) and signals.candidate_coverage < THRESHOLDS.larger


def nearby(signals: Signals) -> Verdict:
    if (
        signals.query_coverage > 0
        or signals.candidate_coverage > 0
        or signals.hunk_overlap > 0
        or signals.symbol_overlap > 0
        or signals.file_overlap > 0
    ):
        return "overlap"
    return "related"
