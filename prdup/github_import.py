"""`prdup index --github OWNER/REPO`: pull-request metadata and dismissals from GitHub's API.

GitHub is the record of what maintainers decided; the index only remembers it. Each import
reads two listings, each incrementally and each kept page by page (see
`index.github.github_record`):

* pull requests, most recently updated first, down to the newest update the previous import
  saw: titles, states and bodies for the indexer, and the `prdup: not a duplicate` label
  (recorded after indexing, once the PR's findings are known; a PR listed without it takes
  back what it dismissed);
* the repository's comments, oldest update first, from where the previous import stopped:
  maintainers' `/prdup not-duplicate N` commands, recorded as they read now (an edited
  command replaces what it said).

So a fresh index (an expired cache, a lost concurrent run) gets every dismissal back on its
first `prdup index --github`. A rate limit that will not reset soon ends the import with
:class:`ImportInterrupted`; every page read so far is kept, and the next run resumes there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from index.config import Settings, load_settings
from index.git import gitsource
from index.github import dismissals
from index.github.github_record import (
    GitHubRecord,
    ImportedPull,
    PullListing,
    imported_repositories,
)
from index.indexer import IndexSummary, Progress, index_repository
from index.metadata import PullMetadata
from index.storage import IndexStore
from prdup.comment import (
    COMMAND_PATTERN,
    has_not_duplicate_label,
    index_path,
    labelled_findings,
    reply_dismissals,
)
from prdup.github import Comment, GitHubClient, GitHubError, PullRequestMeta, RateLimited


class ImportInterrupted(GitHubError):
    """The import stopped at a rate limit; what it read is kept and the next run resumes."""

    resumable = True


class ImportFailed(GitHubError):
    """GitHub failed the import, and git was indexed without it. GitHub out of reach or failing
    (5xx) is resumable, as a rate limit is: the next run imports; a refused token is not."""

    def __init__(self, cause: GitHubError) -> None:
        super().__init__(f"{cause}; git was indexed, the GitHub import was not", cause.status)
        self.resumable = cause.status is None or cause.status >= 500


@dataclass(slots=True)
class ImportCount:
    """How far an import got, for its progress and for the message when it is interrupted."""

    pulls: int = 0
    pull_pages: int = 0
    comments: int = 0
    comment_pages: int = 0
    # Of them, those updated after the previous import's watermark: the listing repeats what
    # was updated at the watermark itself (so a same-second update is never missed), and a
    # repeat is no change that the index (or the CI cache holding it) should be saved for.
    fresh: int = 0

    def __str__(self) -> str:
        return (
            f"{_count(self.pulls, 'pull request')} ({_count(self.pull_pages, 'page')}) and "
            f"{_count(self.comments, 'comment')} ({_count(self.comment_pages, 'page')})"
        )


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _quiet(phase: str, done: int, total: int | None) -> None:
    pass


def watermark_key(github_repo: str) -> str:
    return f"github:{github_repo}:updated_since"


def imported_repository(repo_path: str | Path, db_path: str | Path | None) -> str | None:
    """The GitHub repository whose metadata `prdup index --github` imported into this index."""
    path = index_path(repo_path, db_path)
    if not path.exists():
        return None
    with IndexStore(path, create=False) as store:
        names = imported_repositories(store)
    return names[0] if len(names) == 1 else None  # several: the user must say which


def pull_metadata(pull: PullRequestMeta) -> PullMetadata:
    """GitHub's view of a PR as the indexer takes it (linked issues come from the body there)."""
    return PullMetadata(
        number=pull.number,
        title=pull.title,
        body=pull.body or None,
        state=pull.state,  # GitHubClient already says "merged" for a closed PR with merged_at
        created_at=pull.created_at,
        closed_at=pull.closed_at,
        merged_at=pull.merged_at,
        head_sha=pull.head_sha,
        base_ref=pull.base_ref,
        author=pull.author,
    )


def _imported(pull: PullRequestMeta) -> ImportedPull:
    return ImportedPull(pull_metadata(pull), pull.updated_at, has_not_duplicate_label(pull.labels))


# ------------------------------------------------------------------------------ pull requests


def _list_pulls(
    client: GitHubClient, record: GitHubRecord, count: ImportCount, progress: Progress
) -> dict[int, PullMetadata]:
    """Read the PRs updated since the last import, a page per transaction; returns them.

    A listing an earlier run left unfinished is read to its end first, then a new one lists
    what was updated while the import waited for the rate limit.
    """
    listed: dict[int, PullMetadata] = {}
    unfinished = record.listing()
    if unfinished is not None:
        _read_listing(client, record, unfinished, listed, count, progress)
    _read_listing(client, record, record.new_listing(), listed, count, progress)
    return listed


def _read_listing(
    client: GitHubClient,
    record: GitHubRecord,
    listing: PullListing,
    listed: dict[int, PullMetadata],
    count: ImportCount,
    progress: Progress,
) -> None:
    """Page by page until the first PR updated before the listing's stop (or the last page)."""
    ended = False
    while not ended:
        page = client.pulls_page(listing.next_page)
        stop = listing.stop_before
        kept = [p for p in page if not (stop and p.updated_at and p.updated_at < stop)]
        ended = len(kept) < len(page) or len(page) < client.per_page
        newest = max([listing.newest or "", *(p.updated_at or "" for p in kept)]) or None
        listing = PullListing(listing.next_page + 1, newest, stop)
        record.save_pull_page([_imported(p) for p in kept], listing, ended)
        listed.update((p.number, pull_metadata(p)) for p in kept)
        count.pulls += len(kept)
        count.fresh += sum(1 for p in kept if not (stop and p.updated_at == stop))
        count.pull_pages += 1
        progress("GitHub: pull requests", count.pulls, None)


