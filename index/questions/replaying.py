"""Read what a replay needs from git: the query's files at its base, and before and after each
candidate; and where the candidate sits in history relative to the query.

The comparison itself is pure (`detector.replay`); this module only reads blobs through
`git cat-file` processes (a replay's file versions asked together) and asks git about
ancestry, for the few candidates that can decide.
"""

from __future__ import annotations

import posixpath
import re
import weakref
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

import git

from detector.evidence import ChangeEvidence, Landing, PartLanded, Proof, RestAtTip, TipReplay
from detector.model import Change, FileChange, Hunk, NotADiff
from detector.replay import FileText, FileVersions, HunkReplay, Leftover, Replay, replay
from index.config import Settings
from index.git import gitsource, symbols
from index.git.commit_graph import CommitGraph
from index.metadata import earlier, landing_pr, names_pr
from index.questions.changes import parse_filtered
from index.questions.replay_memory import ReplayMemory, change_digest, replay_key

MAX_FILE_BYTES = 2_000_000
MAX_FILES = 60  # a change of more files is replayed on its first 60 (the rest stays residual)
MAX_REST_COMMITS = 20  # a part-landed PR's commits without a copy judged at the tip, at most
MAX_RANGE_COMMITS = 100  # of an open candidate's range, read for copies of merged commits
COPIES_READ_IN_TURN = (2, 8, MAX_RANGE_COMMITS)  # commits read at once, in turn, for copies
MAX_REVERT_DEPTH = 8  # reverts of reverts followed this deep (each one flips the change)
LABELLED_FILES = 3  # files of hunks found on the tip whose first commit there is looked for
HISTORY_AFTER = 16  # ancestry questions about one commit before its whole history is read
HISTORIES_KEPT = 4  # commits whose whole history is kept, per process
GRAPH_AFTER = 48  # ancestry questions put to git (~3 ms each) before the graph is read (~0.15 s)
SHARED_TEXT_CHARS = 40_000_000  # file versions kept across the queries of a sweep, per process


class GitAnswers:
    """git's answers about commits named by sha (ancestry, logs of a range), each asked once:
    they hold for as long as the repository's objects do. A failed command is remembered as
    failed."""

    def __init__(self, repo: git.Repo) -> None:
        self._repo = repo
        self._answers: dict[tuple[str, ...], str | git.GitCommandError] = {}
        self._ancestry: dict[tuple[str, str], bool] = {}
        self._asked: Counter[str] = Counter()  # ancestry questions by descendant
        self._histories: dict[str, frozenset[str] | None] = {}  # read whole (`_history`)
        self._sent = 0  # ancestry questions put to git, until the graph is read
        self._graph: CommitGraph | None = None

    def log(self, *args: str) -> str:
        return self._ask("log", *args)

    def rev_list(self, *args: str) -> str:
        return self._ask("rev_list", *args)

    def rev_parse(self, *args: str) -> str:
        return self._ask("rev_parse", *args)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        key = (ancestor, descendant)
        if key not in self._ancestry:
            history = self._history(descendant)
            if history is not None and gitsource.is_full_sha(ancestor):
                self._ancestry[key] = ancestor in history
            else:
                self._ancestry[key] = self._walked(ancestor, descendant)
        return self._ancestry[key]

    def _walked(self, ancestor: str, descendant: str) -> bool:
        """git's answer, from the refs' commit graph once many were asked (a `git` process
        per question costs more, `CommitGraph`), else from `git merge-base --is-ancestor`
        (a `check` asks a few: reading the graph would cost more); git itself answers about a
        commit the graph does not list (no ref reaches it, or a name like `sha^1`)."""
        if self._graph is None and self._sent >= GRAPH_AFTER:
            self._graph = CommitGraph.read(self._repo) or CommitGraph({})
        if self._graph is not None:
            found = self._graph.is_ancestor(ancestor, descendant)
            if found is not None:
                return found
        self._sent += 1
        return gitsource.is_ancestor(self._repo, ancestor, descendant)

    def _history(self, descendant: str) -> frozenset[str] | None:
        """`descendant`'s whole history, read once it is asked about often (a branch's tip,
        asked whether each landing is on it): one `git rev-list` costs what a few ancestry
        questions do."""
        if descendant in self._histories:
            return self._histories[descendant]
        self._asked[descendant] += 1
        if (
            self._asked[descendant] < HISTORY_AFTER
            or len(self._histories) >= HISTORIES_KEPT
            or not gitsource.is_full_sha(descendant)
        ):
            return None
        self._histories[descendant] = gitsource.history(self._repo, descendant)
        return self._histories[descendant]

    def _ask(self, command: str, *args: str) -> str:
        key = (command, *args)
        if key not in self._answers:
            try:
                self._answers[key] = getattr(self._repo.git, command)(*args)
            except git.GitCommandError as error:
                self._answers[key] = error
        answer = self._answers[key]
        if isinstance(answer, git.GitCommandError):
            raise answer
        return answer


@dataclass(frozen=True, slots=True)
class BranchReverts:
    """A branch's reverts, by what each reverts (the full sha its message names, the subject
    it quotes), with each revert's own subject and the PRs whose landing they quote."""

    by_key: dict[str, list[tuple[str, str]]]  # reverted sha or subject -> (revert, subject)
    subjects: dict[str, str]  # revert -> its subject
    prs: frozenset[int]  # PRs whose landing a revert quotes (`Revert "Title (#N)"`)

    @classmethod
    def of(cls, by_key: dict[str, list[tuple[str, str]]]) -> BranchReverts:
        return cls(
            by_key,
            {sha: line for listed in by_key.values() for sha, line in listed},
            frozenset(number for key in by_key if (number := landing_pr(key)[0])),
        )


