"""`prdup index`: record a repository's merged and proposed changes in the index.

Merged PRs come from each target branch's first-parent history; open and closed PRs from PR refs
(`refs/pull/N/head`, `refs/remotes/*/pr/N`). Changes are written a batch per transaction, so
an interrupted run leaves a consistent index and the next run resumes where it stopped. Each
hunk's symbol is the function or class git's own hunk header names (`index.git.hunk_symbols`): no
file is parsed at index time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import git

from detector.evidence import identities
from detector.model import NotADiff
from detector.signals import is_bot, is_release_line
from index.config import Settings
from index.errors import EmptyRepository
from index.git import gitsource, state_estimate
from index.git.diff_budget import ListedFile, PairBudget
from index.git.landing_branches import LandingBranch, landing_branches
from index.git.pr_titles import title_commit
from index.git.rebase_landings import (
    MAX_OWN_COMMITS,
    LineMerges,
    OwnCommit,
    PartLanding,
    RebaseLanding,
    TargetCommit,
    UnlandedPull,
    decode_own_commits,
    encode_own_commits,
    find_landings,
)
from index.git.state_estimate import StateClues
from index.git.stored_diff import StoredChange, parse_read_in_part, parse_stored
from index.metadata import (
    BRANCH_SYNC,
    MERGED_BRANCH,
    PULLED_BRANCH,
    PullMetadata,
    earlier,
    instant_or_zero,
    landing_pr,
    linked_issues,
    load_prs_json,
    names_pr,
)
from index.questions.changes import whole_patch_id
from index.storage import identity
from index.storage.change_rows import ChangeRecord
from index.storage.code_model import code_word_counter, fill_code_words
from index.storage.landing_rows import PartLandingRow
from index.storage.store import IndexStore, default_db_path

# A merge subject that names a PR in any way (`#N`, `pr/N`, `Merge branch 'hotfix/#6464-x'`):
# the PR's landing by name, recorded as it is.
_NAMES_A_PR = re.compile(r"(?:#|(?<![\w.])(?:pr|pull|merge)[-/_]?)\d+", re.IGNORECASE)

MAX_PR_COMMITS = 5000  # a PR head that needs a longer walk to reach a branch is not a PR diff
BATCH = 100  # changes per transaction: an interrupted run loses at most this much work

# (phase, done, total or None): called after each batch and at each finishing step.
Progress = Callable[[str, int, "int | None"], None]
_T = TypeVar("_T")


def _brings_a_branch(commit: gitsource.LoggedCommit) -> bool:
    """A merge that names no PR and syncs no branch: `_index_brought` records what it brought
    instead of it, and of it only its conflict resolution's own lines."""
    subject = commit.message.partition("\n")[0]
    return (
        len(commit.parents) > 1
        and landing_pr(subject)[0] is None
        and not BRANCH_SYNC.match(subject)
        and not _NAMES_A_PR.search(subject)
    )


@dataclass
class IndexSummary:
    """What one `index` run did, for the one-line report."""

    merged: int = 0
    rebased: int = 0  # of them, PRs found landed by rebase or cherry-pick (their commits' copies)
    commits: int = 0
    open: int = 0
    closed: int = 0
    unmerged: int = 0  # not merged; open or closed unknown (no metadata, no test merge)
    unknown_states: int = 0  # PRs of the whole index whose state is unknown ("unmerged")
    landed_in_part: int = 0  # unlanded PRs some of whose commits have copies on a target
    unchanged: int = 0
    metadata_only: int = 0
    truncated: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    db_path: Path | None = None
    targets: list[str] = field(default_factory=list)  # as read: `main (origin/main)`
    warnings: list[str] = field(default_factory=list)  # why a local branch was not read
    # Branches a target merged in by name ("Merge branch 'stable'"), per target: a long-lived
    # line whose own PRs count as unmerged unless it is a target too.
    merged_branches: Counter[tuple[str, str]] = field(default_factory=Counter)
    # Per target rewound (force-pushed, reset): its changes removed as no longer on it.
    rewound: Counter[str] = field(default_factory=Counter)
    history_cut: bool = False  # read from a shallow clone: PRs merged before its cut unknown
    imported: int = 0  # PRs and comments GitHub's API gave this run (`index --github`)

    @property
    def changed(self) -> bool:
        """Whether this run wrote anything new: what decides that a CI cache is saved again."""
        new = self.merged + self.commits + self.open + self.closed + self.unmerged
        new += self.metadata_only + self.landed_in_part
        return bool(new or self.imported or self.rewound)

    def line(self) -> str:
        """The report: what was indexed and counted on its first line; what was skipped, what
        git cannot tell and what was rewound each on a line of its own below it."""
        rebased = f" ({self.rebased} landed by rebase or cherry-pick)" if self.rebased else ""
        cut = " (after a shallow clone's cut; earlier ones unknown)" if self.history_cut else ""
        parts = [
            f"{self.merged} merged PRs{rebased}{cut}",
            f"{self.open} open",
            f"{self.closed} closed",
            *([f"{self.unmerged} unmerged"] if self.unmerged else []),
            *([f"{self.landed_in_part} landed in part"] if self.landed_in_part else []),
            f"{self.commits} direct commits",
            f"{self.unchanged} unchanged",
        ]
        if self.metadata_only:
            parts.append(f"{self.metadata_only} metadata only")
        if self.truncated:
            parts.append(f"{self.truncated} stored truncated (huge)")
        read = f" {', '.join(self.targets)}:" if self.targets else ""
        lines = [f"indexed{read} " + ", ".join(parts)]
        skipped = sum(self.skipped.values())
        if skipped:
            why = ", ".join(f"{n} {reason}" for reason, n in self.skipped.most_common())
            lines.append(f"  {skipped} skipped ({why})")
        if self.unknown_states:
            lines.append(f"  {self._unknown_states()}")
        lines.extend(
            f"  {target} was rewound: {n} {'change' if n == 1 else 'changes'} no longer on it "
            "removed from the index"
            for target, n in self.rewound.items()
        )
        return "\n".join(lines)

    def _unknown_states(self) -> str:
        # The index's count, said again only where it is not this run's "N unmerged".
        which = (
            "their states are unknown"
            if self.unknown_states == self.unmerged
            else f"the states of the index's {self.unknown_states} PRs not known as merged are "
            "unknown (also those skipped or read by earlier runs)"
        )
        return (
            f"{which} (git cannot tell open from closed; each is checked as open): GitHub's "
            "metadata tells them, prdup index --github OWNER/REPO, or --prs-json FILE from "
            "`gh pr list --state all --json number,title,body,state,createdAt,closedAt,mergedAt,"
            "headRefOid,baseRefName,author`"
        )


SOURCES_UNKNOWN = "sources_unknown"  # meta: an upgraded index's title and state sources


def _quiet(phase: str, done: int, total: int | None) -> None:
    pass


