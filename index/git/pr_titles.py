"""A PR's title where no metadata gives one: the subject of its first own commit a person
wrote, else its head commit's subject.

A head commit's subject is often not what the PR is: "Merge branch 'master' into master",
or the fixes a bot pushed on top ("[pre-commit.ci] auto fixes from pre-commit.com hooks").
The PR's first commit is what its author set out to do (GitHub titles a one-commit PR with
its subject). Own commits are the index's (`ForkPoints.own_commits`): merges left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from detector.signals import is_bot
from index.git.rebase_landings import OwnCommit

# Bots that commit under a name without "[bot]" (`is_bot` knows those with it).
_BOT_NAMES = re.compile(r"^(?:pre-commit-ci|dependabot|renovate|github-actions|mergify)\b", re.I)


def written_by_a_bot(name: str, email: str) -> bool:
    """A bot's commit: its name or its e-mail's local part ends in "[bot]", or a bot's name
    (`66853113+pre-commit-ci[bot]@users.noreply.github.com`)."""
    return is_bot(name) or bool(_BOT_NAMES.match(name)) or email.partition("@")[0].endswith("[bot]")


def title_commit(own: Iterable[OwnCommit]) -> str | None:
    """The first (oldest) own commit a person wrote, or None."""
    return next((c.sha for c in own if not written_by_a_bot(c.author, c.author_email)), None)