@dataclass
class SharedReads:
    """What replaying reads that does not depend on the query, kept from one query to the
    next (a sweep replays many PRs at the same landings): file versions at a commit, as
    searchable text, the newest first up to `max_chars`, one text for a blob however many
    commits hold it (what a replay works out about a file version is worked out once); git's
    answers about commits; the commits and patch ids of ranges. Every key names commits by
    sha."""

    repo: git.Repo
    max_chars: int = SHARED_TEXT_CHARS
    texts: OrderedDict[str, tuple[FileText | None, int]] = field(default_factory=OrderedDict)
    # Each kept text by its blob's id (gone with the last `texts` entry holding it).
    by_blob: weakref.WeakValueDictionary[str, FileText] = field(
        default_factory=weakref.WeakValueDictionary
    )
    # Each kept text's characters and how many `texts` entries hold it, by its id: a text is
    # counted once against `max_chars` however many commits hold its blob.
    held: dict[int, list[int]] = field(default_factory=dict)
    ranges: dict[tuple[str, ...], set[str]] = field(default_factory=dict)
    # Each range's patch ids with when the first commit of each was made.
    range_made: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    # Each commit's patch id as the index computes it with those settings (None: it has
    # none, an empty commit or no diff): a long rebased range is asked about by many queries.
    commit_patches: dict[tuple[str, Settings], str | None] = field(default_factory=dict)
    patches_read: int = 0  # commits whose diff was read for `commit_patches`
    chars: int = 0
    blobs_read: int = 0  # file versions looked up in git, each at most once while it is kept
    contents_read: int = 0  # of those, the ones whose contents were read (no text kept)
    answers: GitAnswers | None = None
    blobs: gitsource.BlobReader | None = None  # its `git cat-file` processes, kept across queries
    # The reverts a branch's history holds, by tip: reverting commits by the sha they name
    # ("This reverts commit <sha>.") and by the subject they quote (`Revert "<subject>"`).
    reverts: dict[str, BranchReverts] = field(default_factory=dict)
    # Replays kept in the index by their inputs (`replay_memory`): read and made by every query.
    memory: ReplayMemory | None = None
    commits_held: set[str] = field(default_factory=set)  # commits the repository was seen to hold

    def git(self) -> GitAnswers:
        if self.answers is None:
            self.answers = GitAnswers(self.repo)
        return self.answers

    def reader(self) -> gitsource.BlobReader:
        if self.blobs is None:
            self.blobs = gitsource.BlobReader(self.repo)
        return self.blobs

    def reverts_on(self, tip: str) -> BranchReverts:
        """The reverts in `tip`'s history: read once per branch tip with one `git log`,
        however many landings are asked about, unless the index keeps that tip's (`memory`;
        those read are handed to it to keep)."""
        if tip not in self.reverts:
            memory = self.memory
            found = memory.reverts(tip) if memory is not None else None
            if found is None:
                found = gitsource.reverts_in(self.repo, tip)
                if memory is not None:
                    memory.reverts_read[tip] = found
            self.reverts[tip] = BranchReverts.of(found)
        return self.reverts[tip]

    def close(self) -> None:
        """End the git processes these reads started."""
        if self.blobs is not None:
            self.blobs.close()
            self.blobs = None

    def text(
        self,
        spec: str,
        read: Callable[[str], tuple[str, bytes | str] | None],
        identify: Callable[[str], tuple[str, int] | None] | None = None,
    ) -> FileText | None:
        """The blob `commit:path` as text (None where there is none), read once; `read`
        gives the blob's id and contents, `identify` its id and size alone: a blob whose text
        is kept is not read again under another commit."""
        if spec in self.texts:
            self.texts.move_to_end(spec)
            return self.texts[spec][0]
        self.blobs_read += 1
        known = identify(spec) if identify is not None else None
        text = self.by_blob.get(known[0]) if known is not None else None
        size = known[1] if known is not None and text is not None else 0
        if text is None:
            found = read(known[0] if known is not None else spec)
            if found is not None:
                self.contents_read += 1
                blob, data = found
                size = len(data)
                text = self.by_blob.get(blob)
                if text is None:
                    text = FileText(_lines(data))
                    self.by_blob[blob] = text
        self.texts[spec] = (text, size)
        self._hold(text, size)
        while self.chars > self.max_chars and len(self.texts) > 1:
            _, (dropped, _) = self.texts.popitem(last=False)
            self._let_go(dropped)
        return text

    def _hold(self, text: FileText | None, size: int) -> None:
        """One more entry holds `text`: its characters count from the first."""
        if text is None:
            return
        held = self.held.setdefault(id(text), [0, size])
        if held[0] == 0:
            self.chars += size
        held[0] += 1

    def _let_go(self, text: FileText | None) -> None:
        """An entry holding `text` is dropped: its characters stop counting with the last."""
        if text is None:
            return
        held = self.held[id(text)]
        held[0] -= 1
        if held[0] == 0:
            del self.held[id(text)]
            self.chars -= held[1]


@dataclass(frozen=True, slots=True)
class QueryHistory:
    """Where the query starts and ends, and the branch it is for (None when unknown)."""

    base: str | None
    head: str | None
    line_tip: str | None
    line_name: str | None
    merged: bool = False
    landing: str | None = None  # where a merged query landed (its merge or squash commit)
    merged_at: str | None = None  # when a merged query landed
    number: int | None = None  # the query's PR number


