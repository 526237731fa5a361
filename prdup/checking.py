"""`check`: find the earlier PRs that already cover a change (a branch, an indexed PR, a patch).

This joins the index (git and SQLite) to the pure matcher; `check`, the bot and `sweep` all
come through `check_change`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import git

from detector.evidence import ChangeEvidence, Finding
from detector.matcher import Query, match, settle, supersede_guards, worth_replaying
from detector.model import Change, NotADiff
from index.config import Settings
from index.errors import (
    BadDiff,
    ForeignIndex,
    IndexMissing,
    MissingRevision,
    UnknownPullRequest,
)
from index.git import gitsource
from index.git.doc_sections import is_document
from index.git.stored_diff import CUT
from index.metadata import linked_issues
from index.questions import lookup, probe_target, replay_memory
from index.questions import whole_lines as whole_lines_kept
from index.questions.candidates import CandidateEngine
from index.questions.changes import (
    document_sections,
    extract_symbols,
    indexed_document_sections,
    parse_filtered,
    whole_patch_id,
)
from index.questions.replay_memory import ReplayMemory
from index.questions.replaying import (
    QueryHistory,
    Replayer,
    SharedReads,
    landing_candidates,
    prove_all,
)
from index.questions.whole_lines import WholeLines
from index.storage import IndexStore, default_db_path, identity


@dataclass(frozen=True, slots=True)
class QueryInfo:
    """What was checked, for the report's header and the JSON `query` object."""

    kind: str  # "branch" | "pr" | "diff"
    target: str | None
    rev: str | None = None
    number: int | None = None
    base: str | None = None
    head: str | None = None
    files: int = 0
    added: int = 0
    removed: int = 0
    title: str = ""
    state: str | None = None  # an indexed PR's: "merged", "open", "closed", "unmerged"


@dataclass(frozen=True, slots=True)
class CheckResult:
    query: QueryInfo
    findings: list[Finding] = field(default_factory=list)
    warnings: tuple[str, ...] = ()
    # The checked change, where it was read: where its lines sit, for annotations and SARIF.
    change: Change | None = field(default=None, compare=False, repr=False)

    def shown(self, min_score: float, top: int | None) -> list[Finding]:
        kept = [f for f in self.findings if f.score >= min_score]
        return kept[:top] if top else kept


def open_index(repo: git.Repo | None, db_path: str | Path | None) -> IndexStore:
    if db_path is None:
        if repo is None:
            raise IndexMissing("no index given: pass --db FILE or run inside the repository")
        db_path = default_db_path(repo)
    store = IndexStore(db_path, create=False)
    if not store.get_meta("change_count"):  # written as a run's last step
        message = unfinished_index(store)
        store.close()
        raise IndexMissing(f"{db_path}: {message}")
    if repo is not None:
        try:
            identity.refuse_foreign(repo, store)
        except ForeignIndex:
            store.close()
            raise
    return store


def unfinished_index(store: IndexStore) -> str:
    """What an index that no run finished holds: nothing, or what an interrupted run wrote."""
    counts = store.changes.counts()
    if not counts:
        return "the index is empty; run 'prdup index' first"
    merged = counts.get("pr:merged", 0)
    proposed = sum(counts.get(f"pr:{state}", 0) for state in ("open", "closed", "unmerged"))
    commits = sum(n for key, n in counts.items() if key.startswith("commit:"))
    finished = store.finished_targets()
    history = (
        f"the history of {', '.join(finished)} was read to its end"
        if finished
        else "no target's history was read to its end"
    )
    return (
        f"the index is unfinished: an interrupted 'prdup index' recorded {merged} merged PR(s), "
        f"{proposed} unmerged PR(s) and {commits} direct commit(s) ({history}); "
        "run 'prdup index' to finish it"
    )


def index_warnings(store: IndexStore) -> tuple[str, ...]:
    warnings = identity.cut_warnings(store)
    if store.get_meta("derived_stale") == "1":
        stale = (
            "the index's rarity counts are out of date (an interrupted run, or an index from "
            "an older prdup); run 'prdup index' to refresh them"
        )
        warnings = (stale, *warnings)
    return warnings


