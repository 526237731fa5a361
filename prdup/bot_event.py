"""Which GitHub events the bot acts on, and whether a command's author gets the refusal.

Pure rules over the event's payload (the JSON file at $GITHUB_EVENT_PATH), so they ship with
the action and a repository gets new ones by moving its pin, not by editing a copied workflow.
Standard library only: the action runs this file by path (`python -I bot_event.py`; -I keeps
prdup/ itself, whose inspect.py would shadow the standard one, off sys.path) before prdup
is installed, so an event it skips costs no install.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

NOT_DUPLICATE_LABEL = "prdup: not a duplicate"
# GitHub's author_association values of people who may give prdup a command.
MAINTAINERS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
# A command stands at the start of a line of a reply, in any case, as the comment run reads it;
# a quote ("> /prdup ...") or a mention mid-line is no command.
LINE_COMMAND = re.compile(r"^[ \t]*/prdup", re.IGNORECASE | re.MULTILINE)
MENTION = "/prdup"


@dataclass(frozen=True, slots=True)
class EventDecision:
    """What one event asks of the bot: bring PR `number`'s comment up to date (`run`), and
    answer its commenter that only maintainers may command prdup (`refuse`); `why` says why
    not, for the job summary."""

    run: bool
    number: int | None = None
    refuse: bool = False
    why: str = ""


def _skip(why: str, number: int | None = None) -> EventDecision:
    return EventDecision(run=False, number=number, why=why)


def decide(event_name: str, event: Mapping[str, Any]) -> EventDecision:
    """The bot's answer to one event of the comment workflow.

    Every event the workflow's job filter lets in shares the PR's concurrency group and may
    cancel a run in progress, so each one that concerns an open PR runs the whole refresh:
    nothing a cancelled run would have said is lost. Skipped are only events no such run
    follows: not about a PR, a closed PR, another label, a bot's comment (prdup's own quotes a
    command) and a comment that does not mention /prdup at all.
    """
    pull = event.get("pull_request") or {}
    issue = event.get("issue") or {}
    number = pull.get("number") or (issue.get("number") if issue.get("pull_request") else None)
    if not isinstance(number, int):
        return _skip("this event is not about a pull request")
    state = pull.get("state") or issue.get("state")
    if pull.get("merged"):
        state = "merged"
    if state != "open":
        return _skip(f"#{number} is {state}; prdup comments only on open pull requests", number)
    action = event.get("action")
    if action in ("labeled", "unlabeled"):
        label = str((event.get("label") or {}).get("name") or "")
        if label.lower() != NOT_DUPLICATE_LABEL:  # not named: the summary is markdown
            return _skip(f"a label on #{number} other than {NOT_DUPLICATE_LABEL!r}", number)
    if event_name != "issue_comment":
        return EventDecision(run=True, number=number)
    return _comment_decision(number, action, event.get("comment") or {})


def _comment_decision(number: int, action: Any, comment: Mapping[str, Any]) -> EventDecision:
    """A reply on an open PR: a command runs the bot; a stranger's also gets the answer."""
    user = comment.get("user") or {}
    body = str(comment.get("body") or "")
    if user.get("type") == "Bot":
        return _skip(f"the comment on #{number} is by a bot, {user.get('login')}", number)
    if MENTION not in body.lower():
        return _skip(f"the comment on #{number} is not a /prdup command", number)
    command = LINE_COMMAND.search(body) is not None
    stranger = str(comment.get("author_association") or "").upper() not in MAINTAINERS
    return EventDecision(
        run=True, number=number, refuse=command and stranger and action != "deleted"
    )


def write_step_outputs(decision: EventDecision, outputs: str, summary: str | None) -> None:
    """The decision as the action's steps read it ($GITHUB_OUTPUT), and a skip's reason in
    the job summary, where a maintainer looks when a run said nothing."""
    with open(outputs, "a", encoding="utf-8") as out:
        out.write(f"run={'true' if decision.run else 'false'}\n")
        out.write(f"refuse={'true' if decision.refuse else 'false'}\n")
        out.write(f"pr={decision.number or ''}\n")
    if not decision.run and summary:
        with open(summary, "a", encoding="utf-8") as job_summary:
            job_summary.write(f"**prdup**: skipped: {decision.why}\n\n")


def main() -> int:
    """The action's first step: decide on $GITHUB_EVENT_NAME and the payload at
    $GITHUB_EVENT_PATH, which the runner sets for every step."""
    with open(os.environ["GITHUB_EVENT_PATH"], encoding="utf-8") as payload:
        event = json.load(payload)
    decision = decide(os.environ.get("GITHUB_EVENT_NAME", ""), event)
    if not decision.run:
        print(f"prdup: skipped: {decision.why}")
    elif decision.refuse:
        print(f"prdup: a command on #{decision.number} from someone who may not give one")
    write_step_outputs(decision, os.environ["GITHUB_OUTPUT"], os.environ.get("GITHUB_STEP_SUMMARY"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