class Replayer:
    """Replays one query change at any number of candidates, reading each blob once."""

    def __init__(
        self,
        repo: git.Repo,
        change: Change,
        history: QueryHistory,
        settings: Settings,
        landed_patches: Callable[[set[str]], Mapping[str, str | None]] | None = None,
        shared: SharedReads | None = None,
    ) -> None:
        self._repo = repo
        self._digest: str | None = None  # this change's, once a kept replay is asked for
        self._shared = shared if shared is not None else SharedReads(repo)
        self._git = self._shared.git()
        self._settings = settings
        # Which of these patches some merged change has, and when the first of those landed.
        self._landed_patches = landed_patches
        self._on_target: bool | None = None
        self._own_commits: set[str] | None = None  # this change's own commits, once read
        self._patches = self._shared.ranges  # by range: the same for every query
        self._range_made = self._shared.range_made  # `_range_patches`, by range too
        self._blobs = self._shared.reader()
        # What `_prefetch` asked git for the `_versions` being read: blob ids by name, and
        # texts by name (None: no text there).
        self._identified: dict[str, tuple[str, int] | None] = {}
        self._fetched: dict[str, tuple[str, str] | None] = {}
        self._history = history
        readable = [f for f in change.files if f.hunks and f.status != "binary"]
        self._files = readable[:MAX_FILES]
        self._cut = len(readable) > MAX_FILES  # some of its files are not replayed
        self._change = Change(files=tuple(self._files))
        self._patch_id = change.patch_id
        self._base_texts: dict[str, FileText | None] = {}
        self._blocks: dict = {}  # each hunk's blocks, built once for all candidates
        # Each file version's definitions, by the version's id (`_definitions`), once parsed.
        self._parsed: dict[int, tuple[object, tuple[tuple[str, int], ...]]] = {}
        # Where each file this change edits went at its branch's tip (None: not moved), asked
        # of git once per query, however many candidates' rests are replayed there.
        self._moves: dict[str, str | None] = {}
        # The PRs whose landing commit this change's own range holds (`Title (#M)`), once read.
        self._range_landings: set[int] | None = None

    def prove(self, candidate: ChangeEvidence, may_supersede: bool = True) -> Proof | None:
        """Replay at the candidate: its landing for a merged one, its head for an open one.
        `may_supersede`: the guards a landing needs before its rewrite can supersede this
        change hold for it (`detector.matcher.may_supersede`); else a rewrite alone asks git
        nothing more (most landings that rewrote an old PR's lines since fail them)."""
        span = self._span(candidate)
        if span is None:
            return None
        before, after = span
        # A file the candidate did not change is the same before and after it: nothing of
        # this change can turn there, so it is not read. (A landing the index does not know,
        # or one that changes no file it reads, has no file list: all are read. A candidate
        # read for this query lists only the query's files it changed, and how many it has.)
        touched = candidate.files
        listed = bool(touched or candidate.file_count)
        files = [f for f in self._files if not listed or f.path in touched or f.old_path in touched]
        result = self._replayed(files, before, after)
        rewrote = may_supersede and (result.rewrote or result.created_the_files)
        proof = self._placed(candidate, before, after, result, rewrote)
        # A landing that did a part, or rewrote the lines this change edits: what the rest is
        # on the branch's tip decides between partly done, done, superseded or no verdict.
        turned_or_rewrote = result.partial or rewrote
        if candidate.state == "merged" and turned_or_rewrote and not proof.after_query:
            proof = replace(proof, tip=self._at_tip(result))
        if candidate.state == "merged" and (result.complete or turned_or_rewrote):
            reverted = self._reverted_since(after, result, candidate.number)
            if reverted is not None:
                proof = replace(proof, reverted_by=reverted)
        return proof

    def _replayed(self, files: list[FileChange], before: str, after: str) -> Replay:
        """This change replayed in `files` between `before` and `after`: kept from an earlier
        replay of the same inputs where there is one (`replay_memory`), else replayed."""
        memory = self._shared.memory
        if memory is None:
            return replay(self._change, self._versions(files, before, after), after, self._blocks)
        key = replay_key(self._change_digest(), before, after, [f.path for f in files])
        kept = memory.get(key)
        if kept is not None:
            return kept[0]
        result = replay(self._change, self._versions(files, before, after), after, self._blocks)
        if self._all_read(files, before, after):
            memory.put(key, self._history.head or self._change_digest(), result)
        return result

    def _all_read(self, files: list[FileChange], *commits: str | None) -> bool:
        """Every input of a replay was there to read: its commits (a runner's clone may lack a
        candidate's head until it is fetched) and this change's files at its base. A replay
        that missed one says what this clone lacks, not what the commits hold: not kept."""
        held = self._shared.commits_held
        for commit in (*commits, self._history.base):
            if commit and commit not in held:
                if not self._blobs.has_commit(commit):
                    return False
                held.add(commit)
        return all(f.status == "added" or self._base_texts.get(f.path) is not None for f in files)

    def _change_digest(self) -> str:
        if self._digest is None:
            self._digest = change_digest(self._change, self._history.base)
        return self._digest

    def _reverted_since(self, landing: str, landed: Replay, number: int | None) -> str | None:
        """The commit that took this landing off its line again (`Revert "Title (#N)"`, "This
        reverts commit <landing>"), where the line's tip does not hold what the landing did:
        a change reverted since (and not made again) is not on the target, so it is not done.
        Not for a change whose own commits the tip may hold (merged, or its head reachable)."""
        history = self._history
        tip = history.line_tip
        if not tip or history.merged or landing == tip:
            return None
        if history.head and self._git.is_ancestor(history.head, tip):
            return None
        branch = self._shared.reverts_on(tip)
        reverts, subjects = branch.by_key, branch.subjects
        # Only a landing some revert names (by its sha, or by the PR its quoted subject lands)
        # is asked about: most landings never were, and git is not asked about them.
        if landing not in reverts and (number is not None and number not in branch.prs):
            return None
        if not reverts or not self._git.is_ancestor(landing, tip):
            return None

        def reverting(commit: str) -> list[str]:
            """The reverts of `commit` after it, oldest first (by its sha, then its subject)."""
            subject = subjects.get(commit)
            if subject is None and commit == landing:
                try:
                    subject = self._git.log("-1", "--format=%s", commit).strip()
                except git.GitCommandError:
                    subject = ""
            named = [*reverts.get(commit, ()), *(reverts.get(subject, ()) if subject else ())]
            after = [sha for sha, _ in dict.fromkeys(named) if self._git.is_ancestor(commit, sha)]
            return after[::-1]

        def in_effect(revert: str, depth: int = 0) -> bool:
            """Not itself reverted by a revert still in effect ("Revert "Revert ..."" brought
            the change back; a third revert took it off again)."""
            return depth >= MAX_REVERT_DEPTH or not any(
                in_effect(undo, depth + 1) for undo in reverting(revert)
            )

        found = [revert for revert in reverting(landing) if in_effect(revert)]
        if not found:
            return None
        made = [h for h in landed.hunks if h.weight and h.turned]
        files = [f for f in self._files if f.path in {h.path for h in made}]
        at_tip = replay(
            Change(files=tuple(files)), self._versions(files, None, tip), tip, self._blocks
        )
        there = {
            (h.path, h.first_line, h.last_line)
            for h in at_tip.hunks
            if h.after == "there" or h.removal_made
        }
        if all((h.path, h.first_line, h.last_line) in there for h in made):
            return None  # made again since (by a change not named here): the tip has it
        return self._commit_label(found[0])

    def mark_made_again(self, landed: list[ChangeEvidence], proofs: dict[str, Proof]) -> None:
        """Among landings that each made the whole change, one whose landing a later one
        already had before it (and still made the whole change: it had been taken off since)
        is marked with that later one: a revert and the fix made again (axios #2189, reverted,
        made again by #4942). A merge-up lands on a line that lacked the fix it carries. The
        later one counts only where nothing refuses it (a revert of the revert restores, a
        landing on another line is a port, one reverted in its turn is not on the target), and
        the latest of several is named: the one the target holds."""
        counting = [
            c
            for c in landed
            if not (
                (p := proofs[c.key]).restores
                or p.other_line
                or p.unlanded
                or p.in_query_base
                or p.after_query
                or p.reverted_by
            )
        ]
        starts = {c.key: span[0] for c in counting if (span := self._span(c)) is not None}

        def remakes(commit: str, later: ChangeEvidence) -> bool:
            start = starts.get(later.key)
            return start is not None and start != commit and self._git.is_ancestor(commit, start)

        for first in landed:
            commit = proofs[first.key].replay.commit
            later = [c for c in counting if c is not first and remakes(commit, c)]
            last = [
                c for c in later if not any(remakes(proofs[c.key].replay.commit, o) for o in later)
            ]
            if last:
                proofs[first.key] = replace(proofs[first.key], made_again_by=last[0].key)

    def _at_tip(self, landed: Replay) -> TipReplay | None:
        """This change replayed at its branch's tip, for the hunks a landing left: another
        change may have made them since (or before), or the tip no longer has their file.
        Not for a change whose own commits the tip may hold (merged, or its head reachable)."""
        left = {h.path for h in landed.hunks if h.weight and not h.turned}
        found = self._replayed_at_tip(left, landed.commit)
        if found is None or not found[1]:
            return None
        at_tip, files = found
        left_over = Leftover.of(landed, at_tip.replay, at_tip.gone)
        # Which commits made the rest is looked for (by bisection, a replay at each step) only
        # where it decides what is said: the whole change done across the landing and them.
        if not left_over.done_on_tip(landed):
            return at_tip
        base, tip = self._history.base, self._history.line_tip
        assert base and tip
        landed_by = self._landed_by(left_over.on_tip, files, base, tip, at_tip.moved)
        return replace(at_tip, landed_by=landed_by)

    def rest_at_tip(self, part: PartLanded) -> RestAtTip:
        """Each commit of this change with no copy on its branch (`PartLanded.remaining`), its
        own patch replayed at the tip of the branch the copies are on (this change's own, or a
        release line its commits were picked to), and those its later commits undid. For a
        few commits, their diffs read through one `git diff-tree`; a commit git cannot diff,
        cut at the line limit, or with a file no replay reads (a binary file, a rename alone)
        is left out: still to do."""
        last = part.landed[-1].landed_as if part.landed else None
        remaining = part.remaining
        if last is None or part.target is None or len(remaining) > MAX_REST_COMMITS:
            return RestAtTip()
        line = self._history
        if part.target != line.line_name:
            branch = gitsource.target_branch(self._repo, part.target, required=False)
            if branch is None:
                return RestAtTip()
            line = replace(line, line_tip=branch.tip, line_name=part.target)
        tip, base, head = line.line_tip, line.base, line.head
        if not (tip and base and head) or line.merged or self._git.is_ancestor(head, tip):
            return RestAtTip()
        try:
            listed = self._git.rev_list("--no-walk", "--parents", *(c.sha for c in remaining))
            net = set(self._repo.git.diff("--name-only", "--no-renames", base, head).split("\n"))
        except git.GitCommandError:
            return RestAtTip()
        parents = {sha: rest[0] for sha, *rest in map(str.split, listed.splitlines()) if rest}
        undone = frozenset(
            c.sha for c in remaining if c.files and not net & set(c.files) and c.sha in parents
        )
        spans = [(parents[c.sha], c.sha) for c in remaining if c.sha in parents]
        diffs = gitsource.diffs_between(self._repo, [s for s in spans if s[1] not in undone])
        found: dict[str, TipReplay] = {}
        for (parent, sha), diff in diffs.items():
            try:
                change, cut = parse_filtered(diff, self._settings)
            except NotADiff:
                continue
            if cut or not change.files or any(not f.hunks for f in change.files):
                continue
            history = replace(line, base=parent, head=sha)
            own = Replayer(self._repo, change, history, self._settings, shared=self._shared)
            if len(own._files) < len(change.files):
                continue  # a binary file, or past MAX_FILES: not all of it can be read
            replayed = own._replayed_at_tip({f.path for f in own._files}, last)
            if replayed is not None and any(h.weight for h in replayed[0].replay.hunks):
                found[sha] = replayed[0]
        return RestAtTip(found, undone)

    def _replayed_at_tip(
        self, paths: set[str], landed: str
    ) -> tuple[TipReplay, list[FileChange]] | None:
        """This change's hunks in `paths` replayed at its branch's tip from its own base, with
        the files the tip no longer has (a file it creates counts as gone only where its
        folder went: it was there at the base or at `landed`, and the tip has it no more),
        and the files replayed (none where the change has no hunk in `paths`). Not for a
        change whose own commits the tip may hold (merged, or its head reachable)."""
        history = self._history
        tip, base = history.line_tip, history.base
        if not (tip and base) or history.merged:
            return None
        if history.head and self._git.is_ancestor(history.head, tip):
            return None
        files = [f for f in self._files if f.path in paths]
        branch = history.line_name or "the target"
        # Kept by its inputs: the hunks, the tip, the head (its definitions) and the landing
        # (the folders it put files in).
        memory = self._shared.memory
        inputs = [f.path for f in files] + [f"head {history.head}", f"landed {landed}"]
        key = replay_key(self._change_digest(), None, tip, inputs) if memory else ""
        kept = memory.get(key) if memory else None
        if kept is not None:
            tip_replay = TipReplay(kept.replay, branch, gone=kept.gone, moved=kept.moved)
            return tip_replay, files
        versions = self._versions(files, None, tip)
        moved = self._moved_since(files, versions, base, tip)
        self._read_moved(versions, files, tip, moved)
        at_tip = replay(Change(files=tuple(files)), versions, tip, self._blocks)
        at_tip = self._defined_there(at_tip, files, versions)
        gone = frozenset(
            f.path
            for f in files
            if versions[f.path].after is None
            and (f.status != "added" or self._folder_gone(f.path, (base, landed), tip))
        )
        if memory is not None and self._all_read(files, tip, history.head, landed):
            memory.put(key, history.head or self._change_digest(), at_tip, gone, moved)
        return TipReplay(replay=at_tip, branch=branch, gone=gone, moved=moved), files

    def _read_moved(
        self,
        versions: dict[str, FileVersions],
        files: list[FileChange],
        commit: str,
        moved: Mapping[str, str],
    ) -> None:
        """A moved file as `commit` has it where it went, where it has none by its name."""
        for f in files:
            if f.path in moved and versions[f.path].after is None:
                there = replace(f, path=moved[f.path], old_path=moved[f.path])
                versions[f.path] = replace(versions[f.path], after=self._text_at(commit, there))

    def _moved_since(
        self, files: list[FileChange], versions: Mapping[str, FileVersions], base: str, tip: str
    ) -> dict[str, str]:
        """The files this change edits that the tip no longer has by that name but has moved
        (git finds the rename from this change's base to the tip): its hunks are replayed in
        the file where it went, not called gone. An empty file is not followed (git pairs
        any two empty files)."""
        missing = [
            f
            for f in files
            if versions[f.path].after is None and f.status != "added" and versions[f.path].base
        ]
        unasked = [f.old_path for f in missing if f.old_path not in self._moves]
        if unasked:
            renamed = gitsource.renamed_between(self._repo, base, tip, unasked)
            self._moves.update((old, renamed.get(old)) for old in unasked)
        moved = {f.path: self._moves[f.old_path] for f in missing}
        return {path: there for path, there in moved.items() if there and there != path}

    def _defined_there(
        self, at_tip: Replay, files: list[FileChange], versions: Mapping[str, FileVersions]
    ) -> Replay:
        """A hunk that would still apply to the tip, adds lines only, and starts definitions the
        tip's file already has, each of them (by its qualified name, `Receiver.is_closed`,
        where this change's base had none of that name), was written otherwise there: the
        function is on the branch, in another body. Read with the language's parser, for
        these hunks only."""
        head = self._history.head
        by_path = {f.path: f for f in files}
        found: list[HunkReplay] = []
        new_at_tip: dict[str, frozenset[str]] = {}  # by path: defined at the tip, not the base
        for replayed in at_tip.hunks:
            file = by_path.get(replayed.path)
            hunk = _hunk_at(file, replayed.first_line) if file is not None else None
            texts = versions.get(replayed.path)
            if (
                head is None
                or replayed.after != "new"
                or not replayed.weight
                or hunk is None
                or any(line.side == "-" for line in hunk.lines)
                or texts is None
                or texts.after is None
            ):
                found.append(replayed)
                continue
            assert file is not None  # (a hunk was found in it)
            path = file.path
            added = {
                name
                for name, start in self._definitions(path, self._text_at(head, file))
                if replayed.first_line <= start <= replayed.last_line
            }
            if path not in new_at_tip:
                new_at_tip[path] = frozenset(
                    name for name, _ in self._definitions(path, texts.after)
                ) - {name for name, _ in self._definitions(path, texts.base)}
            there = bool(added) and added <= new_at_tip[path]
            found.append(replace(replayed, defined_there=True) if there else replayed)
        return replace(at_tip, hunks=tuple(found))

    def _definitions(
        self, path: str, text: FileText | Sequence[str] | None
    ) -> tuple[tuple[str, int], ...]:
        """The definitions of one version of a file (qualified name, first line), parsed once
        per version this replayer reads (the tip's file is asked of every candidate)."""
        if text is None:
            return ()
        known = self._parsed.get(id(text))
        if known is None:
            lines = text.lines if isinstance(text, FileText) else text
            source = "\n".join(lines).encode("utf-8", "surrogateescape")
            found = tuple((d.qualified, d.start_line) for d in symbols.definitions(path, source))
            known = self._parsed[id(text)] = (text, found)  # the text kept: its id stays its own
        return known[1]

    def _folder_gone(self, path: str, had: tuple[str, ...], tip: str) -> bool:
        """The folder a file this change creates goes in was there (at its base, or where the
        landing put it) and the tip no longer has it (a crate removed, examples moved to their
        own repository): nothing of it is left to apply."""
        folder = posixpath.dirname(path)
        return (
            bool(folder)
            and not self._has(tip, folder)
            and any(self._has(commit, folder) for commit in had)
        )

    def _has(self, commit: str, path: str) -> bool:
        try:
            self._git.rev_parse("--verify", "--quiet", f"{commit}:{path}")
        except git.GitCommandError:
            return False
        return True

    def _landed_by(
        self,
        hunks: Iterable[HunkReplay],
        files: list[FileChange],
        base: str,
        tip: str,
        moved: Mapping[str, str],
    ) -> dict[tuple[str, int], str]:
        """The first commit of the branch's first-parent line after this change's base whose
        version of a file holds that file's hunks (found by bisection), as its PR ("#135") or
        its short sha; a file the tip moved read by either name."""
        hunks = list(hunks)
        paths = sorted({h.path for h in hunks})
        if not hunks:
            return {}
        named = sorted({*paths, *(moved[path] for path in paths if path in moved)})
        try:
            line = self._git.rev_list(
                "--first-parent", "--reverse", f"{base}..{tip}", "--", *named
            ).split()
        except git.GitCommandError:
            return {}
        by_path = {f.path: f for f in files if f.path in paths}

        def all_there(path: str, wanted: list[HunkReplay], commit: str) -> bool:
            # A file replays on its own (a hunk's place is found within its file): one file
            # at each commit the bisection visits, not the whole change.
            file = [by_path[path]]
            versions = self._versions(file, None, commit)
            self._read_moved(versions, file, commit, moved)
            done = replay(Change(files=tuple(file)), versions, commit, self._blocks)
            found = {(h.path, h.first_line): h for h in done.hunks}
            return all(
                (h := found.get((hunk.path, hunk.first_line))) is not None
                and (h.after == "there" or h.removal_made or h.entries_there)
                for hunk in wanted
            )

        landed: dict[tuple[str, int], str] = {}
        # One bisection per file, for the first files (the rest are said on the tip without
        # "first there"): the first commit of the line whose version of the file holds all of
        # its hunks found on the tip. The line's last commit has the tip's version: it holds them.
        for path in paths[:LABELLED_FILES]:
            wanted = [hunk for hunk in hunks if hunk.path == path]
            low, high = 0, len(line) - 1
            if high < 0:
                break
            while low < high:
                middle = (low + high) // 2
                if all_there(path, wanted, line[middle]):
                    high = middle
                else:
                    low = middle + 1
            label = self._commit_label(line[low])
            landed.update(((hunk.path, hunk.first_line), label) for hunk in wanted)
        return landed

    def _commit_label(self, commit: str) -> str:
        """A target commit as its PR where its subject names it (`Title (#135)`), else its sha."""
        try:
            subject = self._git.log("-1", "--format=%s", commit)
        except git.GitCommandError:
            return commit[:10]
        number, _ = landing_pr(subject)
        return f"#{number}" if number is not None else commit[:10]

    def _span(self, candidate: ChangeEvidence) -> tuple[str, str] | None:
        if candidate.state == "merged":
            landing = candidate.commit
            if not landing:
                return None
            if candidate.landing_base:
                # Landed as copies of its commits (a rebase): from before the first to the last.
                return candidate.landing_base, landing
            if landing == candidate.head_commit and candidate.base_commit:
                # Landed as its own commits (a fast-forward, or a merge the index does not
                # name): the change is the PR's range, from its fork point to its head.
                return candidate.base_commit, landing
            # `X^1:path` reads as a missing file where X has no parent: then nothing was there.
            return f"{landing}^1", landing
        if candidate.base_commit and candidate.head_commit:
            return candidate.base_commit, candidate.head_commit
        return None

    def _placed(
        self,
        candidate: ChangeEvidence,
        before: str,
        after: str,
        result: Replay,
        rewrote: bool = False,
    ) -> Proof:
        """Ancestry matters only where the replay turned: ask git only then. `before..after` is
        the candidate's change as it was replayed (`_span`)."""
        history = self._history
        reached_after = False
        if not (
            result.complete
            or result.partial
            or result.superseded
            or (rewrote and candidate.state == "merged")
            or candidate.patch_id == self._patch_id
        ):
            return Proof(replay=result)
        in_base = other_line = None
        carries = False
        repo = self._repo
        after_query = own_landing = stacked = unlanded = others_work = False
        if candidate.number is None:
            # A commit with no PR of its own that holds this change's head, or whose message
            # names it ("Merge branch 'hotfix/#6464-...'", "Closes #6464"): this change's own
            # landing.
            own_landing = (
                names_pr(candidate.title, history.number)
                or (history.number is not None and f"#{history.number}" in candidate.issues)
                or bool(history.head and self._git.is_ancestor(history.head, after))
                or self._own_commit(after)
            )
        if candidate.state == "merged" and candidate.number is not None:
            others_work = self._others_work(candidate, before, after, result)
        restores = self._restores(before, after, result)
        carries_landing = self._carries_landing(candidate, before, after)
        carries_its_commits = False
        if candidate.number is not None and candidate.state == "merged" and history.merged:
            # A PR that landed nothing but copies of this merged change's own commits (the
            # same author, the same moment; reworded as they landed) is where this change
            # landed, recorded under another number.
            own_landing = self._lands_only_copies(before, after)
        elif candidate.state == "merged" and (result.partial or rewrote):
            # The other way round: this branch carries copies of every commit the candidate
            # landed (built on a copy of its branch): what of this change it made is its own
            # work carried here, which supersedes nothing.
            carries_its_commits = self._lands_only_copies(before, after)
        picks_landing = sibling_port = opened_later = carries_candidate = False
        # Opened after this change (GitHub numbers PRs in order).
        opened_after = (
            history.number is not None
            and candidate.number is not None
            and candidate.number > history.number
        )
        if candidate.state == "merged":
            # Built on the candidate's branch before it landed (its head is in this branch):
            # what of this change it holds is that work, carried here.
            stacked = self._built_on(candidate.head_commit)
            tip = history.line_tip
            on_line = bool(tip and self._git.is_ancestor(after, tip))
            if history.base:
                in_base = self._git.is_ancestor(after, history.base)
                picks_landing = not in_base and self._picks_landing(candidate)
            if history.landing and history.landing != after:
                after_query = self._git.is_ancestor(history.landing, after)
            # A landing the index does not know (the query was merged by hand, or its commits
            # were rewritten) leaves the dates: a change merged later did not do it first.
            after_query = after_query or earlier(history.merged_at, candidate.merged_at)
            if tip and on_line and history.landing and not after_query:
                # Landed on another branch (a maintenance line merged up later): what counts
                # for this change is when a merge brought it to this change's branch.
                arrival = gitsource.merged_in_by(repo, after, tip)
                reached_after = bool(
                    arrival and self._git.is_ancestor(history.landing, f"{arrival}^1")
                )
                after_query = reached_after
            if tip and not on_line:
                # Not on this change's branch: landed on another one (a port), or, where the
                # index knows no landing and the head is on no branch, landed rewritten where
                # no commit says so; either way its head's content proves nothing about here.
                unlanded = after == candidate.head_commit
                other_line = None if unlanded else candidate.branch or "another branch"
            elif tip and history.base and not self._git.is_ancestor(history.base, tip):
                # This change did not start on the branch it is judged against (a backport
                # whose base branch no metadata names): that branch having it says nothing.
                other_line = candidate.branch or history.line_name or "another branch"
        else:
            # Opened once this change had landed, or after this change was opened (GitHub
            # numbers PRs in order; a head commit's date, all git knows without metadata, can
            # be older): whatever its branch holds, it came after, and this change landed.
            after_query = history.merged and earlier(history.merged_at, candidate.created_at)
            opened_later = (
                history.merged
                and history.number is not None
                and candidate.number is not None
                and candidate.number > history.number
            )
            carries = any(
                self._git.is_ancestor(own, after)
                for own in dict.fromkeys((history.head, history.landing))
                if own
            ) or self._carries_copies(candidate, after)
            stacked = self._stacked_on(candidate, after)
            sibling_port = self._same_pick(candidate, before, after)
            carries_candidate = self._carries_candidates_landing(candidate)
        not_own = candidate.state != "merged" and self._not_its_own_work(
            candidate, before, after, result
        )
        return Proof(
            replay=result,
            unlanded=unlanded,
            in_query_base=bool(in_base),
            other_line=other_line,
            carries_query=carries,
            via_target=candidate.state != "merged" and self._via_target(candidate, after),
            after_query=after_query,
            own_landing=own_landing,
            stacked=stacked,
            reached_after_query=reached_after,
            others_work=others_work,
            restores=restores,
            carries_landing=carries_landing,
            not_own=not_own,
            picks_landing=picks_landing,
            sibling_port=sibling_port,
            carries_candidate=carries_candidate,
            opened_later=opened_later,
            opened_after=opened_after,
            carries_its_commits=carries_its_commits,
        )

    def _landings_picked(self, start: str, end: str) -> dict[int, str]:
        """The PRs whose landing commit a range holds a copy of, by its subject (`(#M)`), each
        with when the newest such copy was committed."""
        try:
            listed = self._git.log(
                f"--max-count={MAX_RANGE_COMMITS}", "--format=%cI %s", f"{start}..{end}"
            )
        except git.GitCommandError:
            return {}
        picked: dict[int, str] = {}
        for line in listed.splitlines():
            when, _, subject = line.partition(" ")
            number = landing_pr(subject)[0]
            if number is not None:
                picked.setdefault(number, when)  # git log lists the newest first
        return picked

    def _same_pick(self, candidate: ChangeEvidence, start: str, end: str) -> bool:
        """This unmerged change and an unmerged candidate from another base both pick the same
        landed commit (`Title (#M)`): ports of #M to two lines, not one change opened twice."""
        history = self._history
        if history.merged or not history.base or not history.head:
            return False
        if not candidate.base_commit or candidate.base_commit == history.base:
            return False
        mine = self._landings_picked(history.base, history.head).keys() - {history.number}
        theirs = self._landings_picked(start, end).keys() - {candidate.number}
        return bool(mine & theirs)

    def _picks_landing(self, candidate: ChangeEvidence) -> bool:
        """This unmerged change's own range holds a commit whose subject lands the candidate
        (`Title (#M)` cherry-picked, subject and all), on a base that lacks the candidate's
        landing: it ports that landing to where it started (a backport to a release line
        merged up later, whose base branch no metadata names), it does not repeat it. Only a
        copy committed after the landing is a pick of it: one made before is the author's own
        squash, titled as it landed, the same change."""
        history = self._history
        if candidate.number is None or history.merged or not (history.base and history.head):
            return False
        picked = self._landings_picked(history.base, history.head).get(candidate.number)
        return picked is not None and earlier(candidate.merged_at, picked)

    def _carries_candidates_landing(self, candidate: ChangeEvidence) -> bool:
        """This change's own range holds a commit whose subject lands the unmerged candidate
        (`Title (#C)`, `Merge pull request #C`): the candidate landed on a branch the index
        does not follow, and this change carries that landing along (a PR syncing one branch
        into another brings the landings made there): it does not repeat the candidate."""
        history = self._history
        if candidate.number is None or candidate.number == history.number:
            return False
        if not (history.base and history.head):
            return False
        if self._range_landings is None:
            # The whole range, however long (a branch synced after months holds hundreds of
            # commits), read once for every candidate of this change.
            try:
                listed = self._git.log("--format=%s", f"{history.base}..{history.head}")
            except git.GitCommandError:
                listed = ""
            self._range_landings = {
                number for line in listed.splitlines() if (number := landing_pr(line)[0])
            }
        return candidate.number in self._range_landings

    def _carries_landing(self, candidate: ChangeEvidence, start: str, end: str) -> bool:
        """The candidate's change holds a commit whose subject lands this merged change (its
        squash `Title (#Q)`, its merge, a merge tool's `bug #Q ...`), picked or rebased along:
        it carries this change's landing, it did not make the change. (Only a landed change
        has such a commit; a takeover of a closed one carries its commits, not its landing.)
        The commit says this change landed even where the index has not found where (a squash
        on a release line merged up by a merge that names another PR)."""
        number = self._history.number
        if number is None or number == candidate.number:
            return False
        return number in self._landings_picked(start, end)

    def _not_its_own_work(
        self, candidate: ChangeEvidence, start: str, head: str, result: Replay
    ) -> bool:
        """An unmerged candidate's range holds more than its own work, and the commits of it
        that touch what turned are none of its own: copies of commits already on a target
        (a fork point years old, its branch rebased over upstream's history), commits merged
        in from other branches (off its head's first-parent line), a merge squashed into one
        commit, another PR's landing picked along, the revert of a merge its branch took by
        mistake (its range then starts at what that merge brought, and the revert reads as
        undoing the target's work). Its head holding this change proves
        nothing about its work. Only the commits touching those files are read, however long
        the range: the copy that brought this change may be hundreds of commits down. A commit
        whose patch a merged change has is a copy only if that change landed before the commit
        was made: one made first is the original, its later landing the copy."""
        paths = sorted({h.path for h in result.hunks if h.turned})
        if not paths:
            return False
        try:
            own_line = set(
                self._git.rev_list("--first-parent", "--no-merges", f"{start}..{head}").split()
            )
            listed = self._git.log(
                "--no-merges",
                f"--max-count={MAX_RANGE_COMMITS}",
                "--format=%H%x1f%P%x1f%cI%x1f%s",
                f"{start}..{head}",
                "--",
                *paths,
            )
        except git.GitCommandError:
            return False
        touching = [
            line.split("\x1f", 3) for line in listed.splitlines() if line.count("\x1f") == 3
        ]
        if not touching or not own_line - {sha for sha, *_ in touching}:
            return False  # nothing but these commits: its own change, or proposed again
        maybe_own: list[tuple[str, str]] = []
        made: dict[str, str] = {}  # when each commit was last written (a rebase rewrites it)
        for sha, parents, committed, subject in touching:
            named, _ = landing_pr(subject)
            if sha not in own_line or _SQUASHED_MERGE.match(subject):
                continue  # merged in from another branch, or a merge squashed into one commit
            if named is not None and named != candidate.number:
                continue  # another PR's landing (its squash, its merge tool's commit) picked along
            if subject.startswith('Revert "Merge') and self._reverts_within(sha, start, head):
                continue  # undoes a merge its own branch took by mistake: undoes, makes nothing
            maybe_own.append((sha, parents.split()[0] if parents else ""))
            made[sha] = committed
        if not maybe_own:
            return True
        landed_patches = self._landed_patches
        if landed_patches is None or len(maybe_own) > MAX_RANGE_COMMITS:
            return False
        if not all(parent for _, parent in maybe_own):
            return False  # a root commit: its patch is unknown, and it may be its own
        # Newest first, a few at a time: one commit of its own answers, and reading every
        # commit's patch (a rebased branch's hundred) would be for nothing.
        start_at = 0
        for size in COPIES_READ_IN_TURN:
            part = maybe_own[start_at : start_at + size]
            start_at += size
            if not part:
                break
            patches = self._commit_patches(part)
            if len(patches) < len(part):
                return False  # a commit with no patch (an empty one) may be its own
            landed = landed_patches(set(patches.values()))
            # A landing time unknown cannot show the commit came first: read as a copy.
            if not all(
                patch in landed and not earlier(made[sha], landed[patch])
                for sha, patch in patches.items()
            ):
                return False
        return True

    def _reverts_within(self, sha: str, start: str, head: str) -> bool:
        """The commit reverts one of `start..head` (git's "This reverts commit X")."""
        try:
            message = self._git.log("-1", "--format=%B", sha)
        except git.GitCommandError:
            return False
        return any(
            self._git.is_ancestor(reverted, head) and not self._git.is_ancestor(reverted, start)
            for reverted in _REVERTS.findall(message)
        )

    def _commit_patches(self, pairs: list[tuple[str, str]]) -> dict[str, str]:
        """Each commit's patch id, as the index computes it (`parse_filtered`); each commit is
        read once per process (`SharedReads.commit_patches`)."""
        known, settings = self._shared.commit_patches, self._settings
        unread = [pair for pair in pairs if (pair[0], settings) not in known]
        try:
            for sha, patch in self._patches_of(unread):
                known[(sha, settings)] = patch
        except git.GitCommandError:
            # A commit whose objects this clone lacks (a partial clone, an incomplete
            # mirror): git stops there, and the answer is the patches before it in `pairs`,
            # whatever an earlier query read of the others.
            found: dict[str, str] = {}
            try:
                for sha, patch in self._patches_of(pairs):
                    if patch is not None:
                        found[sha] = patch
            except git.GitCommandError:
                pass
            return found
        answers = ((sha, known.get((sha, settings))) for sha, _ in pairs)
        return {sha: patch for sha, patch in answers if patch is not None}

    def _patches_of(self, pairs: list[tuple[str, str]]) -> Iterator[tuple[str, str | None]]:
        """Each commit's patch id in turn (None: no diff, or an empty one); git's error, if
        any, is raised where it stops."""
        for sha, diff in gitsource.diff_pairs(self._repo, pairs):
            self._shared.patches_read += 1
            try:
                change, _ = parse_filtered(diff, self._settings)
            except NotADiff:
                yield sha, None
                continue
            yield sha, None if change.is_empty else change.patch_id

    def _own_commit(self, commit: str) -> bool:
        """`commit` is one of this change's own commits (its branch holds it, its base does
        not): a commit a merge with no PR's name brought in with this change's branch, or a
        fast-forward of part of it, is recorded as the target's own, and is this change."""
        history = self._history
        return bool(
            history.head
            and history.base
            and commit != history.base
            and self._git.is_ancestor(commit, history.head)
            and not self._git.is_ancestor(commit, history.base)
        )

    def _built_on(self, head: str | None) -> bool:
        """This change's own commits sit on `head` (a landed candidate's head commit): its
        branch holds that head, and its base does not."""
        history = self._history
        return bool(
            head
            and history.head
            and history.base
            and head != history.head
            and self._git.is_ancestor(head, history.head)
            and not self._git.is_ancestor(head, history.base)
        )

    def _stacked_on(self, candidate: ChangeEvidence, head: str) -> bool:
        """This change's branch holds the unmerged candidate's commits (built on it, or
        carrying copies of them): what of it is there is the candidate's work carried here."""
        history = self._history
        if not history.head or history.head == head:
            return False
        if self._git.is_ancestor(head, history.head):
            return True
        if not (candidate.base_commit and history.base):
            return False
        own = self._own(history.base, history.head)
        theirs = self._range_commits(candidate.base_commit, head)
        return bool(theirs) and theirs <= own and theirs != own

    def _carries_copies(self, candidate: ChangeEvidence, head: str) -> bool:
        """The candidate's range holds copies of this change's own commits (cherry-picked or
        rebased) beside work of its own. A range that is nothing but such copies is this
        change proposed again: that is a duplicate, not a carrier."""
        history = self._history
        if not (candidate.base_commit and history.base and history.head):
            return False
        own = self._own(history.base, history.head)
        theirs = self._range_commits(candidate.base_commit, head)
        return bool(own & theirs) and bool(theirs - own)

    def _via_target(self, candidate: ChangeEvidence, head: str) -> bool:
        """The open candidate's range holds copies of commits already merged (a rebase that
        carried upstream commits along; made after those landed) beside its own, and the
        target already has this change: the candidate's head has it from those copies, not
        from work of its own."""
        if self._landed_patches is None or not candidate.base_commit:
            return False
        if not self._done_on_target():
            return False
        made = self._range_patches(candidate.base_commit, head)
        landed = self._landed_patches(set(made))
        # A commit made before the merged change with its patch landed is the original, not
        # a copy (`_not_its_own_work`).
        copies = {patch for patch, when in landed.items() if not earlier(made[patch], when)}
        # A range that is nothing but such a copy is that change, proposed again: a duplicate
        # in its own right. Copies beside work of its own were carried along.
        return bool(copies) and bool(made.keys() - copies)

    def _restores(self, start: str, landing: str, result: Replay) -> bool:
        """The candidate reverts a commit that came after this change started, and what turned
        was already there before that commit: the revert brought back an earlier state, made
        by something else first. (A change that reverts the same commit starts after it.)"""
        base = self._history.base
        if not base:
            return False
        try:
            messages = self._git.log("--format=%B", f"{start}..{landing}")
        except git.GitCommandError:
            return False
        turned = {(h.path, h.first_line) for h in result.hunks if h.turned}
        files = [f for f in self._files if f.path in {path for path, _ in turned}]
        for reverted in self._reverted(messages, base, start):
            earlier = replay(
                self._change, self._versions(files, None, f"{reverted}^1"), reverted, self._blocks
            )
            there = {(h.path, h.first_line) for h in earlier.hunks if h.after == "there" or h.how}
            if turned and turned <= there:
                return True
        return False

    def _reverted(self, messages: str, base: str, start: str) -> list[str]:
        """The commits these messages revert that came after this change started
        (`base..start`): only such a revert can restore. Named by git's "This reverts commit
        X" (not a commit of the candidate's own range, undone inside it: its own history; nor
        one this change started after: reverting that is this change too), or, as GitHub's
        revert button writes them, only by subject (`Revert "X"`): then the newest commit of
        `base..start` with that subject (searching the whole history costs 50 ms on
        ansible's)."""
        is_ancestor = self._git.is_ancestor
        found = [
            sha
            for sha in _REVERTS.findall(messages)
            if is_ancestor(sha, start) and not is_ancestor(sha, base)
        ]
        for subject in _REVERTED_SUBJECT.findall(messages):
            try:
                listed = self._git.log(
                    "-n", "50", "--format=%H%x1f%s", "-F", f"--grep={subject}", f"{base}..{start}"
                )
            except git.GitCommandError:
                continue
            found += [
                sha
                for sha, _, s in (line.partition("\x1f") for line in listed.splitlines())
                if s == subject
            ][:1]
        return list(dict.fromkeys(found))

    def _others_work(
        self, candidate: ChangeEvidence, start: str, landing: str, result: Replay
    ) -> bool:
        """A PR that landed as its own branch's commits (no merge commit names it) is credited
        with its whole range; where the range's commits that touch what turned are all by
        other people, the branch carried their work along (a fork's long-lived branch)."""
        if landing != candidate.head_commit:
            return False  # a merge or squash commit names it: its change is that commit's
        paths = sorted({h.path for h in result.hunks if h.turned})
        if not paths:
            return False
        try:
            # The branch's owner: the PR's author as the index knows it, and whoever wrote the
            # head commit (a GitHub login and a git name need not match).
            owner = self._git.log("-1", "--format=%an%x1f%ae", landing)
            listed = self._git.log(
                "--no-merges",
                "--format=%an%x1f%ae",
                f"{start}..{landing}",
                "--",
                *paths,
            )
        except git.GitCommandError:
            return False
        writers = _people(listed)
        return bool(writers) and not writers & (_people(owner) | candidate.identities)

    def _lands_only_copies(self, start: str, landing: str) -> bool:
        """`start..landing` (the candidate's change) is nothing but copies of this change's own
        commits."""
        history = self._history
        if not (history.base and history.head):
            return False
        own = {_written(c) for c in self._own(history.base, history.head)}
        theirs = {_written(c) for c in self._range_commits(start, landing)}
        return bool(theirs) and theirs <= own

    def _own(self, base: str, head: str) -> set[str]:
        if self._own_commits is None:
            self._own_commits = self._range_commits(base, head)
        return self._own_commits

    def _range_commits(self, base: str, head: str) -> set[str]:
        """The commits of `base..head` (the newest 100) as who wrote them, when and with what
        subject: a rebased or cherry-picked copy keeps all three, so copies compare equal
        without a diff being read (a patch id costs a diff per commit)."""
        key = ("commits", base, head)
        if key not in self._patches:
            try:
                listed = self._git.log(
                    "--no-merges",
                    f"--max-count={MAX_RANGE_COMMITS}",
                    "--format=%ae%x1f%at%x1f%s",
                    f"{base}..{head}",
                )
            except git.GitCommandError:
                listed = ""
            self._patches[key] = set(listed.splitlines())
        return self._patches[key]

    def _range_patches(self, base: str, head: str) -> dict[str, str]:
        """Patch ids of the commits in `base..head` (the newest 100), each with when the first
        commit of it was made, read once per range."""
        if (base, head) not in self._range_made:
            self._range_made[base, head] = self._read_range_patches(base, head)
        return self._range_made[base, head]

    def _read_range_patches(self, base: str, head: str) -> dict[str, str]:
        try:
            listed = self._git.log(
                "--no-merges",
                f"--max-count={MAX_RANGE_COMMITS}",
                "--format=%H %P%x1f%cI",
                f"{base}..{head}",
            )
        except git.GitCommandError:
            return {}
        made: dict[str, str] = {}
        pairs: list[tuple[str, str]] = []
        for line in listed.splitlines():
            shas, _, committed = line.partition("\x1f")
            sha, *parents = shas.split() or [""]
            if parents:  # a root commit has no patch to compare
                pairs.append((sha, parents[0]))
                made[sha] = committed
        first: dict[str, str] = {}
        for sha, patch in self._commit_patches(pairs).items():
            if patch not in first or earlier(made[sha], first[patch]):
                first[patch] = made[sha]
        return first

    def _done_on_target(self) -> bool:
        """This change, replayed at the tip of its branch: is it (partly) there already?"""
        if self._on_target is None:
            tip, base = self._history.line_tip, self._history.base
            self._on_target = False
            if tip and base:
                done = replay(
                    self._change, self._versions(self._files, None, tip), tip, self._blocks
                )
                self._on_target = done.complete or done.partial
        return self._on_target

    def _versions(
        self, files: Iterable[FileChange], before: str | None, after: str
    ) -> dict[str, FileVersions]:
        """Each file at this change's base and at `before` (None: this change's base too) and
        `after`."""
        files = list(files)
        self._prefetch(files, before, after)
        versions = {
            f.path: FileVersions(
                base=self._base_of(f),
                before=self._base_text(f) if before is None else self._text_at(before, f),
                after=self._text_at(after, f),
            )
            for f in files
        }
        self._identified, self._fetched = {}, {}
        return versions

    def _prefetch(self, files: list[FileChange], before: str | None, after: str) -> None:
        """Ask git, a list at a time, for what `_versions` is about to read one by one: the
        ids of the files at `before` and `after` (by their new paths) and at this change's
        base, then the texts of those no kept text holds. What it reads is what those reads
        would read; they take it from here."""
        shared = self._shared
        at = [commit for commit in (before, after) if commit is not None]
        named = [f"{commit}:{f.path}" for commit in at for f in files]
        blobs: list[str] = []
        for f in files:
            if f.path in self._base_texts or f.status == "added":
                continue
            if f.old_blob:
                blobs.append(f.old_blob)  # read by id, as `_read_base` does
            elif self._history.base:
                named.append(f"{self._history.base}:{f.old_path or f.path}")
        named = [spec for spec in named if spec not in shared.texts]
        blobs = [blob for blob in blobs if blob not in shared.texts]
        if len(named) + len(blobs) < 2:
            return  # one read or none: as quick one by one
        self._identified = self._blobs.identify_all(named)
        wanted = list(blobs)
        for spec, found in self._identified.items():
            if found is None:
                self._fetched[spec] = None  # no blob there: reading it finds none either
                continue
            if found[0] in shared.by_blob:
                continue
            if found[1] > MAX_FILE_BYTES:
                self._fetched[found[0]] = None
            else:
                wanted.append(found[0])
        self._fetched.update(self._blobs.read_texts(wanted, MAX_FILE_BYTES))

    def _identify(self, spec: str) -> tuple[str, int] | None:
        if spec in self._identified:
            return self._identified[spec]
        return self._blobs.identify(spec)

    def _base_of(self, file: FileChange) -> list[str] | None:
        """The query's own version of the file, its lines (right-hand whitespace dropped:
        every reader of them drops it)."""
        text = self._base_text(file)
        return None if text is None else text.lines

    def _base_text(self, file: FileChange) -> FileText | None:
        """The query's own version of the file as text, read once, when a replay first needs
        it; shared with the other queries' replays (PRs forked from one commit start from the
        same blobs)."""
        if file.path not in self._base_texts:
            self._base_texts[file.path] = self._read_base(file)
        return self._base_texts[file.path]

    def _read_base(self, file: FileChange) -> FileText | None:
        if file.status == "added":
            return FileText([])
        if file.old_blob:
            text = self._shared.text(file.old_blob, self._read)
            if text is not None:
                return text
        if self._history.base:
            for path in dict.fromkeys((file.old_path, file.path)):
                spec = f"{self._history.base}:{path}"
                text = self._shared.text(spec, self._read, self._identify)
                if text is not None:
                    return text
        return None

    def _text_at(self, commit: str, file: FileChange) -> FileText | None:
        """The file at `commit` (by its new path, else its old one), as text shared with the
        other queries' replays."""
        for path in dict.fromkeys((file.path, file.old_path)):
            text = self._shared.text(f"{commit}:{path}", self._read, self._identify)
            if text is not None:
                return text
        return None

    def _read(self, spec: str) -> tuple[str, str] | None:
        if spec in self._fetched:
            return self._fetched[spec]
        return self._blobs.read_text(spec, MAX_FILE_BYTES)


