"""What git can estimate of an unlanded PR's state without GitHub's metadata.

Git cannot tell open from closed; two things a clone holds point one way (measured in
docs/accuracy.md, "States without metadata", with `bench/open_states.py`):

* GitHub's test merge (`refs/pull/N/merge`) is made and renewed only while a PR is open, and
  today's GitHub removes it when the PR closes. A test merge made within `OPEN_WITHIN` of the
  clone's newest commit called no benchmark PR open that is closed, and every PR test-merged
  in the clone's last month open. Older ones are the stale leftovers of PRs closed years ago
  (GitHub kept them until about 2018): a test merge alone says nothing.
* A PR with no such test merge and no commit for `QUIET_FOR` is estimated closed. That is the
  weaker call: an open PR whose test merge failed (a conflict) has none, and 5-35% of the
  open PRs measured had heads older than that. So such a PR keeps the state "unmerged"
  (checked as an open one by `check`), and only the sweep leaves it out by default, counted.

Ages are counted from the clone's newest commit, not the clock: its refs are as of its last
fetch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from index.git.gitsource import TestMerge

DAY = 86_400
OPEN_WITHIN = 365 * DAY
QUIET_FOR = 730 * DAY


@dataclass(frozen=True, slots=True)
class StateClues:
    """What a clone shows of its PRs' states: their test merges and how old things are."""

    now: int  # the clone's newest commit (a branch's or a PR head's), in seconds
    test_merges: Mapping[int, TestMerge]
    tips: frozenset[str] = frozenset()  # the targets' tips
    targets_moved_at: int = 0  # the targets' last commit

    def shows_open(self, number: int) -> bool:
        """A test merge GitHub made while the PR was open, recently enough that it still is:
        within `OPEN_WITHIN`, or onto a target's tip after its last commit (a line that
        stopped moving keeps the test merges of PRs open when it stopped)."""
        merge = self.test_merges.get(number)
        if merge is None:
            return False
        onto_tip = merge.base in self.tips and merge.made_at >= self.targets_moved_at
        return onto_tip or self.now - merge.made_at <= OPEN_WITHIN

    def estimate(self, number: int, head_committed_at: int | None) -> str | None:
        """'open', 'closed', or None where nothing points either way."""
        if self.shows_open(number):
            return "open"
        if head_committed_at is not None and self.now - head_committed_at > QUIET_FOR:
            return "closed"
        return None
