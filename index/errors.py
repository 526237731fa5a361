"""Named failures of prdup's library; the CLI turns each into a one-line message and exit 2."""

from __future__ import annotations


class PrdupError(Exception):
    """Base for every error a user can cause and fix; `str()` is the one-line message."""

    # Work stopped by something outside (GitHub's rate limit), kept and resumed by running
    # again: not a failure (exit 3).
    resumable = False


class NotAGitRepository(PrdupError):
    pass


class EmptyRepository(PrdupError):
    pass


class MissingRevision(PrdupError):
    pass


class UnknownTarget(MissingRevision):
    """A target named by the user (`--target`) that the repository does not have: checked
    against it, every PR would look unmerged, so it is an error, not a warning."""


class IndexLocked(PrdupError):
    pass


class IndexCorrupt(PrdupError):
    pass


class IndexDiskFull(PrdupError):
    """The disk filled while writing: the index is intact up to its last batch."""


class IndexReadOnly(PrdupError):
    """The index cannot be written (read-only media, folder or file) and this needs to."""


class NotAnIndex(PrdupError):
    """The file is another program's database: prdup must not add its tables to it."""


class BadOutput(PrdupError):
    """A report cannot be written where it was asked to go."""


class IndexMissing(PrdupError):
    pass


class BadMetadata(PrdupError):
    pass


class BadConfig(PrdupError):
    pass


class BadDiff(PrdupError):
    pass


class UnknownPullRequest(PrdupError):
    pass


class ForeignIndex(PrdupError):
    """The index holds another repository's history: adding to it, or checking against it,
    would mix two projects' changes."""


class InvalidDate(PrdupError):
    """A date given to an option (`sweep --since`) that is not one."""