def _target(repo: git.Repo | None, store: IndexStore, target: str | None) -> str | None:
    if target:
        return target
    targets = (store.get_meta("targets") or "").split(",")
    if targets and targets[0]:
        return targets[0]
    return gitsource.default_branch(repo) if repo is not None else None


def _target_warnings(
    repo: git.Repo | None, store: IndexStore, target: str | None
) -> tuple[str, ...]:
    """Say when the target was never indexed, and when commits on a local branch of its name
    are left out (the remote's copy is read; one that is only behind needs no word)."""
    if target is None:
        return ()
    warnings: list[str] = []
    indexed = [name for name in (store.get_meta("targets") or "").split(",") if name]
    if indexed and lookup.branch_name(target) not in {lookup.branch_name(n) for n in indexed}:
        again = " ".join(f"--target {name}" for name in (*indexed, target))
        warnings.append(
            f"the index was built for {', '.join(indexed)}, not {target}: PRs merged into "
            f"{target} may count as open; run 'prdup index {again}'"
        )
    branch = gitsource.target_branch(repo, target, required=False) if repo is not None else None
    if branch is not None and branch.unread_local:
        warnings.append(branch.note)
    return tuple(warnings)


def _stale_warning(repo: git.Repo, store: IndexStore, target: str, tip: str) -> tuple[str, ...]:
    last = store.get_meta(f"target:{target}")
    if last and last != tip:
        behind = repo.git.rev_list("--count", "--first-parent", f"{last}..{tip}")
        return (f"the index is {behind} commit(s) behind {target}; run 'prdup index' to refresh",)
    return ()


def check_change(
    store: IndexStore,
    repo: git.Repo | None,
    change: Change,
    info: QueryInfo,
    settings: Settings,
    title: str = "",
    body: str = "",
    scope: lookup.Scope | None = None,
    tip: str | None = None,
    author: str | None = None,
    author_email: str | None = None,
) -> list[Finding]:
    """Match a change that need not be in the index against everything that is."""
    blobs = gitsource.BlobReader(repo) if repo is not None else None
    symbols, hunk_symbols = extract_symbols(change, blobs, settings)
    issues = linked_issues(f"{title}\n{body}")
    query = lookup.query_from_change(
        store,
        change,
        symbols,
        hunk_symbols,
        title,
        body,
        issues,
        author,
        author_email,
        info.target,
        sections=document_sections(change, blobs, settings),
    )
    history = QueryHistory(base=info.base, head=info.head, line_tip=tip, line_name=info.target)
    return match_query(
        CandidateEngine(store),
        repo,
        query,
        info,
        scope or lookup.Scope(),
        settings,
        change=change,
        tip=tip,
        history=lambda: history,
    )


def match_query(
    engine: CandidateEngine,
    repo: git.Repo | None,
    query: Query,
    info: QueryInfo,
    scope: lookup.Scope,
    settings: Settings,
    *,
    change: Change | None = None,
    tip: str | None = None,
    history: Callable[[], QueryHistory] | None = None,
    load_change: Callable[[], Change | None] | None = None,
    deciding_only: bool = False,
    titled: Callable[[Query, list[ChangeEvidence]], Query] | None = None,
    shared: SharedReads | None = None,
) -> list[Finding]:
    """The one path from a query to findings, for `check`, the bot and `sweep`: candidates from
    the engine, the target probe (with `change` and the target's `tip`), the matcher, then the
    replay of the candidates that could decide (with a repository and the change, or
    `load_change` to read it only when some candidate is worth replaying).

    `deciding_only` (the sweep's) reads only the candidates whose finding could decide: the
    deciding findings are the same, the others may be missing. `titled` names the document
    sections the query shares with the candidates (read from git only when some are shared).
    `shared` keeps what replays read from one query to the next (the sweep's).
    """
    store = engine.store
    reference = info.number if info.number is not None else lookup.newest_number(store) + 1
    query = replace(query, reference_number=reference)
    replaying = repo is not None and (change is not None or load_change is not None)
    found = engine.retrieve(
        query.change, scope, reference, deciding_only=deciding_only, replaying=replaying
    )
    if repo is not None and change is not None and tip is not None:
        probe = probe_target(repo, store, change, info.base, tip, found.weights)
        query = replace(query, probe=probe)
    candidates = found.candidates
    if titled is not None:
        query = titled(query, candidates)
    if repo is not None:
        candidates = with_whole_patches(
            repo, store, settings, query.change, candidates, engine.whole_patch_ids
        )
    dismissed = engine.dismissed(info.number)
    findings = match(query, candidates, found.weights, dismissed)
    part = query.landed_in_part
    rest_to_read = part is not None and part.rest_to_read
    if change is None and load_change is not None and (worth_replaying(findings) or rest_to_read):
        # Read only when some candidate is worth replaying, or some of the PR's own commits
        # without a copy are to be read against the tip (`fold_part_landing`).
        change = load_change()
    if repo is None or change is None or history is None:
        return findings  # nothing to replay at: the index's evidence is all there is
    return prove(repo, store, settings, query, change, history(), findings, dismissed, shared)


