"""Everything prdup reads from git, through GitPython, in as few git processes as possible.

One streaming `git log` per target branch, one `git rev-list` for every PR's fork point, one
`git diff-tree --stdin` for every PR's diff, and persistent `git cat-file` processes for blobs
(asked a list of names per request where a caller has several): never one process per
commit or per PR.
"""

from __future__ import annotations

import contextlib
import hashlib
import queue
import re
import secrets
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git

from detector.signals import is_bot
from index.errors import EmptyRepository, MissingRevision, NotAGitRepository, UnknownTarget
from index.git.decoding import as_utf8, decode_text
from index.git.diff_budget import SHA_LINE, ListedFile, PairBudget, kept_files
from index.git.hunk_symbols import attribute_environment
from index.git.threads import start_quietly

# -U0: context lines make the same change look different on another base, so none are asked for.
# --full-index: whole blob ids, so symbols can read the exact old and new file.
# -M: renames are one file change, not a removal plus an addition.
DIFF_OPTIONS = ("-p", "-U0", "--full-index", "-M", "--no-color", "--no-ext-diff", "--no-textconv")
_LOG_FIELDS = ("%H", "%P", "%an", "%aI", "%cI", "%B")  # then the commit's diff
_COMMIT_TEXT_FIELDS = ("%H", "%an", "%aI", "%B")
_PULL_REF = re.compile(r"^refs/(?:pull/(\d+)/head|remotes/[^/]+/pr/(\d+))$")
_TEST_MERGE_REF = re.compile(r"^refs/pull/(\d+)/merge$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_BLOCK = 1 << 20  # bytes read from git at a time
_READ_AHEAD = 32  # blocks a reader thread may hold before the parser takes them


@dataclass(frozen=True, slots=True)
class LoggedCommit:
    """A first-parent commit of a target branch and its diff against its first parent."""

    sha: str
    parents: tuple[str, ...]
    author: str
    authored_at: str
    committed_at: str
    message: str
    diff: str


UNREADABLE = "unreadable git output"
BEYOND_CUT = "at a shallow clone's cut (its change is unknown)"


@dataclass(frozen=True, slots=True)
class UnreadCommit:
    """A commit of the log whose change cannot be known: a record of git's output that does not
    read as a commit, or a commit at a shallow clone's cut (git diffs it as if it added the whole
    tree). The indexer skips it, counts it, and goes on with the next. `sha` is None when not
    even the commit id could be read."""

    sha: str | None
    why: str = UNREADABLE


@dataclass(frozen=True, slots=True)
class Framing:
    """The markers that cut one git process's output into records and fields.

    A file's diff can hold any bytes: git prints a file as text when its first 8,000 bytes hold
    no NUL (`buffer_is_binary` in git's xdiff-interface.c), and moby/moby's Illustrator files
    hold NUL and every control character after that. So no fixed marker is safe; each one ends
    with a token drawn for this process, which no file or commit message can hold by chance.
    """

    record: bytes
    field: bytes

    @classmethod
    def drawn(cls) -> Framing:
        token = secrets.token_hex(16).encode()
        return cls(b"\x00\x1e" + token, b"\x00\x1f" + token)

    def format(self, fields: Iterable[str], trailing_field: bool = False) -> str:
        """git's `--format` for a record of `fields`: the record marker, then the fields with
        a field marker between them (and after the last one, before what git prints next)."""
        record, field = _as_format(self.record), _as_format(self.field)
        return record + field.join(fields) + (field if trailing_field else "")


GITHUB_COMMITTER = "noreply@github.com"  # the committer of what GitHub's buttons write


def _as_format(marker: bytes) -> str:
    """A marker as git's `--format` writes it: NUL and control characters as `%xNN`."""
    return "".join(chr(b) if 0x20 < b < 0x7F and b != 0x25 else f"%x{b:02x}" for b in marker)


@dataclass(frozen=True, slots=True)
class PullRef:
    number: int
    ref: str
    head: str


def open_repository(path: str | Path) -> git.Repo:
    """Open a work tree, bare repository or mirror clone, or say clearly why not."""
    if not Path(path).exists():
        raise NotAGitRepository(f"{path}: no such folder (give a clone's path)")
    try:
        repo = git.Repo(path, search_parent_directories=True)
    except (git.NoSuchPathError, git.InvalidGitRepositoryError):
        raise NotAGitRepository(f"{path}: not a git repository (give a clone's path)") from None
    # A bare mirror without a `config` file looks like a work tree to GitPython, which then runs
    # git in the parent folder; naming the git directory explicitly works for every layout.
    repo.git.update_environment(GIT_DIR=repo.git_dir)
    # prdup's attributes file: git's diff drivers then name each hunk's function or class.
    repo.git.update_environment(**attribute_environment())
    return repo


def git_dir(repo: git.Repo) -> Path:
    return Path(repo.git_dir)


# Where a target's remote-tracking refs are looked for: the remote a clone came from, then the
# one a fork's clone adds for the project it forked.
REMOTES = ("origin", "upstream")


@dataclass(frozen=True, slots=True)
class TargetBranch:
    """A target as PRs name it (`main`), the ref whose history is read for it, and its tip."""

    name: str
    ref: str
    tip: str
    note: str = ""  # why another ref than the local branch of that name was read, if one was
    unread_local: int = 0  # commits of the local branch that the ref read lacks (unpushed work)

    @property
    def shown(self) -> str:
        """`main`, or `main (origin/main)` when a remote-tracking ref stands for it."""
        short = short_ref(self.ref)
        return self.name if short == self.name else f"{self.name} ({short})"


def short_ref(ref: str) -> str:
    return ref.removeprefix("refs/heads/").removeprefix("refs/remotes/")


def has_work_tree(repo: git.Repo) -> bool:
    """False for a bare clone or mirror, also one without a `config` file (which GitPython
    takes for a work tree whose git directory is its parent folder)."""
    root = None if repo.bare else repo.working_tree_dir
    return root is not None and (Path(root) / ".git").exists()


def default_branch(repo: git.Repo) -> str:
    """The branch PRs are merged into: the remote's default branch, never a checked-out one.

    A bare clone's or mirror's HEAD names the default branch; a work tree's HEAD is whatever
    was checked out (often a feature branch), so there the remotes' HEADs are asked, then their
    `main` or `master`, then a local `main` or `master`.
    """
    if not has_work_tree(repo):
        head = _symbolic_ref(repo, "HEAD")
        if head and head.startswith("refs/heads/") and _ref_commits(repo, [head]):
            return head.removeprefix("refs/heads/")
    for remote in REMOTES:
        # Set by `git clone`, not by `git init` + `git fetch` (CI checkouts): often missing.
        head = _symbolic_ref(repo, f"refs/remotes/{remote}/HEAD")
        if head and _ref_commits(repo, [head]):
            return head.removeprefix(f"refs/remotes/{remote}/")
    names = ("main", "master")
    remote_refs = [f"refs/remotes/{remote}/{name}" for remote in REMOTES for name in names]
    local_refs = [f"refs/heads/{name}" for name in names]
    for refs in (remote_refs, local_refs):
        found = _ref_commits(repo, refs)
        for ref in refs:
            if ref in found:
                return ref.rsplit("/", 1)[1]
    if not has_commits(repo):
        raise EmptyRepository(f"{repo.git_dir}: the repository has no commits yet")
    raise MissingRevision(
        "no default branch found (no origin/HEAD or upstream/HEAD, no main or master); "
        "name the branch PRs are merged into with --target BRANCH"
    )


def is_branch(repo: git.Repo, name: str) -> bool:
    """A branch of this clone, local or of a remote (origin, upstream)."""
    refs = [f"refs/heads/{name}", *(f"refs/remotes/{remote}/{name}" for remote in REMOTES)]
    return bool(_ref_commits(repo, refs))


def target_branch(repo: git.Repo, name: str, required: bool = True) -> TargetBranch | None:
    """The ref to read for target `name`: the remote's copy of the branch over a local one.

    A local `main` may be behind the remote's (merged PRs would count as open) or carry the
    user's own commits (which would count as merged), so when `origin/main` (else
    `upstream/main`) exists it is read, and `note` says how the local branch differs.
    `origin/main` is passed over only for an `upstream/main` that contains it (a fork's stale
    copy). A name that is no branch (`origin/main`, a tag, a commit id) is read as given.
    """
    local = f"refs/heads/{name}"
    remotes = [f"refs/remotes/{remote}/{name}" for remote in REMOTES]
    if _remembered(repo) is not None:
        branches = dict(line.split() for line in _ref_lines(repo, "refs/heads", "refs/remotes"))
        found = {ref: branches[ref] for ref in (local, *remotes) if ref in branches}
    else:
        found = _ref_commits(repo, [local, *remotes])
    remote_refs = [ref for ref in remotes if ref in found]
    if not remote_refs:
        if local in found:
            return TargetBranch(name, local, found[local])
        tip = resolve(repo, name, required)
        return TargetBranch(name, name, tip) if tip else None
    ref, notes = remote_refs[0], []
    for other in remote_refs[1:]:
        behind, ahead = _distance(repo, found[ref], found[other])
        if behind and not ahead:
            notes.append(f"{short_ref(ref)} is {behind} commit(s) behind {short_ref(other)}")
            ref = other
    ahead = 0
    if local in found and found[local] != found[ref]:
        behind, ahead = _distance(repo, found[local], found[ref])
        notes.append(_local_differs(name, short_ref(ref), behind, ahead))
    note = f"{'; '.join(notes)}; read {short_ref(ref)}" if notes else ""
    return TargetBranch(name, ref, found[ref], note, ahead)


@dataclass
class _RunReads:
    """What an index run reads of its clone once (`remember_for_run`): the lines of
    `git for-each-ref` over its branches and PR refs, by the prefix they are under, and where a
    shallow clone's history is cut (read on first need)."""

    refs: dict[str, list[str]]
    shallow: list[str] | None = None


# Kept by the repository object's identity (two `git.Repo` objects of one clone are equal, and
# another one, opened later, must read the refs as they are then), for as long as it lives.
_RUN: dict[int, tuple[weakref.ref[git.Repo], _RunReads]] = {}
_LISTED = ("refs/heads", "refs/remotes", "refs/pull")


def remember_for_run(repo: git.Repo) -> None:
    """From now on this repository object's branches and PR refs are read from one
    `git for-each-ref`, read here, and its shallow boundary once: an index run resolves each
    of its targets several times (a `git` process each, 42 targets on mypy), lists the PR refs
    more than once and asks for the boundary with each history it reads, and nothing moves a
    ref or the boundary while it runs. Only for a repository object that lives no longer than
    such a run."""
    by_prefix: dict[str, list[str]] = {prefix: [] for prefix in _LISTED}
    output = repo.git.for_each_ref("--format=%(refname) %(objectname)", *_LISTED)
    for line in output.splitlines():
        name = line.split(" ", 1)[0]  # a ref may be named `refs/pull` itself
        prefix = next(p for p in _LISTED if name == p or name.startswith(f"{p}/"))
        by_prefix[prefix].append(line)
    key = id(repo)
    _RUN[key] = (weakref.ref(repo, lambda _: _RUN.pop(key, None)), _RunReads(by_prefix))


def _remembered(repo: git.Repo) -> _RunReads | None:
    kept = _RUN.get(id(repo))
    return kept[1] if kept is not None and kept[0]() is repo else None


def _ref_lines(repo: git.Repo, *prefixes: str) -> list[str]:
    """ "refname sha" for each ref under these prefixes (of `_LISTED`), sorted by name as
    git sorts them (each prefix's lines are, and no name under one sorts among another's)."""
    remembered = _remembered(repo)
    if remembered is not None:
        return [line for prefix in sorted(prefixes) for line in remembered.refs[prefix]]
    output = repo.git.for_each_ref("--format=%(refname) %(objectname)", *prefixes)
    return output.splitlines()


def named_target(repo: git.Repo, name: str) -> TargetBranch:
    """`target_branch` for a target the user named; `UnknownTarget` when the repository has
    no such branch or commit (a typo, a branch not fetched)."""
    branch = target_branch(repo, name, required=False)
    if branch is None:
        raise UnknownTarget(
            f"target {name}: no such branch or commit in {repo.git_dir} "
            "(fetch it, or name one that 'git branch -a' lists)"
        )
    return branch


def _local_differs(name: str, remote: str, behind: int, ahead: int) -> str:
    if behind and ahead:
        return f"local {name} has diverged from {remote} ({ahead} own, {behind} missing commit(s))"
    if ahead:
        return f"local {name} has {ahead} commit(s) that {remote} lacks (not counted as merged)"
    return f"local {name} is {behind} commit(s) behind {remote}"


def _distance(repo: git.Repo, a: str, b: str) -> tuple[int, int]:
    """(commits b has that a lacks, commits a has that b lacks)."""
    output = repo.git.rev_list("--count", "--left-right", f"{b}...{a}")
    behind, ahead = output.split()
    return int(behind), int(ahead)


def _symbolic_ref(repo: git.Repo, ref: str) -> str | None:
    try:
        return repo.git.symbolic_ref("-q", ref) or None
    except git.GitCommandError:
        return None


def _ref_commits(repo: git.Repo, refs: list[str]) -> dict[str, str]:
    """ref -> commit id for those of `refs` (branches) that exist, in one `git for-each-ref`."""
    output = repo.git.for_each_ref("--format=%(refname) %(objectname)", *refs)
    commits = dict(line.split() for line in output.splitlines())
    return {ref: commits[ref] for ref in refs if ref in commits}  # a pattern also matches ref/*


def has_commits(repo: git.Repo) -> bool:
    try:
        repo.git.rev_parse("--verify", "-q", "HEAD")
        return True
    except git.GitCommandError:
        return bool(repo.git.for_each_ref("--count=1", "refs/heads", "refs/remotes"))


def lacks_commit_graph(repo: git.Repo) -> bool:
    """True when the repository has no commit-graph, git's cache of the commit graph.

    Without it, every "is A an ancestor of B?" that `check` asks walks the whole history when
    the answer is no (about 0.1 s on ansible's 46,000 commits, against 2 ms with it), and the
    index's own walks parse every commit. `git gc` and `git maintenance` write it; a fresh
    clone has none.
    """
    info = _objects_info(repo)
    return not ((info / "commit-graph").exists() or (info / "commit-graphs").is_dir())


def write_commit_graph(repo: git.Repo) -> bool:
    """Write the commit-graph of everything reachable; True if it was written. Once written,
    git keeps using it for the commits it covers (and its own upkeep extends it), so this runs
    once per clone. A repository it cannot be written to is read as before, only slower."""
    try:
        repo.git.commit_graph("write", "--reachable", "--no-progress")
    except git.GitCommandError:
        return False  # read-only objects, a shallow clone
    return not lacks_commit_graph(repo)


def _objects_info(repo: git.Repo) -> Path:
    return Path(repo.working_dir, repo.git.rev_parse("--git-path", "objects/info"))


def shallow_boundary(repo: git.Repo) -> list[str]:
    """The commits where a shallow clone's history is cut (sorted), or [] for a whole history.

    git reads them as having no parents, so their parents' history, and every PR merged in it,
    is not in the clone; `git fetch --unshallow` fetches it.
    """
    remembered = _remembered(repo)
    if remembered is not None and remembered.shallow is not None:
        return list(remembered.shallow)
    answer = repo.git.rev_parse("--is-shallow-repository", "--git-path", "shallow").split("\n")
    cut = []
    if answer[0] == "true":
        listed = Path(repo.working_dir, answer[1]).read_text(encoding="ascii")
        cut = sorted(set(listed.split()))
    if remembered is not None:
        remembered.shallow = cut
    return list(cut)


def root_commits(repo: git.Repo, tips: list[str]) -> list[str]:
    """The commits without parents that `tips` reach (sorted): what tells one repository's
    history from another's, in every clone and fork of it. A shallow clone's cut is no root."""
    if not tips:
        return []
    found = set(repo.git.rev_list("--max-parents=0", *tips).split())
    return sorted(found - set(shallow_boundary(repo)))


def resolve(repo: git.Repo, rev: str, required: bool = True) -> str | None:
    """The commit id for `rev` (also tried as `origin/rev`), or None / MissingRevision."""
    for candidate in (rev, f"origin/{rev}", f"refs/remotes/origin/{rev}"):
        try:
            return repo.git.rev_parse("--verify", "-q", f"{candidate}^{{commit}}")
        except git.GitCommandError:
            continue
    if required:
        raise MissingRevision(f"{rev}: no such branch or commit in {repo.git_dir}")
    return None


def first_parent_log(
    repo: git.Repo, tip: str, stop_at: str | None = None
) -> Iterator[LoggedCommit | UnreadCommit]:
    """Stream the target's first-parent history, oldest first, each with its diff.

    Merge commits are diffed against their first parent: that is the PR's change as it landed.
    Oldest first, so each file version's syntax tree can be derived from the one before it.
    A record that does not read as a commit, or a commit at a shallow clone's cut, comes as an
    `UnreadCommit`, not an error.
    """
    return _first_parent_log(repo, [f"{stop_at}..{tip}" if stop_at else tip])


def brought_in(
    repo: git.Repo, merged: str, reached: Sequence[str]
) -> Iterator[LoggedCommit | UnreadCommit]:
    """The commits a merge brought in along the merged branch's own line: `merged`'s
    first-parent line down to what `reached` (the merge's first parent) already holds, oldest
    first, each with its diff against its first parent."""
    return _first_parent_log(repo, [merged, "--not", *reached])


def _first_parent_log(
    repo: git.Repo, revisions: list[str]
) -> Iterator[LoggedCommit | UnreadCommit]:
    cut = set(shallow_boundary(repo))
    framing = Framing.drawn()
    process = repo.git.log(
        "--reverse",
        "--first-parent",
        "--diff-merges=first-parent",
        f"--format={framing.format(_LOG_FIELDS, trailing_field=True)}",
        *DIFF_OPTIONS,
        *revisions,
        as_process=True,
    )
    held: LoggedCommit | UnreadCommit | None = None
    for commit in _parse_log_stream(process.stdout, framing):
        if commit.sha in cut:
            commit = UnreadCommit(commit.sha, BEYOND_CUT)
        if held is not None:
            yield held
        held = commit
    # The last record is complete only if git exited well: it may have died inside its diff.
    process.wait()
    if held is not None:
        yield held


def _decode(raw: bytes) -> str:
    # Non-UTF-8 files (latin-1 sources, stray bytes) must not stop the index, and their lines
    # read as Latin-1 rather than as replacement characters.
    return decode_text(raw)


def _parse_log_stream(
    stream: Iterable[bytes], framing: Framing
) -> Iterator[LoggedCommit | UnreadCommit]:
    for chunk in _records(stream, framing.record):
        yield _logged_commit(chunk, framing.field)


def _records(
    stream: Iterable[bytes], separator: bytes, block_size: int = _BLOCK
) -> Iterator[bytes]:
    """The non-empty parts of a stream between separators, read a block at a time. Each block
    is searched once: a commit of hundreds of MB spans hundreds of blocks, and searching (or
    copying) all it held so far at every block took time quadratic in its size."""
    buffer = bytearray()
    start = 0  # where the record being read begins in `buffer`
    for block in _read_ahead(_reads(stream, block_size)):
        search = max(start, len(buffer) - len(separator) + 1)
        buffer += block
        while (found := buffer.find(separator, search)) >= 0:
            if found > start:
                yield bytes(buffer[start:found])
            start = search = found + len(separator)
        del buffer[:start]
        start = 0
    if buffer:
        yield bytes(buffer)


def _reads(stream: Iterable[bytes], block_size: int) -> Iterator[bytes]:
    """A git process's output in blocks of `block_size` bytes."""
    return iter(lambda: stream.read(block_size), b"")  # type: ignore[attr-defined]


def _read_ahead(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """Blocks taken from `blocks` by a thread, up to `_READ_AHEAD` blocks ahead (whatever
    `blocks` does to them runs in that thread too).

    Read only as the blocks are taken, git's output pipe fills while this process parses and
    writes rows, and git waits: the two took turns instead of running side by side.
    """
    ready: queue.Queue[bytes | BaseException | None] = queue.Queue(_READ_AHEAD)
    stop = threading.Event()

    def read() -> None:
        try:
            for block in blocks:
                ready.put(block)
                if stop.is_set():
                    return
        except BaseException as error:  # handed to the reader, which raises it
            ready.put(error)
            return
        ready.put(None)

    start_quietly(threading.Thread(target=read, daemon=True))
    try:
        while (block := ready.get()) is not None:
            if isinstance(block, BaseException):
                raise block
            yield block
    finally:
        stop.set()
        with contextlib.suppress(queue.Empty):  # let a thread waiting to put see `stop`
            while True:
                ready.get_nowait()


def _logged_commit(record: bytes, field: bytes) -> LoggedCommit | UnreadCommit:
    fields = record.split(field, len(_LOG_FIELDS))
    if len(fields) != len(_LOG_FIELDS) + 1 or not _SHA.match(_decode(fields[0])):
        return UnreadCommit(_leading_sha(record))
    sha, parents, author, authored, committed, message, diff = map(_decode, fields)
    return LoggedCommit(
        sha=sha,
        parents=tuple(parents.split()),
        author=author,
        authored_at=authored,
        committed_at=committed,
        message=message.strip(),
        diff=diff.lstrip("\n"),
    )


def _leading_sha(record: bytes) -> str | None:
    """The commit id a record starts with (git prints `%H` first), if it does."""
    head = record[:40].decode("ascii", "replace")
    return head if _SHA.match(head) and record[40:41] in (b"", b"\x00") else None


def pull_refs(
    repo: git.Repo, present: frozenset[str] = frozenset()
) -> tuple[list[PullRef], list[PullRef]]:
    """PR heads from `refs/pull/N/head` (mirrors) and `refs/remotes/*/pr/N` (a fetch refspec).

    Returns (usable, missing): a ref whose commit is not in the object store (a partial fetch,
    a pruned fork) is reported, not fatal. Heads in `present` (read by an earlier run) are
    not asked about again.
    """
    found = pull_head_refs(repo)
    kinds = object_types(repo, [p.head for p in found.values() if p.head not in present])
    kinds.update(dict.fromkeys(present, "commit"))
    usable = [p for p in found.values() if kinds.get(p.head) == "commit"]
    missing = [p for p in found.values() if kinds.get(p.head) != "commit"]
    return sorted(usable, key=lambda p: p.number), sorted(missing, key=lambda p: p.number)


def pull_head_refs(repo: git.Repo) -> dict[int, PullRef]:
    """PR number -> its head ref, whether or not the object store holds the commit."""
    found: dict[int, PullRef] = {}
    for line in _ref_lines(repo, "refs/pull", "refs/remotes"):
        ref, sha = line.split()
        match = _PULL_REF.match(ref)
        if match:
            number = int(match.group(1) or match.group(2))
            found.setdefault(number, PullRef(number, ref, sha))
    return found


@dataclass(frozen=True, slots=True)
class TestMerge:
    """GitHub's test merge of a PR (`refs/pull/N/merge`): onto which commit, and when."""

    __test__ = False  # not a pytest class

    base: str  # its first parent: the base branch's commit the PR was merged onto
    made_at: int  # its committer date (seconds): when GitHub made it


def test_merges(repo: git.Repo) -> dict[int, TestMerge]:
    """PR number -> GitHub's last test merge of the PR.

    GitHub makes that ref for a PR it can merge without conflicts, and renews it while the
    PR is open (its base moved, its head was pushed). Today it removes it when the PR closes;
    until about 2018 it kept the last one, so most PRs closed then still have one
    (`index.git.state_estimate` reads them).
    """
    output = repo.git.for_each_ref("--format=%(refname) %(objectname)", "refs/pull")
    merges: dict[str, list[int]] = {}  # two PRs with one head can share a test merge
    for line in output.splitlines():
        ref, sha = line.split()
        match = _TEST_MERGE_REF.match(ref)
        if match:
            merges.setdefault(sha, []).append(int(match.group(1)))
    if not merges:
        return {}
    process = _log_of(repo, list(merges), "%H %ct %P")
    found: dict[int, TestMerge] = {}
    for raw in process.stdout:
        sha, made_at, *parents = _decode(raw).split()
        if len(parents) > 1:
            found.update(dict.fromkeys(merges.get(sha, ()), TestMerge(parents[0], int(made_at))))
    with contextlib.suppress(git.GitCommandError):  # a missing object: the rest stay unknown
        process.wait()
    return found


def refs_digest(repo: git.Repo) -> str:
    """A digest of every branch and PR ref and the commit it names: it changes when a fetch
    brought anything (one `git for-each-ref`, which reads no commit)."""
    return hashlib.sha1("\n".join(_ref_lines(repo, *_LISTED)).encode()).hexdigest()


def newest_commit_time(repo: git.Repo) -> int:
    """The committer date (seconds) of the newest commit a branch or PR ref points at: when
    the clone was last fetched, as near as git tells (its refs are as of then)."""
    with contextlib.suppress(git.GitCommandError):
        found = repo.git.for_each_ref(
            "--sort=-committerdate",
            "--count=1",
            "--format=%(committerdate:unix)",
            "refs/heads",
            "refs/remotes",
            "refs/pull",
        ).strip()
        if found.isdigit():
            return int(found)
    return 0


def committed_at(repo: git.Repo, shas: list[str]) -> dict[str, int]:
    """Committer dates (seconds) of many commits at once."""
    if not shas:
        return {}
    process = _log_of(repo, shas, "%H %ct")
    found = {}
    for raw in process.stdout:
        sha, seconds = _decode(raw).split()
        found[sha] = int(seconds)
    with contextlib.suppress(git.GitCommandError):  # a missing object: the rest stay unknown
        process.wait()
    return found


def pull_head_refspec(number: int) -> str:
    """The refspec that fetches PR `number`'s head as GitHub exposes it (from forks too)."""
    return f"+refs/pull/{number}/head:refs/pull/{number}/head"


def fetch_missing_pull_heads(
    repo: git.Repo, remote: str, heads: Iterable[tuple[int, str]]
) -> list[int]:
    """Fetch the PR heads (number, head sha) whose commit this clone lacks, in one `git fetch`;
    returns the PR numbers asked for.

    A CI runner's clone holds only the PR heads it fetched for this run; a replay at another
    open PR's head needs that head's commits. A failed fetch (a ref GitHub no longer has, no
    network) leaves them missing, as they were: the replay then proves less, never fails.
    """
    heads = list(heads)
    kinds = object_types(repo, [head for _, head in heads])
    missing = sorted({number for number, head in heads if kinds.get(head) != "commit"})
    if missing:
        refspecs = [pull_head_refspec(number) for number in missing]
        with contextlib.suppress(git.GitCommandError):
            repo.git.fetch("--quiet", "--no-tags", remote, *refspecs)
    return missing


def object_types(repo: git.Repo, shas: list[str]) -> dict[str, str]:
    """sha -> "commit" / "blob" / ... / "missing", through one `git cat-file --batch-check`."""
    if not shas:
        return {}
    process = repo.git.cat_file("--batch-check", as_process=True, istream=git.cmd.PIPE)
    feed(process, ("\n".join(shas) + "\n").encode())
    kinds: dict[str, str] = {}
    for raw in process.stdout:
        parts = raw.decode().split()
        if len(parts) >= 2:
            kinds[parts[0]] = parts[1]
    process.wait()
    return kinds


def diff_pairs(repo: git.Repo, pairs: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """Yield (head, diff text) for each (head, base) pair through one `git diff-tree --stdin`.

    diff-tree prints the first tree-ish of each input line before that pair's diff; a pair with
    no difference prints nothing, so its head is simply not yielded.
    """
    if not pairs:
        return
    process = _diff_tree(repo, pairs)
    blocks = _read_ahead(_whole_lines(_reads(process.stdout, _BLOCK)))
    for head, body in _pair_bodies(blocks):
        if head is None:
            process.wait()  # before the last pair: git may have died inside its diff
        else:
            yield head, _decode(body)


@dataclass(frozen=True, slots=True)
class PairDiff:
    head: str
    diff: str  # the files printed in full: all of them unless `listed` is set
    # Set when git was stopped inside this pair's diff: every file of the pair, as listed.
    listed: tuple[ListedFile, ...] | None = None


def diff_pairs_within(
    repo: git.Repo, pairs: list[tuple[str, str]], budget: PairBudget
) -> Iterator[PairDiff]:
    """`diff_pairs`, with each pair read up to its line limit (`PairBudget`).

    A pair past it comes with the files before the one that passed the limit and git's list
    of all its files. git is stopped inside the first pair still printing past its limit,
    which then comes last: the caller starts again after it for the pairs left.
    """
    if not pairs:
        return
    process = _diff_tree(repo, pairs, "--raw")
    # As soon as git writes it (not 1 MB at a time): a pair past its limit is seen, and git
    # stopped, that much sooner.
    lines = _whole_lines(iter(lambda: process.stdout.read1(_BLOCK), b""))
    for head, body in _pair_bodies(_read_ahead(_until_past(lines, budget, process))):
        # --raw lists the pair's files (lines starting with ":") before its diff.
        raw, _, diff = body.partition(b"\ndiff --git ")
        diff = b"diff --git " + diff if diff else b""
        if head is not None and head not in budget.passed:
            yield PairDiff(head, _decode(diff))
        elif head is not None:  # the files before the one that passed the limit
            diff = kept_files(diff, budget.passed[head])
            yield PairDiff(head, _decode(diff), _listed_files(_decode(raw)))
        elif budget.stopped is not None:
            with contextlib.suppress(git.GitCommandError):  # stopped on purpose
                process.wait()
        else:
            process.wait()  # before the last pair: git may have died inside its diff


def _diff_tree(repo: git.Repo, pairs: list[tuple[str, str]], *options: str) -> Any:
    payload = "".join(f"{head} {base}\n" for head, base in _unique_heads(pairs))
    process = repo.git.diff_tree(
        "--stdin", *options, *DIFF_OPTIONS, as_process=True, istream=git.cmd.PIPE
    )
    feed(process, payload.encode())
    return process


def _pair_bodies(blocks: Iterable[bytes]) -> Iterator[tuple[str | None, bytes]]:
    """(head, what git printed for it) per pair of a `diff-tree --stdin` stream. The last pair
    comes after (None, b""), which marks the stream's end: the caller checks there how git
    ended before taking a last pair that may be incomplete."""
    head: str | None = None
    body: list[bytes] = []
    for lines in blocks:
        # A line of 40 hex digits alone is the head of the next pair: a diff's own lines
        # all start with a marker (" ", "-", "+", "@@", "diff", "index", ":", ...).
        start = 0
        for found in SHA_LINE.finditer(lines):
            body.append(lines[start : found.start()])
            if head is not None:
                yield head, b"".join(body)
            head, body = found.group(1).decode(), []
            start = found.end()
        body.append(lines[start:])
    yield None, b""
    if head is not None:
        yield head, b"".join(body)


def _until_past(blocks: Iterable[bytes], budget: PairBudget, process: Any) -> Iterator[bytes]:
    """The blocks up to where `budget` says a pair is past its limit; git is stopped there."""
    for block in blocks:
        stop = budget(block)
        if stop is not None:
            yield block[:stop]
            process.kill()
            return
        yield block


def _listed_files(raw: str) -> tuple[ListedFile, ...]:
    """git's raw listing (`:mode mode blob blob STATUS<TAB>path[<TAB>new path]`), each file
    named as the stored form names it from the diff's header (`_as_stored`)."""
    files = []
    for line in raw.splitlines():
        if line.startswith(":"):
            fields, *paths = line.split("\t")
            status = fields.split()[-1][:1]
            old, new = _as_stored(paths[0], "a"), _as_stored(paths[-1], "b")
            if status == "D":
                files.append(ListedFile(status, old, old))
            elif status in "AC":
                files.append(ListedFile(status, new, new))
            else:
                files.append(ListedFile(status, old, new))
    return tuple(files)


def _as_stored(path: str, side: str) -> str:
    """A path from git's raw listing as the stored form has it: a C-quoted path (unusual
    characters, non-ASCII ones by default) is read from the diff's header by unidiff, which
    keeps the quotes and the `a/` or `b/` inside them."""
    return f'"{side}/{path[1:]}' if path.startswith('"') else path


def _whole_lines(blocks: Iterable[bytes]) -> Iterator[bytes]:
    """The same bytes in blocks of whole lines (the last one may lack its newline). A line
    longer than many blocks (a minified file) is joined once, when its end arrives."""
    pieces: list[bytes] = []  # a line's start, from blocks without a newline
    for block in blocks:
        cut = block.rfind(b"\n") + 1
        if not cut:
            pieces.append(block)
            continue
        if pieces:
            pieces.append(block[:cut])
            yield b"".join(pieces)
            pieces = []
        else:
            yield block[:cut]
        if cut < len(block):
            pieces.append(block[cut:])
    if pieces:
        carry = b"".join(pieces)
        yield carry + b"\n" if _SHA.match(carry.decode("ascii", "replace")) else carry


def _unique_heads(pairs: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    seen: set[str] = set()
    for head, base in pairs:
        if head not in seen:
            seen.add(head)
            yield head, base


def _log_of(repo: git.Repo, shas: list[str], format: str) -> git.cmd.Git.AutoInterrupt:
    """One `git log --no-walk --stdin` over many commits, skipping those git cannot read."""
    process = repo.git.log(
        "--no-walk=unsorted",
        "--ignore-missing",
        "--stdin",
        f"--format={format}",
        as_process=True,
        istream=git.cmd.PIPE,
    )
    feed(process, "".join(f"{sha}\n" for sha in dict.fromkeys(shas)).encode())
    return process


def commit_texts(repo: git.Repo, shas: list[str]) -> dict[str, tuple[str, str, str]]:
    """(author, author date, message) of many commits at once."""
    if not shas:
        return {}
    framing = Framing.drawn()
    process = _log_of(repo, shas, framing.format(_COMMIT_TEXT_FIELDS))
    texts: dict[str, tuple[str, str, str]] = {}
    for record in _records(process.stdout, framing.record):
        fields = record.split(framing.field, len(_COMMIT_TEXT_FIELDS) - 1)
        if len(fields) != len(_COMMIT_TEXT_FIELDS):
            continue  # unreadable: the PR is indexed without its head commit's texts
        sha, author, date, message = map(_decode, fields)
        texts[sha] = (author, date, message.strip())
    process.wait()
    return texts


def people_below(repo: git.Repo, heads: Iterable[str], targets: Sequence[str]) -> dict[str, str]:
    """For PR heads a bot wrote (pre-commit.ci's fixes on top of a person's branch): the
    nearest author below each head, among the PR's own commits (not on a target), who is not
    a bot. A head with no such commit is left out."""
    found: dict[str, str] = {}
    for head in heads:
        try:
            names = repo.git.log(
                "--no-merges", "--max-count=50", "--format=%an", head, "--not", *targets, "--"
            ).splitlines()
        except git.GitCommandError:
            continue
        person = next((name for name in names if name and not is_bot(name)), None)
        if person is not None:
            found[head] = person
    return found


@dataclass(frozen=True, slots=True)
class BranchWriter:
    """Who wrote a branch that a merge brought in, and when they started it."""

    name: str
    email: str
    started_at: str  # the author date of the branch's first own commit


_WRITER_COMMITS = 1000  # a longer branch is a line's history merged in; its newest tell enough


def branch_writer(repo: git.Repo, merged: str, reached: str) -> BranchWriter | None:
    """The author of a PR landed by a merge commit, which names the person who merged it:
    of the commits the merge brought in (`merged`'s, not `reached`'s, its first parent),
    the person who wrote the most, the earliest of equals, and no bot unless only bots
    wrote it (pre-commit.ci's fixes on top of a person's branch, `people_below`); started
    when the first of them was written. A merge that brought nothing (the PR's commits
    had landed before it) has its head's. None when git cannot read them.

    One git per merge: a range's exclusion is its own, so merges cannot share a walk."""
    try:
        written = _authors_of(repo, merged, "--not", reached)
        if not written:
            written = _authors_of(repo, "-1", merged)
    except git.GitCommandError:
        return None
    if not written:
        return None
    people = [author for author in written if not is_bot(author.name)] or written
    counts: dict[str, int] = {}
    for author in people:
        counts[author.name] = counts.get(author.name, 0) + 1
    most = max(counts.values())
    writer = next(author for author in people if counts[author.name] == most)
    # A rebase keeps author dates, so the branch's first commit is its oldest author date.
    first = min(written, key=lambda author: author.stamp)
    return BranchWriter(writer.name, writer.email, first.date)


@dataclass(frozen=True, slots=True)
class _Authored:
    name: str
    email: str
    date: str  # strict ISO 8601, with the author's offset
    stamp: int  # the same instant, in seconds since the epoch


def _authors_of(repo: git.Repo, *revisions: str) -> list[_Authored]:
    """Who wrote the non-merge commits `revisions` select, and when, oldest first."""
    output = repo.git.log(
        "--no-merges",
        f"--max-count={_WRITER_COMMITS}",
        "--format=%an%x1f%ae%x1f%aI%x1f%at",
        *revisions,
        "--",
        stdout_as_string=False,
    )
    found = []
    for line in reversed(_decode(output).splitlines()):
        name, email, date, stamp = (line.split("\x1f") + ["", "", ""])[:4]
        if stamp.isdigit():
            found.append(_Authored(name, email, date, int(stamp)))
    return found


def commit_dates(repo: git.Repo, shas: list[str]) -> dict[str, tuple[str, str, str, str]]:
    """(author date, committer date, author e-mail, author name) of many commits at once,
    dates in strict ISO 8601 with offsets: `rebase`, `cherry-pick` and GitHub's "Rebase and
    merge" keep the author and author date, so a copy of a commit has them too."""
    if not shas:
        return {}
    process = _log_of(repo, shas, "%H %aI %cI %ae %an")
    found: dict[str, tuple[str, str, str, str]] = {}
    for raw in process.stdout:
        sha, authored, committed, email, name = (_decode(raw).strip().split(" ", 4) + [""] * 4)[:5]
        found[sha] = (authored, committed, email, name)
    with contextlib.suppress(git.GitCommandError):  # a missing object: the rest stay unknown
        process.wait()
    return found


def commit_subjects(repo: git.Repo, shas: list[str]) -> dict[str, str]:
    """The subject of many commits at once; commits git cannot read are left out."""
    return dict(_one_line_each(repo, shas, "%s"))


_REVERTS_SHA = re.compile(r"This reverts commit ([0-9a-f]{7,40})")
_REVERTED_SUBJECT = re.compile(r'^Revert "(.+)"(?: \(#\d+\))?$')


def reverts_in(repo: git.Repo, tip: str) -> dict[str, list[tuple[str, str]]]:
    """The reverts `tip`'s history holds, newest first, each as (sha, subject), by what they
    revert: the full sha their message names ("This reverts commit <sha>.", as `git revert`
    writes it) and the subject they quote (`Revert "Title (#N)"`, as GitHub's revert button
    writes it). One `git log` over the history, its messages filtered by git itself."""
    framing = Framing.drawn()
    process = repo.git.log(
        "-E",
        '--grep=^This reverts commit |^Revert "',
        f"--format={framing.format(['%H', '%s', '%b'], trailing_field=True)}",
        tip,
        as_process=True,
    )
    found: dict[str, list[tuple[str, str]]] = {}
    for record in _records(process.stdout, framing.record):
        fields = record.split(framing.field, 3)
        if len(fields) < 3:
            continue
        sha, subject, body = (_decode(field).strip() for field in fields[:3])
        keys = set(_REVERTS_SHA.findall(body))
        if quoted := _REVERTED_SUBJECT.match(subject):
            keys.add(quoted.group(1))
        for key in keys:
            found.setdefault(key, []).append((sha, subject))
    with contextlib.suppress(git.GitCommandError):  # a tip git cannot read: no reverts known
        process.wait()
    return found


MOVES_FOLLOWED = 3  # how many times one file is followed from name to name towards the tip


def renamed_between(
    repo: git.Repo, base: str, tip: str, paths: Sequence[str] = ()
) -> dict[str, str]:
    """The files git finds renamed from `base` to `tip` (moved, most of their text kept), old
    path to new; none where git cannot read either commit.

    Across a long span git pairs only identical files once there are more than its rename
    limit to compare, so each of `paths` it did not pair, and the tip does not have, is
    followed through the commit that deleted it: that one commit's renames say where it went,
    and that name is followed the same way while the tip lacks it."""
    moved = _renames(repo, base, tip)
    for path in paths:
        if path in moved:
            continue
        name, start = path, base
        for _ in range(MOVES_FOLLOWED):
            deleted_by = _deleted_by(repo, start, tip, name)
            if deleted_by is None:
                break
            went = _renames(repo, f"{deleted_by}^", deleted_by).get(name)
            if went is None:
                break
            name, start = went, deleted_by
            if _exists(repo, tip, name):
                moved[path] = name
                break
    return moved


def _renames(repo: git.Repo, before: str, after: str) -> dict[str, str]:
    """The renames git finds from `before` to `after`, old path to new."""
    try:
        listed = repo.git.diff(
            "--name-status", "-M", "--diff-filter=R", "-z", "--no-ext-diff", before, after
        )
    except git.GitCommandError:
        return {}
    fields = listed.split("\0")
    return {
        fields[i + 1]: fields[i + 2]
        for i in range(0, len(fields) - 2, 3)
        if fields[i].startswith("R")
    }


def _deleted_by(repo: git.Repo, start: str, tip: str, path: str) -> str | None:
    """The commit between `start` and `tip` that deleted `path` (the earliest, where it was
    deleted more than once)."""
    try:
        listed = repo.git.log(
            "--format=%H", "--diff-filter=D", "--reverse", f"{start}..{tip}", "--", path
        ).split()
    except git.GitCommandError:
        return None
    return listed[0] if listed else None


def _exists(repo: git.Repo, commit: str, path: str) -> bool:
    try:
        repo.git.cat_file("-e", f"{commit}:{path}")
    except git.GitCommandError:
        return False
    return True


def committed_by_github(repo: git.Repo, shas: list[str]) -> dict[str, str]:
    """The subjects of those of `shas` that GitHub committed (its merge button's squash,
    merge and rebase commits name GitHub as their committer); unreadable ones left out."""
    found: dict[str, str] = {}
    for sha, line in _one_line_each(repo, shas, "%ce %s"):
        committer, _, subject = line.partition(" ")
        if committer == GITHUB_COMMITTER:
            found[sha] = subject.strip()
    return found


def _one_line_each(repo: git.Repo, shas: list[str], format: str) -> Iterator[tuple[str, str]]:
    """(sha, its `format` line) of many commits through one `git log`; a commit git cannot
    read is left out, and the rest stay unknown where a missing object stops git."""
    if not shas:
        return
    process = _log_of(repo, shas, f"%H {format}")
    for raw in process.stdout:
        sha, _, line = _decode(raw).rstrip("\n").partition(" ")
        yield sha, line.strip()
    with contextlib.suppress(git.GitCommandError):
        process.wait()


def commit_subjects_and_files(
    repo: git.Repo, shas: list[str]
) -> dict[str, tuple[str, tuple[str, ...]]]:
    """(subject, paths changed, as git names them) of many commits at once, from one
    `git log --no-walk --name-only`; commits git cannot read are left out."""
    if not shas:
        return {}
    framing = Framing.drawn()
    process = repo.git.log(
        "--no-walk=unsorted",
        "--ignore-missing",
        "--stdin",
        "--name-only",
        f"--format={framing.format(['%H', '%s'], trailing_field=True)}",
        as_process=True,
        istream=git.cmd.PIPE,
    )
    feed(process, "".join(f"{sha}\n" for sha in dict.fromkeys(shas)).encode())
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for record in _records(process.stdout, framing.record):
        fields = record.split(framing.field, 2)
        if len(fields) == 3:
            sha, subject, names = map(_decode, fields)
            found[sha.strip()] = (subject.strip(), tuple(n for n in names.splitlines() if n))
    with contextlib.suppress(git.GitCommandError):  # a missing object: the rest stay unknown
        process.wait()
    return found


@dataclass(frozen=True, slots=True)
class HistoryCommit:
    """A commit of a target's whole history, without its diff."""

    sha: str
    parents: tuple[str, ...]
    author: str
    author_email: str
    authored_at: str
    committed_at: str
    subject: str
    target: str  # the first target (in the order given) whose history holds it


def history_commits(repo: git.Repo, tips: list[tuple[str, str]]) -> Iterator[HistoryCommit]:
    """Every commit the targets' histories hold, merged-in branches included, without diffs:
    one `git log` per target, each leaving out what the targets before it hold."""
    framing = Framing.drawn()
    fields = ["%H", "%P", "%an", "%ae", "%aI", "%cI", "%s"]
    earlier: list[str] = []
    for name, tip in tips:
        process = repo.git.log(
            f"--format={framing.format(fields)}",
            tip,
            *(["--not", *earlier] if earlier else []),
            as_process=True,
        )
        for record in _records(process.stdout, framing.record):
            parts = [_decode(part) for part in record.split(framing.field, len(fields) - 1)]
            if len(parts) == len(fields):
                sha, parents, author, email, authored, committed, subject = parts
                yield HistoryCommit(
                    sha, tuple(parents.split()), author, email, authored, committed,
                    subject.strip(), name,
                )  # fmt: skip
        with contextlib.suppress(git.GitCommandError):
            process.wait()
        earlier.append(tip)


def patch_ids(repo: git.Repo, shas: list[str]) -> dict[str, str]:
    """git's own patch identity (`git patch-id --stable`) of each non-merge commit against its
    parent: equal for a commit and its copy by rebase or cherry-pick, whatever the line
    numbers. `git diff-tree --stdin -p` piped straight into `git patch-id`, two processes for
    all; a commit git cannot diff (a missing object) is left out."""
    if not shas:
        return {}
    diff = repo.git.diff_tree(
        "--stdin", "-p", "--no-color", "--no-ext-diff", "--no-textconv",
        as_process=True, istream=git.cmd.PIPE,
    )  # fmt: skip
    ids = repo.git.patch_id("--stable", as_process=True, istream=diff.stdout)
    feed(diff, "".join(f"{sha}\n" for sha in dict.fromkeys(shas)).encode())
    found: dict[str, str] = {}
    for raw in ids.stdout:
        patch_id, _, sha = raw.decode("ascii", "replace").strip().partition(" ")
        if sha:
            found[sha] = patch_id
    for process in (diff, ids):
        with contextlib.suppress(git.GitCommandError):  # what was printed before stands
            process.wait()
    return found


def author_emails(repo: git.Repo, shas: list[str]) -> dict[str, str]:
    """Author e-mail of many commits at once; commits git cannot read are left out."""
    if not shas:
        return {}
    process = _log_of(repo, shas, "%H %ae")
    emails: dict[str, str] = {}
    for raw in process.stdout:
        sha, _, email = _decode(raw).strip().partition(" ")
        emails[sha] = email
    with contextlib.suppress(git.GitCommandError):  # a missing object: the rest stay unknown
        process.wait()
    return emails


def feed(process: git.cmd.Git.AutoInterrupt, payload: bytes) -> None:
    # Write stdin from a thread: diff-tree starts printing before it has read all its input,
    # and a full stdout pipe would otherwise deadlock both processes.
    def write() -> None:
        try:
            process.stdin.write(payload)
            process.stdin.close()
        except OSError:
            pass  # git exited early (a missing object): its exit status tells the reader why

    start_quietly(threading.Thread(target=write, daemon=True))


def diff_between(repo: git.Repo, base: str, head: str) -> str:
    """The diff of one change (a branch against its merge-base), for `prdup check`."""
    return _decode(repo.git.diff(base, head, *DIFF_OPTIONS, stdout_as_string=False))


_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


def diffs_between(repo: git.Repo, spans: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """`diff_between` of many (base, head) spans of commit ids through one `git diff-tree
    --stdin` (the sweep's: a git process per PR cost more than its diff). A span git could
    not diff (a missing object) is left out, as are those after it and a head given twice:
    the caller asks `diff_between` for them."""
    heads = Counter(head for _, head in spans)
    pairs = [
        (head, base)
        for base, head in dict.fromkeys(spans)
        if heads[head] == 1 and is_full_sha(head) and is_full_sha(base)
    ]
    found: dict[str, str] = {}
    try:
        # `git diff` prints the same diff; GitPython drops its output's last newline.
        found.update((head, text.removesuffix("\n")) for head, text in diff_pairs(repo, pairs))
    except git.GitCommandError:
        return {(base, head): found[head] for head, base in pairs if head in found}
    return {(base, head): found.get(head, "") for head, base in pairs}


def count_first_parent(repo: git.Repo, tip: str, stop_at: str | None = None) -> int:
    """How many first-parent commits lead to `tip` (after `stop_at`), for progress."""
    revision = f"{stop_at}..{tip}" if stop_at else tip
    return int(repo.git.rev_list("--count", "--first-parent", revision))


def reachable_commits(repo: git.Repo, tips: list[str]) -> set[str]:
    """Every commit the tips reach, in one `git rev-list` (a set of 46,000 shas on ansible's
    history takes a fraction of a second; a process per commit asked would take minutes)."""
    return set(repo.git.rev_list(*dict.fromkeys(tips)).split()) if tips else set()


def first_parent_in(repo: git.Repo, tip: str, commits: set[str]) -> str | None:
    """The newest commit of `tip`'s first-parent line that `commits` holds, None if none."""
    process = repo.git.rev_list("--first-parent", tip, as_process=True)
    found = None
    for raw in process.stdout:
        sha = raw.decode("ascii", "replace").strip()
        if sha in commits:
            found = sha
            break
    with contextlib.suppress(Exception):  # stopped early: git dies of the closed pipe
        process.proc.kill()
        process.wait()
    return found


def next_first_parent(repo: git.Repo, after: str | None, tip: str) -> str | None:
    """The first-parent commit that follows `after` on the way to `tip` (the root if None)."""
    revision = f"{after}..{tip}" if after else tip
    output = repo.git.rev_list("--first-parent", "--reverse", revision)
    return output.split("\n", 1)[0] or None


def merged_in_by(repo: git.Repo, commit: str, tip: str) -> str | None:
    """The first-parent commit of `tip`'s line that brought `commit` in, where `commit` is not
    itself on that line (a fix merged into a maintenance branch, merged up later); None where
    it is on the line. `tip` must hold `commit` (the caller has asked git)."""
    line = repo.git.rev_list("--first-parent", f"{commit}..{tip}").split()
    descendants = set(repo.git.rev_list("--ancestry-path", f"{commit}..{tip}").split())
    holding = [c for c in line if c in descendants]  # newest first; the oldest brought it
    if not holding:
        return None
    parents = repo.git.rev_list("--parents", "-n", "1", holding[-1]).split()
    return None if parents[1:2] == [commit] else holding[-1]


def is_missing_object(error: git.GitCommandError) -> bool:
    text = str(error.stderr or "")
    return any(s in text for s in ("unable to read", "missing blob", "bad object", "missing"))


def merge_base(repo: git.Repo, a: str, b: str) -> str | None:
    try:
        return repo.git.merge_base(a, b)
    except git.GitCommandError:
        return None


def is_ancestor(repo: git.Repo, ancestor: str, descendant: str) -> bool:
    try:
        repo.git.merge_base("--is-ancestor", ancestor, descendant)
        return True
    except git.GitCommandError:
        return False


def is_full_sha(name: str) -> bool:
    """A commit named by its full id (not a ref, an abbreviation or `sha^1`)."""
    return bool(_FULL_SHA.match(name))


def history(repo: git.Repo, tip: str) -> frozenset[str] | None:
    """Every commit `tip`'s history holds, itself included, by full id (`git rev-list`), or
    None where git cannot read it: a commit is an ancestor of `tip` exactly when it is in the
    set (`is_ancestor`)."""
    try:
        return frozenset(repo.git.rev_list(tip).split())
    except git.GitCommandError:
        return None


class BlobReader:
    """Blob contents, as UTF-8 text (`as_utf8`), through GitPython's persistent
    `git cat-file --batch` process; and many blobs at once (`identify_all`, `read_texts`)
    through a `git cat-file` process of its own for each kind of question, asked a list of
    names per request: a replay reads a few files at each of two commits, and a request and
    answer a file cost more than git's own work."""

    def __init__(self, repo: git.Repo) -> None:
        self._repo = repo
        self._batch_check: Any = None  # `git cat-file --batch-check`, started on first use
        self._batch: Any = None  # `git cat-file --batch`, started on first use

    def read(self, blob: str, limit: int) -> bytes | None:
        found = self.read_blob(blob, limit)
        return found[1] if found is not None else None

    def identify(self, blob: str) -> tuple[str, int] | None:
        """The blob's id and size, its contents unread (`git cat-file --batch-check`)."""
        try:
            sha, kind, size = self._repo.git.get_object_header(blob)
        except (git.GitCommandError, ValueError):
            return None
        if kind != b"blob":
            return None
        return (sha.decode() if isinstance(sha, bytes) else str(sha)), int(size)

    def has_commit(self, name: str) -> bool:
        """The repository holds this commit (a runner's clone may lack a PR's head)."""
        try:
            _, kind, _ = self._repo.git.get_object_header(name)
        except (git.GitCommandError, ValueError):
            return False
        return kind == b"commit"

    def read_blob(self, blob: str, limit: int) -> tuple[str, bytes] | None:
        """The blob's id and contents: `commit:path` names the same blob at every commit
        where the file is unchanged, and its id says so."""
        found = self._read_object(blob, limit)
        # Its readers decode it as UTF-8: lines that are not are given to them as diffs read
        # them (Latin-1), so a replayed line is found in the file it was taken from.
        return None if found is None else (found[0], as_utf8(found[1]))

    def read_text(self, blob: str, limit: int) -> tuple[str, str] | None:
        """`read_blob`, decoded as its readers decode it (`decode_text`), once."""
        found = self._read_object(blob, limit)
        return None if found is None else (found[0], decode_text(found[1]))

    def _read_object(self, blob: str, limit: int) -> tuple[str, bytes] | None:
        """The blob's id and raw contents, if it is a blob within `limit` bytes."""
        try:
            sha, kind, size, data = self._repo.git.get_object_data(blob)
        except (git.GitCommandError, ValueError):
            return None
        if kind != b"blob" or size > limit:
            return None
        return (sha.decode() if isinstance(sha, bytes) else str(sha)), data

    def identify_all(self, names: Sequence[str]) -> dict[str, tuple[str, int] | None]:
        """`identify` of each name, a list of them per request."""
        found: dict[str, tuple[str, int] | None] = {}
        for part in _request_parts(names, found, self.identify):
            try:
                if self._batch_check is None:
                    self._batch_check = _cat_file(self._repo, "--batch-check")
                found.update(_identified(self._batch_check, part))
            except (OSError, ValueError):
                # The process ended (a damaged repository): each name is asked alone, as
                # `identify` asks it, and the next list starts a new process.
                _end(self._batch_check)
                self._batch_check = None
                found.update((name, self.identify(name)) for name in part)
        return found

    def read_texts(self, names: Sequence[str], limit: int) -> dict[str, tuple[str, str] | None]:
        """`read_text` of each name, a list of them per request."""
        found: dict[str, tuple[str, str] | None] = {}
        for part in _request_parts(names, found, lambda name: self.read_text(name, limit)):
            try:
                if self._batch is None:
                    self._batch = _cat_file(self._repo, "--batch")
                found.update(_texts(self._batch, part, limit))
            except (OSError, ValueError):
                _end(self._batch)  # as in `identify_all`
                self._batch = None
                found.update((name, self.read_text(name, limit)) for name in part)
        return found

    def close(self) -> None:
        """End the processes of `identify_all` and `read_texts` (GitPython's end with its
        repository)."""
        _end(self._batch_check)
        _end(self._batch)
        self._batch_check = self._batch = None


_REQUEST_BYTES = 32_000  # names written per request: less than a pipe holds, so git's
# answers never wait on a writer that waits on git


def _request_parts(
    names: Sequence[str], found: dict[str, Any], alone: Callable[[str], Any]
) -> Iterator[list[str]]:
    """The names to ask git for, in parts small enough for a pipe; a name a line of the
    request cannot carry (a newline in it) is asked alone."""
    part: list[str] = []
    size = 0
    for name in dict.fromkeys(names):
        if "\n" in name:
            found[name] = alone(name)
            continue
        part.append(name)
        size += len(name.encode()) + 1
        if size >= _REQUEST_BYTES:
            yield part
            part, size = [], 0
    if part:
        yield part


def _cat_file(repo: git.Repo, mode: str) -> Any:
    return repo.git.cat_file(mode, as_process=True, istream=git.cmd.PIPE)


def _end(process: Any) -> None:
    """Close a `git cat-file` process's input and wait for it, whatever state it is in."""
    if process is None:
        return
    with contextlib.suppress(OSError, ValueError):
        process.stdin.close()
    with contextlib.suppress(git.GitCommandError, OSError):
        process.wait()


def _ask(process: Any, names: list[str]) -> None:
    process.stdin.write("".join(f"{name}\n" for name in names).encode())
    process.stdin.flush()


def _answer_line(process: Any) -> bytes:
    """The next line git answers; a process that ended answers none (ValueError)."""
    line = process.stdout.readline()
    if not line.endswith(b"\n"):
        raise ValueError("git cat-file ended")
    return bytes(line)


def _identified(process: Any, names: list[str]) -> dict[str, tuple[str, int] | None]:
    """Each name's blob id and size, from a `git cat-file --batch-check` process."""
    _ask(process, names)
    return {name: _blob_header(_answer_line(process)) for name in names}


def _texts(process: Any, names: list[str], limit: int) -> dict[str, tuple[str, str] | None]:
    """Each name's blob id and text (None: no blob, or one over `limit` bytes), from a
    `git cat-file --batch` process."""
    _ask(process, names)
    found: dict[str, tuple[str, str] | None] = {}
    for name in names:
        header = _answer_line(process)
        tokens = header.split()
        if len(tokens) != 3 or not tokens[2].isdigit():
            found[name] = None  # missing or ambiguous: git prints no contents
            continue
        size = int(tokens[2])
        data = process.stdout.read(size + 1)  # then a newline
        if len(data) != size + 1:
            raise ValueError("git cat-file ended")
        blob = _blob_header(header)
        too_big = blob is None or blob[1] > limit
        found[name] = None if too_big else (tokens[0].decode(), decode_text(data[:-1]))
    return found


def _blob_header(line: bytes) -> tuple[str, int] | None:
    """A blob's id and size from a `git cat-file` header line; None for anything else (a
    name that is missing, ambiguous, or not a blob)."""
    tokens = line.split()
    if len(tokens) != 3 or tokens[1] != b"blob" or not tokens[2].isdigit():
        return None
    return tokens[0].decode(), int(tokens[2])


_COMBINED_HUNK = re.compile(r"^@@@ -(\d+)(?:,(\d+))? -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@@")


_COMBINED_OPTIONS = ("--cc", "-p", "-U0", "--no-color", "--no-ext-diff", "--no-textconv")


def merge_resolution(repo: git.Repo, merge: str) -> str:
    """What a two-parent merge wrote of its own, as a diff against its first parent: the
    lines of its result that neither parent had, and the lines both had that it dropped (a
    conflict resolved by new code). "" for a merge that only brought the other side in.

    git's combined diff (`diff-tree --cc`) shows a merge's result against both parents, a
    column for each; a line with `+` (or `-`) in both columns is the merge's own. The rest of
    its first-parent diff is what the other side's commits made, and they are that change."""
    try:
        combined = _decode(
            repo.git.diff_tree(*_COMBINED_OPTIONS, "--no-commit-id", merge, stdout_as_string=False)
        )
    except git.GitCommandError:
        return ""
    return _own_lines_of_combined(combined)


def merge_resolutions(repo: git.Repo, merges: Sequence[str]) -> dict[str, str]:
    """`merge_resolution` of each merge through one `git diff-tree --stdin --cc` process: a
    history with thousands of merges that name no PR would otherwise start a git per merge.

    git prints each merge's id before its combined diff and nothing for a merge with none
    (it only brought the other side in): "" for that one. Raises `git.GitCommandError` where
    git failed (a missing object), so the caller can read each merge on its own."""
    if not merges:
        return {}
    process = repo.git.diff_tree(
        "--stdin", *_COMBINED_OPTIONS, as_process=True, istream=git.cmd.PIPE
    )
    feed(process, "".join(f"{merge}\n" for merge in dict.fromkeys(merges)).encode())
    resolutions = dict.fromkeys(merges, "")
    for merge, body in _pair_bodies(_read_ahead(_whole_lines(_reads(process.stdout, _BLOCK)))):
        if merge is None:
            process.wait()  # before the last merge: git may have died inside its diff
        else:
            resolutions[merge] = _own_lines_of_combined(_decode(body))
    return resolutions


def _own_lines_of_combined(combined: str) -> str:
    """`git diff --cc -U0` output of a two-parent merge as a `-U0` diff against its first
    parent holding only the lines both columns mark."""
    out: list[str] = []
    header: list[str] = []
    path_old = path_new = ""
    run: list[str] = []
    run_old = run_new = old_next = new_next = 0

    def flush() -> None:
        if not run:
            return
        removed = [line[2:] for line in run if line.startswith("--")]
        added = [line[2:] for line in run if line.startswith("++")]
        old_start = run_old if removed else run_old - 1
        new_start = run_new if added else run_new - 1
        if header:
            out.extend(header)
            header.clear()
        out.append(f"@@ -{old_start},{len(removed)} +{new_start},{len(added)} @@")
        out.extend(f"-{line}" for line in removed)
        out.extend(f"+{line}" for line in added)
        run.clear()

    in_header = False  # between a file's `diff --cc` line and its first hunk
    in_file = False  # inside a file's combined diff (not a plain one)
    for line in combined.splitlines():
        if line.startswith("diff "):
            flush()
            in_file = in_header = line.startswith("diff --cc ")
            header = []
            if not in_file:
                continue
            path_old = path_new = line[len("diff --cc ") :]
        elif in_header and line.startswith("--- "):
            path_old = line[4:].removeprefix("a/")
        elif in_header and line.startswith("+++ "):
            path_new = line[4:].removeprefix("b/")
            header = [
                f"diff --git a/{path_old} b/{path_new}",
                f"--- a/{path_old}",
                f"+++ b/{path_new}",
            ]
        elif not in_file:
            continue
        elif match := _COMBINED_HUNK.match(line):
            flush()
            in_header = False
            old_next = int(match[1]) + (0 if match[2] != "0" else 1)
            new_next = int(match[3]) + (0 if match[4] != "0" else 1)
        elif not in_header and len(line) >= 2 and line[0] in " +-" and line[1] in " +-":
            prefix = line[:2]
            own = prefix in ("++", "--")
            if own and not run:
                run_old, run_new = old_next, new_next
            if own:
                run.append(line)
            else:
                flush()
            in_first = prefix[0] == "-" or (prefix[0] == " " and prefix[1] != "-")
            if in_first:
                old_next += 1
            if "-" not in prefix:
                new_next += 1
    flush()
    return "\n".join(out) + "\n" if out else ""
