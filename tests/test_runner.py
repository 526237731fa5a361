"""prdup on a CI runner: a fresh clone of the branches, the index restored from the cache, and
only the PR heads that changed fetched; the workflows that run it.

The story is test_bot's: PR 20 (open) asks a strategy resolver instead of a legacy flag; PR 21
makes the same fix with other code; PR 22 only touches the docs. "origin" is the builder's
repository, standing in for GitHub's git side; the fake GitHub answers its API.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from index.config import Settings
from index.indexer import index_repository
from prdup.bot_event import decide
from prdup.checking import check
from prdup.command_refusal import REFUSED_MARKER
from prdup.fetch_plan import ALL_PULL_HEADS, plan_fetch
from prdup.github import GitHubClient
from prdup.github_import import import_metadata
from tests.fake_github import FakeGitHub, quick_client
from tests.repo_builder import RepoBuilder, run_cli, run_in
from tests.test_bot import REPO, ROOT, TOKEN, build_story, comment_event, pull_event
from tests.workflow_expressions import evaluate, truthy

SHA_PIN = re.compile(r"^[^@\s]+@[0-9a-f]{40}$")


@pytest.fixture
def origin(builder: RepoBuilder) -> RepoBuilder:
    return build_story(builder)


@pytest.fixture
def github(fake_github: FakeGitHub, origin: RepoBuilder) -> FakeGitHub:
    for number in (20, 21, 22):
        fake_github.add_pull(
            number,
            updated_at=f"2024-02-0{number - 19}T00:00:00Z",
            head_sha=origin.head(f"refs/pull/{number}/head"),
            author=f"contributor{number}",  # one author's own earlier PR is a follow-up
        )
    return fake_github


@pytest.fixture
def client(github: FakeGitHub) -> GitHubClient:
    return quick_client(github, REPO, TOKEN)


def _cached_index(origin: RepoBuilder, client: GitHubClient, db_path: Path) -> None:
    """What an earlier run left in the cache: an index with GitHub's metadata imported."""
    metadata = import_metadata(REPO, origin.path, db_path, client=client)
    index_repository(origin.path, db_path=db_path, metadata=metadata)


def _runner_clone(origin: RepoBuilder, path: Path) -> RepoBuilder:
    """A clone as actions/checkout makes one (fetch-depth 0): every branch, no PR ref. The PRs'
    branches live in their authors' forks, not here."""
    for number in (20, 21, 22):
        origin.delete_pr_branch(number)
    runner = RepoBuilder(path)
    runner.git("remote", "add", "origin", str(origin.path))
    runner.git("fetch", "-q", "--no-tags", "origin", "+refs/heads/*:refs/remotes/origin/*")
    return runner


def _refs(repo: RepoBuilder) -> set[str]:
    listed = repo.git("for-each-ref", "--format=%(refname)", "refs/pull")
    return set(listed.split())


def test_a_first_run_fetches_every_pr_head(origin: RepoBuilder, db_path: Path, client):
    plan = plan_fetch(REPO, origin.path, db_path, client=client, always=[21])
    assert (plan.refspecs, plan.first_run) == ((ALL_PULL_HEADS,), True)


def test_later_runs_fetch_only_the_heads_that_changed(
    origin: RepoBuilder, db_path: Path, github: FakeGitHub, client: GitHubClient
):
    _cached_index(origin, client, db_path)
    nothing = plan_fetch(REPO, origin.path, db_path, client=client)
    assert (nothing.refspecs, nothing.first_run, nothing.changed) == ((), False, 0)
    # The comment's own PR is fetched whatever changed: its head must be in the clone.
    assert plan_fetch(REPO, origin.path, db_path, client=client, always=[21]).refspecs == (
        "+refs/pull/21/head:refs/pull/21/head",
    )

    # PR 22 gets a new commit, and GitHub lists it as updated; PR 20 is only relabelled.
    head = origin.pr_branch(22, [("Typo", {"README.md": "The pipeline, fully.\n"})], start="pr-22")
    github.add_pull(22, updated_at="2024-03-01T00:00:00Z", head_sha=head, author="contributor22")
    github.add_pull(
        20,
        updated_at="2024-03-02T00:00:00Z",
        head_sha=origin.head("refs/pull/20/head"),
        labels=["bug"],
        author="contributor20",
    )
    plan = plan_fetch(REPO, origin.path, db_path, client=client, always=[21])
    assert plan.refspecs == (
        "+refs/pull/21/head:refs/pull/21/head",
        "+refs/pull/22/head:refs/pull/22/head",
    )
    assert plan.changed == 1
    swept = plan_fetch(REPO, origin.path, db_path, client=client, open_prs=True)
    assert [spec.split("/")[2] for spec in swept.refspecs] == ["20", "21", "22"]


