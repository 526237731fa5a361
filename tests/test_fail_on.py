"""Exit codes a CI job can gate on: only the verdicts `--fail-on` names fail (exit 1).

The story: Ada opens two PRs making the same cache fix (for her newer PR the earlier one is an
`overlap`, worth reading, not a failure; the earlier is a resubmission's `duplicate`, to
close); Bob's PR repeats Carol's landed pipeline fix (`already-merged`).
"""

from __future__ import annotations

import json

import pytest

from tests.repo_builder import RepoBuilder, run_cli
from tests.test_check import LEGACY, PIPELINE

FIX = "        if resolve_offload_strategy(config) == 'cpu':\n"
CACHE = "def cache_dir(config):\n    return config.get('cache', '/tmp/cache')\n"
CACHE_FIX = CACHE.replace("'/tmp/cache'", "default_cache_dir()")


@pytest.fixture
def story(tmp_path) -> RepoBuilder:
    builder = RepoBuilder(tmp_path / "repo")
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "cache.py": CACHE})
    base = builder.head()
    cached = {"cache.py": CACHE_FIX}
    builder.pr_branch(30, [("Use the platform's cache directory", cached)], author="Ada")
    builder.pr_branch(31, [("Cache where the platform says", cached)], start=base, author="Ada")
    fixed = {"pipeline.py": PIPELINE.replace(LEGACY, FIX)}
    builder.pr_branch(40, [("Stop reading the legacy flag", fixed)], start=base, author="Carol")
    builder.merge_pr(40, how="squash")
    builder.pr_branch(41, [("Drop the legacy flag", fixed)], start=base, author="Bob")
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    return builder


def verdicts(builder: RepoBuilder, *args: str) -> tuple[int, list[str]]:
    code, out, err = run_cli(builder.path, "check", "--format", "json", *args)
    assert code in (0, 1), err
    return code, [finding["verdict"] for finding in json.loads(out)["findings"]]


def test_an_overlap_alone_exits_0_and_fails_when_asked(story: RepoBuilder):
    code, found = verdicts(story, "--pr", "31")
    assert "overlap" in found and not {"already-merged", "duplicate", "covered"} & set(found)
    assert code == 0  # shown, not failing

    code, _ = verdicts(story, "--pr", "31", "--fail-on", "overlap")
    assert code == 1


def test_an_already_done_change_fails_unless_told_never(story: RepoBuilder):
    code, found = verdicts(story, "--pr", "41")
    assert found[0] == "already-merged" and code == 1

    assert verdicts(story, "--pr", "41", "--fail-on", "none")[0] == 0
    assert verdicts(story, "--pr", "41", "--fail-on", "duplicate,covered")[0] == 0
    assert verdicts(story, "--pr", "41", "--exit-zero")[0] == 0


def test_the_settings_file_says_what_fails_and_a_flag_overrides_it(story: RepoBuilder):
    (story.path / ".prdup.toml").write_text('fail-on = ["overlap"]\n')
    assert verdicts(story, "--pr", "31")[0] == 1
    assert verdicts(story, "--pr", "41")[0] == 0  # already-merged is not in the file's list
    assert verdicts(story, "--pr", "41", "--fail-on", "already-merged")[0] == 1


@pytest.mark.parametrize("given", ["duplicat", "none,overlap", "already merged"])
def test_a_misspelt_verdict_is_a_one_line_error(story: RepoBuilder, given: str):
    code, out, err = run_cli(story.path, "check", "--pr", "41", "--fail-on", given)
    assert code == 2 and out == ""
    [line] = err.strip().splitlines()
    assert "--fail-on" in line and "already-merged" in line  # names the valid verdicts


def test_the_sweep_exits_by_the_verdicts_it_shows(story: RepoBuilder):
    code, out, err = run_cli(story.path, "sweep", "--format", "json")
    done = [entry["pr"] for entry in json.loads(out)["already_done"]]
    assert done == [41] and code == 1, err
    # The exit is the findings', not an error, and stderr says so in its last line.
    assert err.splitlines()[-1] == (
        "prdup: exit 1: some answers are already-merged, duplicate (--fail-on; --exit-zero exits 0)"
    )

    code, out, err = run_cli(story.path, "sweep", "--format", "json", "--fail-on", "duplicate")
    # Ada's two PRs are one patch resubmitted: the older, #30, is to close into #31.
    groups = {g["keep"]: [m["pr"] for m in g["members"]] for g in json.loads(out)["groups"]}
    assert groups == {31: [31, 30]} and code == 1, err

    code, _, err = run_cli(story.path, "sweep", "--format", "json", "--fail-on", "covered")
    assert code == 0, err  # nothing is covered by an open PR


def test_the_pre_push_hook_blocks_only_on_a_failing_verdict(story: RepoBuilder):
    story.checkout("pr-31")
    code, out, _ = run_cli(story.path, "pre-push", "--block")
    assert "#30" in out and code == 0  # her own earlier PR is shown, the push goes on

    story.checkout("pr-41")
    assert run_cli(story.path, "pre-push", "--block")[0] == 1
    assert run_cli(story.path, "pre-push")[0] == 0  # without --block the hook only tells
