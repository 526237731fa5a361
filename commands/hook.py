"""`prdup pre-push`: the pre-commit hook; what is being pushed, checked against the index.

A hook runs on every push, also where there is nothing to compare: pushing the target branch
itself, a branch that changes only lockfiles or binary files, a clone without an index. Those
are a one-line note and exit 0. Findings are reported and block the push (exit 1) only with
``--block``, and then only for the verdicts ``--fail-on`` names (by default: already done, or
made by another PR): the user decides whether a duplicate should stop them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from commands.support import (
    EXIT_FINDINGS,
    db_option,
    fail_on_option,
    handles_errors,
    min_score_option,
    nothing_to_compare,
    repo_option,
    work_tree,
)
from index.errors import IndexMissing, MissingRevision

ZERO_SHA = "0" * 40


@click.command("pre-push")
@repo_option
@db_option
@click.option("--target", help="Target branch (default: the indexed one).")
@min_score_option("Hide findings scoring below S [default: 0.7].")
@click.option("--block", is_flag=True, help="Exit 1 when an earlier PR covers the push.")
@fail_on_option("a finding, with --block,")
# Configurations written for the hook's earlier entry (`prdup check`) pass --exit-zero; it is
# what the hook does anyway.
@click.option("--exit-zero", is_flag=True, hidden=True)
@handles_errors
def pre_push(
    repo_path: Path,
    db_path: Path | None,
    target: str | None,
    min_score: float | None,
    block: bool,
    fail_on: tuple[str, ...] | None,
    exit_zero: bool,
) -> None:
    """Check the commits being pushed (pre-commit's PRE_COMMIT_TO_REF, else HEAD).

    Exits 0 when nothing earlier covers them and when there is nothing to compare; with
    findings, 1 only with --block and a verdict --fail-on names; 2 on errors.
    """
    from index.config import load_settings
    from index.errors import BadDiff
    from prdup import render
    from prdup.checking import check

    # pre-commit sets these for the pre-push stage: the remote's old tip and the pushed sha.
    to_ref = os.environ.get("PRE_COMMIT_TO_REF") or "HEAD"
    from_ref = os.environ.get("PRE_COMMIT_FROM_REF")
    if to_ref == ZERO_SHA:
        return _note("deleting a branch; nothing to compare")
    if from_ref and from_ref == to_ref:
        return _note("the remote already has these commits; nothing to compare")
    settings = load_settings(work_tree(repo_path), min_score=min_score, fail_on=fail_on)
    try:
        result = check(repo_path, db_path=db_path, rev=to_ref, target=target, settings=settings)
    except IndexMissing as error:
        return _note(f"no index yet ({error}); nothing to compare")
    except MissingRevision as error:
        if "shares no history" not in str(error):
            raise
        # An orphan branch (gh-pages, a docs site) is no change to the target's code.
        return _note(f"{error}; nothing to compare")
    except BadDiff as error:
        if not nothing_to_compare(error):
            raise
        return _note(str(error))
    for warning in result.warnings:
        click.echo(f"prdup: warning: {warning}", err=True)
    shown = result.shown(settings.min_score, settings.top)
    click.echo(render.to_text(result.query, shown))
    blocking = any(settings.fails_on(finding.verdict) for finding in shown)
    if blocking and block and not exit_zero:
        sys.exit(EXIT_FINDINGS)


def _note(text: str) -> None:
    click.echo(f"prdup: {text}", err=True)