def with_whole_patches(
    repo: git.Repo,
    store: IndexStore,
    settings: Settings,
    query: ChangeEvidence,
    candidates: list[ChangeEvidence],
    known: dict[tuple[str, str], str | None],
) -> list[ChangeEvidence]:
    """Give a PR the index read only up to its line limit its patch identity, when it changes
    exactly the query's files: the same patch decides even for a change stored cut, and the
    index never read its other hunks (`docs/design.md`, "How much of a huge change is
    stored"). It is read whole from git here, which few candidates ever need, once per
    (fork point, head) in `known`."""
    if query.patch_id is None:
        return candidates
    found = []
    for candidate in candidates:
        if _may_be_the_same_patch(store, query, candidate):
            span = (candidate.base_commit or "", candidate.head_commit or "")
            if span not in known:
                known[span] = whole_patch_id(repo, settings, *span)
            candidate = replace(candidate, patch_id=known[span])
        found.append(candidate)
    return found


def _may_be_the_same_patch(store: IndexStore, query: ChangeEvidence, cut: ChangeEvidence) -> bool:
    if not (cut.truncated and cut.patch_id is None and cut.number is not None):
        return False
    if not (cut.base_commit and cut.head_commit and cut.files == query.files):
        return False
    row = store.changes.row(cut.number)
    return row is not None and row["file_count"] == len(query.files)


def prove(
    repo: git.Repo,
    store: IndexStore,
    settings: Settings,
    query: Query,
    change: Change,
    history: QueryHistory,
    findings: list[Finding],
    dismissed: frozenset[int],
    shared: SharedReads | None = None,
) -> list[Finding]:
    """Replay the change at the candidates that could decide, and at the commits the tip
    probe says put it on the target; only what the replay shows decides."""
    chosen = {f.candidate.key: f.candidate for f in worth_replaying(findings)}
    probe = query.probe
    landings = probe.landings if probe is not None and probe.already_there else ()
    known = {f.candidate.key: f.candidate for f in findings}
    at_landings = landing_candidates(landings, known)
    chosen.update((c.key, c) for c in at_landings if c.key in known)
    unknown = [c for c in at_landings if c.key not in known and c.number not in dismissed]
    if settings.fetch_remote:
        gitsource.fetch_missing_pull_heads(
            repo,
            settings.fetch_remote,
            [
                (c.number, c.head_commit)
                for c in [*chosen.values(), *unknown]
                if c.state != "merged" and c.number is not None and c.head_commit
            ],
        )
    own = shared is None  # `check`'s own reads: its replays are kept once it is done
    if shared is None:
        shared = SharedReads(repo, memory=ReplayMemory(store))
    try:
        replayer = Replayer(repo, change, history, settings, store.landings.landed_patches, shared)
        proofs = prove_all(
            replayer,
            [*chosen.values(), *unknown],
            # A rewrite asks git for more only where it could supersede (its landing in time,
            # of a size like this change's): most landings that rewrote an old PR's lines did
            # so years later, or as part of a much larger change.
            lambda candidate: supersede_guards(query, candidate),
        )
        part = query.landed_in_part
        rest = replayer.rest_at_tip(part) if part is not None and part.rest_to_read else None
    finally:
        if own:
            shared.close()
    if own and shared.memory is not None and not store.read_only:
        replay_memory.add(store, shared.memory.take())
        for tip, reverts in shared.memory.reverts_read.items():
            replay_memory.keep_reverts(store, tip, reverts)
    landed = [(c, proofs[c.key]) for c in unknown if c.key in proofs]
    return settle(query, findings, proofs, landed, rest)


