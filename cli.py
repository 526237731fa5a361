"""prdup's command line: parse arguments, call one library function, render the result.

Exit codes: 0 nothing that fails, 1 a finding whose verdict --fail-on names, 2 an error (one line
on stderr, never a traceback), 3 stopped by GitHub's rate limit with what was read kept.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from commands.support import (
    EXIT_FINDINGS,
    PR_NUMBER,
    db_option,
    fail_on_option,
    github_option,
    handles_errors,
    min_score_option,
    nothing_to_compare,
    repo_option,
    step_outputs,
)
from commands.support import work_tree as _work_tree


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="prdup")
def main() -> None:
    """Find the earlier pull request that already made your change."""


@main.command()
@click.argument(
    "path", default=None, required=False, type=click.Path(file_okay=False, path_type=Path)
)
@click.option(
    "--repo",
    "repo_option_path",
    type=click.Path(file_okay=False, path_type=Path),
    help="The repository, as the other commands take it (the same as PATH).",
)
@db_option
@click.option(
    "--target",
    "targets",
    multiple=True,
    help="Target branch whose history holds merged PRs; repeatable "
    "(default: the remote's default branch).",
)
@click.option(
    "--prs-json",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Output of 'gh pr list --state all --json number,title,body,state,createdAt,"
    "closedAt,mergedAt,headRefOid,baseRefName,author'.",
)
@github_option(
    "Import PR metadata and maintainers' dismissals from GitHub's API "
    "(token from GITHUB_TOKEN or GH_TOKEN); an import stopped by the rate limit resumes."
)
@click.option("--quiet", is_flag=True, help="No progress and no summary.")
@handles_errors
def index(
    path: Path | None,
    repo_option_path: Path | None,
    db_path: Path | None,
    targets: tuple[str, ...],
    prs_json: Path | None,
    github_repo: str | None,
    quiet: bool,
) -> None:
    """Record a repository's merged and open PRs in the index (PATH or --repo: default .)."""
    if path is not None and repo_option_path is not None and path != repo_option_path:
        raise click.UsageError("give the repository once: PATH or --repo")
    path = path or repo_option_path or Path(".")
    from index.config import load_settings
    from index.indexer import index_repository
    from prdup.progress import IndexProgress

    settings = load_settings(_work_tree(path))
    with IndexProgress(live=False if quiet else None) as progress:
        if github_repo:
            from prdup.github_import import index_with_github

            summary = index_with_github(
                github_repo,
                path,
                db_path,
                targets=targets,
                prs_json=prs_json,
                settings=settings,
                progress=None if quiet else progress,
            )
        else:
            summary = index_repository(
                path,
                db_path=db_path,
                targets=targets,
                prs_json=prs_json,
                settings=settings,
                progress=None if quiet else progress,
            )
    for warning in summary.warnings:  # not progress: shown also with --quiet
        click.echo(f"prdup: warning: {warning}", err=True)
    step_outputs(changed="true" if summary.changed else "false")  # the action saves its cache
    if not quiet:
        first, *rest = summary.line().split("\n")
        click.echo("\n".join([f"{first} -> {summary.db_path}", *rest]), err=True)


@main.command()
@click.argument("rev", required=False)
@repo_option
@db_option
@click.option("--pr", type=PR_NUMBER, help="Check an indexed PR instead of a branch.")
@click.option(
    "--diff",
    "diff_file",
    metavar="FILE|-",
    help="Check a patch file, or - for stdin.",
)
@click.option("--target", help="Target branch (default: the indexed one).")
@click.option(
    "--format",
    "output",
    type=click.Choice(["text", "json", "markdown", "github", "sarif"]),
    default="text",
    show_default=True,
    help="github: workflow annotations on the shared lines; sarif: SARIF 2.1.0 for code scanning.",
)
@click.option("--top", type=int, default=None, help="Show at most K findings [default: 5].")
@min_score_option("Hide findings scoring below S [default: 0.7]; 0 lists every candidate.")
@fail_on_option("a shown finding")
@click.option("--exit-zero", is_flag=True, help="Exit 0 whatever is found (--fail-on none).")
@handles_errors
def check(
    rev: str | None,
    repo_path: Path,
    db_path: Path | None,
    pr: int | None,
    diff_file: str | None,
    target: str | None,
    output: str,
    top: int | None,
    min_score: float | None,
    fail_on: tuple[str, ...] | None,
    exit_zero: bool,
) -> None:
    """Say whether an earlier PR already covers this change (default: HEAD vs the target).

    Exits 1 when a shown finding's verdict is one --fail-on names (by default: already done,
    or made by another PR), 0 otherwise and when there is nothing to compare (no commits
    beyond the target, only binary or lockfile changes), 2 on errors.
    """
    from index.config import load_settings
    from prdup import render
    from prdup.checking import check as run_check

    if sum(x is not None for x in (rev, pr, diff_file)) > 1:
        raise click.UsageError("give one of REV, --pr N or --diff FILE")
    if rev is not None and _is_repository_folder(rev):
        raise click.UsageError(f"{rev} is a repository, not a revision: prdup check --repo {rev}")
    from index.errors import BadDiff, UnknownPullRequest

    settings = load_settings(_work_tree(repo_path), min_score=min_score, top=top, fail_on=fail_on)
    try:
        result = run_check(
            repo_path,
            db_path=db_path,
            rev=rev,
            pr=pr,
            diff_text=_read_patch(diff_file) if diff_file is not None else None,
            target=target,
            settings=settings,
        )
    except (BadDiff, UnknownPullRequest) as error:
        if not nothing_to_compare(error):
            raise
        click.echo(f"prdup: {error}", err=True)  # a normal situation, not an error: exit 0
        if output == "json":
            click.echo(render.nothing_to_compare_json(str(error)))
        return
    for warning in result.warnings:
        click.echo(f"prdup: warning: {warning}", err=True)
    shown = result.shown(settings.min_score, settings.top)
    if output == "json":
        click.echo(render.to_json(result.query, shown, result.warnings))
    elif output == "markdown":
        click.echo(render.to_markdown(result.query, shown))
    elif output in ("github", "sarif"):
        _check_for_ci(result, shown, output, repo_path, db_path, settings)
    else:
        click.echo(render.to_text(result.query, shown))
    if any(settings.fails_on(finding.verdict) for finding in shown) and not exit_zero:
        sys.exit(EXIT_FINDINGS)


