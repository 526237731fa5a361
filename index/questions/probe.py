"""Is the change already on the target branch, and which commit or PR put it there?

Reads the target tip's version of each changed file (removed lines gone? added lines there?),
then names the landing: first from the index (merged changes that removed or added the same
lines), else with one pickaxe search (`git log -S`) for the rarest line, for commits the index
has not seen yet.
"""

from __future__ import annotations

import re
from dataclasses import replace

import git

from detector.evidence import Landing, LineWeights, TargetProbe
from detector.model import Change, FileChange, line_hash, normalise_line
from index.git import gitsource
from index.metadata import BRANCH_SYNC, landing_pr
from index.storage.store import IndexStore

MAX_FILE_BYTES = 2_000_000
MAX_LANDINGS = 3
_MENTION = re.compile(r"(?<![\w/])#(\d+)\b")  # `#123`, not `owner/repo#123` or `a#1`


class _TipText:
    """The tip's version of one file, asked "is this normalised line there?".

    Stripping every line is cheap; collapsing inner whitespace of a big file is not, so that
    only happens when a line is not found the cheap way.
    """

    def __init__(self, text: str) -> None:
        self._lines = text.splitlines()
        self._stripped = {line.strip() for line in self._lines}
        self._normalised: set[int] | None = None
        self._exact: set[str] | None = None

    def has(self, normalised: str) -> bool:
        if normalised != normalise_line(normalised):
            # A line of a hunk that changes whitespace alone (`detector.model.line_keys`):
            # there only as written, its whitespace too.
            if self._exact is None:
                self._exact = set(self._lines)
            return normalised in self._exact
        if normalised in self._stripped:
            return True
        if self._normalised is None:
            self._normalised = {line_hash(normalise_line(line)) for line in self._lines}
        return line_hash(normalised) in self._normalised


def _tip_text(blobs: gitsource.BlobReader, tip: str, file: FileChange) -> _TipText | None:
    for path in dict.fromkeys((file.path, file.old_path)):
        data = blobs.read(f"{tip}:{path}", MAX_FILE_BYTES)
        if data is not None:
            return _TipText(data.decode("utf-8"))  # the reader gives UTF-8
    return None


def probe_target(
    repo: git.Repo,
    store: IndexStore,
    change: Change,
    base: str | None,
    tip: str,
    weights: LineWeights,
) -> TargetProbe | None:
    """None when the target has not moved since the change's base (nothing can be there yet).

    Whether it moved is asked of git only when the tip shows the change: without a commit-graph
    that walk costs a large history more than the probe itself (0.13 s on ansible's)."""
    if base is None or base == tip:
        return None
    blobs = gitsource.BlobReader(repo)
    removed_total = removed_gone = added_total = added_present = 0.0
    gone: list[tuple[float, str, str]] = []  # (weight, raw text, path)
    gone_hashes: list[int] = []  # each gone line's `ChangedLine.hash`
    present: set[int] = set()
    for file in change.files:
        if not file.hunks:
            continue
        at_tip = _tip_text(blobs, tip, file)
        if at_tip is None:
            if file.status not in ("added", "removed"):
                # The file this change edits is gone from the tip (deleted or moved since):
                # its lines being absent says nothing about whether the edit was made.
                continue
            at_tip = _TipText("")
        for line in file.changed_lines:
            if line.trivial:
                continue
            weight = weights(line.hash)
            if line.side == "-":
                removed_total += weight
                if not at_tip.has(line.normalised):
                    removed_gone += weight
                    gone.append((weight, line.text.strip(), file.old_path))
                    gone_hashes.append(line.hash)
            else:
                added_total += weight
                if at_tip.has(line.normalised):
                    added_present += weight
                    present.add(line.hash)
    probe = TargetProbe(
        removed_gone=removed_gone / removed_total if removed_total else 0.0,
        added_present=added_present / added_total if added_total else 0.0,
        removed_weight=removed_total,
        added_weight=added_total,
    )
    if not probe.already_there:
        return probe
    if gitsource.is_ancestor(repo, tip, base):
        return None  # the change's base is ahead of the tip: the tip shows its old state
    removed_hashes = set(gone_hashes)
    # What landed on the target since the change's base, in one git call (not one per commit).
    since_base = set(repo.git.rev_list("--first-parent", f"{base}..{tip}").split())
    landings, explained = _landings_from_index(store, removed_hashes, present, since_base)
    unexplained = [g for g, h in zip(gone, gone_hashes, strict=True) if h not in explained]
    if unexplained and len(landings) < MAX_LANDINGS:
        known = {landing.commit for landing in landings}
        landings += [
            landing
            for landing in _landings_from_pickaxe(repo, base, tip, max(unexplained))
            if landing.commit not in known
        ]
    return replace(probe, landings=tuple(landings[:MAX_LANDINGS]))