# ----------------------------------------------------------------------------------- comments


def _commands(
    client: GitHubClient, comments: list[Comment]
) -> list[tuple[int, list[dismissals.Dismissal]]]:
    """What each comment dismisses now, as maintainers' commands on the PR it is on."""
    commanding = [c for c in comments if COMMAND_PATTERN.search(c.body)]
    if client.authenticated and commanding:
        # Hidden (minimized) comments are no commands; only GraphQL says which are hidden.
        shown = {c.id: c for c in client.with_minimized(commanding)}
        comments = [shown.get(c.id, c) for c in comments]
    return [
        (c.id, reply_dismissals(c.issue, [c], None) if c.issue is not None else [])
        for c in comments
    ]


def _read_comments(
    client: GitHubClient, record: GitHubRecord, count: ImportCount, progress: Progress
) -> None:
    """Read the comments updated since the last import, oldest first, a page per transaction.

    Each page is asked for from the latest update read so far rather than by page number:
    a comment edited meanwhile moves to the end of the listing and would shift the pages.
    """
    since = watermark = record.comments_since
    page = 0
    while True:
        comments = client.comments_page(since, page)
        newest = max([since or "", *(c.updated_at or "" for c in comments)]) or None
        record.save_comment_page(_commands(client, comments), newest)
        count.comments += len(comments)
        count.fresh += sum(1 for c in comments if not (watermark and c.updated_at == watermark))
        count.comment_pages += 1
        progress("GitHub: comments", count.comments, None)
        if len(comments) < client.per_page:
            return
        if newest == since:
            page += 1  # a whole page updated within the same second: step by number
        else:
            since, page = newest, 0


# ---------------------------------------------------------------------------------- together


def import_metadata(
    github_repo: str,
    repo_path: str | Path,
    db_path: str | Path | None,
    *,
    client: GitHubClient | None = None,
    progress: Progress | None = None,
    count: ImportCount | None = None,
) -> dict[int, PullMetadata]:
    """Pull requests updated since the last import, as metadata for `index_repository`, and
    maintainers' commands in comments since then, recorded as dismissals.

    Also returns what an earlier import fetched and the index does not show yet. The token
    and API URL come from the environment (see :class:`GitHubClient`); pass `client` to
    configure it otherwise (tests turn its throttles off). Raises :class:`ImportInterrupted`
    at a rate limit, keeping every page read.
    """
    client = client or GitHubClient(github_repo)
    gitsource.open_repository(repo_path)  # not a repository: fail before asking GitHub
    count = count if count is not None else ImportCount()
    with IndexStore(index_path(repo_path, db_path)) as store:
        record = GitHubRecord(store, github_repo)
        record.prune()
        try:
            listed = _list_pulls(client, record, count, progress or _quiet)
            _read_comments(client, record, count, progress or _quiet)
        except RateLimited as error:
            raise ImportInterrupted(
                f"{error}; the import kept what it read, {count}, and resumes there when "
                "run again after the reset",
                status=error.status,
            ) from None
        return {**record.pending(), **listed}


def record_labels(
    github_repo: str,
    repo_path: str | Path,
    db_path: str | Path | None,
    settings: Settings | None = None,
) -> list[dismissals.Dismissal]:
    """Record the label of each imported PR that carries it: dismiss what prdup reports for it
    now. A PR the index cannot check yet (no ref fetched) is tried again on the next run."""
    path = index_path(repo_path, db_path)
    if not path.exists():
        return []
    if settings is None:
        repo = gitsource.open_repository(repo_path)
        work_tree = None if repo.bare else Path(repo.working_tree_dir or repo_path)
        settings = load_settings(work_tree)
    recorded: list[dismissals.Dismissal] = []
    with IndexStore(path, create=False) as store:
        record = GitHubRecord(store, github_repo)
        for number, updated_at in record.labelled():
            found = labelled_findings(repo_path, path, number, settings, at=updated_at)
            if found is None:
                continue
            recorded += dismissals.record(store, found, dismissals.LABEL)
            record.label_recorded(number)
        record.prune()
    return recorded


def index_with_github(
    github_repo: str,
    repo_path: str | Path,
    db_path: str | Path | None = None,
    *,
    targets: tuple[str, ...] = (),
    prs_json: str | Path | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
    client: GitHubClient | None = None,
) -> IndexSummary:
    """`prdup index --github`: import from GitHub, index git, then record the labels (their
    findings need the index)."""
    failed: GitHubError | None = None
    count = ImportCount()
    try:
        metadata = import_metadata(
            github_repo, repo_path, db_path, client=client, progress=progress, count=count
        )
    except ImportInterrupted:
        raise  # a first import completes before git is indexed: see docs/bot.md
    except GitHubError as error:
        # GitHub out of reach is no reason to leave the repository's own history unread.
        failed, metadata = error, imported_earlier(github_repo, repo_path, db_path)
    summary = index_repository(
        repo_path,
        db_path=db_path,
        targets=targets,
        prs_json=prs_json,
        settings=settings,
        progress=progress,
        metadata=metadata,
    )
    summary.imported = count.fresh
    if failed is not None:
        raise ImportFailed(failed)
    record_labels(github_repo, repo_path, db_path, settings)
    return summary


def imported_earlier(
    github_repo: str, repo_path: str | Path, db_path: str | Path | None
) -> dict[int, PullMetadata]:
    """What earlier imports fetched and the index does not show yet."""
    with IndexStore(index_path(repo_path, db_path)) as store:
        return GitHubRecord(store, github_repo).pending()