def test_pr_refspecs_command(
    origin: RepoBuilder,
    db_path: Path,
    github: FakeGitHub,
    client: GitHubClient,
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    code, out, err = run_cli(
        origin.path, "pr-refspecs", "--github", REPO, "--db", str(db_path), "--pr", "21"
    )
    assert (code, out) == (0, ALL_PULL_HEADS + "\n"), err
    assert "every PR head" in err

    _cached_index(origin, client, db_path)
    code, out, err = run_cli(
        origin.path, "pr-refspecs", "--github", REPO, "--db", str(db_path), "--pr", "21"
    )
    assert (code, out) == (0, "+refs/pull/21/head:refs/pull/21/head\n"), err
    assert "0 changed since the last import" in err


def test_a_runner_clone_fetches_the_candidate_heads_a_replay_needs(
    origin: RepoBuilder, db_path: Path, tmp_path: Path, client: GitHubClient
):
    _cached_index(origin, client, db_path)
    runner = _runner_clone(origin, tmp_path / "runner")
    runner.git("fetch", "-q", "origin", "+refs/pull/21/head:refs/pull/21/head")  # as planned
    cached = tmp_path / "restored.db"
    shutil.copy(db_path, cached)

    without = check(runner.path, cached, pr=21)
    assert "refs/pull/20/head" not in _refs(runner)
    proven_without = [f.verdict for f in without.findings if f.candidate.number == 20]

    found = check(runner.path, cached, pr=21, settings=Settings(fetch_remote="origin"))

    assert "refs/pull/20/head" in _refs(runner)  # fetched for the replay at #20's head
    assert "refs/pull/22/head" not in _refs(runner)  # nothing else
    [best] = [f for f in found.findings if f.candidate.number == 20]
    assert best.verdict == "duplicate" and any("head" in r for r in best.reasons)
    assert proven_without != ["duplicate"]  # without #20's commits nothing could be replayed


# ---------------------------------------------------------------------------------- workflows


def _pins(document: dict) -> list[str]:
    """Every `uses:` of a workflow's jobs or a composite action's steps."""
    steps = [
        step for job in (document.get("jobs") or {}).values() for step in job.get("steps", [])
    ] + list((document.get("runs") or {}).get("steps", []))
    return [step["uses"] for step in steps if "uses" in step]


def test_every_action_the_workflows_use_is_pinned_by_sha():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    pins = _pins(action)
    for name in ("prdup.yml", "prdup-sweep.yml"):
        pins += [
            uses
            for uses in _pins(yaml.safe_load((ROOT / "examples" / "workflows" / name).read_text()))
            if not uses.startswith("OWNER/prdup@")  # the user's own choice of release
        ]
    # setup-python, checkout, 2 x cache restore, 3 x cache save, upload; none in the workflows
    assert len(pins) == 8
    assert all(SHA_PIN.match(uses) for uses in pins), pins


def test_the_index_cache_is_one_rolling_entry_saved_when_the_index_changed():
    steps = {
        s.get("name"): s for s in yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
    }
    restore, save = steps["Restore the index"], steps["Save the index"]
    prefix = "prdup-index-${{ github.repository }}-"
    assert restore["with"]["restore-keys"].strip() == prefix
    assert save["with"]["key"] == prefix + "${{ steps.state.outputs.tip }}-${{ github.run_id }}"
    condition = " ".join(save["if"].split())
    assert "steps.index.outputs.changed == 'true'" in condition  # also on the same tip
    assert "steps.index.outcome == 'success'" in condition  # a failed index is not saved
    assert steps["Index merged and open pull requests"]["id"] == "index"
    # Saved at the end, with what the comment or the sweep recorded, even when they failed;
    # then the entries it supersedes go.
    names = list(steps)
    assert names[-2:] == ["Save the index", "Delete the cache entries the new one supersedes"]
    assert condition.startswith("always()")
    prune = steps["Delete the cache entries the new one supersedes"]
    assert prune["if"] == "always() && steps.save.outcome == 'success'"
    assert prune["env"]["KEEP"] == save["with"]["key"]
    # An import the rate limit stopped: green, its pages kept under a key of that run's own
    # (restored by the prefix), the comment skipped.
    partial = steps["Save the interrupted import"]
    assert partial["with"]["key"].startswith(prefix + "${{ steps.state.outputs.tip }}-partial-")
    assert "steps.index.outputs.ready == 'false'" in partial["if"]
    assert "steps.index.outputs.ready != 'false'" in condition
    assert "steps.index.outputs.ready != 'false'" in steps["Comment on the pull request"]["if"]
    assert 'if [ "$code" = 3 ]' in steps["Index merged and open pull requests"]["run"]
    fetch = steps["Fetch the pull request heads that changed"]["run"]
    assert "prdup pr-refspecs" in fetch and "--stdin" in fetch
    assert "refs/pull/*" not in fetch  # never every PR head by glob: the plan says so itself
    downloads = steps["Restore the downloads"]["with"]
    assert downloads["key"] == "${{ steps.venv.outputs.key }}"
    assert "requirements.lock" in steps["Name the download cache"]["run"]
    # The cache holds downloads that pip checks against the lock's hashes, never a virtual
    # environment that would run as it was restored.
    assert steps["Install prdup"]["env"]["PIP_CACHE_DIR"] == "${{ steps.venv.outputs.path }}"
    assert steps["Comment on the pull request"]["env"]["PRDUP_FETCH_REMOTE"] == "origin"


def test_the_sweep_workflow_runs_on_a_schedule_and_by_hand():
    workflow = yaml.safe_load((ROOT / "examples" / "workflows" / "prdup-sweep.yml").read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["schedule"] and all("cron" in entry for entry in triggers["schedule"])
    assert "workflow_dispatch" in triggers
    assert workflow["permissions"] == {}  # the job names the least it needs
    assert workflow["jobs"]["sweep"]["permissions"] == {
        "contents": "read",
        "pull-requests": "read",
        "issues": "write",
        "actions": "write",
    }
    [step] = [s for s in workflow["jobs"]["sweep"]["steps"] if s["uses"].startswith("OWNER/")]
    assert step["with"]["command"] == "sweep"

    steps = {
        s.get("name"): s for s in yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
    }
    assert steps["Upload the sweep report"]["with"]["name"] == "prdup-sweep-report"
    assert "prdup dashboard" in steps["Update the dashboard issue"]["run"]
    assert "--open" in steps["Fetch the pull request heads that changed"]["run"]


def test_the_docs_show_the_shipped_workflows():
    text = (ROOT / "docs" / "bot.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]
    for name in ("prdup.yml", "prdup-sweep.yml"):
        shipped = yaml.safe_load((ROOT / "examples" / "workflows" / name).read_text())
        assert shipped in blocks, name


def test_the_action_runs_a_sweep_on_any_event_and_refuses_an_unknown_command(tmp_path: Path):
    from tests.test_bot import _decide

    scheduled = _decide(tmp_path, "schedule", {"schedule": "17 4 * * 1-5"}, COMMAND="sweep")
    assert scheduled[0]["run"] == "true"
    assert _decide(tmp_path, "schedule", {"schedule": "17 4 * * 1-5"})[0]["run"] == "false"
    with pytest.raises(subprocess.CalledProcessError) as failed:
        _decide(tmp_path, COMMAND="sweap")
    assert failed.value.returncode == 2  # a broken configuration fails the job


def _run_step(name: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run one of the action's script steps as the runner would, with prdup on the PATH."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    [step] = [s for s in action["runs"]["steps"] if s.get("name") == name]
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=cwd,
        env={**run_in(cwd), "PATH": path, "ACTION_PATH": str(ROOT), **env},
        check=True,
        capture_output=True,
        text=True,
    )


def test_the_fetch_step_fetches_all_heads_first_then_only_what_changed(
    origin: RepoBuilder, db_path: Path, github: FakeGitHub, client: GitHubClient, tmp_path: Path
):
    env = {
        "GITHUB_API_URL": github.url,
        "GITHUB_TOKEN": TOKEN,
        "COMMAND": "comment",
        "REPO": REPO,
        "PR": "21",
        "RUNNER_TEMP_DIR": str(tmp_path),
        "PRDUP_DB": str(db_path),
    }
    first = _runner_clone(origin, tmp_path / "first")
    _run_step("Fetch the pull request heads that changed", first.path, **env)
    assert _refs(first) == {f"refs/pull/{n}/head" for n in (20, 21, 22)}

    _cached_index(origin, client, db_path)
    head = origin.pr_branch(22, [("Typo", {"README.md": "Fully.\n"})], start="refs/pull/22/head")
    github.add_pull(22, updated_at="2024-03-01T00:00:00Z", head_sha=head, author="contributor22")
    github.add_pull(23, updated_at="2024-03-02T00:00:00Z", head_sha="f" * 40)  # ref gone
    later = RepoBuilder(tmp_path / "later")
    later.git("remote", "add", "origin", str(origin.path))
    done = _run_step("Fetch the pull request heads that changed", later.path, **env)

    assert _refs(later) == {"refs/pull/21/head", "refs/pull/22/head"}
    assert later.head("refs/pull/22/head") == head
    assert "could not fetch +refs/pull/23/head:refs/pull/23/head" in done.stdout


def test_the_token_reaches_git_in_the_fetching_step_only(
    origin: RepoBuilder, github: FakeGitHub, tmp_path: Path
):
    """The action's checkout keeps no credentials: the fetch gets the token in its own
    environment, as one Authorization header (a header an earlier checkout persisted is
    dropped, not sent twice), and nothing of it is written into the clone."""
    clone = _runner_clone(origin, tmp_path / "runner")
    clone.git("remote", "set-url", "origin", f"{github.origin}/{REPO}")  # git over HTTP
    stale = "AUTHORIZATION: basic c3RhbGU="  # what persist-credentials: true leaves
    clone.git("config", f"http.{github.origin}/.extraheader", stale)
    env = {
        "GITHUB_API_URL": github.url,
        "GITHUB_SERVER_URL": github.origin,
        "GITHUB_TOKEN": TOKEN,
        "GIT_TERMINAL_PROMPT": "0",
        "COMMAND": "comment",
        "REPO": REPO,
        "PR": "21",
        "RUNNER_TEMP_DIR": str(tmp_path),
        "PRDUP_DB": str(tmp_path / "prdup.db"),
    }
    _run_step("Fetch the pull request heads that changed", clone.path, **env)

    fetches = [r for r in github.requests if r.path == f"/{REPO}/info/refs"]
    expected = "basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert fetches and all(r.authorizations == [expected] for r in fetches)
    config = (clone.path / ".git" / "config").read_text()
    assert TOKEN not in config and expected.split()[1] not in config
    # A step that does not fetch holds no token: git outside the wrapper sends none of it.
    assert clone.git("config", "--get-all", f"http.{github.origin}/.extraheader") == stale


def test_a_rate_limit_leaves_every_step_green_and_says_so(
    origin: RepoBuilder, db_path: Path, github: FakeGitHub, client: GitHubClient, tmp_path: Path
):
    """A shared token's quota spent (by a cold import, by other workflows): each step stops
    with exit 3, which the action reads as a notice, not a red job; the next run catches up."""
    _cached_index(origin, client, db_path)
    clone = _runner_clone(origin, tmp_path / "runner")
    summary = tmp_path / "summary.md"
    env = {
        "GITHUB_API_URL": github.url,
        "GITHUB_TOKEN": TOKEN,
        "COMMAND": "comment",
        "REPO": REPO,
        "PR": "21",
        "MIN_SCORE": "0.7",
        "RUNNER_TEMP_DIR": str(tmp_path),
        "PRDUP_DB": str(db_path),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    github.rate_limit(reset=time.time() + 3600, times=None)
    for step in (
        "Fetch the pull request heads that changed",
        "Comment on the pull request",
        "Update the dashboard issue",
    ):
        done = _run_step(step, clone.path, **env)  # check=True: a red step raises here
        assert "prdup: stopped:" in done.stderr and "rate limit" in done.stderr, step
    assert summary.read_text().count("**prdup**: stopped:") == 3
    assert not github.comments_on(21)


def test_the_new_entry_supersedes_every_other_and_nothing_goes_before_it_is_listed(
    github: FakeGitHub, tmp_path: Path
):
    prefix = f"prdup-index-{REPO}-"
    for key in ("a" * 40 + "-101", "b" * 40 + "-partial-102", "b" * 40 + "-103"):
        github.add_cache(prefix + key)
    github.add_cache("setup-python-venv-abc")  # another workflow's entry
    env = {"GITHUB_API_URL": github.url, "GITHUB_TOKEN": TOKEN, "REPO": REPO}

    early = _run_step(
        "Delete the cache entries the new one supersedes",
        tmp_path,
        KEEP=prefix + "c" * 40 + "-104",
        **env,
    )
    assert "deleted 0" in early.stdout and len(github.caches) == 4  # the new one is not listed yet

    github.add_cache(prefix + "c" * 40 + "-104")
    done = _run_step(
        "Delete the cache entries the new one supersedes",
        tmp_path,
        KEEP=prefix + "c" * 40 + "-104",
        **env,
    )
    assert "deleted 3 superseded cache entries (269 MB)" in done.stdout
    assert [c["key"] for c in github.caches] == [
        "setup-python-venv-abc",
        prefix + "c" * 40 + "-104",
    ]


def test_without_actions_write_the_entries_stay_and_the_job_is_green(
    github: FakeGitHub, tmp_path: Path
):
    prefix = f"prdup-index-{REPO}-"
    github.add_cache(prefix + "old")
    github.add_cache(prefix + "new")
    github.fail(
        re.compile(r".*/actions/caches/\d+"),
        403,
        times=None,
        method="DELETE",
        body={"message": "Resource not accessible by integration"},
    )
    env = {
        "GITHUB_API_URL": github.url,
        "GITHUB_TOKEN": TOKEN,
        "REPO": REPO,
        "KEEP": prefix + "new",
    }
    done = _run_step("Delete the cache entries the new one supersedes", tmp_path, **env)
    assert "cache entries kept" in done.stdout and "actions: write" in done.stdout
    assert len(github.caches) == 2


def test_the_index_says_whether_it_changed_also_on_the_same_tip(
    origin: RepoBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    outputs = tmp_path / "outputs"
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))

    def changed() -> str:
        outputs.write_text("")
        code, _, err = run_cli(origin.path, "index", "--quiet")
        assert code == 0, err
        return outputs.read_text().strip()

    assert changed() == "changed=true"  # a first run
    assert changed() == "changed=false"  # nothing new: no new cache entry
    origin.pr_branch(30, [("A new PR", {"NEW.md": "new\n"})])  # the default branch did not move
    assert changed() == "changed=true"


def test_an_import_that_only_repeats_the_watermark_changes_nothing(
    origin: RepoBuilder, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """GitHub's listings repeat what was updated at the last import's watermark (the import
    asks from it, so a same-second update is never missed): such a repeat is no change, and a
    steady-state run saves no new cache entry."""
    outputs = tmp_path / "outputs"
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    github.add_comment(21, "Looks right to me", created_at="2024-02-03T00:00:00Z")

    def changed() -> str:
        outputs.write_text("")
        code, _, err = run_cli(origin.path, "index", "--github", REPO, "--quiet")
        assert code == 0, err
        return outputs.read_text().strip()

    assert changed() == "changed=true"  # a first run
    assert changed() == "changed=false"  # the PR and the comment at the watermark, read again
    github.add_pull(22, "Now with a title", updated_at="2024-03-01T00:00:00Z")
    assert changed() == "changed=true"


# ------------------------------------------------------------------- commands nobody may give


def _workflow() -> dict:
    return yaml.safe_load((ROOT / "examples" / "workflows" / "prdup.yml").read_text())


def _started(event_name: str, event: dict) -> bool:
    """Whether the workflow's job starts for this event, as the runner evaluates its `if:`."""
    [job] = _workflow()["jobs"].values()
    context = {"github": {"event_name": event_name, "repository": REPO, "event": event}}
    return truthy(evaluate(job.get("if", "true"), context))


def test_expressions_evaluate_as_github_documents_them():
    """The evaluator the job tests rely on: case-insensitive, null for what is missing, `||`
    giving an operand."""
    context = {"github": {"event": {"comment": {"body": "Hi\n/PRDUP not-duplicate 12"}}}}
    assert evaluate("contains(github.event.comment.body, '/prdup')", context) is True
    assert evaluate("github.event.issue.pull_request", context) is None
    assert evaluate("github.event.issue.state == 'open'", context) is False
    assert evaluate("github.event.pull_request.state || 'closed'", context) == "closed"
    assert evaluate("contains(fromJSON('[\"OWNER\", \"MEMBER\"]'), 'member')", {}) is True
    assert evaluate("!null && 1 == '1' && 'Bot' != 'bot'", {}) is False


def test_the_job_starts_only_for_what_may_concern_prdup():
    """The job's `if:` only spares runners and keeps chatter out of the PR's concurrency
    group (where it would cancel a run in progress); who may command is the action's rule."""
    command = "/prdup not-duplicate #20"
    for association in ("OWNER", "MEMBER", "NONE", "FIRST_TIME_CONTRIBUTOR"):
        assert _started("issue_comment", comment_event(command, association))
    assert _started("issue_comment", comment_event(command, action="deleted"))
    assert not _started("issue_comment", comment_event("LGTM, thanks!"))
    assert not _started("issue_comment", comment_event(command, user="prdup-app[bot]"))
    for action in ("opened", "synchronize", "reopened", "edited"):
        assert _started("pull_request_target", pull_event(action))
    ours = pull_event("unlabeled", label={"name": "prdup: not a duplicate"})
    assert _started("pull_request_target", ours)
    assert not _started("pull_request_target", pull_event("labeled", label={"name": "bug"}))


def test_each_job_names_the_least_it_needs_and_the_workflow_grants_nothing():
    """Write permissions at the workflow level reach every job (zizmor: excessive
    permissions); the job names its own instead."""
    workflow = _workflow()
    assert workflow["permissions"] == {}
    assert workflow["jobs"]["prdup"]["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "checks": "write",
        "actions": "write",
    }


@pytest.mark.parametrize(
    ("event", "refuse"),
    [
        (comment_event("/prdup not-duplicate #20", "NONE"), True),
        (comment_event("/prdup not-duplicate #20", "CONTRIBUTOR", action="edited"), True),
        (comment_event("Thanks\n /PRDUP not-duplicate 20", "FIRST_TIME_CONTRIBUTOR"), True),
        (comment_event("/prdup not-duplicate #20", "NONE", action="deleted"), False),
        (comment_event("Does `/prdup not-duplicate` work?", "NONE"), False),
        (comment_event("/prdup not-duplicate #20", "COLLABORATOR"), False),
    ],
    ids=["stranger", "stranger-edited", "later-line", "deleted", "mid-line", "collaborator"],
)
def test_who_gets_the_answer_on_who_may_command(event: dict, refuse: bool):
    """Every command on an open PR brings the comment up to date (a maintainer's is applied
    there); a stranger's created or edited command also gets the answer."""
    decision = decide("issue_comment", event)
    assert (decision.run, decision.number, decision.refuse) == (True, 21, refuse)


def test_what_the_bot_leaves_alone():
    skipped = {
        "a bot's comment": decide(
            "issue_comment", comment_event("/prdup not-duplicate #20", user="prdup-app[bot]")
        ),
        "chatter": decide("issue_comment", comment_event("LGTM", "NONE")),
        "an issue": decide("issue_comment", comment_event("/prdup", on_pull=False)),
        "a closed PR": decide("issue_comment", comment_event("/prdup", "NONE", state="closed")),
        "another label": decide("pull_request_target", pull_event("labeled", label={"name": "x"})),
    }
    assert all(not d.run and not d.refuse for d in skipped.values()), skipped
    assert "by a bot, prdup-app[bot]" in skipped["a bot's comment"].why
    assert "not a /prdup command" in skipped["chatter"].why
    assert "not about a pull request" in skipped["an issue"].why
    assert "#21 is closed" in skipped["a closed PR"].why
    assert skipped["another label"].why == "a label on #21 other than 'prdup: not a duplicate'"
    # The label is compared as GitHub names labels: regardless of case.
    shouted = pull_event("labeled", label={"name": "PRDUP: Not A Duplicate"})
    assert decide("pull_request_target", shouted).run


@pytest.fixture
def actions_github() -> Iterator[FakeGitHub]:
    """GitHub where comments posted with the job's token are by github-actions[bot]."""
    with FakeGitHub(REPO, viewer="github-actions[bot]") as server:
        server.add_pull(21, author="contributor21")
        yield server


def _answer(github: FakeGitHub, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run the action's answer step for PR 21 as the runner would."""
    env = {"GITHUB_API_URL": github.url, "GITHUB_TOKEN": TOKEN, "REPO": REPO, "PR": "21"}
    return _run_step("Answer a command from someone who may not give one", tmp_path, **env)


def test_a_refused_command_gets_one_answer_per_pull_request(
    actions_github: FakeGitHub, tmp_path: Path
):
    actions_github.add_comment(21, "/prdup not-duplicate #20", author="contributor21")
    first = _answer(actions_github, tmp_path)

    [_, answer] = actions_github.comments_on(21)
    assert answer["user"] == "github-actions[bot]"
    assert answer["body"].startswith(REFUSED_MARKER + "\n")
    text = answer["body"]
    assert "owners, members and collaborators" in text and "ask a maintainer" in text
    assert "`prdup: not a duplicate`" in text  # what a maintainer can do instead
    assert not re.search(r"(?im)^\s*/prdup", text)  # the answer is no command itself
    assert "answered on octo/demo#21" in first.stdout

    # Someone else tries again: no second answer.
    actions_github.add_comment(21, "Please!\n/PRDUP not-duplicate 20", author="bystander")
    again = _answer(actions_github, tmp_path)
    assert len(actions_github.comments_on(21)) == 3
    assert "already has the answer" in again.stdout
    assert (
        len(actions_github.requests_to(method="POST", path="/repos/octo/demo/issues/21/comments"))
        == 1
    )


def test_an_earlier_answer_counts_only_when_the_bot_wrote_it(
    actions_github: FakeGitHub, tmp_path: Path
):
    # A stranger copying the marker cannot silence the answer for everyone after them; the
    # answer is found on any page of a long thread.
    actions_github.add_comment(21, REFUSED_MARKER + "\nshh", author="mallory")
    for n in range(120):
        actions_github.add_comment(21, f"chatter {n}", author="bystander")
    _answer(actions_github, tmp_path)
    assert len(actions_github.comments_on(21)) == 122

    _answer(actions_github, tmp_path)
    assert len(actions_github.comments_on(21)) == 122


def test_a_rate_limit_or_a_read_only_token_leaves_the_answer_step_green(
    actions_github: FakeGitHub, tmp_path: Path
):
    actions_github.rate_limit(reset=time.time() + 3600, times=None)
    done = _answer(actions_github, tmp_path)  # check=True: a red step raises here
    assert "prdup: stopped:" in done.stderr
    actions_github.clear_faults()
    actions_github.fail(
        "/repos/octo/demo/issues/21/comments",
        403,
        method="POST",
        body={"message": "Resource not accessible by integration"},
    )
    done = _answer(actions_github, tmp_path)
    assert "skipped the answer on octo/demo#21: could not post" in done.stdout
    assert actions_github.comments_on(21) == []