def check(
    repo_path: str | Path = ".",
    db_path: str | Path | None = None,
    rev: str | None = None,
    pr: int | None = None,
    diff_text: str | None = None,
    target: str | None = None,
    settings: Settings | None = None,
    before_number: int | None = None,
) -> CheckResult:
    """Check a branch (default: HEAD against the target), an indexed PR, or a patch."""
    settings = settings or Settings()
    repo: git.Repo | None
    try:
        repo = gitsource.open_repository(repo_path)
    except Exception:
        if diff_text is None or db_path is None:
            raise
        repo = None  # a patch against a given index needs no repository
    if target is not None and repo is not None:
        gitsource.named_target(repo, target)  # a typo is an error, not "nothing covers it"
    store = open_index(repo, db_path)
    try:
        target_name = _target(repo, store, target)
        if pr is not None:
            result = _check_pr(store, repo, pr, target_name, settings, before_number)
        elif diff_text is not None:
            result = _check_diff(store, repo, diff_text, target_name, settings)
        else:
            assert repo is not None
            result = _check_branch(store, repo, rev or "HEAD", target_name, settings)
        warnings = _target_warnings(repo, store, target_name) + result.warnings
        return replace(result, warnings=warnings)
    finally:
        store.close()


def _parse_query_diff(text: str, settings: Settings, what: str) -> Change:
    if not text.strip():
        raise BadDiff(f"{what}: the diff is empty; nothing to check")
    try:
        change, _ = parse_filtered(text, settings)
    except NotADiff:
        raise BadDiff(
            f"{what}: not a unified diff (expected 'diff --git' or ---/+++ headers)"
        ) from None
    if change.is_empty:
        raise BadDiff(f"{what}: {_why_empty(change, settings)}; nothing to compare")
    return change


def _why_empty(change: Change, settings: Settings) -> str:
    """Why a parsed change has no lines to compare, in the words a user can act on."""
    cut = [path for path, why in change.skipped_files if why == CUT]
    if cut:
        return (
            f"{len(cut)} file(s) past max_changed_lines ({settings.max_changed_lines} changed "
            f"lines), not compared: {', '.join(cut[:3])}; raise max_changed_lines to check them"
        )
    kinds = {f.status for f in change.files}
    return "only binary changes" if kinds == {"binary"} else "no changed text lines"


def _check_diff(
    store: IndexStore, repo: git.Repo | None, text: str, target: str | None, settings: Settings
) -> CheckResult:
    change = _parse_query_diff(text, settings, "the patch")
    info = QueryInfo(
        kind="diff",
        target=target,
        files=len(change.files),
        added=change.added_count,
        removed=change.removed_count,
    )
    findings = check_change(store, repo, change, info, settings)
    return CheckResult(info, findings, index_warnings(store), change)


def _check_branch(
    store: IndexStore, repo: git.Repo, rev: str, target: str | None, settings: Settings
) -> CheckResult:
    if target is None:
        raise MissingRevision("no target branch known; pass --target BRANCH")
    head = gitsource.resolve(repo, rev)
    branch = gitsource.target_branch(repo, target)
    assert head is not None and branch is not None
    tip = branch.tip
    base = gitsource.merge_base(repo, tip, head)
    if base is None:
        raise MissingRevision(f"{rev} shares no history with {target}")
    if base == head:
        raise BadDiff(f"{rev} has no commits that {target} lacks; nothing to check")
    change = _parse_query_diff(gitsource.diff_between(repo, base, head), settings, rev)
    log = repo.git.log("--format=%s%n%b", f"{base}..{head}")
    title = log.strip().split("\n", 1)[0]
    info = QueryInfo(
        kind="branch",
        target=target,
        rev=rev,
        base=base,
        head=head,
        files=len(change.files),
        added=change.added_count,
        removed=change.removed_count,
        title=title,
    )
    author, _, author_email = repo.git.log("-1", "--format=%an%x00%ae", head).partition("\x00")
    findings = check_change(
        store,
        repo,
        change,
        info,
        settings,
        title,
        log,
        tip=tip,
        author=author,
        author_email=author_email,
    )
    warnings = _stale_warning(repo, store, target, tip) + index_warnings(store)
    return CheckResult(info, findings, warnings, change)


