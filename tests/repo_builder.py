"""Build real git repositories for tests: commits, PR branches, merges, squashes, PR refs.

Authors, committers and dates are pinned so SHAs are stable and tests read as stories:
"PR 7 is squash-merged; PR 9 makes the same fix from an older base".
"""

from __future__ import annotations

import os
from pathlib import Path

import git

_EPOCH = 1_700_000_000


class RepoBuilder:
    """A work tree with `main`, plus helpers that mimic how GitHub lands and exposes PRs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.repo = git.Repo.init(path, initial_branch="main")
        self._tick = 0
        self._author = "Test Author"
        self._email = "author@example.com"  # a reserved domain: it ties no two authors together
        with self.repo.config_writer() as config:
            config.set_value("user", "name", "Test Author")
            config.set_value("user", "email", "author@example.com")
            config.set_value("commit", "gpgsign", "false")

    # --- low level --------------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        self._tick += 1
        date = f"{_EPOCH + self._tick * 60} +0000"
        return {
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_DATE": date,
            "GIT_AUTHOR_NAME": self._author,
            "GIT_AUTHOR_EMAIL": self._email,
            "GIT_COMMITTER_NAME": "Test Committer",
            "GIT_COMMITTER_EMAIL": "committer@example.com",
        }

    def later(self, days: int) -> None:
        """Let `days` pass before the next commit (a PR left alone, a test merge gone stale)."""
        self._tick += days * 24 * 60

    def git(self, *args: str) -> str:
        with self.repo.git.custom_environment(**self._env()):
            return self.repo.git.execute(["git", *args])  # type: ignore[return-value]

    def write(self, files: dict[str, str | bytes | None]) -> None:
        for name, content in files.items():
            target = self.path / name
            if content is None:
                self.git("rm", "-q", "--", name)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)
            self.git("add", "--", name)

    def commit(self, message: str, files: dict[str, str | bytes | None] | None = None) -> str:
        """Write `files` (None deletes) on the current branch and commit; returns the sha."""
        self.write(files or {})
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self, rev: str = "HEAD") -> str:
        return self.repo.git.rev_parse(rev)

    def checkout(self, branch: str, start: str | None = None) -> None:
        if start is None:
            self.git("checkout", "-q", branch)
        else:
            self.git("checkout", "-q", "-B", branch, start)

    # --- GitHub-shaped operations -----------------------------------------------------------

    def pr_branch(
        self,
        number: int,
        commits: list[tuple[str, dict[str, str | bytes | None]]],
        base: str = "main",
        start: str | None = None,
        author: str | None = None,
        email: str | None = None,
    ) -> str:
        """Push PR `number`'s commits on a branch from `start` (default: `base`'s tip).

        Writes `refs/pull/N/head` as GitHub does for every PR; returns the head sha. Each PR
        has its own author (`Contributor N`) unless `author` says otherwise: the matcher
        treats an author's own earlier PR as a follow-up, not a duplicate.
        """
        branch = f"pr-{number}"
        self.checkout(branch, start or base)
        self._author = author or f"Contributor {number}"
        self._email = email or "author@example.com"
        try:
            for message, files in commits:
                self.commit(message, files)
        finally:
            self._author, self._email = "Test Author", "author@example.com"
        head = self.head()
        self.git("update-ref", f"refs/pull/{number}/head", head)
        self.checkout(base)
        return head

    def test_merge(self, number: int, onto: str = "main") -> str:
        """Write `refs/pull/N/merge` as GitHub's test merge of PR `number` onto `onto` as it
        is now (its first parent); returns the merge commit. The tree is the head's: only the
        parents matter to prdup."""
        head = self.head(f"refs/pull/{number}/head")
        merge = self.git(
            "commit-tree",
            f"{head}^{{tree}}",
            "-p",
            self.head(onto),
            "-p",
            head,
            "-m",
            f"Merge {head} into {self.head(onto)}",
        ).strip()
        self.git("update-ref", f"refs/pull/{number}/merge", merge)
        return merge

    def merge_pr(self, number: int, how: str = "merge", base: str = "main", title: str = "") -> str:
        """Land PR `number` on `base` the way GitHub's button does; returns the landed commit."""
        branch = f"pr-{number}"
        title = title or self.repo.git.log("-1", "--format=%s", branch)
        self.checkout(base)
        if how == "merge":
            self.git(
                "merge",
                "-q",
                "--no-ff",
                branch,
                "-m",
                f"Merge pull request #{number} from contributor/{branch}\n\n{title}",
            )
        elif how == "squash":
            self.git("merge", "-q", "--squash", branch)
            self.git("commit", "-q", "-m", f"{title} (#{number})")
        elif how == "rebase":
            self.git("rebase", "-q", base, branch)
            self.checkout(base)
            self.git("merge", "-q", "--ff-only", branch)
        else:
            raise ValueError(how)
        return self.head()

    def delete_blob(self, rev_path: str) -> None:
        """Remove a file's blob from the object store, as a partial clone or an incomplete
        snapshot lacks it."""
        blob = self.head(rev_path)
        (Path(self.repo.git_dir) / "objects" / blob[:2] / blob[2:]).unlink()

    def delete_pr_branch(self, number: int) -> None:
        self.git("branch", "-q", "-D", f"pr-{number}")

    # --- clones -----------------------------------------------------------------------------

    def ci_clone(self, path: Path, remote: str = "origin") -> RepoBuilder:
        """A clone made as CI checkouts make one (`git init`, then `git fetch`): every branch
        and PR ref fetched, but no `origin/HEAD` and no local branch. Its clock runs on from
        this repository's, so its own commits are newer."""
        clone = RepoBuilder(path)
        clone._tick = self._tick + 100
        clone.add_remote(remote, self.path)
        return clone

    def add_remote(self, name: str, url: Path) -> None:
        self.git("remote", "add", name, str(url))
        self.fetch(name)

    def fetch(self, remote: str = "origin") -> None:
        """Fetch the remote's branches into `refs/remotes/<remote>/` and its PR refs."""
        self.git(
            "fetch",
            "-q",
            remote,
            f"+refs/heads/*:refs/remotes/{remote}/*",
            "+refs/pull/*/head:refs/pull/*/head",
        )


def run_cli(repo: Path, *args: str, input: str | None = None) -> tuple[int, str, str]:
    """Run prdup's CLI in-process from inside `repo`: (exit code, stdout, stderr)."""
    from click.testing import CliRunner

    from cli import main

    cwd = os.getcwd()
    os.chdir(repo)
    try:
        result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
    finally:
        os.chdir(cwd)
    return result.exit_code, result.stdout, result.stderr


def run_in(path: Path) -> dict[str, str]:
    """Environment for running the CLI as a subprocess inside `path` without user config."""
    env = dict(os.environ)
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["HOME"] = str(path)
    return env
