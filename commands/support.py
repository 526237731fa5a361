"""What every prdup command shares: exit codes, one-line errors, the settings' work tree.

Its own module so the command modules (`commands.bot`, `commands.sweep`) can import it at the top
without importing `cli` (which imports them to register their commands).
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from index.errors import PrdupError

# A PR number as SQLite stores it: a larger one is a typo, said as a usage error.
PR_NUMBER = click.IntRange(min=1, max=2**63 - 1)

EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_RESUMABLE = 3  # GitHub's rate limit stopped an import; what it read is kept: run again
EXIT_BROKEN_PIPE = 141  # the reader closed the pipe (128 + SIGPIPE, as a shell reports git)


def _fail(message: str) -> None:
    click.echo(f"prdup: error: {message}", err=True)
    from prdup.escaping import inline

    job_summary(f"**prdup**: error: {inline(message, 500)}")  # git's words may quote a PR's
    sys.exit(EXIT_ERROR)


def handles_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the library's named errors (and git's) into one line on stderr and exit 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import git

        from prdup.lifetime import Terminated, sigterm_as_interrupt

        try:
            with sigterm_as_interrupt():
                return command(*args, **kwargs)
        except PrdupError as error:
            if not error.resumable:
                _fail(str(error))
            click.echo(f"prdup: stopped: {error}", err=True)
            from prdup.escaping import inline

            job_summary(f"**prdup**: stopped: {inline(str(error), 500)}")
            sys.exit(EXIT_RESUMABLE)
        except git.GitCommandError as error:
            detail = (error.stderr or "").strip().replace("\n", " ") or str(error)
            _fail(f"git failed: {detail}")
        except KeyboardInterrupt as error:
            how = "stopped by SIGTERM" if isinstance(error, Terminated) else "interrupted"
            _fail(f"{how}; the index keeps every PR written so far")
        except BrokenPipeError:
            # The reader went away (`prdup show N | head`): stop quietly, as git does, and
            # leave nothing for Python to flush into the closed pipe at exit.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(EXIT_BROKEN_PIPE)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # click's own usage errors and exits: it prints and exits as documented
        except Exception as error:  # noqa: BLE001 - a bug must not look like a finding (exit 1)
            _fail(f"internal error: {_where(error)}; please report it")

    return wrapper


def _where(error: BaseException) -> str:
    """The error and the innermost line of prdup that raised it, enough for a bug report."""
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    ours = [frame for frame in frames if "site-packages" not in frame.filename] or frames
    place = f" at {Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else ""
    return f"{type(error).__name__}{place}: {' '.join(str(error).split())}"


def nothing_to_compare(error: PrdupError) -> bool:
    """A check that had nothing to compare: an empty, binary- or lockfile-only change, a branch
    with no commits its target lacks, a PR the index holds without a diff. A normal situation
    (exit 0), not an error.

    The library says so in its messages ("...; nothing to compare", "... without a diff"); a
    malformed patch (`BadDiff`) and a PR the index does not hold (`UnknownPullRequest`) raise
    the same classes, and stay errors.
    """
    from index.errors import BadDiff, UnknownPullRequest

    text = str(error)
    if isinstance(error, BadDiff):
        return text.endswith(("nothing to compare", "nothing to check"))
    return isinstance(error, UnknownPullRequest) and "in the index without a diff" in text


def job_summary(markdown: str) -> None:
    """Append to the GitHub Actions job summary ($GITHUB_STEP_SUMMARY) when there is one.

    The summary is where a maintainer looks when a run said nothing on the PR: why it skipped.
    """
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as summary:
        summary.write(markdown.rstrip("\n") + "\n\n")


def step_outputs(**values: str) -> None:
    """Set the step's outputs ($GITHUB_OUTPUT) when running in GitHub Actions.

    Only prdup's own words and numbers go here, one line each (a newline would start another
    output); anything else is dropped rather than written.
    """
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as outputs:
        for name, value in values.items():
            if _OUTPUT_VALUE.fullmatch(value):
                outputs.write(f"{name}={value}\n")


_OUTPUT_VALUE = re.compile(r"[\w\[\], .:-]*")


def work_tree(path: Path) -> Path | None:
    try:
        from index.git import open_repository

        repo = open_repository(path)
        return None if repo.bare else Path(repo.working_tree_dir or path)
    except PrdupError:
        return None


# The options every command that reads the index shares, declared once.
db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="PRDUP_DB",
    help="Index file (default: $PRDUP_DB, else prdup.db inside the git directory).",
)


def github_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--github OWNER/REPO`, with what it is for in each command."""
    return click.option("--github", "github_repo", metavar="OWNER/REPO", help=help)


def min_score_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--min-score S` (None: the settings' value), with what it hides in each command."""
    return click.option("--min-score", type=float, default=None, help=help)


def _verdict_list(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    return tuple(part.strip() for part in value.split(",") if part.strip()) or ("none",)


def fail_on_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--fail-on VERDICTS`: which verdicts of what is shown make the command exit 1."""
    from index.config import DEFAULT_FAIL_ON

    return click.option(
        "--fail-on",
        metavar="VERDICTS",
        callback=_verdict_list,
        default=None,
        help=(
            f"Exit 1 when {what} has one of these verdicts, comma-separated "
            f"[default: {','.join(DEFAULT_FAIL_ON)}]; partly-merged, overlap and related "
            "on request; none: never."
        ),
    )


repo_option = click.option(
    "--repo",
    "repo_path",
    default=".",
    type=click.Path(path_type=Path),
    help="The repository (default: the current directory).",
)