def _check_pr(
    store: IndexStore,
    repo: git.Repo | None,
    number: int,
    target: str | None,
    settings: Settings,
    before_number: int | None,
) -> CheckResult:
    row = store.changes.row(number)
    if row is None:
        raise UnknownPullRequest(
            f"PR #{number} is not in the index; fetch its ref and run 'prdup index'"
        )
    if row["status"] != "indexed":
        raise UnknownPullRequest(
            f"PR #{number} is in the index without a diff ({row['skip_reason'] or row['status']})"
        )
    info = pr_info(row, target)
    findings, change = match_pr(
        CandidateEngine(store), repo, row, info, settings, before_number=before_number
    )
    return CheckResult(info, findings, index_warnings(store), change)


def pr_info(row: Mapping[str, Any], target: str | None) -> QueryInfo:
    """An indexed PR as the report's header names it."""
    return QueryInfo(
        kind="pr",
        target=target,
        number=row["number"],
        base=row["base_sha"],
        head=row["head_sha"],
        files=row["file_count"],
        added=row["added"],
        removed=row["removed"],
        title=row["title"] or "",
        state=row["state"],
    )


def match_pr(
    engine: CandidateEngine,
    repo: git.Repo | None,
    row: Mapping[str, Any],
    info: QueryInfo,
    settings: Settings,
    *,
    before_number: int | None = None,
    probe: bool = True,
    deciding_only: bool = False,
    shared: SharedReads | None = None,
    tips: dict[str, str | None] | None = None,
    diffs: Mapping[tuple[str, str], str] | None = None,
) -> tuple[list[Finding], Change | None]:
    """`check --pr N`'s findings for an indexed PR (its `row`), the sweep's too; and the PR's
    change where the probe read it.

    The sweep passes `probe=False`: the target probe reads the PR's diff and the target's
    version of every file it changes (about 0.1 s a PR), to find landings the index does not
    name. Every other step is the same. It also passes `shared` (replays' reads kept across
    its queries), `tips` (each branch's tip, read once a sweep) and `diffs` (PRs' diffs read
    together, by span: `pr_change`).
    """
    number = row["number"]
    query = engine.query_of(number)
    assert query is not None
    scope = lookup.Scope(
        exclude_number=number,
        before_number=before_number,
        own_head=row["head_sha"],
        own_patch=row["patch_id"],
    )
    if repo is None:
        found = match_query(engine, None, query, info, scope, settings, deciding_only=deciding_only)
        return found, None
    target = info.target
    change: Change | None = None
    tip: str | None = None
    if settings.fetch_remote and row["state"] != "merged":
        gitsource.fetch_missing_pull_heads(repo, settings.fetch_remote, [(number, row["head_sha"])])
    if probe and row["state"] != "merged":
        # The tip probe looks for landings the index does not know; it reads the diff now.
        # A merged PR's own landing is known: its diff is read only if a replay needs it.
        tip = pr_line_tip(repo, row, target, tips)
        change = pr_change(repo, row, settings, diffs)
    if row["truncated"] and row["state"] != "merged":
        # Stored cut: the index holds its first files' lines only; read all of it from git.
        change = change if change is not None else pr_change(repo, row, settings, diffs)
        memory = shared.memory if shared is not None else None
        whole = whole_lines(repo, row, settings, memory, change) if change is not None else None
        if whole is not None:
            query = _whole_query(query, whole)
    findings = match_query(
        engine,
        repo,
        query,
        info,
        scope,
        settings,
        change=change,
        tip=tip,
        history=lambda: pr_history(row, tip or pr_line_tip(repo, row, target, tips), target),
        load_change=lambda: pr_change(repo, row, settings, diffs),
        deciding_only=deciding_only,
        titled=lambda query, candidates: _titled(
            repo, engine.store, row, settings, query, candidates
        ),
        shared=shared,
    )
    return findings, change