class Indexer:
    """One indexing run over one repository and one index file."""

    def __init__(
        self,
        repo: git.Repo,
        store: IndexStore,
        settings: Settings,
        metadata: dict[int, PullMetadata],
        progress: Progress = _quiet,
        batch_size: int = BATCH,
    ) -> None:
        self.repo = repo
        self.store = store
        self.settings = settings
        self.metadata = metadata
        self.progress = progress
        self._landed_read, self._landed_total = 0, 0
        self.batch_size = batch_size
        self._pending: list[tuple[ChangeRecord, StoredChange]] = []
        self._head_texts: dict[str, tuple[str, str, str]] = {}  # PR head -> author, date, message
        self._lines: dict[str, str | None] = {}  # unmerged PR head -> the release line it is for
        self._own_commits: dict[str, str] = {}  # PR head -> its own commits, encoded
        self._title_subjects: dict[str, str] = {}  # PR head -> its title, where not its subject
        self._landing_merges: dict[str, tuple[str, str]] = {}  # PR head -> its merge, its date
        # PR number -> (merge, its date): a merge of its head that names no PR (`_landing_merges`)
        self._unnamed_merges: dict[int, tuple[str, str]] = {}
        self._counted_as: dict[int, str] = {}  # PR number -> the state this run counted it in
        # PRs the index held before this run: only those can be "unchanged" (a first run's
        # merged PRs, found in the history before their refs are read, are new).
        self._known_before = frozenset(store.changes.heads_by_number())
        self._clues: StateClues | None = None  # what shows PRs open or closed (`_git_state`)
        self._targets: list[str] = []
        self._known: set[str] = set()  # commits of the target's history indexed already
        # Unnamed merges' own lines (`_index_brought`), read for a batch of commits at once.
        self._resolutions: dict[str, str] = {}
        # A merge commit that lands a PR -> the e-mail of its branch's writer (`_credit_writer`)
        self._writer_emails: dict[str, str] = {}
        self.own_commits_filled = False  # PRs of an older index got their own commits
        # Target commits by file count, for PRs read in part (`_may_have_landed_whole`).
        self._commits_by_file_count: dict[int, list[int]] | None = None
        # The file sets of the target commits this run wrote (`identify_landed_in_part`).
        self._landed_files: set[tuple[int, int]] = set()
        self.most_used_words = code_word_counter()
        self.counted: list[int] = []  # changes whose code words this run counted
        self.summary = IndexSummary(db_path=store.path)
        self.changed = False

    def _mark_changed(self) -> None:
        # Rarity counts and the text model are derived from all rows; flag them stale before
        # the first write so an interrupted run still rebuilds them next time.
        if not self.changed:
            self.store.set_meta("derived_stale", "1")
        self.changed = True

    # --- target branches --------------------------------------------------------------------

    def index_target(self, target: str) -> None:
        branch = gitsource.target_branch(self.repo, target)
        assert branch is not None
        tip = branch.tip
        key = f"target:{target}"
        last = self.store.get_meta(key)
        if last == tip:
            return
        stop_at = last if last and gitsource.is_ancestor(self.repo, last, tip) else None
        if last and stop_at is None:  # rewound (force-pushed, reset): the history is read again
            self._drop_what_left(target, tip)
        known = self.store.changes.indexed_commits()
        self._known = known  # also the commits merges brought in (`_index_brought`)
        if stop_at is None and known and last != "":  # "": read from the root (`identity`)
            # A target new to this index (or rewound): its line is read from where it leaves
            # the lines read before (a release line from where it was cut), not from its root.
            stop_at = gitsource.first_parent_in(self.repo, tip, self.store.changes.target_commits())
        merged_numbers = {
            n for n, (_, state) in self.store.changes.heads_by_number().items() if state == "merged"
        }
        self._landed_total = gitsource.count_first_parent(self.repo, tip, stop_at)
        self._landed_read = 0
        start = stop_at
        while True:
            last_read = start
            pending: list[gitsource.LoggedCommit] = []
            try:
                for commit in gitsource.first_parent_log(self.repo, tip, start):
                    self._landed_read += 1
                    if isinstance(commit, gitsource.UnreadCommit):
                        self._write_landed(pending, target, merged_numbers)  # in history's order
                        pending = []
                        self._save_unreadable(commit.sha, target, commit.why, known)
                        last_read = commit.sha or last_read
                        continue
                    last_read = commit.sha
                    if commit.sha not in known:
                        pending.append(commit)
                    if len(pending) >= self.batch_size:
                        self._write_landed(pending, target, merged_numbers)
                        pending = []
            except git.GitCommandError as error:
                # A snapshot or partial clone can lack a blob: git stops the whole log there.
                # Keep what was read, record the unreadable commit, and go on after it.
                self._write_landed(pending, target, merged_numbers)
                broken = gitsource.next_first_parent(self.repo, last_read, tip)
                if broken is None or not gitsource.is_missing_object(error):
                    raise
                self._save_unreadable(broken, target)
                known.add(broken)
                start = broken
                continue
            self._write_landed(pending, target, merged_numbers)
            break
        self.store.set_meta(key, tip)

    def _drop_what_left(self, target: str, tip: str) -> None:
        """Remove what the target's history no longer holds, with everything derived from it,
        as a fresh index would lack it: its commits that left, the PRs that had landed there,
        and the unlanded PRs whose change ran from a commit that left (their fork point moved).
        A PR among them whose ref remains is read again from it by `index_pull_refs`.

        Kept are the commits another target still reaches (their row names this target), and
        what was imported from GitHub for a removed PR (`_start_over` keeps the same)."""
        others = (
            gitsource.target_branch(self.repo, name, required=False)
            for name in self.store.finished_targets()
            if name != target
        )
        tips = [tip, *(branch.tip for branch in others if branch)]
        history = gitsource.reachable_commits(self.repo, tips)
        left = [
            row for row in self.store.landings.landed_on(target) if row["landing"] not in history
        ]
        gone = {sha for row in left for sha in (row["landing"], row["head_sha"]) if sha}
        stranded = self.store.landings.unlanded_prs_based_on(gone)
        removed = {row["id"]: row for row in [*left, *stranded]}
        if not removed:
            return
        numbers = {row["number"] for row in removed.values()}
        for texts in self.store.changes.pull_texts():
            if texts["number"] in numbers:
                self._keep_imported(dict(texts))
        self._mark_changed()
        with self.store.batch():  # all of it or none: a rerun finds the rest again
            for change_id in removed:
                self.store.changes.delete(change_id)
        if left:
            self.summary.rewound[target] += len(left)

    def _keep_imported(self, row: Mapping[str, Any]) -> None:
        """A removed PR's texts, dates and closed state, when they came from GitHub (only
        imported metadata names a base branch): its ref, read again, applies them."""
        number = row["number"]
        if row["base_ref"] is None or number in self.metadata:
            return  # git's own, told again by the ref; or newer metadata given to this run
        self.metadata[number] = kept_metadata(row)

    def _write_landed(
        self, commits: list[gitsource.LoggedCommit], target: str, merged_numbers: set[int]
    ) -> None:
        self._read_resolutions(commits)
        for commit in commits:
            self._index_landed(commit, target, merged_numbers)
        self._dispatch()
        self.progress(f"history of {target}", self._landed_read, self._landed_total)

    def _save_unreadable(
        self,
        sha: str | None,
        target: str,
        why: str = "git object missing",
        known: set[str] | None = None,
    ) -> None:
        """Record a commit that could not be read as skipped, and count it; a record whose
        commit id is unknown, or already indexed, is only counted."""
        self.summary.skipped[why] += 1
        if sha is None or (known is not None and sha in known):
            return
        if known is not None:
            known.add(sha)
        record = ChangeRecord(
            kind="commit",
            state="merged",
            source="direct",
            sha=sha,
            merge_commit=sha,
            target=target,
            status="skipped",
            skip_reason=why,
        )
        self._mark_changed()
        self.store.changes.save(record, None)

    def _index_landed(
        self,
        commit: gitsource.LoggedCommit,
        target: str,
        merged_numbers: set[int],
        reached: tuple[str, ...] = (),
    ) -> None:
        """Record one commit of a target's history; `reached`: for a commit a merge brought
        in, what the target already held before that merge (`_index_brought`)."""
        subject, _, rest = commit.message.partition("\n")
        number, how = landing_pr(subject)
        if how == "merge-commit" and len(commit.parents) < 2:
            number, how = None, "direct"
        merged_in = MERGED_BRANCH.match(subject) if number is None else None
        if merged_in and len(commit.parents) > 1 and not reached:
            self.summary.merged_branches[(target, merged_in.group(1))] += 1
        if number is None and len(commit.parents) > 1 and BRANCH_SYNC.match(subject):
            self.summary.skipped["branch sync merge"] += 1
            return
        if _brings_a_branch(commit):
            self._index_brought(commit, target, merged_numbers, (*reached, commit.parents[0]))
            return
        if number is not None and number in merged_numbers:
            # The same PR landed again on another target (a merge-up or backport): its change
            # is indexed already, and a second copy would only echo it as a separate finding.
            self.summary.skipped["PR landed again on another target"] += 1
            return
        meta = self.metadata.get(number) if number is not None else None
        title = subject
        if how == "merge-commit":
            title = rest.strip().split("\n", 1)[0] or subject  # GitHub puts the title there
        elif how == "squash":
            title = re.sub(r"\s*\(#\d+\)\s*$", "", subject)
        record = ChangeRecord(
            kind="pr" if number is not None else "commit",
            number=number,
            state="merged",
            source=how,
            sha=commit.sha,
            merge_commit=commit.sha,
            head_sha=commit.parents[1] if len(commit.parents) > 1 else None,
            base_sha=commit.parents[0] if commit.parents else None,
            target=target,
            title=title,
            body=rest.strip() or None,
            author=commit.author,
            created_at=commit.authored_at,
            merged_at=commit.committed_at,
            issues=linked_issues(commit.message),
        )
        if number is not None and len(commit.parents) > 1:
            self._credit_writer(record, commit, meta)
        if meta is not None:
            _apply_metadata(record, meta, keep_state=True)
        diff = commit.diff
        if len(commit.parents) > 1 and not diff.strip():
            # The merge brought nothing: the same change had landed before it. Record what the
            # PR proposed (its head against its fork point), so that earlier PR can be found.
            proposed = self._proposed_change(commit.parents[0], commit.parents[1])
            if proposed is not None:
                record.base_sha, diff = proposed
        if self._stage(record, diff) and number is not None:
            merged_numbers.add(number)
            self.summary.merged += 1
        elif number is None and record.status == "indexed":
            self.summary.commits += 1

    def _credit_writer(
        self, record: ChangeRecord, merge: gitsource.LoggedCommit, meta: PullMetadata | None
    ) -> None:
        """A PR landed by a merge commit is its branch's writer's, opened when they started
        it, not the merger's on the day of the merge: the same-author rules (a resubmission,
        a follow-up, a landing matched by author) ask who wrote the work. Metadata that names
        both says it better, and spares the git call."""
        if meta is not None and meta.author and meta.created_at:
            return
        writer = gitsource.branch_writer(self.repo, merge.parents[1], merge.parents[0])
        if writer is None:
            return
        record.author, record.created_at = writer.name, writer.started_at
        self._writer_emails[merge.sha] = writer.email

    def _index_brought(
        self,
        merge: gitsource.LoggedCommit,
        target: str,
        merged_numbers: set[int],
        reached: tuple[str, ...],
    ) -> None:
        """A merge that names no PR ("Merge branch '1.x'", "Merge remote-tracking branch
        'upstream/master' into feature", a docs branch's merge) is no change of its own: its
        first-parent diff is what the merged branch's commits made, and "already done in" must
        name those, not the merge that brought them. So the commits it brought (the merged
        branch's own line, down to what the target held) are recorded as the target's own are:
        a PR's merge or squash lands that PR, another commit is a direct commit. The merge
        itself is a direct commit only for the lines its conflict resolution wrote that
        neither side had (`gitsource.merge_resolution`)."""
        brought: list[gitsource.LoggedCommit] = []
        try:
            for commit in gitsource.brought_in(self.repo, merge.parents[1], reached):
                if isinstance(commit, gitsource.UnreadCommit):
                    self._save_unreadable(commit.sha, target, commit.why, self._known)
                elif commit.sha not in self._known:
                    self._known.add(commit.sha)
                    brought.append(commit)
        except git.GitCommandError:
            # A snapshot that lacks an object of the merged branch: what was read is kept,
            # the rest of that branch is unknown (as a target's history is cut there).
            self.summary.skipped["merged branch unreadable"] += 1
        self._read_resolutions(brought)  # of the merges among them, brought in turn
        for commit in brought:
            self._index_landed(commit, target, merged_numbers, reached)
        own = self._resolutions.pop(merge.sha, None)
        if own is None:
            own = gitsource.merge_resolution(self.repo, merge.sha)
        if own:
            self._index_landed(replace(merge, parents=merge.parents[:1], diff=own), target, set())

    def _read_resolutions(self, commits: list[gitsource.LoggedCommit]) -> None:
        """The own lines of the merges among `commits` that `_index_brought` will record,
        through one git process: a git per merge costs minutes on a history of thousands."""
        merges = [c.sha for c in commits if _brings_a_branch(c) and c.sha not in self._resolutions]
        # A missing object stops git: each merge is then read on its own (`_index_brought`).
        with contextlib.suppress(git.GitCommandError):
            self._resolutions.update(gitsource.merge_resolutions(self.repo, merges))

    def _proposed_change(self, target_parent: str, head: str) -> tuple[str, str] | None:
        """(fork point, diff) of a merged branch's own change, None if it has none."""
        base = gitsource.merge_base(self.repo, target_parent, head)
        if base is None or base == head:
            return None
        try:
            return base, gitsource.diff_between(self.repo, base, head)
        except git.GitCommandError:  # a missing object: keep the (empty) landed diff
            return None

    # --- PR refs ----------------------------------------------------------------------------

    def index_pull_refs(self, targets: list[str], only: set[int] | None = None) -> None:
        self._targets = targets
        known = self.store.changes.heads_by_number()
        indexed = frozenset(head for head, _ in known.values() if head)
        refs, missing = gitsource.pull_refs(self.repo, indexed)
        if only is not None:
            refs = [pull for pull in refs if pull.number in only]
            missing = [pull for pull in missing if pull.number in only]
        if missing:
            self.summary.skipped["head object missing"] += len(missing)
            self._save_missing_heads([pull for pull in missing if pull.number not in known])
        if not refs:
            return
        todo: list[gitsource.PullRef] = []
        landed_heads: list[tuple[int, str]] = []
        for pull in refs:
            head, state = known.get(pull.number, (None, ""))
            if state == "merged" or head == pull.head:
                if pull.number in self._known_before:
                    self.summary.unchanged += 1
                if state == "merged" and head is None:
                    landed_heads.append((pull.number, pull.head))
                continue
            todo.append(pull)
        self.store.changes.set_heads(landed_heads)
        if not todo:
            return
        # PRs that no metadata describes take their title from the head commit: read them all
        # in one git call.
        self._head_texts = gitsource.commit_texts(
            self.repo, [pull.head for pull in todo if self._untitled(pull.number)]
        )
        # A PR is its author's, not the bot's that pushed fixes on top of it: the same-author
        # rules (a follow-up, a resubmission) ask who wrote the work.
        bots = [head for head, (author, _, _) in self._head_texts.items() if is_bot(author)]
        for head, person in gitsource.people_below(self.repo, bots, targets).items():
            _, date, message = self._head_texts[head]
            self._head_texts[head] = (person, date, message)
        forks = ForkPoints(
            self.repo,
            targets,
            [pull.head for pull in todo],
            {pull.number: pull.head for pull in refs},
        )
        pairs: list[tuple[str, str]] = []
        plan: dict[str, list[tuple[gitsource.PullRef, str, str]]] = {}
        for pull in todo:
            base, state = forks.base_of(pull.head, pull.number)
            meta = self.metadata.get(pull.number)
            if base is None:
                if not self._claim_fast_forward(pull):
                    self._save_skipped_ref(pull, state, meta, forks.why_not(pull.head))
                continue
            pairs.append((pull.head, base))
            plan.setdefault(pull.head, []).append((pull, base, state))
            if state != "merged":
                self._lines[pull.head] = forks.release_line_of(base)
        self._own_commits = _dated_own_commits(self.repo, forks, list(plan))
        self._title_subjects = self._first_subjects(
            [
                head
                for head, pulls in plan.items()
                if any(self._untitled(p.number) for p, *_ in pulls)
            ]
        )
        self._landing_merges, unnamed = _landing_merges(self.repo, forks, plan)
        self._unnamed_merges = {
            pull.number: unnamed[head]
            for head, pulls in plan.items()
            if head in unnamed
            for pull, _, _ in pulls
        }
        # Newest base first (the order rows are numbered in; it once served a syntax-tree cache).
        pairs.sort(key=lambda pair: forks.times.get(pair[1], 0), reverse=True)
        done: set[str] = set()
        diffs = enumerate(self._pair_diffs(pairs, plan), 1)
        for chunk in _batched(diffs, self.batch_size):
            for _, found in chunk:
                done.add(found.head)
                diff, listed = found.diff, found.listed
                if listed is not None and self._may_have_landed_whole(listed):
                    with contextlib.suppress(git.GitCommandError):  # else as git printed it
                        base = plan[found.head][0][1]  # the fork point git was given
                        diff, listed = gitsource.diff_between(self.repo, base, found.head), None
                for pull, base, state in plan.get(found.head, []):
                    self._index_ref(pull, base, state, diff, listed)
            self._dispatch()
            self.progress("PR diffs", chunk[-1][0], len(pairs))  # refs whose change is read
        for head, pulls in plan.items():
            if head not in done:  # diff-tree printed nothing: the PR changes nothing
                for pull, base, state in pulls:
                    self._index_ref(pull, base, state, "")
        self._dispatch()

    def land_by_unnamed_merges(self) -> None:
        """A merged PR that no other rule lands (a merge or commit that names it, copies of its
        commits, its whole patch, a commit that closes it) is landed by the merge of its head
        that names no PR (`_landing_merges`): where it was pulled from its fork, or merged
        into a line by branch name; not when that merge lands a PR of another head already
        (a commit lands one change; PRs opened from the same head share it, as they share a
        merge that names them). Such a merge on a target's first-parent line had been
        indexed as a direct commit: the PR is that change, so the commit's row goes, as a
        fast-forwarded or rebased PR takes over its commit's."""
        if not self._unnamed_merges:
            return
        rows = self.store.query(
            "SELECT number, merge_commit, state, status FROM changes WHERE kind = 'pr'"
        )
        unlanded = {
            row["number"]
            for row in rows
            if row["state"] == "merged" and row["status"] == "indexed" and not row["merge_commit"]
        }
        landing_of: dict[str, set[int]] = {}
        for row in rows:
            if row["merge_commit"]:
                landing_of.setdefault(row["merge_commit"], set()).add(row["number"])
        for number, (merge, merged_at) in self._unnamed_merges.items():
            same_head = {n for n, (m, _) in self._unnamed_merges.items() if m == merge}
            if number not in unlanded or landing_of.get(merge, set()) - same_head:
                continue
            self.store.changes.update_metadata(
                number, {"merge_commit": merge, "merged_at": merged_at}, ()
            )
            self._mark_changed()
            for row in self.store.query(
                "SELECT id FROM changes WHERE kind = 'commit' AND sha = ?", (merge,)
            ):
                self.store.changes.delete(row["id"])
                self.summary.commits -= min(1, self.summary.commits)

    def _pair_diffs(
        self, pairs: list[tuple[str, str]], plan: dict[str, list]
    ) -> Iterator[gitsource.PairDiff]:
        """Diffs of every (head, base) pair through `git diff-tree --stdin`, each read up to
        its line limit (`index.git.diff_budget`): when git is stopped inside a pair past it, or
        stops at an unreadable blob (that pair is then tried alone), the stream restarts after
        that pair."""
        remaining = list(dict.fromkeys(pairs))
        # Only a head every PR of which is unmerged has a limit: what landed keeps its whole
        # patch identity (a PR past `max_changed_lines` is cut from a diff read whole).
        limits: dict[str, int] = {}
        for head, _ in remaining:
            records = [self._ref_record(*planned) for planned in plan[head]]
            if all(record.state != "merged" for record in records):
                limits[head] = max(self._line_limit(record) for record in records)
        while remaining:
            order = {head: i for i, (head, _) in enumerate(remaining)}
            last = -1
            budget = PairBudget(limits, self.settings.is_ignored)
            try:
                for found in gitsource.diff_pairs_within(self.repo, remaining, budget):
                    last = order[found.head]
                    yield found
                if budget.stopped is None:
                    return
                remaining = remaining[last + 1 :]
            except git.GitCommandError as error:
                if not gitsource.is_missing_object(error):
                    raise
                remaining = remaining[last + 1 :]
                head, base = remaining.pop(0)
                try:
                    yield gitsource.PairDiff(head, gitsource.diff_between(self.repo, base, head))
                except git.GitCommandError:
                    for pull, _, state in plan.pop(head, []):
                        meta = self.metadata.get(pull.number)
                        self._save_skipped_ref(pull, state, meta, "git object missing")

    def _claim_fast_forward(self, pull: gitsource.PullRef) -> bool:
        """A PR landed by fast-forward is its head commit on the target: relabel that commit."""
        rows = self.store.query(
            "SELECT id FROM changes WHERE kind = 'commit' AND sha = ?", (pull.head,)
        )
        if not rows:
            return False
        self.store.changes.relabel_commit_as_pr(
            rows[0]["id"], pull.number, pull.head, "fast-forward"
        )
        self.summary.merged += 1
        self.summary.commits -= 1 if self.summary.commits else 0
        self._mark_changed()
        return True

    def _ref_record(self, pull: gitsource.PullRef, base: str, state: str) -> ChangeRecord:
        record = ChangeRecord(
            kind="pr",
            number=pull.number,
            state=self._git_state(pull.number, state),
            source="ref",
            sha=pull.head,
            head_sha=pull.head,
            base_sha=base,
            own_commits=self._own_commits.get(pull.head, ""),
            fork_line=self._lines.get(pull.head) if state != "merged" else None,
        )
        landing = self._landing_merges.get(pull.head) if state == "merged" else None
        if landing is not None:
            record.merge_commit, record.merged_at = landing
        meta = self.metadata.get(pull.number)
        if meta is not None:
            _apply_metadata(record, meta, keep_state=False)
        return record

    def _index_ref(
        self,
        pull: gitsource.PullRef,
        base: str,
        state: str,
        diff: str,
        listed: tuple[ListedFile, ...] | None = None,
    ) -> None:
        record = self._ref_record(pull, base, state)
        if record.title is None:
            record.title, record.body, record.author, record.created_at = self._head_text(pull.head)
            record.title_source = "commit"
            record.issues = linked_issues(record.body) + linked_issues(record.title)
        if listed is None and (not diff or diff.isspace()):  # (strip() would copy a huge diff)
            record.status, record.skip_reason = "skipped", "empty diff"
            self._mark_changed()
            self.store.changes.save(record, None)
            self.summary.skipped["empty"] += 1
            return
        if self._stage(record, diff, listed):
            setattr(self.summary, record.state, getattr(self.summary, record.state) + 1)
            self._counted_as[pull.number] = record.state

    def _may_have_landed_whole(self, listed: tuple[ListedFile, ...]) -> bool:
        """Whether a PR read only in part (`index.git.diff_budget`) needs its whole diff after
        all: its patch identity is what finds a landing by rebase (`match_rebased`), and a
        landed commit with its patch changes the same files."""
        paths = {file.path for file in listed if not self.settings.is_ignored(file.path)}
        if not paths:
            return False
        if self._commits_by_file_count is None:  # read once, after the targets' history
            self._commits_by_file_count = self.store.changes.commits_by_file_count()
        same_count = self._commits_by_file_count.get(len(paths), [])
        return bool(same_count) and self.store.changes.any_changes_exactly(same_count, paths)

    def _save_missing_heads(self, pulls: list[gitsource.PullRef]) -> None:
        """Record why PRs never read were skipped: their head commit is not in the repository
        (a partial fetch, a pruned fork). Without a sha (git cannot read it): once fetched, a
        run reads them; a PR read before keeps what was read."""
        for pull in pulls:
            record = ChangeRecord(
                kind="pr",
                number=pull.number,
                state=self._git_state(pull.number, "unmerged"),
                source="ref",
                status="skipped",
                skip_reason=f"head commit {pull.head[:12]} is missing from the repository "
                f"(fetch {pull.ref} again)",
            )
            meta = self.metadata.get(pull.number)
            if meta is not None:
                _apply_metadata(record, meta, keep_state=False)
            self._mark_changed()
            self.store.changes.save(record, None)

    def _git_state(self, number: int, state: str) -> str:
        """The state git shows: "merged", else "open" where a recent test merge of GitHub's
        shows it (`StateClues.shows_open`: an estimate), else "unmerged"."""
        if state != "unmerged":
            return state
        return "open" if self._state_clues().shows_open(number) else "unmerged"

    def _state_clues(self) -> StateClues:
        if self._clues is None:
            resolved = (
                gitsource.target_branch(self.repo, name, required=False) for name in self._targets
            )
            tips = frozenset(branch.tip for branch in resolved if branch)
            self._clues = StateClues(
                now=gitsource.newest_commit_time(self.repo),
                test_merges=gitsource.test_merges(self.repo) if tips else {},
                tips=tips,
                targets_moved_at=max(
                    gitsource.committed_at(self.repo, list(tips)).values(), default=0
                ),
            )
        return self._clues

    def recover_sources(self) -> None:
        """Which titles of an index made before they were recorded are their head commits'
        subjects (`title_source` 'commit'), once, after the upgrade
        (`schema._state_and_title_sources`). Its "open" states without a base branch are told
        again by `derive_unknown_states`: an import that named no base branch may have said
        open, but nothing shows it, so they read "unmerged" until the metadata is given again."""
        if self.store.get_meta(SOURCES_UNKNOWN) != "1":
            return
        rows = self.store.query(
            "SELECT number, head_sha, title FROM changes WHERE kind = 'pr' "
            "AND base_ref IS NULL AND title IS NOT NULL AND head_sha IS NOT NULL "
            "AND source IN ('ref', 'fast-forward')"
        )
        texts = gitsource.commit_texts(self.repo, [row["head_sha"] for row in rows])
        self.store.changes.mark_commit_titles(
            [
                row["number"]
                for row in rows
                if row["title"] == texts.get(row["head_sha"], ("", "", ""))[2].partition("\n")[0]
            ]
        )
        self.store.set_meta(SOURCES_UNKNOWN, "0")

    def derive_unknown_states(self, targets: list[str]) -> None:
        """Estimate again, for every PR whose state git gave (no metadata), whether it is open
        or closed (`index.git.state_estimate`): a PR closed since the last run stops being
        renewed, and time passes. Counts the states left unknown."""
        self._targets = targets
        rows = self.store.query(
            "SELECT number, head_sha, state, state_estimate FROM changes WHERE kind = 'pr' "
            "AND number IS NOT NULL AND state IN ('open', 'unmerged') AND state_source IS NULL "
            "ORDER BY number"
        )
        # The estimates follow from the clone's refs (its newest commit is "now") and these
        # rows alone: where neither moved since the last run, they are what that run wrote.
        # A deepened clone shows test merges' parents that a shallow one hid.
        refs = gitsource.refs_digest(self.repo) + " ".join(gitsource.shallow_boundary(self.repo))
        if self.store.get_meta(ESTIMATED_FROM) != _estimates_key(refs, targets, rows):
            clues = self._state_clues()
            quiet = [row["head_sha"] for row in rows if not clues.shows_open(row["number"])]
            head_times = gitsource.committed_at(self.repo, [sha for sha in quiet if sha])
            changed = {}
            for row in rows:
                estimate = clues.estimate(row["number"], head_times.get(row["head_sha"] or ""))
                state = "open" if estimate == "open" else "unmerged"
                if (state, estimate) != (row["state"], row["state_estimate"]):
                    changed[row["number"]] = (state, estimate)
            # Nothing derived (rarity, the text model) reads a state other than "merged"; the
            # sweep's cache notices a state that changed by itself.
            self.store.changes.set_estimated_states(
                [(number, *what) for number, what in changed.items()]
            )
            now = [
                {
                    **row,
                    "state": changed[row["number"]][0],
                    "state_estimate": changed[row["number"]][1],
                }
                if row["number"] in changed
                else row
                for row in rows
            ]
            self.store.set_meta(ESTIMATED_FROM, _estimates_key(refs, targets, now))
        self.summary.unknown_states = self.store.changes.count_unknown_states()

    def _untitled(self, number: int) -> bool:
        meta = self.metadata.get(number)
        return meta is None or meta.title is None

    def _head_text(self, head: str) -> tuple[str, str | None, str | None, str | None]:
        """Title, body, author and date from the PR head commit (read ahead for the run); the
        title is its first own commit's a person wrote where that is another commit
        (`index.git.pr_titles`)."""
        author, date, message = self._head_texts.get(head, ("", "", ""))
        subject, _, body = message.partition("\n")
        return self._title_subjects.get(head) or subject, body.strip() or None, author, date

    def _first_subjects(self, heads: list[str]) -> dict[str, str]:
        """head -> the subject of its first own commit a person wrote, where that commit is
        not the head: one git call for all."""
        chosen = {
            head: sha
            for head in heads
            if (sha := title_commit(decode_own_commits(self._own_commits.get(head))))
            not in (None, head)
        }
        subjects = gitsource.commit_subjects(self.repo, [sha for sha in chosen.values() if sha])
        return {head: subjects[sha] for head, sha in chosen.items() if sha in subjects}

    def _save_skipped_ref(
        self, pull: gitsource.PullRef, state: str, meta: PullMetadata | None, why: str
    ) -> None:
        record = ChangeRecord(
            kind="pr",
            number=pull.number,
            state=self._git_state(pull.number, state),
            source="ref",
            sha=pull.head,
            head_sha=pull.head,
            status="skipped",
            skip_reason=why,
        )
        if meta is not None:
            _apply_metadata(record, meta, keep_state=False)
        self._mark_changed()
        self.store.changes.save(record, None)
        self.summary.skipped[why] += 1

    # --- shared -----------------------------------------------------------------------------

    def _stage(
        self, record: ChangeRecord, diff: str, listed: tuple[ListedFile, ...] | None = None
    ) -> bool:
        """Parse a change's diff and queue it for writing; False if unparseable. `listed`
        names every file of a diff git was stopped printing (`index.git.diff_budget`)."""
        limit = self._line_limit(record)
        try:
            if listed is None:
                change = parse_stored(diff, self.settings, limit)
            else:
                change = parse_read_in_part(diff, listed, self.settings, limit)
        except NotADiff:
            record.status, record.skip_reason = "skipped", "unparseable diff"
            self._mark_changed()
            self.store.changes.save(record, None)
            self.summary.skipped["unparseable diff"] += 1
            return False
        record.truncated = change.truncated
        if change.truncated:
            self.summary.truncated += 1
        if record.kind == "commit":
            self._landed_files.add(_files_key({file.path for file in change.files}))
        self._mark_changed()
        self._pending.append((record, change))
        return True

    def _line_limit(self, record: ChangeRecord) -> int:
        return line_limit(self.settings, record.state)

    def _dispatch(self) -> None:
        """Write the staged changes in one transaction, with their code words."""
        if not self._pending:
            return
        staged, self._pending = self._pending, []
        items = [(record, change, self.most_used_words(change.texts)) for record, change in staged]
        self.counted += self.store.changes.save_many(items)

    def close(self) -> None:
        """Nothing to stop: kept for callers that close an indexer after a run."""

    def apply_metadata_only(self) -> None:
        """Record PRs known from metadata alone (no ref fetched): text can still relate them."""
        if not self.metadata:
            return  # nothing to record, and reading every PR's row costs 0.2 s on ansible
        known = self.store.changes.heads_by_number()
        for number, meta in self.metadata.items():
            if number in known:
                fields = _metadata_fields(meta)
                if known[number][1] == "merged":
                    fields.pop("state", None)  # git's evidence of landing beats a stale export
                    fields.pop("state_source", None)
                self.store.changes.update_metadata(
                    number, fields, linked_issues(meta.body) + linked_issues(meta.title)
                )
                continue
            record = ChangeRecord(
                kind="pr",
                number=number,
                state=meta.state or "unmerged",
                source="metadata",
                status="metadata-only",
            )
            _apply_metadata(record, meta, keep_state=False)
            self._mark_changed()
            self.store.changes.save(record, None)
            self.summary.metadata_only += 1

    def fill_author_emails(self) -> None:
        """E-mails of the changes' authors, from git, for every row that lacks one (new rows,
        and rows of an index made before the column existed)."""
        wanted = self.store.changes.commits_without_author_email()
        if not wanted:
            return
        found = gitsource.author_emails(self.repo, [sha for _, sha in wanted])
        emails = {cid: found.get(sha, "") for cid, sha in wanted}
        if self._writer_emails:  # a merged branch's writer's, not its head commit's
            for row in self.store.query(
                "SELECT id, sha FROM changes "
                "WHERE kind = 'pr' AND author_email IS NULL AND sha = merge_commit"
            ):
                if row["sha"] in self._writer_emails:
                    emails[row["id"]] = self._writer_emails[row["sha"]]
        self.store.changes.set_author_emails(emails.items())

    def identify_landed_in_part(self) -> None:
        """Read whole, for its patch identity, a PR read only up to its line limit in an
        earlier run whose files a target commit of this run changes exactly: it may have
        landed there by rebase (`match_rebased`). A PR read in this run was checked against
        every commit when it was read (`_may_have_landed_whole`)."""
        if not self._landed_files:
            return
        found: list[tuple[int, str]] = []
        for change_id, base, head, paths in self.store.changes.prs_read_in_part():
            if _files_key(paths) in self._landed_files:
                patch_id = whole_patch_id(self.repo, self.settings, base, head)
                if patch_id is not None:  # else it stays as read
                    found.append((change_id, patch_id))
        self.store.landings.set_patch_ids(found)

    def fill_own_commits(self, targets: list[str]) -> None:
        """Record the own commits of unlanded PRs read before an index recorded them (an index
        from an older prdup): one walk of the commit graph for all of them."""
        rows = self.store.query(
            "SELECT id, head_sha FROM changes WHERE kind = 'pr' AND status = 'indexed' "
            "AND merge_commit IS NULL AND own_commits IS NULL AND head_sha IS NOT NULL"
        )
        if not rows:
            return
        heads = list(dict.fromkeys(row["head_sha"] for row in rows))
        dated = _dated_own_commits(self.repo, ForkPoints(self.repo, targets, heads), heads)
        self.store.landings.set_own_commits(
            (row["id"], dated.get(row["head_sha"], "")) for row in rows
        )
        self.own_commits_filled = True

    def match_landings_off_the_line(self, targets: list[str]) -> None:
        """PRs with no landing yet whose landing git holds elsewhere than on a target's
        first-parent line: copies of all their commits (a rebase or cherry-pick,
        `match_rebased_commits`), else a commit in a target's history whose subject names the
        PR as its landing and that makes part of its change (`_land_named`). The others some
        of whose commits have copies landed in part (`record_part_landings`)."""
        unlanded = self.store.query(
            "SELECT id, number, created_at, author, author_email, own_commits FROM changes "
            "WHERE kind = 'pr' AND status = 'indexed' AND merge_commit IS NULL"
        )
        if not unlanded:
            self.store.landings.set_in_part([])
            return
        closes = self._closing_refs()
        commits = [
            TargetCommit.from_row(row, closes.get(row["id"], frozenset()))
            for row in self.store.query(
                "SELECT id, sha, base_sha, created_at, merged_at, target, author, author_email "
                "FROM changes WHERE kind = 'commit' AND created_at IS NOT NULL"
            )
        ]
        pulls = [
            UnlandedPull(
                number=row["number"],
                created_at=row["created_at"],
                author=row["author"],
                author_email=row["author_email"],
                commits=tuple(decode_own_commits(row["own_commits"])),
            )
            for row in unlanded
            if row["own_commits"]
        ]
        # A commit that already lands a PR (its merge or squash) is no copy of another's, but
        # its patch is on the target all the same (a commit of a PR landed in part).
        landings = {
            sha: row["number"]
            for row in self.store.query(
                "SELECT number, sha, merge_commit FROM changes "
                "WHERE kind = 'pr' AND state = 'merged'"
            )
            for sha in (row["sha"], row["merge_commit"])
            if sha
        }
        history = self._history_off_the_line(
            targets, pulls, {row["number"] for row in unlanded}, {c.sha for c in commits}, landings
        )
        found = find_landings(
            pulls,
            [*commits, *history.copies],
            lambda shas: gitsource.patch_ids(self.repo, shas),
            lambda shas: gitsource.commit_subjects(self.repo, shas),
        )
        landed = self.match_rebased_commits(found.whole, history.merges)
        landed |= self._land_named(
            [row for row in unlanded if row["number"] not in landed], history.naming
        )
        ids = {row["number"]: row["id"] for row in unlanded}
        self.record_part_landings([p for p in found.part if p.number not in landed], ids)

    def _closing_refs(self) -> dict[int, frozenset[str]]:
        """Direct commit id -> the `#N` its message says it closes (`linked_issues`)."""
        found: dict[int, set[str]] = {}
        for row in self.store.query(
            "SELECT r.change_id, r.issue FROM issue_refs r JOIN changes c "
            "ON c.id = r.change_id AND c.kind = 'commit' WHERE r.issue LIKE '#%'"
        ):
            found.setdefault(row["change_id"], set()).add(row["issue"])
        return {change_id: frozenset(issues) for change_id, issues in found.items()}

    def match_rebased_commits(
        self, found: list[RebaseLanding], merges: Mapping[int, TargetCommit]
    ) -> set[int]:
        """PRs landed by rebase or cherry-pick (`index.git.rebase_landings`): each is recorded
        merged at the target commit that completes it, or at the merge in the target's history
        that names it (a merge tool's rebase onto a maintained branch, merged up), and the
        target's copies of its commits, which are its change, stop being direct commits of
        their own. Returns the PRs landed."""
        for landed in found:
            merge = merges.get(landed.number)
            landing = merge or landed.landing
            several = merge is None and landed.start != landed.landing.parent
            self._record_landing(
                landed.number,
                landing,
                "rebase" if merge is None else "merge-tool",
                landed.start if several else None,
            )
            rows = [copy.change_id for copy in landed.copies if copy.change_id is not None]
            for change_id in rows:
                self.store.changes.delete(change_id)
            self.summary.commits -= min(len(rows), self.summary.commits)
        self.summary.rebased += len(found)
        return {landed.number for landed in found}

    def record_part_landings(self, parts: list[PartLanding], ids: Mapping[int, int]) -> None:
        """Record, for each PR landed in part, each of its commits that landed (with the target
        commit that holds its patch) and each still to do, with its subject and files (one
        `git log` for all). The copies stay direct commits: the PR did not land."""
        shas = [own.sha for part in parts for own, _ in part.commits]
        texts = gitsource.commit_subjects_and_files(self.repo, shas)
        rows: list[PartLandingRow] = []
        for part in parts:
            for position, (own, copy) in enumerate(part.commits):
                subject, files = texts.get(own.sha, ("", ()))
                landed = copy.sha if copy is not None else None
                rows.append(
                    PartLandingRow(
                        ids[part.number], position, own.sha, subject, files, landed, part.target
                    )
                )
        self.store.landings.set_in_part(rows)
        self.summary.landed_in_part = len(parts)

    def _land_named(
        self, unlanded: list[Any], naming: Mapping[int, list[tuple[TargetCommit, str]]]
    ) -> set[int]:
        """A commit in a target's history, off its first-parent line, whose subject names a PR
        as its landing (`(#N)`, `Merge pull request #N`, `bug #N ...`) lands it when it was
        made after the PR was opened and removes or adds a line the PR does (a fork's own
        `(#3)` squash, carried in by another PR, shares nothing with this repository's #3).
        The oldest such commit: where it landed first."""
        wanted = {
            row["number"]: [
                (c, how)
                for c, how in naming.get(row["number"], [])
                if not earlier(c.committed_at, row["created_at"])
            ]
            for row in unlanded
        }
        wanted = {number: found for number, found in wanted.items() if found}
        if not wanted:
            return set()
        pairs = [(c.sha, c.parent) for found in wanted.values() for c, _ in found if c.parent]
        lines: dict[str, set[tuple[str, int]]] = {}
        for sha, diff in self._readable_diffs(list(dict.fromkeys(pairs))):
            with contextlib.suppress(NotADiff):
                change = parse_stored(diff, self.settings, self.settings.max_changed_lines)
                lines[sha] = {
                    (side, h)
                    for file in change.files
                    for side, hashes in (("-", file.removed), ("+", file.added))
                    for h in hashes
                }
        ids = {row["number"]: row["id"] for row in unlanded}
        pr_lines: dict[int, set[tuple[str, int]]] = {}
        for change_id, _, side, line_hash in self.store.lines.rows_of([ids[n] for n in wanted]):
            pr_lines.setdefault(change_id, set()).add((side, line_hash))
        landed: set[int] = set()
        for number, found in wanted.items():
            own = pr_lines.get(ids[number], set())
            ordered = sorted(found, key=lambda item: instant_or_zero(item[0].committed_at))
            named = next((item for item in ordered if own & lines.get(item[0].sha, set())), None)
            if named is not None:
                self._record_landing(number, named[0], named[1], None)
                landed.add(number)
        return landed

    def _readable_diffs(self, pairs: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
        """`gitsource.diff_pairs`, going on after a pair git cannot diff (a snapshot or partial
        clone that lacks a blob): that pair is left out."""
        remaining = pairs
        while remaining:
            position = {head: i for i, (head, _) in enumerate(remaining)}
            last = -1
            try:
                for head, diff in gitsource.diff_pairs(self.repo, remaining):
                    last = position[head]
                    yield head, diff
                return
            except git.GitCommandError as error:
                if not gitsource.is_missing_object(error):
                    raise
                remaining = remaining[last + 2 :]

    def _record_landing(
        self, number: int, landing: TargetCommit, source: str, start: str | None
    ) -> None:
        self.store.changes.update_metadata(
            number,
            {
                "state": "merged",
                "source": source,
                "merge_commit": landing.sha,
                "merged_at": landing.committed_at,
                "target": landing.target,
                "landing_base": start,
            },
            (),
        )
        self._mark_changed()
        self._count_as_merged(number)

    def _history_off_the_line(
        self,
        targets: list[str],
        pulls: list[UnlandedPull],
        numbers: set[int],
        rows: set[str],
        landings: Mapping[str, int],
    ) -> OffTheLine:
        """What the targets' whole history holds that no row does, for the PRs with no landing:
        the commits with a PR commit's author date (its possible copies; one that lands a PR,
        in `landings`, is credited to it), per PR the oldest merge whose subject names it as
        its landing, and every commit whose subject names one. One `git log` per target,
        without diffs."""
        dates = {own.authored_at for pull in pulls for own in pull.commits}
        with_commits = {pull.number for pull in pulls}
        tips = [
            (name, branch.tip)
            for name in targets
            if (branch := gitsource.target_branch(self.repo, name, required=False))
        ]
        found = OffTheLine()
        lines = LineMerges()
        for commit in gitsource.history_commits(self.repo, tips):
            lines.add(commit)
            if commit.sha in rows:
                continue
            as_target = TargetCommit.from_history(commit)
            if commit.sha in landings:
                if len(commit.parents) < 2 and commit.authored_at in dates:
                    found.copies.append(replace(as_target, landed_for=landings[commit.sha]))
                continue
            number, how = landing_pr(commit.subject)
            if how == "merge-commit" and len(commit.parents) < 2:
                number = None
            if number in numbers:
                found.naming.setdefault(number, []).append((as_target, how))
                merge = found.merges.get(number)
                if (
                    len(commit.parents) > 1
                    and number in with_commits
                    and (merge is None or earlier(commit.committed_at, merge.committed_at))
                ):
                    found.merges[number] = as_target
            if len(commit.parents) < 2 and commit.authored_at in dates:
                found.copies.append(as_target)
        # A copy inside another PR's landing (a takeover that picked a closed PR's commit) is
        # that PR's work: the closed PR did not land by it.
        found.copies = [
            c if c.landed_for is not None else replace(c, landed_for=lines.landing_of(c.sha))
            for c in found.copies
        ]
        return found

    def _count_as_merged(self, number: int) -> None:
        """A PR this run counted open (or closed) that turned out landed counts as merged."""
        state = self._counted_as.pop(number, None)
        if state == "merged":
            return  # counted merged already (GitHub's metadata said so)
        if state is not None:
            setattr(self.summary, state, getattr(self.summary, state) - 1)
        self.summary.merged += 1

    def match_rebased(self) -> None:
        """A PR whose whole patch equals a direct commit's landed by rebase: record it merged
        there (also a PR GitHub calls merged whose landing git could not name).

        Only a commit that landed after the PR was opened: an older commit with the same patch
        is an earlier change (often one that was reverted), not this PR's landing.
        """
        rows = self.store.query(
            f"SELECT {_LANDING_COLUMNS}, p.own_commits "
            "FROM changes p JOIN changes c ON c.patch_id = p.patch_id AND c.kind = 'commit' "
            "WHERE p.kind = 'pr' AND p.patch_id IS NOT NULL AND p.merge_commit IS NULL "
            "AND (p.state != 'merged' OR p.sha = p.head_sha)"
        )
        copies = self._copies_of_landed_prs({row["commit_id"] for row in rows})
        self._land_on_commits(
            "rebase",
            [row for row in rows if row["commit_id"] not in copies or _wrote_it(row)],
        )

    def _copies_of_landed_prs(self, commit_ids: set[int]) -> set[int]:
        """Each commit whose patch a landed PR by the commit's own author made: that PR's
        copy (cherry-picked to a release line, author and date kept), not the landing of
        another PR that proposed the same patch (ember.js #4223, whose identical fix #4214
        landed on main and was picked to release-1-13 by its author)."""
        if not commit_ids:
            return set()
        rows = self.store.query(
            "SELECT c.id AS commit_id, o.author AS pr_author, o.author_email AS pr_email, "
            "c.author, c.author_email FROM changes c JOIN changes o ON o.patch_id = c.patch_id "
            "AND o.kind = 'pr' AND o.merge_commit IS NOT NULL "
            "WHERE c.id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(commit_ids)),),
        )
        return {row["commit_id"] for row in rows if _same_person(row)}

    def match_closing(self) -> None:
        """A PR that a target commit says it closes (`Closes #N`, as projects that land PRs
        by rebasing with rewritten messages write) is landed there when git confirms that the
        commit made the PR's change, and git knows no other landing for it: a rewritten commit
        shares no sha and often no whole patch with the PR's head. Confirmed are:

        - the PR's author's commit that removes or adds a line the PR does (landing by rebase
          keeps the author);
        - the PR's author's commit with the author date of one of the PR's own commits that
          changes a file the PR changes: the PR's commit amended or squashed by hand (both
          keep the author and the author date), whatever its lines became.

        - any commit that holds every line the PR adds and removes, each in its file, with at
          most as many lines of its own: the PR's change is there, made by the commit that
          says it closes it (a larger commit made a change of its own, kept as such).

        Only a commit that landed after the PR was opened, and only a PR with no landing yet.
        A commit that only mentions a PR shares no changed line with it; a maintainer's own
        commit that closes a PR it supersedes with only part of its lines, or one that closes
        related PRs along the way, is a change of its own, found as such.
        """
        closing = self.store.query(
            f"SELECT {_LANDING_COLUMNS}, p.id AS pr_id, p.own_commits, "
            "c.created_at AS authored_at FROM issue_refs r "
            "JOIN changes c ON c.id = r.change_id AND c.kind = 'commit' "
            "JOIN changes p ON p.kind = 'pr' AND r.issue = '#' || p.number "
            "WHERE p.merge_commit IS NULL AND p.status = 'indexed' "
            "AND (p.state != 'merged' OR p.sha = p.head_sha)"
        )
        self._land_on_commits("closes", [row for row in closing if self._made_the_pr(row)])

    def land_closed_along(self) -> None:
        """A PR that a landed PR says it closes or fixes (`Closes #N` in its commit's message,
        title or body, as a maintainer's own PR that made a contributor's change writes) is
        landed by that landing too when the landed change holds every line the PR
        adds and removes, each in its file: the PR's change is on the target by that commit.
        Only a landing after the PR was opened, only a PR with no landing yet, and only one
        stored whole (a PR stored cut has lines its row lacks); a landing that holds part of
        the PR's lines is a change of its own (the PR is found done in part)."""
        # A PR landed so may close another in turn: asked again until none lands, so that a
        # first run records what a later one would.
        while self._land_closed_by_landings():
            pass

    def _land_closed_by_landings(self) -> bool:
        """One pass of `land_closed_along`; whether it landed a PR."""
        closing = self.store.query(
            "SELECT q.number, q.id AS pr_id, q.created_at, p.id AS landed_id, p.merge_commit, "
            "p.merged_at, p.target FROM issue_refs r "
            "JOIN changes p ON p.id = r.change_id AND p.kind = 'pr' "
            "AND p.merge_commit IS NOT NULL AND p.state = 'merged' "
            # Its lines are what landed: read from the landing, or a landing of its whole
            # change; not a commit that closes it and shares only some of its lines.
            "AND (p.source != 'closes' OR p.sha = p.merge_commit) "
            "JOIN changes q ON q.kind = 'pr' AND r.issue = '#' || q.number AND q.id != p.id "
            "WHERE q.merge_commit IS NULL AND q.status = 'indexed' AND NOT q.truncated "
            "AND (q.state != 'merged' OR q.sha = q.head_sha) "
            "ORDER BY p.merged_at, p.number"
        )
        landed: set[int] = set()
        for row in closing:
            number = row["number"]
            if number in landed or earlier(row["merged_at"], row["created_at"]):
                continue
            if not self._holds_every_line(row["pr_id"], row["landed_id"]):
                continue
            landed.add(number)
            self._count_as_merged(number)
            self.store.changes.update_metadata(
                number,
                {
                    "state": "merged",
                    "source": "closed-along",
                    "merge_commit": row["merge_commit"],
                    "merged_at": row["merged_at"],
                    "target": row["target"],
                },
                (),
            )
            self._mark_changed()
        return bool(landed)

    def _holds_every_line(self, pr_id: int, landed_id: int) -> bool:
        """Whether the landed change adds and removes every line the PR does, each in its
        file (the PR has some)."""
        placed = self._placed_lines([pr_id, landed_id])
        return bool(placed[pr_id]) and placed[pr_id] <= placed[landed_id]

    def _placed_lines(self, ids: list[int]) -> dict[int, set[tuple[str | None, str, int]]]:
        """Each change's changed lines as (path, side, hash): a line in its file."""
        path_of = self.store.changes.file_paths(ids)
        placed: dict[int, set[tuple[str | None, str, int]]] = {cid: set() for cid in ids}
        for change_id, file_id, side, line_hash in self.store.lines.rows_of(ids):
            placed[change_id].add((path_of.get(file_id), side, line_hash))
        return placed

    def _made_the_pr(self, row: Any) -> bool:
        """Whether git confirms that a commit closing a PR made its change (`match_closing`)."""
        ids = [row["pr_id"], row["commit_id"]]
        placed = self._placed_lines(ids)
        ours, theirs = placed[row["pr_id"]], placed[row["commit_id"]]
        if ours and ours <= theirs and len(theirs - ours) <= len(ours):
            # It names the PR as closed and holds every line the PR adds and removes, each in
            # its file, with at most as many lines of its own (a note beside them, not a
            # rewrite that took the PR's lines along): the PR's change is on the target by
            # that commit, whoever wrote it.
            return True
        if not _same_person(row):
            return False
        if {(side, h) for _, side, h in ours} & {(side, h) for _, side, h in theirs}:
            return True
        own_dates = {own.authored_at for own in decode_own_commits(row["own_commits"])}
        if row["authored_at"] not in own_dates:
            return False
        paths = self.store.changes.changed_paths(ids)
        return bool(paths.get(row["pr_id"], set()) & paths.get(row["commit_id"], set()))

    def _land_on_commits(self, source: str, rows: list) -> None:
        """Record each commit as the landing of one PR: a commit lands one change. Where
        several PRs fit (the same patch proposed twice, one commit closing a PR and its
        duplicates), the one whose head it merged (a merge that names no PR), else the one its
        message says it closes, else the one its author wrote, else the first opened, is the PR
        it landed; the others keep no landing (their heads then prove nothing by themselves)."""
        closes = self._closing_refs()
        by_commit: dict[int, list] = {}
        for row in rows:
            if earlier(row["merged_at"], row["created_at"]):
                continue
            by_commit.setdefault(row["commit_id"], []).append(row)
        landed: set[int] = set()
        in_order = sorted(by_commit.items(), key=lambda item: item[1][0]["merged_at"] or "")
        for commit_id, fits in in_order:
            fits = [row for row in fits if row["number"] not in landed]
            if not fits:
                continue
            named = closes.get(commit_id, frozenset())
            row = min(
                fits,
                key=lambda r: (
                    not r["merged_head"] or r["merged_head"] != r["pr_head"],
                    f"#{r['number']}" not in named,
                    not _same_person(r),
                    r["created_at"] or "",
                    r["number"],
                ),
            )
            landed.add(row["number"])
            self._count_as_merged(row["number"])
            self.summary.commits -= min(1, self.summary.commits)
            # Its head itself is the target's commit (a merge that names no PR brought its
            # branch in): it landed as it was, not rebased.
            how = "fast-forward" if row["sha"] == row["pr_head"] else source
            self.summary.rebased += how == "rebase"
            self.store.changes.update_metadata(
                row["number"],
                {
                    "state": "merged",
                    "source": how,
                    "merge_commit": row["sha"],
                    "merged_at": row["merged_at"],
                    "target": row["target"],
                },
                (),
            )
            self.store.changes.delete(commit_id)
            self._mark_changed()


ESTIMATED_FROM = "states_estimated_from"  # meta: what the PRs' states were estimated from


def _estimates_key(refs: str, targets: list[str], rows: list[Any]) -> str:
    """What the state estimates follow from: the refs, the targets, the rows estimated and the
    rules that estimate them."""
    digest = hashlib.sha1(refs.encode())
    for source in (state_estimate.__file__, gitsource.__file__, __file__):
        digest.update(Path(source).read_bytes())
    digest.update("\0".join(targets).encode())
    for row in rows:
        fields = (row["number"], row["head_sha"], row["state"], row["state_estimate"])
        digest.update(repr(fields).encode())
    return digest.hexdigest()


_LANDING_COLUMNS = (
    "p.number, p.created_at, p.author AS pr_author, p.author_email AS pr_email, "
    "p.head_sha AS pr_head, c.head_sha AS merged_head, "
    "c.id AS commit_id, c.sha, c.merged_at, c.target, c.author, c.author_email"
)


def _wrote_it(row: Any) -> bool:
    """The commit's author is the PR's, or the author of one of the PR's own commits (a
    backport carries the original's commits, their author kept)."""
    if _same_person(row):
        return True
    theirs = identities(row["author"], row["author_email"])
    return any(
        theirs & identities(own.author, own.author_email)
        for own in decode_own_commits(row["own_commits"])
    )


def _same_person(row: Any) -> bool:
    """The commit's author is the PR's (by name, or by an e-mail that is nobody's placeholder),
    as the matcher tells a follow-up from a duplicate."""
    pr_author = identities(row["pr_author"], row["pr_email"])
    return bool(pr_author & identities(row["author"], row["author_email"]))


class ForkPoints:
    """Where each PR head leaves the branches: its change is `base..head`.

    One `git rev-list --parents` over every PR head gives the commit graph; each head is then
    walked back until it meets published history: the first-parent line of a branch, or what
    a branch or tag reaches. The newest commit met is the base (the merge-base with its branch,
    also when upstream was merged into the PR).
    """

    def __init__(
        self,
        repo: git.Repo,
        targets: list[str],
        heads: list[str],
        pr_heads: Mapping[int, str] | None = None,
    ) -> None:
        self.repo = repo
        self.heads = list(dict.fromkeys(heads))
        self._prs_by_head: dict[str, set[int]] = {}  # of every PR ref, also those read before
        for number, sha in (pr_heads or {}).items():
            self._prs_by_head.setdefault(sha, set()).add(number)
        self._subjects: dict[str, str] | None = None  # read on first need (`_names`)
        # Off-branch commits GitHub committed as another PR's landing (`_landed_elsewhere`).
        self._github_landings: dict[str, int] | None = None
        resolved = (gitsource.target_branch(repo, name, required=False) for name in targets)
        found = [target for target in resolved if target]
        target_tips = list(dict.fromkeys(target.tip for target in found))
        tips, self._release_names = _branch_tips(repo, found)
        self._tips = tips
        # The first-parent bits of the branches named as release lines.
        self._release_lines = sum(
            1 << position for position, tip in enumerate(tips) if tip in self._release_names
        )
        # Tags keep the history of release branches long deleted: a PR to one of them stops
        # at its tags instead of carrying the branch's commits back to where it left main.
        published = [*tips, *_tagged_commits(repo)]
        self.graph, self.times = _graph(repo, heads, published)
        self.target_count = len(target_tips)  # the first bits of every first-parent mask
        self.first_parent = _first_parent_lines(self.graph, tips)
        self.on_target = _reachable(self.graph, target_tips)
        self.on_branches = _reachable(self.graph, published)
        self.merged_by: dict[str, str] = {}  # a commit -> a merge commit that has it as 2nd parent
        for sha, parents in self.graph.items():
            for parent in parents[1:]:
                self.merged_by.setdefault(parent, sha)
        self._target_merges: dict[str, list[str]] = {}  # a commit -> target merges of it
        for sha, parents in self.graph.items():
            if len(parents) > 1 and sha in self.on_target:
                for parent in parents[1:]:
                    self._target_merges.setdefault(parent, []).append(sha)
        self._why: dict[str, str] = {}
        self.target_tips = target_tips
        self._landings: dict[str, str] | None = None  # built on first need: a walk of history
        self._default_history: set[str] | None = None  # likewise: what the default branch holds

    def _names(self, sha: str) -> int | None:
        """The PR a commit's subject says it lands, if any: of the heads and of the merges
        that brought them in, whose subjects are read at once on first need, to tell a PR's
        own landing from a merge of a whole branch."""
        if self._subjects is None:
            wanted = [*self.heads, *(self.merged_by[h] for h in self.heads if h in self.merged_by)]
            self._subjects = gitsource.commit_subjects(self.repo, list(dict.fromkeys(wanted)))
        return landing_pr(self._subjects.get(sha, ""))[0]

    def _landed_elsewhere(self, sha: str, number: int | None) -> bool:
        """`sha`, on no branch, is another PR's landing that GitHub committed (`Title (#M)`,
        `Merge pull request #M`): only a branch's history holds such a commit."""
        if self._github_landings is None:
            off = [c for c in self.graph if c not in self.on_branches]
            subjects = gitsource.committed_by_github(self.repo, off)
            self._github_landings = {
                c: named for c, subject in subjects.items() if (named := landing_pr(subject)[0])
            }
        named = self._github_landings.get(sha)
        return named is not None and named != number

    def twins(self, head: str) -> set[int]:
        """The PRs opened from `head` (one branch opened as two PRs)."""
        return self._prs_by_head.get(head, set())

    def base_of(self, head: str, number: int | None = None) -> tuple[str | None, str]:
        """(base commit or None, state guessed from git: merged when a target contains head).

        With `number` (the PR's): a merged head whose subject names
        its own PR ("Merge 'v1.4.2' into 'v1.5.x' (#N)", "Fix (#N)") is the PR's landing, made
        on its branch and pushed (a merge-up of release lines, a squash landed by
        fast-forward), and its change is that commit's own; a merge that names another PR
        ("Merge '1.5.x' into 'main' (#M)") brought the head's whole branch, not the PR."""
        state = "merged" if head in self.on_target else "unmerged"
        own_lines = self.first_parent.get(head, 0)
        if own_lines & ((1 << self.target_count) - 1):
            self._why[head] = "head is on a target's first-parent line (landed without a PR diff)"
            return None, state
        parents = self.graph.get(head, ())
        if (
            number is not None
            and parents
            and (state == "merged" or len(parents) > 1)
            and self._names(head) == number
        ):
            # Also an open merge-up, "Merge branch '1.39.x' into master (#N)": that merge.
            return parents[0], state
        if state == "merged" and len(parents) > 1 and self._merges_into_a_release_line(head):
            # "Merge branch 'v1.20.x' into v1.23.x", pushed as a PR and landed as it is: its
            # change is what the merge brought to the line, not the other line's history.
            return parents[0], state
        # An unmerged head leaves the branches at its merge-base: the newest commit any branch
        # reaches. A head some branch already reaches (merged, or pushed as a branch of this
        # repository) is walked back to a first-parent line other than its own instead.
        stop_lines = ~own_lines
        unmerged = head not in self.on_branches
        merger = None if unmerged else self.merged_by.get(head)
        named = self._names(merger) if merger is not None and number is not None else None
        if named not in (None, number) and named not in self.twins(head):
            # A merge of the branch the head landed on, named after another PR (a line merged
            # up, a stacked PR's branch): not this PR's. A merge named after a PR opened from
            # this very head (one branch opened as two PRs) merged this PR too.
            merger = None
        if merger is not None:
            # Merged by a merge commit (on whatever branch): the PR's change is what that merge
            # brought in, so its base is the merge-base with the merge's first parent.
            base = gitsource.merge_base(self.repo, self.graph[merger][0], head)
            if base and base != head:
                return base, state

        # A merged head on a branch's first-parent line that no merge brought in landed on that
        # branch by fast-forward (a fix on a release line, later merged up): a merge on the
        # line (another line merged into it) is the branch as it was before the PR, not its work.
        landed_on_its_line = state == "merged" and merger is None and bool(own_lines)

        def stops(sha: str) -> bool:
            if unmerged:
                # Also another PR's landing that GitHub committed, on a branch this clone
                # lacks (dependabot's bumps squashed onto a `1.10` line): the PR starts after.
                return sha in self.on_branches or self._landed_elsewhere(sha, number)
            lines = self.first_parent.get(sha, 0)
            if lines & stop_lines:
                return True
            is_merge = len(self.graph.get(sha, ())) > 1
            return landed_on_its_line and bool(lines & own_lines) and is_merge

        boundary: list[str] = []
        seen = {head}
        stack = [head]
        while stack:
            sha = stack.pop()
            for parent in self.graph.get(sha, ()):
                if parent in seen:
                    continue
                seen.add(parent)
                if stops(parent):
                    boundary.append(parent)
                elif len(seen) > MAX_PR_COMMITS:
                    self._why[head] = "history too long to delimit"
                    return None, state
                else:
                    stack.append(parent)
        if not boundary:
            self._why[head] = "no common history with any branch"
            return None, state
        base = max(boundary, key=lambda sha: self.times.get(sha, 0))
        if state == "merged":
            base = self._tightened(head, base)
        return base, state

    def _merges_into_a_release_line(self, head: str) -> bool:
        """`head` is a merge on the first-parent line of a branch named as a release line,
        whose first parent is on that line too: another line merged into this one."""
        first = self.graph[head][0]
        shared = self.first_parent.get(head, 0) & self.first_parent.get(first, 0)
        return bool(shared & self._release_lines)

    def release_line_of(self, base: str) -> str | None:
        """The release line a PR that left the branches at `base` is for, when git shows it:
        `base` is on the first-parent line of one branch named as a release line (`1.4.x`,
        `tokio-1.47.x`) and the default target does not hold it (a line merged up since
        cannot be told from main's own history). A backport to it is then told from the
        change it ports, without GitHub's metadata."""
        lines = self.first_parent.get(base, 0)
        if not lines or lines & 1 or base in self._on_default():
            return None  # main's history: a rewritten first-parent line also passes here
        releases = lines & self._release_lines
        named = {
            name
            for position, tip in enumerate(self._tips)
            if releases >> position & 1
            for name in self._release_names[tip]
        }
        return named.pop() if len(named) == 1 else None

    def _on_default(self) -> set[str]:
        if self._default_history is None:
            self._default_history = _reachable(self.graph, self.target_tips[:1])
        return self._default_history

    def target_merges(self, head: str) -> list[str]:
        """The merge commits a target holds that merged `head` (as a second parent), oldest
        first: also those off the target's first-parent line (merged on a side branch, or
        locally, then merged up)."""
        return sorted(self._target_merges.get(head, ()), key=lambda sha: self.times.get(sha, 0))

    def commit_date(self, sha: str) -> str:
        return datetime.fromtimestamp(self.times.get(sha, 0), UTC).isoformat()

    def own_commits(self, head: str) -> list[str] | None:
        """The non-merge commits of an unmerged head that no branch or tag holds (no target,
        for a head on a branch of this repository), oldest first: the PR's own work, whose
        copies a landing by rebase puts on a target. None when a target holds the head, or
        when there are too many to be one PR's."""
        if head in self.on_target:
            return None
        # A PR from a branch of this repository is held by that branch: walk to the targets.
        stop = self.on_target if head in self.on_branches else self.on_branches
        own: list[str] = []
        seen = {head}
        stack = [head]
        while stack:
            sha = stack.pop()
            parents = self.graph.get(sha, ())
            if len(parents) < 2:
                own.append(sha)
                if len(own) > MAX_OWN_COMMITS:
                    return None
            for parent in parents:
                # (Another PR's landing that GitHub committed is a branch's history too.)
                if parent not in seen and parent not in stop:
                    seen.add(parent)
                    if not self._landed_elsewhere(parent, None):
                        stack.append(parent)
        by_time = sorted(own, key=lambda sha: (self.times.get(sha, 0), sha))
        return _parents_first(by_time, self.graph)

    def _tightened(self, head: str, walked: str) -> str:
        """A merged head reached through later commits of its branch: the first-parent line
        met walking back can be far older than where the branch was cut, when that commit is
        not on a first-parent line itself (a branch cut from a side branch). What the target
        lacked just before the commit that brought the head in starts the PR's own work, where
        that is newer than the line met (it is older after a release merge that brought in a
        whole branch: then the line met stands)."""
        landing = self._landing(head)
        if landing is None:
            return walked
        fork = gitsource.merge_base(self.repo, self.graph[landing][0], head)
        if fork and fork not in (head, walked) and gitsource.is_ancestor(self.repo, walked, fork):
            return fork
        return walked

    def why_not(self, head: str) -> str:
        return self._why.get(head, "no base")

    def _landing(self, head: str) -> str | None:
        """The merge of a target's first-parent line that brought `head` in, if one did."""
        if self._landings is None:
            self._landings = _landings(self.graph, self.target_tips)
        landing = self._landings.get(head)
        return landing if landing != head and len(self.graph.get(landing or "", ())) > 1 else None


@dataclass
class OffTheLine:
    """What a target's history holds off its first-parent line for PRs with no landing."""

    copies: list[TargetCommit] = field(default_factory=list)  # possible copies of PR commits
    merges: dict[int, TargetCommit] = field(default_factory=dict)  # PR -> oldest naming merge
    # PR -> the commits whose subject names it as its landing, and how (`landing_pr`)
    naming: dict[int, list[tuple[TargetCommit, str]]] = field(default_factory=dict)


def _landing_merges(
    repo: git.Repo, forks: ForkPoints, plan: Mapping[str, list[tuple[gitsource.PullRef, str, str]]]
) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
    """PR head -> (landing, its date), twice: of the merges a target holds that merged the
    head (as a second parent), the oldest whose subject names the PR (`Merge pull request #N`,
    a branch named after it: `Merge branch 'hotfix/#7330-...'`, `pr/N`), even after a
    contributor's own merge of it into another branch; and for the heads no merge names, the
    oldest merge that names no PR but

    - pulled the head from another repository (`Merge branch 'topic' of
      https://host/user/repo`, what `git pull URL branch` writes: how maintainers merged a PR
      by hand, into a local branch they then merged into a line), or
    - merges a branch by name on the first-parent line of a branch of this repository (`Merge
      branch 'hotfix/topic' into develop`): the PR's head merged into a line as it was (not a
      sync of one line into another, and naming no other PR).

    The second is the landing only when no other rule finds one (`land_by_unnamed_merges`): a
    merge or commit naming the PR on a line, found later, says more. A merge that only brought
    the head along into another topic branch ("Merge branch 'x' into cache", a branch that is
    nobody's line) is not the PR's landing: its range is the PR's then, and the replay reads
    who wrote it."""
    merges = {head: forks.target_merges(head) for head, _ in plan.items()}
    texts = gitsource.commit_texts(repo, [sha for found in merges.values() for sha in found])
    named: dict[str, tuple[str, str]] = {}
    unnamed: dict[str, tuple[str, str]] = {}
    for head, found in merges.items():
        # A merge naming a PR opened from the same head lands this one too (one branch
        # opened twice: symfony's "merged branch x (PR #7009)" lands #7008).
        numbers = {pull.number for pull, _, _ in plan[head]} | forks.twins(head)
        subjects = {merge: texts.get(merge, ("", "", ""))[2].partition("\n")[0] for merge in found}
        naming = next((m for m in found if _names_one_of(subjects[m], numbers)), None)
        if naming is not None:
            named[head] = (naming, forks.commit_date(naming))
            continue
        other = next(
            (m for m in found if _lands_head(subjects[m], bool(forks.first_parent.get(m)))), None
        )
        if other is not None:
            unnamed[head] = (other, forks.commit_date(other))
    return named, unnamed


def _names_one_of(subject: str, numbers: set[int]) -> bool:
    """The merge's subject names one of these PRs: as `#N` or a branch after it (`names_pr`),
    or as a merge tool names its landing (`landing_pr`: zf2's `Merge branch 'hotfix/3228'`)."""
    return landing_pr(subject)[0] in numbers or any(names_pr(subject, n) for n in numbers)


def _lands_head(subject: str, on_a_line: bool) -> bool:
    """Whether a merge whose second parent is a PR's head, and whose subject names no PR, is
    that PR's landing (`_landing_merges`): by its subject, and whether a branch's first-parent
    line holds it."""
    if PULLED_BRANCH.match(subject):
        return True
    named, _ = landing_pr(subject)
    return (
        on_a_line
        and named is None
        and MERGED_BRANCH.match(subject) is not None
        and BRANCH_SYNC.match(subject) is None
    )


def _parents_first(commits: list[str], graph: Mapping[str, tuple[str, ...]]) -> list[str]:
    """`commits` in their order, except that a commit's parent among them comes before it: a
    rebase makes many commits in one second, and their order by time and sha is no order."""
    members = set(commits)
    placed: set[str] = set()
    ordered: list[str] = []
    for start in commits:
        stack = [(start, False)]
        while stack:
            sha, ready = stack.pop()
            if sha in placed:
                continue
            if ready:
                placed.add(sha)
                ordered.append(sha)
                continue
            stack.append((sha, True))
            for parent in reversed(graph.get(sha, ())):
                if parent in members and parent not in placed:
                    stack.append((parent, False))
    return ordered


def _dated_own_commits(repo: git.Repo, forks: ForkPoints, heads: list[str]) -> dict[str, str]:
    """head -> its own commits with their author dates, encoded (`index.git.rebase_landings`);
    "" for a head a branch holds or that has too many. One git call for every date."""
    own = {head: forks.own_commits(head) for head in heads}
    dates = gitsource.commit_dates(
        repo, [sha for commits in own.values() if commits for sha in commits]
    )
    return {
        head: encode_own_commits(OwnCommit(sha, *dates[sha]) for sha in commits if sha in dates)
        if commits
        else ""
        for head, commits in own.items()
    }


def _batched(items: Iterable[_T], size: int) -> Iterator[list[_T]]:
    chunk: list[_T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _branch_tips(
    repo: git.Repo, targets: list[gitsource.TargetBranch]
) -> tuple[list[str], dict[str, set[str]]]:
    """Targets first, then every other branch, so PRs to release branches find their base;
    and, tip by tip, the names of the branches named as release lines that point there (a
    remote's copy by its bare name)."""
    named = [(target.tip, target.name) for target in targets]
    output = repo.git.for_each_ref(
        "--format=%(objectname) %(refname)", "refs/heads", "refs/remotes/origin"
    )
    for line in output.splitlines():
        sha, ref = line.split(" ", 1)
        named.append((sha, ref.removeprefix("refs/heads/").removeprefix("refs/remotes/origin/")))
    releases: dict[str, set[str]] = {}
    for sha, name in named:
        if is_release_line(name):
            releases.setdefault(sha, set()).add(name)
    return list(dict.fromkeys(sha for sha, _ in named)), releases


def _tagged_commits(repo: git.Repo) -> list[str]:
    """The commits that tags name (annotated tags peeled; tags of trees or blobs left out)."""
    output = repo.git.for_each_ref(
        "--format=%(objecttype) %(objectname) %(*objecttype) %(*objectname)", "refs/tags"
    )
    commits: list[str] = []
    for line in output.splitlines():
        kind, sha, *peeled = line.split()
        if kind == "commit":
            commits.append(sha)
        elif peeled[:1] == ["commit"]:
            commits.append(peeled[1])
    return list(dict.fromkeys(commits))


def _graph(
    repo: git.Repo, heads: Iterable[str], tips: list[str]
) -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
    """Parents and commit times of everything the PR heads and branches reach, in one call."""
    lines = [*dict.fromkeys(heads), *tips]
    process = repo.git.rev_list(
        "--stdin", "--parents", "--timestamp", as_process=True, istream=git.cmd.PIPE
    )
    gitsource.feed(process, ("\n".join(lines) + "\n").encode())
    graph: dict[str, tuple[str, ...]] = {}
    times: dict[str, int] = {}
    for raw in process.stdout:
        stamp, sha, *parents = raw.decode().split()
        times[sha] = int(stamp)
        graph[sha] = tuple(parents)
    process.wait()
    return graph, times


def _first_parent_lines(graph: dict[str, tuple[str, ...]], tips: list[str]) -> dict[str, int]:
    """sha -> bit mask of the branches (by position in `tips`) whose first-parent line has it."""
    lines: dict[str, int] = {}
    for position, tip in enumerate(tips):
        bit = 1 << position
        sha: str | None = tip
        while sha and not lines.get(sha, 0) & bit:
            lines[sha] = lines.get(sha, 0) | bit
            parents = graph.get(sha, ())
            sha = parents[0] if parents else None
    return lines


def _landings(graph: dict[str, tuple[str, ...]], tips: list[str]) -> dict[str, str]:
    """commit -> the commit of a target's first-parent line that first reached it (the
    default target's line first). One pass over history: each line is walked from its root,
    and a commit takes the first line commit whose non-first parents lead to it."""
    landing: dict[str, str] = {}
    for tip in tips:
        line: list[str] = []
        sha: str | None = tip
        while sha and sha not in landing:
            line.append(sha)
            parents = graph.get(sha, ())
            sha = parents[0] if parents else None
        for commit in reversed(line):
            landing[commit] = commit
            stack = list(graph.get(commit, ())[1:])
            while stack:
                sha = stack.pop()
                if sha in landing:
                    continue
                landing[sha] = commit
                stack.extend(graph.get(sha, ()))
    return landing


def _reachable(graph: dict[str, tuple[str, ...]], tips: list[str]) -> set[str]:
    seen = set(tips)
    stack = list(tips)
    while stack:
        for parent in graph.get(stack.pop(), ()):
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen


def _start_over(store: IndexStore, indexer: Indexer) -> None:
    """Empty an index written by an older prdup, keeping what git cannot tell again (titles
    and dates imported from GitHub, closed states) as metadata for this run to apply; changes
    are then read from git as in a first run (its rows were derived differently: symbols)."""
    for row in store.changes.pull_texts():
        number = row["number"]
        if number in indexer.metadata:
            continue  # metadata given to this run is newer
        indexer.metadata[number] = kept_metadata(row)
    store.changes.clear()


def kept_metadata(row: Any) -> PullMetadata:
    """What an index row (a mapping or `sqlite3.Row`) holds that git cannot tell again (texts
    that are not its head commit's, dates, a state GitHub gave), as metadata for a run that
    reads the PR afresh to apply."""
    return PullMetadata(
        number=row["number"],
        title=None if row["title_source"] == "commit" else row["title"],
        body=None if row["title_source"] == "commit" else row["body"],
        state=row["state"] if row["state_source"] == "metadata" else None,
        created_at=row["created_at"],
        closed_at=row["closed_at"],
        merged_at=None,
        head_sha=None,
        base_ref=row["base_ref"],
        author=row["author"],
    )


def _metadata_fields(meta: PullMetadata) -> dict[str, object]:
    """The columns metadata sets: the values it has, and where the state and title came from."""
    fields: dict[str, object] = {
        "title": meta.title,
        "body": meta.body,
        "state": meta.state,
        "created_at": meta.created_at,
        "closed_at": meta.closed_at,
        "merged_at": meta.merged_at,
        "base_ref": meta.base_ref,
        "author": meta.author,
    }
    given = {k: v for k, v in fields.items() if v is not None}
    sources: dict[str, object] = {}
    if "state" in given:
        sources["state_source"] = "metadata"
    if "title" in given:
        sources["title_source"] = None  # GitHub's title
    return {**given, **sources}


def _files_key(paths: set[str]) -> tuple[int, int]:
    """A set of paths as a small key, for this process only (str hashes are salted per run)."""
    return len(paths), hash(tuple(sorted(paths)))


def line_limit(settings: Settings, state: str) -> int:
    """How many changed lines of this change are stored. An unmerged PR's diff runs from its
    fork point, so a branch that carries other work (upstream merged in wrongly, a backport
    cut from another branch, a tree reformatted) shows all of it: past a few thousand lines
    it is no longer one fix a later PR could repeat, and its lines would only flood the
    index. What landed keeps the general limit: "already done in #N" rests on it."""
    if state == "merged":
        return settings.max_changed_lines
    return min(settings.max_changed_lines, settings.max_unmerged_lines)


def _apply_metadata(record: ChangeRecord, meta: PullMetadata, keep_state: bool) -> None:
    for name, value in _metadata_fields(meta).items():
        if name in ("state", "state_source") and keep_state:
            continue
        if name in ("state", "state_source") and record.state == "merged":
            continue  # git shows it landed; a CLOSED export of a rebase-merged PR says less
        setattr(record, name, value)
    record.issues = tuple(
        dict.fromkeys((*record.issues, *linked_issues(meta.body), *linked_issues(meta.title)))
    )


def index_repository(
    path: str | Path = ".",
    db_path: str | Path | None = None,
    targets: Iterable[str] = (),
    prs_json: str | Path | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
    metadata: dict[int, PullMetadata] | None = None,
    only_numbers: set[int] | None = None,
    batch_size: int = BATCH,
) -> IndexSummary:
    """Index a repository's merged history and PR refs; returns what was done.

    `only_numbers` limits the PR refs read (the benchmark indexes the PRs of a date range);
    `batch_size` is the number of changes per transaction.
    """
    settings = settings or Settings()
    repo = gitsource.open_repository(path)
    if not gitsource.has_commits(repo):
        raise EmptyRepository(f"{path}: the repository has no commits yet; nothing to index")
    gitsource.remember_for_run(repo)  # this run's own repository object
    pulls = dict(metadata or {})
    if prs_json is not None:
        pulls.update(load_prs_json(Path(prs_json)))
    names = list(targets) or list(settings.targets)
    named = bool(names)
    chosen: list[LandingBranch] = []
    if not named:
        default = gitsource.default_branch(repo)
        chosen = landing_branches(repo, default, pulls.values())
        names = [default, *(branch.name for branch in chosen)]
    # A missing target fails here, before anything is written.
    branches = [gitsource.named_target(repo, name) for name in names]
    store = IndexStore(db_path or default_db_path(repo))
    indexer = Indexer(
        repo,
        store,
        settings,
        pulls,
        progress or _quiet,
        batch_size=batch_size,
    )
    report = progress or _quiet
    try:
        identity.claim(repo, store, [branch.tip for branch in branches if branch])
        if gitsource.lacks_commit_graph(repo):
            report("git's commit-graph (once per clone)", 0, None)
            gitsource.write_commit_graph(repo)
        why = {branch.name: f" ({branch.why})" for branch in chosen}
        indexer.summary.targets = [
            branch.shown + why.get(branch.name, "") for branch in branches if branch
        ]
        indexer.summary.warnings = _target_warnings(branches, store)
        indexer.summary.warnings += identity.follow_cut(repo, store)
        indexer.summary.history_cut = bool(store.get_meta(identity.CUT))
        indexer.recover_sources()  # before `_start_over` keeps what git cannot tell
        if store.get_meta("reread_all") == "1":
            report("rebuilding an index from an older prdup", 0, None)
            _start_over(store, indexer)
        store.lines.prepare_lookup_indexes()  # a first run builds them at its end
        store.derived.follow_counts()
        for name in names:
            indexer.index_target(name)
        indexer.index_pull_refs(names, only_numbers)
        indexer.apply_metadata_only()
        # Landings are matched by author (name or e-mail): the e-mails of this run's rows first,
        # or a first run would match fewer than the next one.
        indexer.fill_author_emails()
        indexer.identify_landed_in_part()
        indexer.fill_own_commits(names)
        if indexer.changed or indexer.own_commits_filled:  # else no history is read
            indexer.match_landings_off_the_line(names)
        indexer.match_rebased()
        indexer.match_closing()
        indexer.land_by_unnamed_merges()
        indexer.land_closed_along()
        if indexer.changed or indexer.own_commits_filled:
            # A PR that a later step found landed is merged, not landed in part: a first run
            # and a later one record the same.
            indexer.summary.landed_in_part = store.landings.drop_landed_in_part()
        indexer.derive_unknown_states(names)
        if indexer.changed:
            report("lookup indexes and code words", 0, None)
        store.lines.merge_texts()  # what counting old rows' words reads
        fill_code_words(store, indexer.counted)
        store.lines.build_lookup_indexes()
        if indexer.changed or store.get_meta("derived_stale") != "0":
            report("rarity and text model", 0, None)
            store.derived.refresh()
        store.set_meta("targets", ",".join(names))
        store.set_meta("reread_all", "0")
        if named:  # say which long-lived lines the named targets leave out
            indexer.summary.warnings += _untracked_lines(repo, indexer.summary, names)
        return indexer.summary
    finally:
        indexer.close()
        store.close()


def _untracked_lines(repo: git.Repo, summary: IndexSummary, targets: list[str]) -> list[str]:
    """Long-lived branches a target keeps merging in (a `stable` line that fixes land on first)
    that are no target: the PRs that landed there count as not merged, and their changes are
    credited to the merge commits that brought them. One line, the three most merged."""
    found: dict[str, list[tuple[str, int]]] = {}
    for (target, name), merges in summary.merged_branches.most_common():
        if merges >= 2 and name not in targets and gitsource.is_branch(repo, name):
            found.setdefault(target, []).append((name, merges))
    warnings = []
    for target, lines in found.items():
        shown = lines[:3]
        listed = ", ".join(f"'{name}' ({merges} merges)" for name, merges in shown)
        more = f" and {len(lines) - 3} more" if len(lines) > 3 else ""
        flags = " ".join(f"--target {name}" for name in [target, *(n for n, _ in shown)])
        warnings.append(
            f"{target} merges {listed}{more}: commits made there count only as parts of those "
            "merges (a PR that landed there, only where a commit names it); "
            f"index them too with {flags}"
        )
    return warnings


def _target_warnings(
    branches: Sequence[gitsource.TargetBranch | None], store: IndexStore
) -> list[str]:
    """Why a local branch was not read, and which earlier targets' merged rows linger."""
    warnings = [branch.note for branch in branches if branch and branch.note]
    names = {branch.name for branch in branches if branch}
    earlier = (store.get_meta("targets") or "").split(",")
    dropped = [name for name in earlier if name and name not in names]
    if dropped:
        warnings.append(
            f"an earlier run indexed {', '.join(dropped)}, not a target now: what it recorded "
            f"as merged stays in the index (delete {store.path} to start over)"
        )
    return warnings
