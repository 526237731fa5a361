"""The bot: one comment per PR, kept up to date, dismissible; the Action; the GitHub import.

Real parts only: git repositories built by RepoBuilder, a real index, and the FakeGitHub HTTP
server answering like GitHub's REST API. The story: `Pipeline.__init__` still reads a legacy
flag. PR 20 (open) asks a strategy resolver instead; PR 21 makes the same fix with other code;
PR 22 only touches the docs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml

from index.github.dismissals import add_local
from index.indexer import index_repository
from index.storage.schema import MIGRATIONS, _dismissals_from_github
from index.storage.store import IndexStore
from prdup.checking import check
from prdup.comment import (
    MARKER,
    NOT_DUPLICATE_LABEL,
    BotLoginUnknown,
    comment_on_pull,
    fingerprint_of,
    render_comment,
    reply_dismissals,
)
from prdup.github import Comment, GitHubClient
from prdup.github_import import import_metadata, watermark_key
from tests.fake_github import FakeGitHub, quick_client
from tests.repo_builder import RepoBuilder, run_cli

TOKEN = "ghp_botTOKENvalue0123456789abcdef"
REPO = "octo/demo"
ROOT = Path(__file__).resolve().parent.parent
WRITES = ("POST", "PATCH", "DELETE", "PUT")

PIPELINE = """import logging


class Pipeline:
    def __init__(self, config):
        self.config = config
        self.log = logging.getLogger("pipeline")
        if config.enable_cpu_offload:
            self.enable_model_cpu_offload()
        self.ready = True

    def enable_model_cpu_offload(self):
        self.log.info("offloading the model to the CPU")
        self.offloaded = True
"""
LEGACY = "        if config.enable_cpu_offload:\n"
FIX_20 = "        if OffloadStrategy.resolve(config).wants_cpu_offload:\n"
FIX_21 = "        if resolve_offload_strategy(config) == 'cpu':\n"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GITHUB_API_URL",
        "GITHUB_ACTIONS",
        "GITHUB_REPOSITORY",
        "PRDUP_BOT_LOGIN",
        "PRDUP_MIN_SCORE",
        "PRDUP_TOP",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def story(builder: RepoBuilder) -> RepoBuilder:
    return build_story(builder)


def build_story(builder: RepoBuilder) -> RepoBuilder:
    """Two open PRs that fix the pipeline's legacy-flag read differently, and one on its docs."""
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "README.md": "Pipeline.\n"})
    builder.pr_branch(
        20, [("Use the strategy resolver", {"pipeline.py": PIPELINE.replace(LEGACY, FIX_20)})]
    )
    builder.pr_branch(
        21, [("Stop reading the legacy flag", {"pipeline.py": PIPELINE.replace(LEGACY, FIX_21)})]
    )
    builder.pr_branch(22, [("Document the pipeline", {"README.md": "The pipeline, in full.\n"})])
    return builder


@pytest.fixture
def server(fake_github: FakeGitHub) -> FakeGitHub:
    for number, author in ((20, "alice"), (21, "bob"), (22, "carol")):
        fake_github.add_pull(number, author=author)
    return fake_github


@pytest.fixture
def client(server: FakeGitHub) -> GitHubClient:
    return quick_client(server, REPO, TOKEN)


def index(builder: RepoBuilder, db_path: Path) -> None:
    index_repository(builder.path, db_path=db_path)


def writes(server: FakeGitHub) -> list[tuple[str, str]]:
    """Requests that change something on GitHub (a GraphQL query is a POST that only reads)."""
    return [
        (r.method, r.path) for r in server.requests if r.method in WRITES and r.path != "/graphql"
    ]


# ----------------------------------------------------------------------------- one comment per PR