def match_alone(
    engine: CandidateEngine,
    repo: git.Repo | None,
    row: Mapping[str, Any],
    change_ids: list[int],
    settings: Settings,
    known_lines: Mapping[int, ChangeEvidence] | None = None,
    diffs: Mapping[tuple[str, str], str] | None = None,
    memory: ReplayMemory | None = None,
) -> list[Finding] | None:
    """`match_pr`'s findings for an indexed PR (`row`) as if only these changes were its
    candidates, before any replay (the sweep places a new change's finding among a PR's
    cached ones). Those that stand alone (`matcher.stands_alone`) are `match_pr`'s as they
    are: they ask no replay. A PR stored cut is read whole (`whole_lines`: as a sweep kept it
    in `memory`, else from git, its diff taken from `diffs` where it is there), as `match_pr`
    reads it. None where the index's evidence is not what
    `match_pr` reads: the PR landed in part (its copies fold), its diff gone, a candidate
    stored cut (its patch identity read from git), or a document section shared with one (its
    title read from git for the reasons). `known_lines`: as for
    `CandidateEngine.retrieve_these`."""
    number = row["number"]
    query = engine.query_of(number)
    if query is None or query.landed_in_part is not None:
        return None
    if row["truncated"] and row["state"] != "merged":
        if repo is None:
            return None
        whole = whole_lines(repo, row, settings, memory, diffs=diffs)
        if whole is None:
            return None
        query = _whole_query(query, whole)
    query = replace(query, reference_number=number)
    scope = lookup.Scope(exclude_number=number, own_head=row["head_sha"], own_patch=row["patch_id"])
    found = engine.retrieve_these(
        query.change,
        change_ids,
        scope,
        deciding_only=True,
        replaying=repo is not None,
        known_lines=known_lines,
    )
    documents = {place for place in query.change.symbols if is_document(place[0])}
    for candidate in found.candidates:
        if candidate.truncated or documents & candidate.symbols:
            return None
    return match(query, found.candidates, found.weights, engine.dismissed(number))


def _titled(
    repo: git.Repo,
    store: IndexStore,
    row: Mapping[str, Any],
    settings: Settings,
    query: Query,
    candidates: list[ChangeEvidence],
) -> Query:
    """The query with the titles of the document sections it shares a header with some
    candidate in, read from the PR's own commit (the index keeps no file text)."""
    mine = frozenset(place for place in query.change.symbols if is_document(place[0]))
    shared = frozenset(place for c in candidates for place in c.symbols & mine)
    _, head = pr_span(row)
    if not shared or head is None or query.sections:
        return query
    sections = indexed_document_sections(
        store, gitsource.BlobReader(repo), row["id"], head, shared, settings
    )
    return replace(query, sections=sections)


def with_change(
    result: CheckResult,
    repo_path: str | Path = ".",
    db_path: str | Path | None = None,
    settings: Settings | None = None,
) -> CheckResult:
    """`result` carrying the checked change, read now if the check did not need it (a merged
    PR's own diff is read only for a replay): annotations and SARIF point at its lines."""
    if result.change is not None or result.query.kind != "pr" or result.query.number is None:
        return result
    repo = gitsource.open_repository(repo_path)
    store = open_index(repo, db_path)
    try:
        row = store.changes.row(result.query.number)
    finally:
        store.close()
    change = pr_change(repo, row, settings or Settings()) if row is not None else None
    return replace(result, change=change)


def pr_line_tip(
    repo: git.Repo,
    row: Mapping[str, Any],
    target: str | None,
    tips: dict[str, str | None] | None = None,
) -> str | None:
    """The tip of the branch an indexed PR is for: a PR for another branch (a backport to
    `3.12`) is done only if that branch has it. With `tips`, each branch is resolved once."""
    branch = row_branch(row, target)
    if not branch:
        return None
    if tips is not None and branch in tips:
        return tips[branch]
    resolved = gitsource.target_branch(repo, branch, required=False)
    tip = resolved.tip if resolved else None
    if tips is not None:
        tips[branch] = tip
    return tip