def _landings_from_index(
    store: IndexStore, removed: set[int], added: set[int], since_base: set[str]
) -> tuple[list[Landing], set[int]]:
    """Merged changes since `base` that removed the lines now gone or added those now there.

    Also returns which of the removed lines those changes account for.
    """
    scores: dict[int, int] = {}
    removes: dict[int, set[int]] = {}
    # Removed lines first, then added ones, each by hash and change: ties keep that order.
    found = sorted(
        (
            (change_id, side, line)
            for change_id, side, line in store.lines.changes_with(removed | added)
            if line in (removed if side == "-" else added)
        ),
        key=lambda row: (row[1] == "+", row[2], row[0]),
    )
    merged = store.changes.ids_where(
        {change_id for change_id, _, _ in found}, "c.state = 'merged'", ()
    )
    for change_id, side, line in found:
        if change_id not in merged:
            continue
        scores[change_id] = scores.get(change_id, 0) + 1
        if side == "-":
            removes.setdefault(change_id, set()).add(line)
    landings: list[Landing] = []
    explained: set[int] = set()
    for change_id in sorted(scores, key=lambda cid: -scores[cid])[:50]:
        if len(landings) >= MAX_LANDINGS:
            break
        row = store.query(
            "SELECT number, sha, merge_commit, title, author, author_email FROM changes "
            "WHERE id = ?",
            (change_id,),
        )[0]
        commit = row["merge_commit"] or row["sha"]
        if commit not in since_base:
            continue  # landed before this change was started: not what made it redundant
        explained |= removes.get(change_id, set())
        landings.append(
            Landing(
                commit=row["merge_commit"] or row["sha"],
                number=row["number"],
                title=row["title"] or "",
                author=row["author"],
                author_email=row["author_email"],
            )
        )
    return landings, explained


def _landings_from_pickaxe(
    repo: git.Repo, base: str, tip: str, rarest: tuple[float, str, str]
) -> list[Landing]:
    _, text, path = rarest
    try:
        output = repo.git.log(
            "--first-parent",
            "--diff-merges=first-parent",
            "--no-patch",  # --diff-merges prints patches too (git 2.39 does): log lines only
            "--format=%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%s%x1f%b",
            f"-S{text}",
            f"{base}..{tip}",
            "--",
            path,
        )
    except git.GitCommandError:
        return []
    landings: list[Landing] = []
    for record in output.split("\x1e")[1 : MAX_LANDINGS * 3 + 1]:
        if len(landings) >= MAX_LANDINGS:
            break
        fields = record.strip("\n").split("\x1f") + [""] * 5
        sha, parents, author, email, subject, body = fields[:6]
        if BRANCH_SYNC.match(subject):
            continue  # carried the change from another branch; who made it is further down
        number, _ = landing_pr(subject)
        merged = parents.split()
        if number is None and len(merged) > 1:
            continue  # a merge that names no PR only brought the change: it did not make it
        if len(merged) > 1:
            # The merge of a PR names who merged it; the PR is its branch's writer's.
            writer = gitsource.branch_writer(repo, merged[1], merged[0])
            if writer is not None:
                author, email = writer.name, writer.email
        landings.append(
            Landing(
                commit=sha,
                number=number,
                title=subject,
                lines=(text,),
                author=author or None,
                author_email=email or None,
                mentions=frozenset(int(n) for n in _MENTION.findall(f"{subject}\n{body}")),
            )
        )
    return landings