def _hunk_at(file: FileChange, first_line: int) -> Hunk | None:
    """The hunk of `file` whose first added line is `first_line` (`HunkReplay.first_line`)."""
    for hunk in file.hunks:
        added = next((line.number for line in hunk.lines if line.side == "+"), None)
        if added == first_line:
            return hunk
    return None


def _lines(data: bytes | str) -> list[str]:
    text = data if isinstance(data, str) else data.decode("utf-8", "replace")
    return text.splitlines()


def prove_all(
    replayer: Replayer,
    candidates: Iterable[ChangeEvidence],
    may_supersede: Callable[[ChangeEvidence], bool] = lambda _: True,
) -> dict[str, Proof]:
    """Proofs by candidate key, for those that could be replayed; `may_supersede` says of a
    candidate whether its rewrite of this change's lines could supersede it."""
    proofs: dict[str, Proof] = {}
    landed: list[ChangeEvidence] = []
    for candidate in candidates:
        proof = replayer.prove(candidate, may_supersede(candidate))
        if proof is not None:
            proofs[candidate.key] = proof
            if candidate.state == "merged" and proof.replay.complete:
                landed.append(candidate)
    if len(landed) > 1:
        replayer.mark_made_again(landed, proofs)
    return proofs


def landing_candidates(
    landings: Iterable[Landing], known: Mapping[str, ChangeEvidence]
) -> list[ChangeEvidence]:
    """The candidates at the target commits the tip probe named: the index's own where it has
    them, else one made from the landing (a commit the index has not read yet)."""
    return [
        known.get(landing.key)
        or ChangeEvidence(
            key=landing.key,
            number=landing.number,
            commit=landing.commit,
            state="merged",
            title=landing.title,
            author=landing.author,
            author_email=landing.author_email,
            issues=frozenset(f"#{number}" for number in landing.mentions),
        )
        for landing in landings
    ]


# A merge squashed into one commit (`git merge --squash`, a tool that flattens the branch): it
# carries the other branch's work under a merge's subject.
_SQUASHED_MERGE = re.compile(
    r"^Merge (?:remote-tracking branch|branch|tag|commit|(?:\S+/)?(?:main|master|develop)\b)"
)
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})")
_REVERTED_SUBJECT = re.compile(r'^Revert "(.+)"\s*$', re.MULTILINE)


def _people(listed: str) -> set[str]:
    """Names and e-mails of `%an%x1f%ae` lines, lowercased as `ChangeEvidence.identities`."""
    return {part.strip().lower() for line in listed.splitlines() for part in line.split("\x1f")}


def _written(commit: str) -> str:
    """A commit as `_range_commits` lists it, without its subject: who wrote it and when."""
    return commit.rsplit("\x1f", 1)[0]