def row_branch(row: Mapping[str, Any], target: str | None) -> str | None:
    """The branch an indexed PR is for: GitHub's base branch, else the release line git shows
    it left (a backport without metadata), else the check's target."""
    return row["base_ref"] or row.get("fork_line") or target


def pr_span(row: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """Where an indexed PR's change starts and ends, as the index recorded it: a landed PR is
    what its merge or squash commit brought to the target (its branch may have merged the
    target in since it forked); any other PR is its head against its fork point."""
    landed = row["sha"] if row["state"] == "merged" else None
    if landed and landed != row["head_sha"]:
        return f"{landed}^1", landed
    return row["base_sha"], row["head_sha"]


def whole_lines(
    repo: git.Repo,
    row: Mapping[str, Any],
    settings: Settings,
    memory: ReplayMemory | None = None,
    change: Change | None = None,
    diffs: Mapping[tuple[str, str], str] | None = None,
) -> WholeLines | None:
    """An unmerged PR stored cut, as its whole diff shows its lines: kept by a sweep in
    `memory`, else read from `change` or git (and kept there for the next sweep). Its lines
    are placed by file alone, as an indexed PR's are: no file of a change this large is parsed
    to name the definition a reason's line sits in (that cost more than the rest of its
    check), and a hunk header's name is the nearest definition above the hunk, not always the
    one holding the line."""
    base, head = pr_span(row)
    if not (base and head):
        return None
    kept = whole_lines_kept.read(memory, base, head, settings)
    if kept is not None:
        return kept
    change = change if change is not None else pr_change(repo, row, settings, diffs)
    if change is None:
        return None
    symbols, _ = extract_symbols(change, None, settings)
    whole = WholeLines(
        lookup.change_lines(change, symbols, {}),
        document_sections(change, gitsource.BlobReader(repo), settings),
    )
    if not whole.lines.files:
        return whole  # git printed no diff (its commits gone): nothing worth keeping
    data = whole_lines_kept.keep(memory, base, head, settings, whole)
    # As kept: its sets iterate in one order, so a reason quotes the same example line
    # whether this read or a kept one serves (check, the sweep, a re-sweep).
    return whole_lines_kept.decode(data)


def _whole_query(query: Query, whole: WholeLines) -> Query:
    """An unmerged PR stored cut, with its whole lines (`whole_lines`): what it changes from
    its diff, who and what it is from the index (its words and title stay the index's)."""
    lines = whole.lines
    evidence = replace(
        query.change,
        removed=lines.removed,
        added=lines.added,
        kept=lines.kept,
        files=lines.files,
        symbols=lines.symbols,
        hunks=lines.hunks,
        patch_id=lines.patch_id,
        truncated=False,
    )
    return replace(
        query,
        change=evidence,
        line_text=lines.line_text,
        line_place=lines.line_place,
        definitions=lines.definitions,
        sections=whole.sections,
    )


def pr_change(
    repo: git.Repo,
    row: Mapping[str, Any],
    settings: Settings,
    diffs: Mapping[tuple[str, str], str] | None = None,
) -> Change | None:
    """An indexed PR's own diff, to replay (None when its commits are gone); taken from
    `diffs` (by span: `gitsource.diffs_between`) where it is there."""
    base, head = pr_span(row)
    if not (base and head):
        return None
    try:
        known = diffs.get((base, head)) if diffs is not None else None
        diff = known if known is not None else gitsource.diff_between(repo, base, head)
        change, _ = parse_filtered(diff, settings)
    except (git.GitCommandError, NotADiff):
        return None
    return change


def pr_history(row: Mapping[str, Any], line_tip: str | None, target: str | None) -> QueryHistory:
    base, head = pr_span(row)
    return QueryHistory(
        base=base,
        head=head,
        line_tip=line_tip,
        line_name=row_branch(row, target),
        merged=row["state"] == "merged",
        landing=row["merge_commit"] or (row["sha"] if row["state"] == "merged" else None),
        merged_at=row["merged_at"] if row["state"] == "merged" else None,
        number=row["number"],
    )
