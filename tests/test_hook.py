"""The pre-commit hook (`prdup pre-push`) and "nothing to compare" everywhere.

The story: PR 10 (merged) makes `Pipeline.__init__` ask a strategy resolver. A contributor makes
the same fix on a branch and pushes it; others push branches where there is nothing to compare.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.repo_builder import RepoBuilder, run_cli

ROOT = Path(__file__).resolve().parent.parent
PIPELINE = """class Pipeline:
    def __init__(self, config):
        self.config = config
        if config.enable_legacy_offload:
            self.enable_model_cpu_offload()
        self.ready = True
"""
MERGED_FIX = PIPELINE.replace(
    "config.enable_legacy_offload", "OffloadStrategy.resolve(config).wants_cpu_offload"
)
BRANCH_FIX = PIPELINE.replace(
    "config.enable_legacy_offload", "resolve_offload_strategy(config) == 'cpu'"
)


@pytest.fixture(autouse=True)
def _no_pre_commit_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF", "PRDUP_MIN_SCORE", "PRDUP_TOP"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def story(builder: RepoBuilder) -> RepoBuilder:
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "uv.lock": "a\n"})
    base = builder.head()
    builder.pr_branch(10, [("Ask the offload strategy", {"pipeline.py": MERGED_FIX})])
    builder.merge_pr(10, how="squash")
    builder.checkout("contributor", base)
    builder.commit("Stop reading the legacy flag", {"pipeline.py": BRANCH_FIX})
    builder.checkout("locks", "main")
    builder.commit("Bump the lockfile", {"uv.lock": "b\n"})
    builder.checkout("logo", "main")
    builder.commit("Add the logo", {"logo.png": b"\x89PNG\r\n\x1a\n\x00\x01"})
    builder.git("checkout", "-q", "--orphan", "gh-pages")
    builder.git("rm", "-rqf", ".")
    builder.commit("Publish the site", {"index.html": "<h1>Pipeline</h1>\n"})
    builder.checkout("main")
    return builder


def push(repo: RepoBuilder, branch: str, *args: str, monkeypatch: pytest.MonkeyPatch):
    """What pre-commit runs for `git push origin <branch>` to a remote that lacks it."""
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", repo.head("main~1"))
    monkeypatch.setenv("PRE_COMMIT_TO_REF", repo.head(branch))
    return run_cli(repo.path, "pre-push", *args)


def test_without_an_index_the_hook_notes_it_and_lets_the_push_go(
    story: RepoBuilder, monkeypatch: pytest.MonkeyPatch
):
    code, out, err = push(story, "contributor", monkeypatch=monkeypatch)
    assert (code, out) == (0, "")
    assert err.startswith("prdup: no index yet") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("branch", "note"),
    [
        ("main", "has no commits that main lacks; nothing to check"),  # the target itself
        ("locks", "no changed text lines; nothing to compare"),
        ("logo", "only binary changes; nothing to compare"),
        ("gh-pages", "shares no history with main; nothing to compare"),  # a site, not code
    ],
)
def test_nothing_to_compare_is_a_note_and_exit_0(
    story: RepoBuilder, monkeypatch: pytest.MonkeyPatch, branch: str, note: str
):
    run_cli(story.path, "index", "--quiet")
    for block in ((), ("--block",)):
        code, out, err = push(story, branch, *block, monkeypatch=monkeypatch)
        assert (code, out) == (0, ""), err
        assert note in err and len(err.strip().splitlines()) == 1


def test_findings_are_reported_and_block_only_when_asked(
    story: RepoBuilder, monkeypatch: pytest.MonkeyPatch
):
    run_cli(story.path, "index", "--quiet")
    # HEAD is main: the hook checks the pushed ref (PRE_COMMIT_TO_REF), not the checkout.
    code, out, err = push(story, "contributor", monkeypatch=monkeypatch)
    assert code == 0, err
    assert "#10  [merged" in out

    code, out, _ = push(story, "contributor", "--block", monkeypatch=monkeypatch)
    assert code == 1 and "#10  [merged" in out

    # A configuration written for the hook's earlier entry (`prdup check`) still works.
    code, out, _ = push(story, "contributor", "--exit-zero", monkeypatch=monkeypatch)
    assert code == 0 and "#10  [merged" in out

    monkeypatch.setenv("PRE_COMMIT_FROM_REF", story.head("contributor"))
    code, out, err = run_cli(story.path, "pre-push", "--block")  # nothing new on the remote
    assert (code, out) == (0, "") and "nothing to compare" in err


@pytest.mark.parametrize("exit_zero", [(), ("--exit-zero",)])
def test_check_with_nothing_to_compare_exits_0_with_a_note(
    story: RepoBuilder, exit_zero: tuple[str, ...]
):
    run_cli(story.path, "index", "--quiet")
    for rev in ("main", "locks", "logo"):
        code, out, err = run_cli(story.path, "check", rev, *exit_zero)
        assert (code, out) == (0, ""), err
        assert "nothing to c" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(story.path, "check", "--diff", "-", input="not a patch\n")
    assert code == 2 and "not a unified diff" in err  # a malformed patch stays an error


def test_the_hook_manifest():
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "prdup-check" and hook["entry"] == "prdup pre-push"
    assert hook["stages"] == ["pre-push"] and hook["pass_filenames"] is False
    assert hook["verbose"] is True  # pre-commit hides a passing hook's output otherwise
    major, minor, *_ = (int(part) for part in hook["minimum_pre_commit_version"].split("."))
    assert (major, minor) >= (3, 2)  # the stage is spelled `pre-push` since 3.2.0


def test_getting_started_shows_a_config_that_uses_the_hook():
    page = (ROOT / "docs" / "getting-started.md").read_text()  # the hook's section lives there
    [config] = [
        yaml.safe_load(block)
        for block in page.split("```yaml\n")[1:]
        for block in [block.split("```")[0]]
        if "repos:" in block
    ]
    [repo] = config["repos"]
    assert [hook["id"] for hook in repo["hooks"]] == ["prdup-check"]
    assert "default_install_hook_types" in config
