"""`prdup comment`: the bot's comment for one PR, printed, or kept up to date on GitHub."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from commands.support import (
    PR_NUMBER,
    db_option,
    fail_on_option,
    github_option,
    handles_errors,
    job_summary,
    min_score_option,
    nothing_to_compare,
    repo_option,
    step_outputs,
    work_tree,
)


@click.command("comment")
@click.option(
    "--pr", "number", type=PR_NUMBER, required=True, help="The pull request to comment on."
)
@repo_option
@db_option
@github_option("Where to post (default: $GITHUB_REPOSITORY).")
@click.option(
    "--post",
    is_flag=True,
    help="Create, update or resolve the comment on GitHub instead of printing it.",
)
@min_score_option("Say nothing about findings scoring below S [default: 0.7].")
@click.option(
    "--check-run",
    is_flag=True,
    help="With --post, also publish a check run on the PR's head: its annotations sit on the "
    "PR's lines; it fails only for the verdicts --fail-on names (needs checks: write).",
)
@fail_on_option("a reported finding of the check run")
@handles_errors
def comment(
    number: int,
    repo_path: Path,
    db_path: Path | None,
    github_repo: str | None,
    post: bool,
    min_score: float | None,
    check_run: bool,
    fail_on: tuple[str, ...] | None,
) -> None:
    """Render the comment about PR N; with --post, keep one such comment on the PR.

    Exits 0 whether or not there is something to say, and also when there is nothing to check (a
    closed PR, a PR without a text diff) or the token may not post (a fork's PR): a contributor's
    PR must never go red because of prdup. Only errors (a broken configuration) exit 2. With
    --post, what happened and why also goes to the Actions job summary ($GITHUB_STEP_SUMMARY),
    with the comment itself, and the verdict and PR numbers to the step's outputs
    ($GITHUB_OUTPUT: comment, verdict, pr, prs).
    """
    from index.config import load_settings
    from index.errors import UnknownPullRequest
    from prdup.checking import check
    from prdup.comment import comment_on_pull, render_comment

    settings = load_settings(work_tree(repo_path), min_score=min_score, fail_on=fail_on)
    if not post:
        try:
            result = check(repo_path, db_path=db_path, pr=number, settings=settings)
        except UnknownPullRequest as error:
            if not nothing_to_compare(error):
                raise
            click.echo(f"prdup: {error}", err=True)
            return
        body = render_comment(result, settings.min_score, settings.top)
        click.echo(body.rstrip() if body else f"prdup: nothing to say about PR #{number}.")
        return

    from prdup.github import GitHubClient

    github_repo = github_repo or os.environ.get("GITHUB_REPOSITORY")
    if not github_repo:
        raise click.UsageError("--post needs --github OWNER/REPO (or GITHUB_REPOSITORY)")
    run = comment_on_pull(
        GitHubClient(github_repo),
        number,
        repo_path,
        db_path,
        settings,
        bot_login=os.environ.get("PRDUP_BOT_LOGIN") or None,
        check_run=check_run,
    )
    for dismissal in run.dismissals:
        click.echo(
            f"prdup: recorded: #{dismissal.number} is not a duplicate of #{dismissal.other}"
            f" (by {dismissal.by or 'unknown'})",
            err=True,
        )
    if run.undone:
        click.echo(
            f"prdup: taken back: {run.undone} dismissed pair(s) whose label or command is no"
            " longer on the PR",
            err=True,
        )
    if run.action == "skipped":
        line = f"skipped {github_repo}#{number}: {run.note}"
    elif run.action == "none":
        line = f"none: nothing to say about {github_repo}#{number}"
    else:
        line = f"{run.action} comment on {github_repo}#{number}"
    if run.check_run is not None:
        line += f"; check run: {run.check_run}"
    click.echo(line)
    # The comment is escaped markdown already; a run that could not post (a fork's PR) shows
    # it here, where the maintainer still sees it.
    job_summary(f"**prdup**: {line}" + (f"\n\n{run.body}" if run.body else ""))
    numbers = [f.candidate.number for f in run.reported if f.candidate.number is not None]
    step_outputs(
        comment=run.action,
        verdict=run.reported[0].verdict if run.reported else "none",
        pr=str(numbers[0]) if numbers else "",
        prs=json.dumps(numbers),
    )


@click.command("pr-refspecs")
@repo_option
@db_option
@github_option("The repository whose PRs to ask about (default: $GITHUB_REPOSITORY).")
@click.option(
    "--pr", "always", type=PR_NUMBER, multiple=True, help="Fetch this PR's head too; repeatable."
)
@click.option("--open", "open_prs", is_flag=True, help="Fetch every open PR's head too.")
@handles_errors
def pr_refspecs(
    repo_path: Path,
    db_path: Path | None,
    github_repo: str | None,
    always: tuple[int, ...],
    open_prs: bool,
) -> None:
    """Print the refspecs of the PR heads to fetch before 'prdup index --github': those that
    changed since the index's last import (every one on a first run).

    For a CI runner that restores the index from a cache: pipe the output to
    `git fetch --no-tags origin --stdin`.
    """
    from prdup.fetch_plan import plan_fetch

    github_repo = github_repo or os.environ.get("GITHUB_REPOSITORY")
    if not github_repo:
        raise click.UsageError("give --github OWNER/REPO (or set GITHUB_REPOSITORY)")
    plan = plan_fetch(github_repo, repo_path, db_path, always=always, open_prs=open_prs)
    for refspec in plan.refspecs:
        click.echo(refspec)
    if plan.first_run:
        why = "every PR head: the index has no earlier import to compare with"
    else:
        why = f"{len(plan.refspecs)} PR head(s), {plan.changed} changed since the last import"
    click.echo(f"prdup: to fetch: {why}", err=True)


@click.command("prune-cache")
@github_option("The repository whose Actions cache to prune (default: $GITHUB_REPOSITORY).")
@click.option("--prefix", required=True, help="The key prefix of the index's entries.")
@click.option("--keep", required=True, help="The key of the entry just saved; the rest go.")
@handles_errors
def prune_cache(github_repo: str | None, prefix: str, keep: str) -> None:
    """Delete the index's cache entries that the entry KEEP supersedes (one rolling entry).

    Needs a token with `actions: write`. Without it the entries stay, with a note, and the job
    stays green: a full cache costs speed (GitHub evicts the oldest), never correctness.
    """
    from prdup.ci_cache import prune_superseded
    from prdup.github import GitHubClient, WriteForbidden

    github_repo = github_repo or os.environ.get("GITHUB_REPOSITORY")
    if not github_repo:
        raise click.UsageError("give --github OWNER/REPO (or set GITHUB_REPOSITORY)")
    try:
        deleted = prune_superseded(GitHubClient(github_repo), prefix, keep)
    except WriteForbidden as error:
        line = f"cache entries kept: {error}; grant the workflow `actions: write` to prune them"
    else:
        freed = sum(entry.size_bytes for entry in deleted) / 2**20
        line = f"deleted {len(deleted)} superseded cache entries ({freed:.0f} MB); kept {keep}"
    click.echo(f"prdup: {line}")
    job_summary(f"**prdup**: {line}")


@click.command("answer-refused")
@click.option(
    "--pr", "number", type=PR_NUMBER, required=True, help="The pull request to answer on."
)
@github_option("The repository of the PR (default: $GITHUB_REPOSITORY).")
@handles_errors
def answer_refused(number: int, github_repo: str | None) -> None:
    """Say once on PR N that only owners, members and collaborators may command prdup.

    The action runs it for a `/prdup` command from anyone else, which is not applied; an
    earlier answer by the same bot (its login: GitHub's `viewer`, or $PRDUP_BOT_LOGIN) stands.
    """
    from prdup.command_refusal import answer_refused_command
    from prdup.github import GitHubClient, WriteForbidden

    github_repo = github_repo or os.environ.get("GITHUB_REPOSITORY")
    if not github_repo:
        raise click.UsageError("give --github OWNER/REPO (or set GITHUB_REPOSITORY)")
    bot_login = os.environ.get("PRDUP_BOT_LOGIN") or None
    try:
        answered = answer_refused_command(GitHubClient(github_repo), number, bot_login)
    except WriteForbidden as error:  # a courtesy: a read-only token is no reason for a red job
        line = f"skipped the answer on {github_repo}#{number}: could not post: {error}"
    else:
        line = (
            f"answered on {github_repo}#{number}: only owners, members and collaborators may"
            " command prdup"
            if answered
            else f"{github_repo}#{number} already has the answer on who may command prdup"
        )
    click.echo(f"prdup: {line}")
    job_summary(f"**prdup**: {line}")