def test_one_comment_created_then_edited_then_left_alone_then_resolved(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    index(story, db_path)
    comments = "/repos/octo/demo/issues/21/comments"

    first = comment_on_pull(client, 21, story.path, db_path)
    assert first.action == "created"
    assert writes(server) == [("POST", comments)]
    [posted] = server.comments_on(21)
    assert posted["body"].startswith(MARKER)
    assert "Duplicate of #20" in posted["body"]
    assert posted["user"] == "prdup-bot"

    # PR 20 lands: the same finding is now "already done", so the comment is edited in place.
    story.merge_pr(20, how="squash")
    index(story, db_path)
    server.clear_requests()
    second = comment_on_pull(client, 21, story.path, db_path)
    assert second.action == "updated"
    assert writes(server) == [("PATCH", f"/repos/octo/demo/issues/comments/{posted['id']}")]
    [edited] = server.comments_on(21)
    assert "Already done in #20" in edited["body"]

    server.clear_requests()
    third = comment_on_pull(client, 21, story.path, db_path)
    assert third.action == "unchanged"
    assert writes(server) == []
    assert [r.path for r in server.requests] == [
        "/repos/octo/demo/pulls/21",  # its state and labels
        "/graphql",  # the token's login
        comments,
        "/graphql",  # which of them are hidden
    ]

    # A maintainer says it is not a duplicate: the finding vanishes and the comment says so.
    server.add_comment(
        21, "Different approach.\n/prdup not-duplicate #20", author="maint", association="MEMBER"
    )
    server.clear_requests()
    fourth = comment_on_pull(client, 21, story.path, db_path)
    assert fourth.action == "resolved"
    command = max(server.comments)
    assert writes(server) == [
        ("POST", f"/repos/octo/demo/issues/comments/{command}/reactions"),  # accepted
        ("PATCH", f"/repos/octo/demo/issues/comments/{posted['id']}"),
    ]
    resolved = server.comments[posted["id"]]["body"]
    assert resolved.startswith(MARKER) and fingerprint_of(resolved) == ""
    assert "#20" not in resolved

    server.clear_requests()
    assert comment_on_pull(client, 21, story.path, db_path).action == "unchanged"
    assert writes(server) == []
    assert len(server.comments_on(21)) == 2  # the bot's and the maintainer's, nothing more


def test_a_check_run_on_the_prs_head_annotates_its_lines_and_fails_only_when_asked(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    """Under pull_request_target the workflow's commit is the base's: the check run is made
    for the PR's own head, so GitHub shows it, and its annotations, on the PR."""
    from index.config import Settings

    index(story, db_path)
    head = story.head("refs/pull/21/head")
    server.pulls[21]["head_sha"] = head
    server.pulls[22]["head_sha"] = story.head("refs/pull/22/head")

    run = comment_on_pull(client, 21, story.path, db_path, check_run=True)
    assert run.check_run == "failure"  # a duplicate: one of the verdicts that fail by default
    [made] = server.check_runs
    assert (made["head_sha"], made["name"], made["conclusion"]) == (head, "prdup", "failure")
    assert made["output"]["title"].startswith("Duplicate of #20")
    assert "Duplicate of #20" in made["output"]["summary"]
    [note] = made["output"]["annotations"]
    legacy_line = PIPELINE.splitlines().index(LEGACY.rstrip("\n")) + 1  # the line 21 changes
    assert (note["path"], note["start_line"], note["annotation_level"]) == (
        "pipeline.py",
        legacy_line,
        "warning",
    )

    quiet = Settings(fail_on=())
    assert comment_on_pull(client, 21, story.path, db_path, quiet, check_run=True).check_run == (
        "neutral"
    )
    assert comment_on_pull(client, 22, story.path, db_path, check_run=True).check_run == "success"
    assert [r["conclusion"] for r in server.check_runs] == ["failure", "neutral", "success"]


def test_fail_on_overlap_fails_the_check_run_though_no_comment_is_posted(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    """#23 rewrites the same flag read another way, logging it: an overlap with #20 and #21,
    which the comment never reports (it decides nothing). A maintainer who asks the action
    to fail on overlaps gets a failing check run, as `check --fail-on overlap` fails."""
    from index.config import Settings

    logged = PIPELINE.replace(
        LEGACY, "        self.log.info('offload: %s', config.enable_cpu_offload)\n" + LEGACY
    ).replace(LEGACY, "        if getattr(config, 'enable_cpu_offload', False):\n")
    story.pr_branch(23, [("Log and guard the offload flag", {"pipeline.py": logged})])
    server.add_pull(23, author="dave")
    index(story, db_path)
    server.pulls[23]["head_sha"] = story.head("refs/pull/23/head")
    code, out, _ = run_cli(
        story.path,
        "check",
        "--pr",
        "23",
        "--db",
        str(db_path),
        "--fail-on",
        "overlap",
        "--format",
        "json",
    )
    verdicts = {f["verdict"] for f in json.loads(out)["findings"] if f["score"] >= 0.7}
    assert code == 1 and verdicts == {"overlap"}, out

    asked = Settings(fail_on=("overlap",))
    run = comment_on_pull(client, 23, story.path, db_path, asked, check_run=True)
    assert run.body is None and run.check_run == "failure", run
    assert comment_on_pull(client, 23, story.path, db_path, check_run=True).check_run == "success"


def test_without_checks_write_the_comment_is_posted_and_the_run_says_why(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    index(story, db_path)
    server.pulls[21]["head_sha"] = story.head("refs/pull/21/head")
    server.fail(
        "/repos/octo/demo/check-runs",
        403,
        times=None,
        method="POST",
        body={"message": "Resource not accessible by integration"},
    )
    run = comment_on_pull(client, 21, story.path, db_path, check_run=True)
    assert run.action == "created" and "checks: write" in (run.check_run or "")


def test_nothing_to_say_never_writes_a_comment(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    index(story, db_path)
    run = comment_on_pull(client, 22, story.path, db_path)
    assert (run.action, run.body) == ("none", None)
    assert writes(server) == []
    assert server.comments_on(22) == []


def test_vanished_findings_can_delete_the_comment(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    index(story, db_path)
    assert comment_on_pull(client, 21, story.path, db_path).action == "created"
    with IndexStore(db_path) as store:
        add_local(store, 21, 20, "maint", "2024-05-01T00:00:00Z")
    server.clear_requests()
    run = comment_on_pull(client, 21, story.path, db_path, on_resolve="delete")
    assert run.action == "deleted"
    assert [m for m, _ in writes(server)] == ["DELETE"]
    assert server.comments_on(21) == []


def test_two_runs_that_raced_leave_one_comment_after_the_next_run(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    """Both runs listed the comments before either posted, so each created one. The next run
    keeps the oldest (links may point at it) and deletes the other."""
    index(story, db_path)
    assert comment_on_pull(client, 21, story.path, db_path).action == "created"
    [first] = server.comments_on(21)
    twin = server.add_comment(21, first["body"], author=server.viewer)
    server.clear_requests()

    assert comment_on_pull(client, 21, story.path, db_path).action == "unchanged"

    assert writes(server) == [("DELETE", f"/repos/{REPO}/issues/comments/{twin['id']}")]
    assert [c["id"] for c in server.comments_on(21)] == [first["id"]]


def test_a_marker_in_someone_elses_comment_is_not_ours(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    index(story, db_path)
    forged = server.add_comment(21, f"{MARKER}\n<!-- prdup:fingerprint -->\nhi", author="mallory")
    spoof_22 = server.add_comment(22, f"{MARKER}\nquoted", author="mallory")

    assert comment_on_pull(client, 21, story.path, db_path).action == "created"
    assert comment_on_pull(client, 22, story.path, db_path).action == "none"

    assert [m for m, _ in writes(server)] == ["POST"]
    assert server.comments[forged["id"]]["body"].endswith("hi")
    assert server.comments[spoof_22["id"]]["body"].endswith("quoted")
    assert len(server.comments_on(21)) == 2


def test_inside_actions_the_bot_is_github_actions(
    story: RepoBuilder,
    db_path: Path,
    server: FakeGitHub,
    client: GitHubClient,
    monkeypatch: pytest.MonkeyPatch,
):
    """Actions' GITHUB_TOKEN cannot read /user; its comments are by github-actions[bot]."""
    index(story, db_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    server.user_forbidden = True
    server.viewer = "github-actions[bot]"
    assert comment_on_pull(client, 21, story.path, db_path).action == "created"
    assert comment_on_pull(client, 21, story.path, db_path).action == "unchanged"
    assert len(server.comments_on(21)) == 1


def test_an_app_token_run_three_times_keeps_one_comment(
    story: RepoBuilder,
    db_path: Path,
    server: FakeGitHub,
    client: GitHubClient,
    monkeypatch: pytest.MonkeyPatch,
):
    """A GitHub App installation token: /user answers 403 and the author is `name[bot]`."""
    index(story, db_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    server.user_forbidden = True
    server.viewer, server.viewer_app = "prdup-app[bot]", "prdup-app"

    assert comment_on_pull(client, 21, story.path, db_path).action == "created"
    story.merge_pr(20, how="squash")
    index(story, db_path)
    assert comment_on_pull(client, 21, story.path, db_path).action == "updated"
    assert comment_on_pull(client, 21, story.path, db_path).action == "unchanged"

    [only] = server.comments_on(21)
    assert only["user"] == "prdup-app[bot]" and "Already done in #20" in only["body"]
    assert server.requests_to("/user") == []


def test_a_hidden_comment_is_never_edited_nor_posted_again(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    """A maintainer minimized the bot's comment: the same claim is not posted again."""
    index(story, db_path)
    assert comment_on_pull(client, 21, story.path, db_path).action == "created"
    [posted] = server.comments_on(21)
    posted["minimized"] = "RESOLVED"
    server.clear_requests()

    assert comment_on_pull(client, 21, story.path, db_path).action == "unchanged"
    assert writes(server) == []

    # A new claim is news: a fresh comment, the hidden one stays as it was.
    story.merge_pr(20, how="squash")
    index(story, db_path)
    assert comment_on_pull(client, 21, story.path, db_path).action == "created"
    hidden, fresh = server.comments_on(21)
    assert "Duplicate of #20" in hidden["body"] and "Already done in #20" in fresh["body"]


def test_without_knowing_its_login_the_bot_refuses_to_guess(
    story: RepoBuilder, db_path: Path, server: FakeGitHub
):
    index(story, db_path)
    anonymous = GitHubClient(
        REPO, base_url=server.url, seconds_between_requests=None, seconds_between_writes=None
    )
    with pytest.raises(BotLoginUnknown, match="PRDUP_BOT_LOGIN"):
        comment_on_pull(anonymous, 21, story.path, db_path)
    assert comment_on_pull(anonymous, 22, story.path, db_path).action == "none"
    assert writes(server) == []


# ------------------------------------------------------------------------ closed PRs, no red jobs


@pytest.mark.parametrize("state", ["closed", "merged"])
def test_a_closed_or_merged_pr_gets_no_check_and_no_comment(
    story: RepoBuilder, tmp_path: Path, server: FakeGitHub, client: GitHubClient, state: str
):
    """A label, an edit or a reply on a closed PR still runs the workflow: it must stay quiet."""
    server.add_pull(21, state=state, labels=["bug"])
    server.add_comment(21, "/prdup not-duplicate #20", author="maint", association="MEMBER")
    no_index = tmp_path / "never-built.db"  # a check would fail on it: none must be run

    run = comment_on_pull(client, 21, story.path, no_index)

    assert run.action == "skipped" and f"PR #21 is {state}" in (run.note or "")
    assert writes(server) == []
    assert [r.path for r in server.requests] == ["/repos/octo/demo/pulls/21"]


def test_comment_command_on_a_closed_pr_exits_0_and_says_why_in_the_job_summary(
    story: RepoBuilder,
    db_path: Path,
    tmp_path: Path,
    server: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
):
    index(story, db_path)
    server.add_pull(21, state="closed")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_API_URL", server.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)

    code, out, err = run_cli(
        story.path, "comment", "--pr", "21", "--post", "--github", REPO, "--db", str(db_path)
    )

    assert code == 0, err
    assert out.strip() == (
        "skipped octo/demo#21: PR #21 is closed; prdup comments only on open pull requests"
    )
    assert "PR #21 is closed" in summary.read_text()
    assert server.comments_on(21) == []


def _post(repo: Path, db_path: Path, number: int) -> tuple[int, str, str]:
    return run_cli(
        repo, "comment", "--pr", str(number), "--post", "--github", REPO, "--db", str(db_path)
    )


@pytest.fixture
def in_actions(server: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment of an Actions step; returns the job summary file."""
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_API_URL", server.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    return summary


def test_a_comment_github_keeps_failing_with_5xx_stops_the_run_green(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, in_actions: Path
):
    """GitHub answers every POST of the comment with 503: retries spent, the run stops as
    on a rate limit (exit 3, which the action reads as green), says so in the job summary,
    and the next run, GitHub back, posts the comment."""
    index(story, db_path)
    server.pulls[21]["head_sha"] = story.head("refs/pull/21/head")
    comments = "/repos/octo/demo/issues/21/comments"
    server.fail(comments, 503, method="POST", times=None)

    code, _, err = _post(story.path, db_path, 21)

    assert code == 3, err
    assert "prdup: stopped:" in err and "server error 503" in err
    assert "stopped:" in in_actions.read_text()
    server.clear_faults()
    code, _, err = _post(story.path, db_path, 21)
    assert code == 0 and len(server.comments_on(21)) == 1, err


def test_normal_situations_never_fail_the_job(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, in_actions: Path
):
    """An empty or binary-only PR, one not indexed yet, a fork's read-only token: exit 0."""
    story.pr_branch(23, [("Nothing yet", {})])
    story.pr_branch(25, [("Add the logo", {"logo.png": b"\x89PNG\r\n\x1a\n\x00\x01\x02"})])
    server.add_pull(23)
    server.add_pull(24)  # opened after the index was built: its ref is not there yet
    server.add_pull(25)
    index(story, db_path)

    code, out, err = _post(story.path, db_path, 23)
    assert code == 0, err
    assert out.startswith("skipped octo/demo#23: nothing to check: PR #23") and "empty" in out
    for command in (["comment"], ["check"]):  # printing it, or checking it, is no error either
        code, out, err = run_cli(story.path, *command, "--pr", "23", "--db", str(db_path))
        assert (code, out) == (0, "") and "without a diff (empty" in err

    code, out, err = _post(story.path, db_path, 25)
    assert (code, out.strip()) == (0, "none: nothing to say about octo/demo#25"), err

    code, out, err = _post(story.path, db_path, 24)
    assert code == 0, err
    assert out.startswith("skipped octo/demo#24: nothing to check: PR #24 is not in the index")

    # Under `pull_request`, a PR from a fork gets a read-only token: GitHub answers 403.
    server.fail(
        "/repos/octo/demo/issues/21/comments",
        403,
        method="POST",
        body={"message": "Resource not accessible by integration"},
    )
    code, out, err = _post(story.path, db_path, 21)
    assert code == 0, err
    assert out.startswith("skipped octo/demo#21: could not post: GitHub denied commenting")
    assert server.comments_on(21) == []

    summary = in_actions.read_text()
    assert summary.count("**prdup**: skipped") == 3
    assert "empty" in summary and "not in the index" in summary and "read-only" in summary
    assert TOKEN not in summary


def test_a_broken_configuration_still_fails_the_job(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, in_actions: Path
):
    index(story, db_path)
    (story.path / ".prdup.toml").write_text("min_scor = 0.5\n")  # a typo

    code, out, err = _post(story.path, db_path, 21)

    assert code == 2 and "min_scor" in err and out == ""
    assert server.comments_on(21) == []
    assert in_actions.read_text().startswith("**prdup**: error: ")  # where people look


# ------------------------------------------------------------------------------------- escaping


def test_pr_text_cannot_ping_inject_html_or_break_the_table(builder: RepoBuilder, db_path: Path):
    nasty = (
        "Fix @octocat <script>alert(1)</script> | `rm -rf` [x](http://evil.example) "
        "fixes #7, see www.evil.example " + "long " * 60
    )
    shared = '        banner = "```@team </details>"\n'
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE})
    builder.pr_branch(20, [(nasty, {"pipeline.py": PIPELINE.replace(LEGACY, FIX_20 + shared)})])
    builder.pr_branch(21, [("Same", {"pipeline.py": PIPELINE.replace(LEGACY, FIX_21 + shared)})])
    index(builder, db_path)

    body = render_comment(check(builder.path, db_path, pr=21))

    assert body is not None
    assert "@octocat" not in body and "@\u200doctocat" in body
    assert "<script>" not in body and "&lt;script&gt;" in body
    assert "[x](http" not in body and "\\[x\\]" in body
    assert "http://" not in body and "www.evil" not in body and "#7" not in body
    assert "http:\u200d//" in body and "www\u200d.evil" in body and "#\u200d7" in body
    assert "\\| \\`rm -rf\\`" in body
    assert "long " * 30 not in body and "…" in body  # truncated
    # The shared line is shown verbatim in a fence its backticks cannot close.
    assert "````diff\n" in body and '+ banner = "```@team </details>"' in body
    table_rows = [line for line in body.splitlines() if line.startswith("| ")]
    assert all(len(re.split(r"(?<!\\)\|", row)) == 8 for row in table_rows)  # six cells each
    assert TOKEN not in body


# ----------------------------------------------------------------------------------- dismissals


def dismissals(db_path: Path) -> set[tuple[int, int, str]]:
    with IndexStore(db_path) as store:
        return set(store.rows("SELECT number, other, by FROM dismissals"))


def test_dismissal_by_reply_is_recorded_and_the_pair_disappears(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    index(story, db_path)
    assert [f.candidate.number for f in check(story.path, db_path, pr=21).findings][:1] == [20]
    server.add_comment(21, "> /prdup not-duplicate #20\nquoting is not asking", author="eve")
    assert comment_on_pull(client, 21, story.path, db_path).action == "created"
    assert dismissals(db_path) == set()
    # Anyone may comment on a public PR; only maintainers may silence a finding.
    server.add_comment(21, "/prdup not-duplicate #20", author="mallory", association="CONTRIBUTOR")
    assert comment_on_pull(client, 21, story.path, db_path).action == "unchanged"
    assert dismissals(db_path) == set()

    server.add_comment(
        21, "Not the same.\n  /prdup not-duplicate #20", author="maint", association="MEMBER"
    )
    run = comment_on_pull(client, 21, story.path, db_path)

    assert run.action == "resolved"
    assert [(d.number, d.other, d.by) for d in run.dismissals] == [(21, 20, "maint")]
    assert dismissals(db_path) == {(21, 20, "maint"), (20, 21, "maint")}
    assert comment_on_pull(client, 21, story.path, db_path).dismissals == ()  # recorded once
    assert 20 not in {f.candidate.number for f in check(story.path, db_path, pr=21).findings}
    assert 21 not in {f.candidate.number for f in check(story.path, db_path, pr=20).findings}


def test_a_command_without_hash_works_and_accepted_commands_get_a_reaction(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    index(story, db_path)
    ignored = server.add_comment(21, "/prdup not-duplicate 20", author="eve")  # not a maintainer
    hidden = server.add_comment(
        21, "/prdup not-duplicate 20", author="maint", association="MEMBER", minimized="SPAM"
    )
    assert comment_on_pull(client, 21, story.path, db_path).dismissals == ()

    accepted = server.add_comment(
        21,
        "/prdup not-duplicate 20, it fixes 3 other things",
        author="maint",
        association="OWNER",
    )
    run = comment_on_pull(client, 21, story.path, db_path)

    assert [(d.number, d.other, d.by) for d in run.dismissals] == [(21, 20, "maint")]
    assert dismissals(db_path) == {(21, 20, "maint"), (20, 21, "maint")}  # not #3
    assert [r["content"] for r in server.reactions[accepted["id"]]] == ["+1"]
    assert ignored["id"] not in server.reactions and hidden["id"] not in server.reactions

    comment_on_pull(client, 21, story.path, db_path)  # read again, not acknowledged again
    assert len(server.reactions[accepted["id"]]) == 1


@pytest.mark.parametrize(
    ("line", "numbers"),
    [
        ("/prdup not-duplicate 12", [12]),
        ("/prdup not-duplicate #12, #13 14", [12, 13, 14]),
        ("/prdup not-duplicate 12, it fixes 3 other things", [12]),
        ("/prdup not-duplicate #12 (and #13)", [12, 13]),
        ("/prdup not-duplicate of 12", []),
        ("/prdup not-duplicate 21", []),  # the PR itself
    ],
)
def test_which_prs_a_command_names(line: str, numbers: list[int]):
    reply = Comment(id=1, body=line, author="maint", created_at=None, association="MEMBER")
    assert [d.other for d in reply_dismissals(21, [reply], "prdup-bot")] == numbers


def test_dismissal_by_label_is_recorded_and_the_pair_disappears(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    index(story, db_path)
    server.add_pull(21, labels=[NOT_DUPLICATE_LABEL])

    run = comment_on_pull(client, 21, story.path, db_path)

    assert (run.action, run.body) == ("none", None)
    assert (21, 20, "label") in dismissals(db_path)
    assert 20 not in {f.candidate.number for f in check(story.path, db_path, pr=21).findings}
    assert writes(server) == []


# ----------------------------------------------------------------------------------- the CLI


def test_comment_command_prints_or_posts(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, monkeypatch: pytest.MonkeyPatch
):
    index(story, db_path)
    code, out, _ = run_cli(story.path, "comment", "--pr", "21", "--db", str(db_path))
    assert code == 0 and out.startswith(MARKER) and "Duplicate of #20" in out
    code, out, _ = run_cli(story.path, "comment", "--pr", "22", "--db", str(db_path))
    assert (code, out.strip()) == (0, "prdup: nothing to say about PR #22.")
    assert server.requests == []

    code, _, err = run_cli(story.path, "comment", "--pr", "21", "--post", "--db", str(db_path))
    assert code == 2 and "--github" in err

    monkeypatch.setenv("GITHUB_API_URL", server.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    code, out, err = run_cli(story.path, "comment", "--pr", "21", "--post", "--db", str(db_path))
    assert (code, out.strip()) == (0, "created comment on octo/demo#21"), err
    assert len(server.comments_on(21)) == 1

    server.fail("/repos/octo/demo/issues/21/comments", 404, times=None)
    code, out, err = run_cli(story.path, "comment", "--pr", "21", "--post", "--db", str(db_path))
    assert code == 2 and "not found" in err and len(err.strip().splitlines()) == 1
    assert TOKEN not in err and "Traceback" not in err


# ------------------------------------------------------------------------------------- action.yml

# The essentials of GitHub's action metadata syntax (docs.github.com, "Metadata syntax for GitHub
# Actions"), for a composite action.
ACTION_SCHEMA = {
    "type": "object",
    "required": ["name", "description", "runs"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "description": {"type": "string", "minLength": 1},
        "author": {"type": "string"},
        "branding": {"type": "object"},
        "inputs": {
            "type": "object",
            "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_-]*$"},
            "additionalProperties": {
                "type": "object",
                "required": ["description"],
                "properties": {
                    "description": {"type": "string", "minLength": 1},
                    "required": {"type": "boolean"},
                    "default": {"type": "string"},
                    "deprecationMessage": {"type": "string"},
                },
                "additionalProperties": False,
            },
        },
        "outputs": {"type": "object"},
        "runs": {
            "type": "object",
            "required": ["using", "steps"],
            "properties": {
                "using": {"const": "composite"},
                "steps": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "oneOf": [
                            {"required": ["run", "shell"], "not": {"required": ["uses"]}},
                            {"required": ["uses"], "not": {"required": ["run"]}},
                        ],
                        "properties": {
                            "name": {"type": "string"},
                            "id": {"type": "string"},
                            "if": {"type": ["string", "boolean"]},
                            "run": {"type": "string"},
                            "shell": {"type": "string"},
                            "uses": {"type": "string", "pattern": "^[^@\\s]+@[^@\\s]+$"},
                            "with": {"type": "object"},
                            "env": {
                                "type": "object",
                                "additionalProperties": {"type": ["string", "number", "boolean"]},
                            },
                            "working-directory": {"type": "string"},
                            "continue-on-error": {"type": ["string", "boolean"]},
                        },
                        "additionalProperties": False,
                    },
                },
            },
        },
    },
    "additionalProperties": False,
}


def test_action_metadata_is_valid_and_never_interpolates_into_scripts():
    action = yaml.safe_load((ROOT / "action.yml").read_text())

    jsonschema.validate(action, ACTION_SCHEMA)

    steps = action["runs"]["steps"]
    scripts = [step["run"] for step in steps if "run" in step]
    assert scripts and all("${{" not in script for script in scripts)
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert {"min-score", "python-version"} <= set(action["inputs"])
    uses = [step["uses"].split("@")[0] for step in steps if "uses" in step]
    assert uses == [
        "actions/setup-python",
        "actions/checkout",  # when the workflow did not check out itself
        "actions/cache/restore",  # the Python environment
        "actions/cache/save",
        "actions/cache/restore",  # the index
        "actions/upload-artifact",  # the sweep's report
        "actions/cache/save",  # an import the rate limit stopped, to resume
        "actions/cache/save",  # the index, last
    ]
    [checkout] = [step for step in steps if step.get("uses", "").startswith("actions/checkout@")]
    assert checkout["with"]["persist-credentials"] is False  # no token left in .git/config
    assert checkout["with"]["fetch-depth"] == 0 and "ref" not in checkout["with"]  # never a PR's
    joined = "\n".join(scripts)
    assert "prdup pr-refspecs" in joined  # only the PR heads that changed (tests/test_runner)
    assert 'prdup index --github "$REPO"' in joined
    assert (
        re.search(r'args=\(--pr "\$PR" .*--post\)', joined)
        and 'prdup comment "${args[@]}"' in joined
    )


def _decide(
    tmp_path: Path, event_name: str = "pull_request_target", event: dict | None = None, **env: str
) -> tuple[dict[str, str], str]:
    """Run the action's first step as the runner would, on an event: (its outputs, the job
    summary). The runner gives every step $GITHUB_EVENT_NAME and the payload's file."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    [step] = [s for s in action["runs"]["steps"] if s.get("id") == "event"]
    output, summary, payload = tmp_path / "output", tmp_path / "summary", tmp_path / "event.json"
    for path in (output, summary):
        path.write_text("")
    payload.write_text(json.dumps(event or pull_event()))
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=workspace,
        env={
            "PATH": os.environ["PATH"],
            "PYTHON": sys.executable,
            "ACTION_PATH": str(ROOT),
            "COMMAND": "comment",
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(payload),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            **env,
        },
        check=True,
        capture_output=True,
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return outputs, summary.read_text().strip()


def pull_event(action: str = "opened", state: str = "open", **fields: object) -> dict:
    """A pull_request_target payload for PR 21."""
    return {"action": action, "pull_request": {"number": 21, "state": state}, **fields}


def comment_event(
    body: str,
    association: str = "MEMBER",
    *,
    action: str = "created",
    state: str = "open",
    user: str = "someone",
    on_pull: bool = True,
) -> dict:
    """An issue_comment payload: a reply on open PR 21 (or on issue 21, not a PR)."""
    issue: dict = {"number": 21, "state": state}
    if on_pull:
        issue["pull_request"] = {"url": "https://api.github.com/repos/octo/demo/pulls/21"}
    kind = "Bot" if user.endswith("[bot]") else "User"
    comment = {
        "body": body,
        "author_association": association,
        "user": {"login": user, "type": kind},
    }
    return {"action": action, "issue": issue, "comment": comment}


def test_the_action_skips_ordinary_comments_and_closed_prs(tmp_path: Path):
    ran = {"run": "true", "refuse": "false", "pr": "21", "checkout": "true"}
    assert _decide(tmp_path) == (ran, "")
    for body in ("/prdup not-duplicate 12", "/PRDUP not-duplicate 12\nok", "Thanks!\n  /prdup"):
        assert _decide(tmp_path, "issue_comment", comment_event(body)) == (ran, "")
    # A mention mid-line is no command, but it shares the PR's concurrency group: the run
    # redoes what a run it cancelled would have done.
    quoted = comment_event("try `/prdup not-duplicate`", "NONE")
    assert _decide(tmp_path, "issue_comment", quoted) == (ran, "")
    outputs, summary = _decide(tmp_path, "issue_comment", comment_event("LGTM, thanks!"))
    assert outputs["run"] == "false"
    assert summary == "**prdup**: skipped: the comment on #21 is not a /prdup command"
    on_issue = comment_event("/prdup not-duplicate 12", on_pull=False)
    assert _decide(tmp_path, "issue_comment", on_issue)[0]["run"] == "false"
    merged = pull_event("labeled", "closed", label={"name": NOT_DUPLICATE_LABEL})
    merged["pull_request"]["merged"] = True
    for event, state in ((pull_event("edited", "closed"), "closed"), (merged, "merged")):
        outputs, summary = _decide(tmp_path, "pull_request_target", event)
        assert outputs["run"] == "false" and f"#21 is {state}" in summary
    closed = comment_event("/prdup not-duplicate 12", state="closed")
    assert _decide(tmp_path, "issue_comment", closed)[0]["run"] == "false"


def test_a_workflow_that_checks_out_itself_keeps_its_checkout(tmp_path: Path):
    (tmp_path / "workspace").mkdir()
    subprocess.run(["git", "init", "-q", str(tmp_path / "workspace")], check=True)
    assert _decide(tmp_path)[0]["checkout"] == "false"
    assert _decide(tmp_path, COMMAND="sweep", GITHUB_EVENT_NAME="schedule")[0] == {
        "run": "true",
        "refuse": "false",
        "pr": "",
        "checkout": "false",
    }


def _documented_workflow() -> dict:
    text = (ROOT / "docs" / "bot.md").read_text()
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "\n  prdup:\n" in b]
    return yaml.safe_load(block)


def test_the_documented_workflow_is_short_and_names_only_events_and_permissions():
    """What a maintainer copies: the events, the permissions, the action pinned once; the
    rules for events and commands come with the pin (prdup/bot_event.py)."""
    text = (ROOT / "examples" / "workflows" / "prdup.yml").read_text()
    assert len(text.splitlines()) <= 25  # the issue's bar: about 25 lines, comments and all
    assert len(re.findall(r"OWNER/prdup@[0-9a-f]{40}", text)) == 1
    workflow = _documented_workflow()
    assert workflow == yaml.safe_load(text)
    [job] = workflow["jobs"].values()
    assert [step["uses"].split("@")[0] for step in job["steps"]] == ["OWNER/prdup"]
    assert "run" not in json.dumps(job["steps"])  # no script to copy
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["issue_comment"] == {"types": ["created", "edited", "deleted"]}
    # Removing the label takes its dismissals back at once.
    assert {"labeled", "unlabeled"} <= set(triggers["pull_request_target"]["types"])
    # A workflow-level group would let a filtered-out comment cancel the PR's run in progress.
    assert "concurrency" not in workflow and "concurrency" in job


def test_every_action_is_pinned_by_sha_and_prdup_installs_from_constraints():
    text = (ROOT / "action.yml").read_text()
    step = re.compile(r"^ *(?:- )?uses: (\S+)@(\S+)(.*)$", re.MULTILINE)
    pins = step.findall(text)
    workflow = (ROOT / "docs" / "bot.md").read_text()
    pins += [pin for pin in step.findall(workflow) if pin[0].startswith("actions/")]
    assert len(pins) == 8  # all in the action: the documented workflows check out nothing
    for action, ref, comment in pins:
        assert re.fullmatch(r"[0-9a-f]{40}", ref), action
        assert re.fullmatch(r" # v\d+\.\d+\.\d+", comment), action  # the tag, for people

    action = yaml.safe_load(text)
    [install] = [s["run"] for s in action["runs"]["steps"] if s.get("name") == "Install prdup"]
    assert '--require-hashes --no-deps -r "$ACTION_PATH/requirements.lock"' in install
    assert '--no-deps --no-build-isolation "$ACTION_PATH"' in install  # the locked setuptools
    locked = _locked(ROOT / "requirements.lock")
    assert all(hashes for hashes in locked.values()), "a file without its sha256"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = project["project"]["dependencies"] + project["build-system"]["requires"]
    for requirement in wanted:
        name = re.split(r"[<>=!~ \[]", requirement, maxsplit=1)[0]
        assert re.sub(r"[-_.]+", "-", name).lower() in {n.split("==")[0] for n in locked}, name


def _locked(path: Path) -> dict[str, list[str]]:
    """`name==version` -> its sha256 hashes, as pip reads a hash-pinned requirements file."""
    locked: dict[str, list[str]] = {}
    text = path.read_text().replace("\\\n", " ")
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        pin, *options = line.split()
        assert re.fullmatch(r"[a-z0-9-]+==[\w.]+", pin), line
        locked[pin] = [o.removeprefix("--hash=sha256:") for o in options]
        assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in locked[pin]), line
    return locked


# ------------------------------------------------------------------------------- GitHub import


def test_index_github_imports_titles_and_states_then_only_updated_prs(
    story: RepoBuilder, db_path: Path, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
):
    fake_github.add_pull(
        20, "Resolve the offload strategy", state="closed", updated_at="2024-03-01T00:00:00Z"
    )
    fake_github.add_pull(21, "Fixes #7: drop the legacy flag", updated_at="2024-03-02T00:00:00Z")
    for number in range(100, 205):  # more than one page of 100
        fake_github.add_pull(number, updated_at="2024-01-01T00:00:00Z")
    monkeypatch.setenv("GITHUB_API_URL", fake_github.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)

    code, _, err = run_cli(story.path, "index", "--github", REPO, "--db", str(db_path), "--quiet")

    assert code == 0, err
    with IndexStore(db_path) as store:
        rows = {r["number"]: r for r in store.query("SELECT * FROM changes")}
        issues = store.query(
            "SELECT issue FROM issue_refs JOIN changes ON id = change_id WHERE number = 21"
        )
        assert store.get_meta(watermark_key(REPO)) == "2024-03-02T00:00:00Z"
    assert (rows[20]["title"], rows[20]["state"]) == ("Resolve the offload strategy", "closed")
    assert (rows[21]["title"], rows[21]["state"]) == ("Fixes #7: drop the legacy flag", "open")
    assert rows[150]["status"] == "metadata-only"
    assert issues == [{"issue": "#7"}]
    pages = [r.query.get("page", "1") for r in fake_github.requests_to("/repos/octo/demo/pulls")]
    assert pages == ["1", "2"]

    fake_github.add_pull(
        21, "Drop the legacy flag, take two", state="merged", updated_at="2024-03-05T00:00:00Z"
    )
    fake_github.clear_requests()
    code, _, err = run_cli(story.path, "index", "--github", REPO, "--db", str(db_path), "--quiet")

    assert code == 0, err
    pages = [r.query.get("page", "1") for r in fake_github.requests_to("/repos/octo/demo/pulls")]
    assert pages == ["1"]  # stops early
    # ... and the comments: one request, from where the first import stopped reading them.
    assert [r.path for r in fake_github.requests] == [
        "/repos/octo/demo/pulls",
        "/repos/octo/demo/issues/comments",
    ]
    with IndexStore(db_path) as store:
        assert store.changes.row(21)["title"] == "Drop the legacy flag, take two"
        assert store.changes.row(21)["state"] == "merged"
        assert store.get_meta(watermark_key(REPO)) == "2024-03-05T00:00:00Z"


def test_import_lists_again_what_the_index_never_recorded(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    """An import whose index run failed is not lost behind the watermark."""
    server.add_pull(21, "Drop the legacy flag", updated_at="2024-03-02T00:00:00Z")
    first = import_metadata(REPO, story.path, db_path, client=client)
    assert set(first) == {20, 21, 22}

    again = import_metadata(REPO, story.path, db_path, client=client)  # no index run between
    assert 21 in again and again[21].title == "Drop the legacy flag"

    index_repository(story.path, db_path=db_path, metadata=again)
    # Now the index holds them: only what was updated at or after the watermark is listed.
    assert import_metadata(REPO, story.path, db_path, client=client) == {21: again[21]}


# ------------------------------------------------------------------- dismissals that last


def index_from_github(story: RepoBuilder, db_path: Path) -> None:
    code, _, err = run_cli(story.path, "index", "--github", REPO, "--db", str(db_path), "--quiet")
    assert code == 0, err


def delete_index(db_path: Path) -> None:
    """What an expired cache or a lost concurrent run leaves: no index at all."""
    for path in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
        path.unlink(missing_ok=True)


def pairs(db_path: Path) -> set[tuple[int, int]]:
    with IndexStore(db_path) as store:
        return set(store.rows("SELECT DISTINCT number, other FROM dismissals"))


def reported(story: RepoBuilder, db_path: Path, number: int) -> set[int | None]:
    return {f.candidate.number for f in check(story.path, db_path, pr=number).findings}


@pytest.fixture
def github_env(server: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> FakeGitHub:
    monkeypatch.setenv("GITHUB_API_URL", server.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    return server


def test_a_label_survives_a_fresh_index_and_removing_it_undoes_the_dismissal(
    story: RepoBuilder, db_path: Path, github_env: FakeGitHub
):
    github_env.set_labels(21, [NOT_DUPLICATE_LABEL], updated_at="2024-04-01T00:00:00Z")
    index_from_github(story, db_path)  # titles and authors from GitHub: still a duplicate
    assert pairs(db_path) == {(21, 20), (20, 21)}
    assert 20 not in reported(story, db_path, 21) and 21 not in reported(story, db_path, 20)

    delete_index(db_path)
    index_from_github(story, db_path)  # GitHub is the record: the label is read again

    assert pairs(db_path) == {(21, 20), (20, 21)}
    assert 20 not in reported(story, db_path, 21)

    github_env.set_labels(21, [], updated_at="2024-04-02T00:00:00Z")
    index_from_github(story, db_path)

    assert pairs(db_path) == set()
    assert 20 in reported(story, db_path, 21)


def test_a_maintainers_command_survives_a_fresh_index_and_a_strangers_never_counts(
    story: RepoBuilder, db_path: Path, github_env: FakeGitHub, client: GitHubClient
):
    command = github_env.add_comment(
        21,
        "/prdup not-duplicate 20",
        author="maint",
        association="COLLABORATOR",
        created_at="2024-04-01T00:00:00Z",
    )
    stranger = github_env.add_comment(
        22, "/prdup not-duplicate 20", author="eve", created_at="2024-04-01T00:00:01Z"
    )
    github_env.add_comment(
        22,
        "/prdup not-duplicate 20",
        author="maint",
        association="OWNER",
        created_at="2024-04-01T00:00:02Z",
        minimized="OUTDATED",
    )
    index_from_github(story, db_path)
    # Neither the stranger's (22, 20) nor the one a maintainer hid.
    assert pairs(db_path) == {(21, 20), (20, 21)}

    run = comment_on_pull(client, 21, story.path, db_path)  # the run the reply triggers

    assert [(d.number, d.other, d.by) for d in run.dismissals] == [(21, 20, "maint")]
    assert [r["content"] for r in github_env.reactions[command["id"]]] == ["+1"]
    assert stranger["id"] not in github_env.reactions
    assert 20 not in reported(story, db_path, 21)

    delete_index(db_path)
    index_from_github(story, db_path)

    assert pairs(db_path) == {(21, 20), (20, 21)}
    assert 21 not in reported(story, db_path, 20)

    # An edited command says what it says now: the next import takes the pair back.
    github_env.edit_comment(command["id"], "never mind", updated_at="2024-04-03T00:00:00Z")
    index_from_github(story, db_path)
    assert pairs(db_path) == set()


def test_the_bot_run_takes_back_a_removed_label_and_a_deleted_command(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    index(story, db_path)
    server.set_labels(21, [NOT_DUPLICATE_LABEL])
    assert comment_on_pull(client, 21, story.path, db_path).action == "none"
    assert pairs(db_path) == {(21, 20), (20, 21)}

    server.set_labels(21, [])  # the `unlabeled` event
    run = comment_on_pull(client, 21, story.path, db_path)

    assert (run.action, run.undone) == ("created", 1)
    assert pairs(db_path) == set()

    command = server.add_comment(21, "/prdup not-duplicate #20", author="m", association="OWNER")
    assert comment_on_pull(client, 21, story.path, db_path).action == "resolved"
    assert pairs(db_path) == {(21, 20), (20, 21)}

    del server.comments[command["id"]]
    run = comment_on_pull(client, 21, story.path, db_path)

    assert (run.action, run.undone) == ("updated", 1)
    assert pairs(db_path) == set()


def test_a_label_and_a_command_on_the_same_pair_are_taken_back_separately(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    index(story, db_path)
    server.set_labels(21, [NOT_DUPLICATE_LABEL])
    server.add_comment(20, "/prdup not-duplicate 21", author="m", association="MEMBER")
    comment_on_pull(client, 21, story.path, db_path)
    comment_on_pull(client, 20, story.path, db_path)

    server.set_labels(21, [])
    comment_on_pull(client, 21, story.path, db_path)

    assert pairs(db_path) == {(21, 20), (20, 21)}  # the command on #20 still says so
    assert 20 not in reported(story, db_path, 21)


# The schema version just before dismissals remembered their source.
BEFORE_DISMISSAL_SOURCES = MIGRATIONS.index(_dismissals_from_github)


def test_dismissals_of_an_older_index_keep_counting_and_a_label_still_takes_its_own_back(
    story: RepoBuilder, db_path: Path, server: FakeGitHub, client: GitHubClient
):
    """An index from before dismissals knew their source: rows by "label" are the label's,
    the others a command's; an import interrupted then is listed again from its oldest PR."""
    index(story, db_path)
    with IndexStore(db_path) as store:
        store.conn.executescript(
            f"""
            DROP TABLE dismissals;
            DROP TABLE github_pulls;
            DROP TABLE acknowledged_commands;
            CREATE TABLE dismissals (number INTEGER NOT NULL, other INTEGER NOT NULL, by TEXT,
                at TEXT, PRIMARY KEY (number, other));
            INSERT INTO dismissals VALUES (21, 20, 'label', NULL), (20, 21, 'label', NULL),
                (22, 20, 'maint', NULL), (20, 22, 'maint', NULL);
            INSERT INTO meta VALUES ('{watermark_key(REPO)}', '2024-03-05T00:00:00Z'),
                ('github:{REPO}:pending', '[[22, "2024-01-01T22:00:00Z", "t", "open"]]');
            UPDATE meta SET value = '{BEFORE_DISMISSAL_SOURCES}' WHERE key = 'schema_version';
            """
        )

    assert 20 not in reported(story, db_path, 21)  # opening it migrates the table
    assert set(import_metadata(REPO, story.path, db_path, client=client)) == {22}
    server.set_labels(21, [])
    comment_on_pull(client, 21, story.path, db_path)

    assert pairs(db_path) == {(22, 20), (20, 22)}
    with IndexStore(db_path) as store:
        assert store.get_meta(f"github:{REPO}:pending") is None