def _is_repository_folder(rev: str) -> bool:
    """`prdup check /path/to/repo`: a folder holding a repository, given where REV goes."""
    folder = Path(rev)
    return folder.is_dir() and ((folder / ".git").exists() or (folder / "HEAD").is_file())


def _read_patch(diff_file: str) -> str:
    """The patch's text; a missing file or a closed standard input (a CI step's) says so."""
    from index.errors import BadDiff
    from index.git import decode_text

    if diff_file == "-":
        stdin = sys.stdin.buffer if sys.stdin is not None else None
        try:
            if stdin is None:
                raise OSError("it is closed")
            return decode_text(stdin.read())
        except (OSError, ValueError) as error:
            raise BadDiff(f"cannot read the patch from standard input: {error}") from None
    try:
        return decode_text(Path(diff_file).read_bytes())
    except OSError as error:
        raise BadDiff(f"cannot read the patch {diff_file}: {error.strerror}") from None


def _check_for_ci(
    result: Any, shown: list[Any], output: str, repo_path: Path, db_path: Path | None, settings: Any
) -> None:
    """Annotations (and, in Actions, a job summary) or SARIF: both point at changed lines."""
    from prdup import render
    from prdup.checking import with_change

    if shown:
        result = with_change(result, repo_path, db_path, settings)
    if output == "sarif":
        from prdup.sarif import to_sarif

        click.echo(to_sarif(result.query, shown, result.change))
        return
    from commands.support import job_summary
    from prdup.annotations import to_workflow_commands

    click.echo(to_workflow_commands(result.query, shown, result.change))
    job_summary(render.to_markdown(result.query, shown))


@main.command()
@click.argument("number", type=PR_NUMBER)
@repo_option
@db_option
@click.option(
    "--format", "output", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@handles_errors
def show(number: int, repo_path: Path, db_path: Path | None, output: str) -> None:
    """What the index holds for PR NUMBER."""
    import json

    from prdup.inspect import describe_pr

    description = describe_pr(repo_path, db_path, number)
    if output == "json":
        click.echo(json.dumps(description, indent=2))
        return
    from prdup.escaping import terminal
    from prdup.titles import shown_title

    title = shown_title(description["title"], description.get("title_source") == "commit")
    state = description["state"] + (", landed in part" if description["landed_in_part"] else "")
    click.echo(f"#{number} [{state}] {terminal(title)}")
    for key in (
        "source",
        "status",
        "skip_reason",
        "head_sha",
        "base_sha",
        "merge_commit",
        "landing_base",
        "patch_id",
        "author",
        "created_at",
        "merged_at",
    ):
        if description.get(key):
            click.echo(f"  {key}: {description[key]}")
    click.echo(
        f"  hunks: {description['hunks']}, +{description['added']} -{description['removed']}"
    )
    for file in description["files"]:
        rename = f" (from {file['old_path']})" if file["old_path"] != file["path"] else ""
        why = f"; {file['skip_reason']}" if file["skip_reason"] else ""
        click.echo(f"  file: {terminal(file['path'] + rename)} [{file['status']}{why}]")
    for symbol in description["symbols"]:
        click.echo(f"  symbol: {terminal(symbol)}")
    if len(description["own_commits"]) > 1:
        click.echo(f"  own commits: {len(description['own_commits'])}")
    part = description["landed_in_part"]
    if part:
        landed = sum(1 for c in part if c["landed_as"])
        click.echo(
            f"  landed in part on {terminal(part[0]['target'] or 'the target')}: "
            f"{landed} commit(s) landed, {len(part) - landed} still to do"
        )
        for c in part:
            where = f"landed as {c['landed_as'][:10]}" if c["landed_as"] else "still to do"
            files = f" ({terminal(', '.join(c['files']))})" if c["files"] else ""
            click.echo(f"    {c['commit'][:7]} {terminal(c['subject'])}{files}: {where}")
    if description["issues"]:
        click.echo(f"  issues: {', '.join(description['issues'])}")


# --- commands defined in other modules are registered below, one line each ---
from commands.bot import answer_refused, comment, pr_refspecs, prune_cache  # noqa: E402

main.add_command(comment)
main.add_command(answer_refused)
main.add_command(pr_refspecs)
main.add_command(prune_cache)
from commands.sweep import dashboard, sweep  # noqa: E402

main.add_command(sweep)
main.add_command(dashboard)
from commands.hook import pre_push  # noqa: E402

main.add_command(pre_push)


if __name__ == "__main__":
    main()
