"""What the matcher knows about a change, and what it concludes: plain typed values, no I/O."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from detector.replay import Replay

Verdict = Literal[
    "already-merged", "superseded", "duplicate", "covered", "partly-merged", "overlap", "related"
]
VERDICT_ORDER: dict[str, int] = {
    "already-merged": 0,
    "superseded": 1,  # a landing rewrote the lines this change edits: it cannot go in as it is
    "duplicate": 2,
    "covered": 3,
    "partly-merged": 4,
    "overlap": 5,
    "related": 6,
}
DECIDING_VERDICTS = frozenset(
    {"already-merged", "superseded", "duplicate", "covered", "partly-merged"}
)
# A PR's states. "unmerged": not merged, and nothing tells whether it is open or closed (no
# GitHub metadata, and no test merge of GitHub's shows it open); it is treated as an open PR
# (checked, swept, a candidate), never as closed.
OPEN_STATES = frozenset({"open", "unmerged"})


# E-mails that many people share because git was never configured: they identify nobody.
_PLACEHOLDER_EMAIL_DOMAINS = (
    "@localhost",
    "@localhost.localdomain",
    "@example.com",
    "@example.org",
    "@example.net",
    "(none)",
)


def identities(author: str | None, email: str | None) -> frozenset[str]:
    """An author as every name that identifies them: the login or git name, and the e-mail
    unless it is a placeholder that many people share."""
    names = {author.strip().lower()} if author and author.strip() else set()
    address = (email or "").strip().lower()
    if "@" in address and not address.endswith(_PLACEHOLDER_EMAIL_DOMAINS):
        names.add(address)
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class ChangeEvidence:
    """One change as the matcher sees it: sets of hashed lines, files, symbols, issues, words."""

    key: str  # "#123" for a PR, a short sha for a commit, "this change" for a query
    number: int | None = None
    commit: str | None = None
    state: str = "open"  # "merged" | "open" | "closed" | "unmerged" (see OPEN_STATES)
    title: str = ""
    title_from_commit: bool = False  # the title is the head commit's subject (no metadata)
    author: str | None = None
    created_at: str | None = None
    author_email: str | None = None  # of the head commit's author: ties a login to a git name
    branch: str | None = None  # where it landed (merged) or is proposed (a PR's base), if known
    base_commit: str | None = None  # where a PR's change starts (its fork point)
    head_commit: str | None = None  # a PR's head
    # Where a landing of several commits (a rebase) starts: the first landed commit's parent.
    landing_base: str | None = None
    merged_at: str | None = None  # when it landed, if it did
    removed: frozenset[int] = frozenset()
    added: frozenset[int] = frozenset()
    # Lines a file's diff both removes and adds (moved or re-indented there): lines it keeps.
    kept: frozenset[int] = frozenset()
    # The files it changes; a candidate read for a query, only those of the query's files
    # (by their new names or old ones), which every comparison of files is about.
    files: frozenset[str] = frozenset()
    old_paths: frozenset[str] = frozenset()  # the names its renamed files had
    added_files: frozenset[str] = frozenset()  # of `files`, those it creates
    symbols: frozenset[tuple[str, str]] = frozenset()  # (path, qualified name)
    hunks: frozenset[int] = frozenset()
    issues: frozenset[str] = frozenset()
    # The PRs its title or description says it takes over ("Carry #12", "Finishes #12").
    takes_over: frozenset[int] = frozenset()
    patch_id: str | None = None
    # Stored cut (a huge change: the lines of its first files only); its whole size is unknown.
    truncated: bool = False
    terms: Mapping[str, float] = field(default_factory=dict)
    code_terms: Mapping[str, float] = field(default_factory=dict)  # identifiers its lines use
    # Set for a query only: the words of its title's subject that few PRs use
    # (`detector.text.rare_subject_words`), what a title sharing one of them is about too.
    rare_title_words: frozenset[str] = frozenset()
    # When set, `removed`/`added` hold only the lines shared with the query (all a comparison
    # needs), and these are the weights of the whole sides, precomputed at index time.
    removed_total: float | None = None
    added_total: float | None = None
    file_count: int | None = None  # how many files it changes (where `files` may hold fewer)
    lines_changed: int | None = None  # lines it adds and removes, all files (None: unknown)

    @property
    def identities(self) -> frozenset[str]:
        """Who wrote it, as every name we have (login or git name, and a real e-mail)."""
        return identities(self.author, self.author_email)

    def side_weight(self, side: str, weights: LineWeights) -> float:
        total = self.removed_total if side == "-" else self.added_total
        if total is not None:
            return total
        return weights.sum(self.removed if side == "-" else self.added)


@dataclass(frozen=True, slots=True)
class LineWeights:
    """Rarity of each normalised line: common lines (`return None`, `}`) weigh almost nothing."""

    document_frequency: Mapping[int, int]
    total: int
    # Each weight once worked out, by line: a sweep's queries weigh the same lines against one
    # `LineWeights` many times (the same float every time).
    known: dict[int, float] = field(default_factory=dict, compare=False, repr=False, kw_only=True)

    def __call__(self, line_hash: int) -> float:
        weight = self.known.get(line_hash)
        if weight is None:
            df = self.document_frequency.get(line_hash, 0)
            weight = self.known[line_hash] = math.log((self.total + 1) / (df + 1)) + 0.05
        return weight

    def is_rare(self, line_hash: int, share: float) -> bool:
        """In at most `share` of all changes (and never fewer than 5): specific to few changes."""
        return self.document_frequency.get(line_hash, 0) <= max(5, share * self.total)

    def sum(self, hashes: frozenset[int] | set[int]) -> float:
        return sum(map(self, hashes))


@dataclass(frozen=True, slots=True)
class QueryLineWeights(LineWeights):
    """`LineWeights` that knows the sums of the query's two sides in advance.

    `detector.signals.measure` sums the query's removed and added lines anew for every
    candidate, which makes a query with many candidates cost its size times theirs (half of a
    check's matching time on a busy repository). Here the
    two sums are taken once, by `LineWeights.sum` over the very same sets (so in the same
    order, to the same float); every other weight is `LineWeights`' own.
    """

    query_removed: frozenset[int] = frozenset()
    query_added: frozenset[int] = frozenset()
    removed_sum: float = 0.0
    added_sum: float = 0.0

    @classmethod
    def of(cls, weights: LineWeights, query: ChangeEvidence) -> QueryLineWeights:
        plain = LineWeights(weights.document_frequency, weights.total, known=weights.known)
        return cls(
            weights.document_frequency,
            weights.total,
            query.removed,
            query.added,
            plain.sum(query.removed),
            plain.sum(query.added),
            known=weights.known,
        )

    def sum(self, hashes: frozenset[int] | set[int]) -> float:
        if hashes is self.query_removed:
            return self.removed_sum
        if hashes is self.query_added:
            return self.added_sum
        return LineWeights.sum(self, hashes)


@dataclass(frozen=True, slots=True)
class Landing:
    """A target-branch commit that already made (part of) the change, and its PR if known."""

    commit: str
    number: int | None
    title: str
    lines: tuple[str, ...] = ()
    author: str | None = None
    author_email: str | None = None
    mentions: frozenset[int] = frozenset()  # `#N` its message names (a landing names its PR)

    @property
    def key(self) -> str:
        """As `ChangeEvidence.key`: `#N` for a PR's landing, else the commit's short id."""
        return f"#{self.number}" if self.number is not None else self.commit[:10]


@dataclass(frozen=True, slots=True)
class PrCommit:
    """A commit of the checked PR; `landed_as` is the target commit with its patch (a
    cherry-pick or a rebase of it, by git's patch identity), None while it is still to do."""

    sha: str
    subject: str
    files: tuple[str, ...] = ()
    landed_as: str | None = None


@dataclass(frozen=True, slots=True)
class PartLanded:
    """The checked PR landed in part on `target`: its commits that landed, as copies, and
    those still to do, in its order (oldest first)."""

    target: str | None
    commits: tuple[PrCommit, ...]

    @property
    def landed(self) -> tuple[PrCommit, ...]:
        return tuple(c for c in self.commits if c.landed_as)

    @property
    def remaining(self) -> tuple[PrCommit, ...]:
        return tuple(c for c in self.commits if not c.landed_as)

    @property
    def rest_to_read(self) -> bool:
        """Some commits landed and some did not: what is left is read against the tip."""
        return bool(self.landed) and bool(self.remaining)


@dataclass(frozen=True, slots=True)
class TargetProbe:
    """How much of the change the target branch's tip already shows, and who put it there."""

    removed_gone: float  # weighted share of removed lines no longer at the tip
    added_present: float  # weighted share of added lines already at the tip
    landings: tuple[Landing, ...] = ()
    removed_weight: float = 0.0  # how much the removed lines weigh (rarity), for proportion
    added_weight: float = 0.0

    @property
    def already_there(self) -> bool:
        """The tip shows the change: its additions are there, or the lines it rewrites are gone
        and it is mostly that rewrite (a fix done differently), not a large addition."""
        if self.added_present >= 0.8 and (self.removed_weight == 0 or self.removed_gone >= 0.5):
            return True
        mostly_rewrite = self.added_weight <= 2 * self.removed_weight
        return self.removed_weight > 0 and self.removed_gone >= 0.8 and mostly_rewrite


@dataclass(frozen=True, slots=True)
class Signals:
    """Every measurement behind a finding, kept so the reasons can be shown and checked."""

    removed_in_candidate: float = 0.0  # of this change's removed lines, the share also removed
    added_in_candidate: float = 0.0  # of this change's added lines, the share also added
    candidate_removed_here: float = 0.0  # of the candidate's removed lines, share removed here
    candidate_added_here: float = 0.0  # of the candidate's added lines, share added here
    query_coverage: float = 0.0  # this change (both sides) found in the candidate
    candidate_coverage: float = 0.0  # the candidate found in this change
    reverts: float = 0.0  # this change undoes the candidate
    same_patch: bool = False
    hunk_overlap: float = 0.0
    file_overlap: float = 0.0
    symbol_overlap: float = 0.0
    shared_issue: bool = False
    text_similarity: float = 0.0
    code_similarity: float = 0.0  # the identifiers both changes' lines use (tf-idf cosine)
    removed_coverage: float = 0.0  # the shared removed lines as a share of the whole change
    proximity: float = 0.0  # 1 for the PR just before this one, 0.2 less per tenfold gap
    recent_overlap: float = 0.0  # proximity x query coverage: recent *and* sharing code
    same_author: bool = False
    # The same author's open PRs with the same head commit or patch: one is a resubmission of
    # the other, and the older is the one to close (the newer is the one they keep working on).
    resubmitted: bool = False  # the candidate is this change resubmitted later
    resubmits: bool = False  # this change resubmits the candidate, an earlier open PR
    # The same bot's later PR over the same lines landed: it generated them again since.
    regenerated: bool = False
    distinctive_removed: bool = False  # a shared removed line is rare: specific to few changes
    distinctive_shared: bool = False  # a shared line on either side is rare
    on_target: bool = False  # replayed: the candidate's landing put this change on the target
    backport: bool = False  # this change is for an older release line than the candidate's
    port: bool = False  # for another branch than the candidate, and one says it ports a change
    takes_over: bool = False  # this change says it takes over the candidate ("Carry #N")
    taken_over: bool = False  # the candidate says it takes over this change
    # Both create a file at the same path (not one every PR of a kind adds): the same page
    # translated twice, the same module written twice. Worth a replay, whatever lines differ.
    same_new_file: bool = False
    # The rare words of this change's title that the candidate's title names too ("license",
    # "outerHTML"): both say they are about the same thing, which a maintainer reads at once.
    same_subject: tuple[str, ...] = ()
    replayed: bool = False  # this change's hunks were replayed at the candidate
    replay_done: float = 0.0  # of the hunks that carry the change, the share the candidate did
    replay_complete: bool = False  # ...all of them
    candidate_cut: bool = False  # the candidate is stored cut: its share found here is unknown
    made_again: bool = False  # replayed: taken off after this landing, made again by a later one
    landed_part: bool = False  # replayed: a part landed here, the rest rewritten on the tip since
    bumped_past: bool = False  # replayed: the landing bumped every version this change bumps higher

    @property
    def shares_lines(self) -> bool:
        """Any code in common: the same patch, a shared line, or the target holding it."""
        return bool(
            self.same_patch
            or self.on_target
            or self.query_coverage > 0
            or self.candidate_coverage > 0
        )

    @property
    def unshared_code_similarity(self) -> float:
        """Identifiers in common, where no line is: the same fix written differently touches
        the same names. Where lines are shared they are the evidence, and names add nothing
        a maintainer could check."""
        return 0.0 if self.shares_lines else self.code_similarity


@dataclass(frozen=True, slots=True)
class RemainingHunk:
    """A hunk of the change that a candidate did not do: its lines on the change's new side
    (`Replay.residual` says the same in words)."""

    path: str
    first_line: int
    last_line: int
    new_file: bool = False


@dataclass(frozen=True, slots=True)
class Finding:
    """One earlier change that covers, duplicates or touches the query, with its evidence."""

    verdict: Verdict
    score: float
    candidate: ChangeEvidence
    signals: Signals
    reasons: tuple[str, ...]
    shared_removed: tuple[str, ...] = ()
    shared_added: tuple[str, ...] = ()
    shared_files: tuple[str, ...] = ()
    shared_symbols: tuple[str, ...] = ()
    residual: tuple[str, ...] = ()  # what the candidate did not do, where it did a part
    remaining: tuple[RemainingHunk, ...] = ()  # the same, hunk by hunk, as values
    # Files of what the candidate did not do that the branch's tip no longer has: nothing of
    # it is left to apply there (without them, a part landed and nothing else remains).
    gone_files: tuple[str, ...] = ()
    # Hunks of what it did not do that the tip has written otherwise since: not to apply as
    # they stand (hunk by hunk, as `remaining`).
    rewritten: tuple[RemainingHunk, ...] = ()
    also_identical: tuple[int, ...] = ()  # later PRs with the identical patch, folded in here
    also_opened_as: tuple[int, ...] = ()  # other PRs of the same head commit, folded in here
    # Where the checked PR landed in part: (its commit, the target commit with its patch).
    landed_commits: tuple[tuple[str, str], ...] = ()

    @property
    def decides(self) -> bool:
        return self.verdict in DECIDING_VERDICTS


@dataclass(frozen=True, slots=True)
class Proof:
    """What replaying the change at a candidate showed, and where that candidate's change sits
    in history relative to this one."""

    replay: Replay
    in_query_base: bool = False  # the landing is in this change's base: done, then undone since
    other_line: str | None = None  # the landing is not on this change's line but on this one
    carries_query: bool = False  # the candidate's commits include this change's own head
    via_target: bool = False  # the candidate's branch got this change from the target branch
    after_query: bool = False  # the candidate landed after this (merged) change landed
    own_landing: bool = False  # the candidate is the commit where this change's own commits landed
    stacked: bool = False  # this change's branch holds the candidate's commits (built on it)
    unlanded: bool = False  # merged, but no landing is known and its head is on no branch
    # Landed as its branch's own commits, but the commits of that range that touch what turned
    # are all by other people: a fork's branch that carried upstream work along.
    others_work: bool = False
    restores: bool = False  # it reverts a later commit: what it brought back was made before
    reached_after_query: bool = False  # landed elsewhere; a merge brought it here after this landed
    # Its change holds this (landed) change's own landing commit, picked or rebased along: a
    # squash `Title (#Q)`, a merge, a merge tool's `bug #Q ...`.
    carries_landing: bool = False
    # Unmerged, and the commits of its range that touch what turned are none of its own:
    # copies of commits already on a target, merged in from other branches, a squashed merge.
    not_own: bool = False
    # This unmerged change's own commits include a copy of the candidate's landing commit (its
    # `Title (#M)` subject), on a base that lacks the landing: a port of it.
    picks_landing: bool = False
    # This unmerged change and the unmerged candidate, from different bases, both pick the same
    # landed commit: ports of it to two lines.
    sibling_port: bool = False
    # This change's own range holds the unmerged candidate's landing commit (`Title (#C)`),
    # made on a branch the index does not follow: it carries the candidate along.
    carries_candidate: bool = False
    # This change landed and the unmerged candidate was opened after it (a higher PR number).
    opened_later: bool = False
    # The candidate was opened after this change (a higher PR number), whatever their states.
    opened_after: bool = False
    # This change's range holds copies of every commit the merged candidate landed (the same
    # author, the same moment): what of it the landing made is the candidate's work carried.
    carries_its_commits: bool = False
    # A later landing on the same line that made the whole change again, the change having
    # been taken off (reverted) after this landing: what the line holds is that one's.
    made_again_by: str | None = None
    # The commit (or its PR, `#M`) that reverted this landing since, where the branch's tip
    # does not hold what the landing did: the change is not on the target any more.
    reverted_by: str | None = None
    # A landing that did a part: the change replayed at its branch's tip (from its own base),
    # so what another change put there since, or before, is not listed as still to do.
    tip: TipReplay | None = None


@dataclass(frozen=True, slots=True)
class TipReplay:
    """The change replayed at the tip of the branch it is for, from its own base: which of the
    hunks a landing left are on that branch anyway, and which commit put each there."""

    replay: Replay
    branch: str  # the branch's name, for the reasons
    gone: frozenset[str] = frozenset()  # files the change edits that the tip no longer has
    # Files the change edits that the tip has under another name (moved since its base, most
    # of their text kept), by the change's path: its hunks there were replayed in that file.
    moved: Mapping[str, str] = field(default_factory=dict)
    # (path, first line) of a hunk -> the commit that put it there: "#135" or a short sha
    landed_by: Mapping[tuple[str, int], str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RestAtTip:
    """What git says of a part-landed PR's commits without a copy (`PartLanded.remaining`):
    each one's own patch replayed at the tip of the branch the copies are on, by sha (one left
    out could not be judged), and those the PR's own later commits undid (its head has every
    file of theirs as its base had it)."""

    replays: Mapping[str, TipReplay] = field(default_factory=dict)
    undone: frozenset[str] = frozenset()
