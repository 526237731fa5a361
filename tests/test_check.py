"""`prdup check` end to end: real repositories, a real index, the real CLI.

The story: `Pipeline.__init__` still reads the legacy flag `config.enable_cpu_offload`. PR 10
(merged) makes it ask a strategy resolver. A contributor, on a branch from an older commit,
makes the same fix with different code and runs `prdup check` before opening a PR.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.repo_builder import RepoBuilder, run_cli

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

    def run(self, prompt, steps=20):
        self.log.info("running %s steps", steps)
        result = [prompt] * steps
        return result
"""
LEGACY = "        if config.enable_cpu_offload:\n"
MERGED_FIX = "        if OffloadStrategy.resolve(config).wants_cpu_offload:\n"
BRANCH_FIX = "        if resolve_offload_strategy(config) == 'cpu':\n"
HELPERS = """

def describe(pipeline):
    return f"pipeline ready={pipeline.ready}"
"""


def run(repo: Path, *args: str, input: str | None = None) -> tuple[int, str, str]:
    return run_cli(repo, *args, input=input)


def findings(repo: Path, *args: str) -> list[dict]:
    code, out, err = run(repo, "check", "--format", "json", *args)
    assert code in (0, 1), err
    return json.loads(out)["findings"]


@pytest.fixture
def story(builder: RepoBuilder) -> RepoBuilder:
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "helpers.py": HELPERS})
    builder.commit("Unrelated docs", {"README.md": "The pipeline.\n"})
    old_base = builder.head()
    builder.pr_branch(
        10,
        [
            (
                "Ask the offload strategy instead of the legacy flag",
                {"pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)},
            )
        ],
    )
    builder.merge_pr(10, how="squash")
    builder.commit("More docs", {"README.md": "The pipeline, documented.\n"})
    builder.checkout("contributor", old_base)
    builder.commit(
        "Stop reading enable_cpu_offload in Pipeline",
        {"pipeline.py": PIPELINE.replace(LEGACY, BRANCH_FIX)},
    )
    builder.checkout("main")
    return builder


def test_branch_already_fixed_by_a_merged_pr_says_already_done(story: RepoBuilder):
    code, _, err = run(story.path, "index", "--quiet")
    assert code == 0, err

    code, out, _ = run(story.path, "check", "contributor")
    assert code == 1
    assert "Already done in #10" in out
    assert "pipeline.py" in out
    assert "Pipeline.__init__" in out
    assert "if config.enable_cpu_offload:" in out

    best = findings(story.path, "contributor")[0]
    assert best["pr"] == 10
    assert best["verdict"] == "already-merged"
    assert best["state"] == "merged"
    assert best["score"] >= 0.5
    assert "if config.enable_cpu_offload:" in best["shared_removed_lines"]


def test_same_fix_in_an_open_pr_is_a_duplicate(builder: RepoBuilder):
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "helpers.py": HELPERS})
    builder.pr_branch(
        20,
        [("Use the strategy resolver", {"pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)})],
    )
    builder.pr_branch(
        21,
        [("Stop reading the legacy flag", {"pipeline.py": PIPELINE.replace(LEGACY, BRANCH_FIX)})],
    )
    run(builder.path, "index", "--quiet")

    best = findings(builder.path, "--pr", "21")[0]
    assert (best["pr"], best["verdict"], best["state"]) == (20, "duplicate", "unmerged")


def test_an_open_pr_too_large_to_index_whole_does_not_decide(
    builder: RepoBuilder, monkeypatch: pytest.MonkeyPatch
):
    """PR 20 makes the same fix and carries a generated file past `max_unmerged_lines`: it is
    stored cut, so how much of it PR 21 makes is unknown. It is named, not called a duplicate."""
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "helpers.py": HELPERS})
    generated = "".join(f"TABLE_{i} = {i * 7}\n" for i in range(400))
    builder.pr_branch(
        20,
        [
            (
                "Use the strategy resolver, and the tables",
                {"pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX), "tables.py": generated},
            )
        ],
    )
    builder.pr_branch(
        21,
        [("Stop reading the legacy flag", {"pipeline.py": PIPELINE.replace(LEGACY, BRANCH_FIX)})],
    )
    monkeypatch.setenv("PRDUP_MAX_UNMERGED_LINES", "100")
    run(builder.path, "index", "--quiet")

    named = {f["pr"]: f for f in findings(builder.path, "--pr", "21", "--min-score", "0")}
    assert named[20]["verdict"] not in ("duplicate", "covered", "already-merged", "partly-merged")
    assert any("too large to be indexed whole" in reason for reason in named[20]["reasons"])


def test_the_same_patch_as_an_open_pr_read_only_in_part_is_still_a_duplicate(
    builder: RepoBuilder, monkeypatch: pytest.MonkeyPatch
):
    """PR 20 is past `max_unmerged_lines`: the index read its diff only up to the limit, so it
    stored no patch identity. PR 21 is the very same patch, opened again: it changes exactly
    PR 20's files, so `check` reads PR 20 whole from git, and the same patch decides."""
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "helpers.py": HELPERS})
    same = {
        "pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX),
        "tables.py": "".join(f"TABLE_{i} = {i * 7}\n" for i in range(400)),
    }
    builder.pr_branch(20, [("Use the strategy resolver, and the tables", same)])
    builder.pr_branch(21, [("Use the strategy resolver, and the tables (again)", same)])
    monkeypatch.setenv("PRDUP_MAX_UNMERGED_LINES", "100")
    run(builder.path, "index", "--quiet")
    code, out, _ = run(builder.path, "show", "20")
    assert "too many changed lines" in out

    named = {f["pr"]: f for f in findings(builder.path, "--pr", "21", "--min-score", "0")}
    assert named[20]["verdict"] == "duplicate"


def test_a_pr_stored_cut_is_checked_with_its_whole_diff(
    builder: RepoBuilder, monkeypatch: pytest.MonkeyPatch
):
    """PR 30 makes #20's fix in a file it also grows past `max_unmerged_lines`: the index keeps
    none of that file's lines, but `check --pr 30` reads the whole diff from git."""
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "helpers.py": HELPERS})
    base = builder.head()
    builder.pr_branch(
        20,
        [("Use the strategy resolver", {"pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)})],
    )
    builder.merge_pr(20, how="merge")
    grown = PIPELINE.replace(LEGACY, MERGED_FIX) + "".join(
        f"STEP_{i} = {i * 3}\n" for i in range(300)
    )
    builder.pr_branch(30, [("Resolve the strategy, add steps", {"pipeline.py": grown})], start=base)
    monkeypatch.setenv("PRDUP_MAX_UNMERGED_LINES", "100")
    run(builder.path, "index", "--quiet")
    code, out, _ = run(builder.path, "show", "30")
    assert "too many changed lines" in out

    named = {f["pr"]: f for f in findings(builder.path, "--pr", "30", "--min-score", "0")}
    assert 20 in named
    assert any("removes 100% of the same lines" in reason for reason in named[20]["reasons"])


def test_subset_of_a_larger_merged_pr_is_already_done(builder: RepoBuilder):
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "helpers.py": HELPERS})
    base = builder.head()
    bigger = (
        PIPELINE.replace(LEGACY, MERGED_FIX)
        .replace(
            "        self.offloaded = True\n",
            "        self.offloaded = True\n"
            "        self.device_map = {'unet': 'cpu', 'vae': 'cpu'}\n",
        )
        .replace(
            "        result = [prompt] * steps\n", "        result = [prompt.strip()] * steps\n"
        )
    )
    builder.pr_branch(
        30,
        [
            (
                "Rework offloading",
                {
                    "pipeline.py": bigger,
                    "helpers.py": HELPERS.replace("ready=", "is ready: "),
                },
            )
        ],
    )
    builder.merge_pr(30, how="merge")
    builder.checkout("small", base)
    builder.commit("Only the flag", {"pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)})
    builder.checkout("main")
    run(builder.path, "index", "--quiet")

    best = findings(builder.path, "small")[0]
    assert (best["pr"], best["verdict"]) == (30, "already-merged")
    assert any("contained in #30, a larger change" in reason for reason in best["reasons"])


def test_unrelated_pr_in_the_same_function_is_no_duplicate(builder: RepoBuilder):
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "helpers.py": HELPERS})
    base = builder.head()
    builder.pr_branch(
        40,
        [
            (
                "Log readiness",
                {
                    "pipeline.py": PIPELINE.replace(
                        "        self.ready = True\n",
                        "        self.ready = True\n"
                        "        self.log.debug('pipeline constructed')\n",
                    )
                },
            )
        ],
    )
    builder.merge_pr(40, how="squash")
    builder.checkout("flagfix", base)
    builder.commit("Flag fix", {"pipeline.py": PIPELINE.replace(LEGACY, BRANCH_FIX)})
    builder.checkout("main")
    run(builder.path, "index", "--quiet")

    listed = findings(builder.path, "flagfix", "--min-score", "0")
    deciding = [f for f in listed if f["verdict"] in ("already-merged", "duplicate", "covered")]
    assert deciding == []
    code, out, _ = run(builder.path, "check", "flagfix")
    assert code == 0
    assert "nothing already covers" in out


def test_revert_of_a_merged_pr_is_not_already_done(builder: RepoBuilder):
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "helpers.py": HELPERS})
    builder.pr_branch(
        50, [("Use the resolver", {"pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)})]
    )
    builder.merge_pr(50, how="squash")
    builder.checkout("revert", "main")
    builder.git("revert", "--no-edit", "HEAD")
    builder.checkout("main")
    run(builder.path, "index", "--quiet")

    listed = findings(builder.path, "revert", "--min-score", "0")
    about_50 = [f for f in listed if f["pr"] == 50]
    assert about_50, "the revert should still be shown as touching #50"
    assert about_50[0]["verdict"] not in ("already-merged", "duplicate", "covered")
    assert any("undoes #50" in reason for reason in about_50[0]["reasons"])


def test_change_already_on_target_without_an_indexed_pr(story: RepoBuilder):
    """The index predates #10's landing: the probe still finds it on main, by pickaxe."""
    run(story.path, "index", "--quiet")
    story.checkout("main")
    story.commit(
        "Direct fix on main (#77)",
        {
            "pipeline.py": PIPELINE.replace(LEGACY, "").replace(
                "            self.enable_model_cpu_offload()\n", ""
            )
        },
    )
    story.checkout("contributor2", "contributor~1")
    story.commit(
        "Drop the legacy flag",
        {
            "pipeline.py": PIPELINE.replace(LEGACY, "").replace(
                "            self.enable_model_cpu_offload()\n", ""
            )
        },
    )
    story.checkout("main")

    code, out, err = run(story.path, "check", "contributor2")
    assert code == 1
    assert "Already done in #77" in out
    assert "behind main" in err  # and it says the index is stale


def test_landings_found_by_pickaxe_are_commits(story: RepoBuilder):
    """`git log -S` lists only commits: no diff line of its output becomes a finding."""
    run(story.path, "index", "--quiet")
    story.checkout("main")
    dropped = PIPELINE.replace(LEGACY, "").replace(
        "            self.enable_model_cpu_offload()\n", ""
    )
    story.commit("Direct fix on main (#77)", {"pipeline.py": dropped})
    story.checkout("contributor2", "contributor~1")
    story.commit("Drop the legacy flag", {"pipeline.py": dropped})
    story.checkout("main")

    done = [f for f in findings(story.path, "contributor2") if f["verdict"] == "already-merged"]
    assert [f["pr"] for f in done if f["pr"] not in (10,)] == [77]
    assert all(re.fullmatch("[0-9a-f]{40}", f["commit"] or "") for f in done)


def test_a_file_gone_from_the_target_is_no_sign_the_change_is_there(builder: RepoBuilder):
    """main replaced pipeline.py by another file: the lines the branch deletes from it are gone
    with the file, which says nothing about whether the branch's change was made."""
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "helpers.py": HELPERS})
    base = builder.head()
    builder.commit("More docs", {"README.md": "The pipeline.\n"})
    builder.checkout("contributor", base)
    offload_call = "            self.enable_model_cpu_offload()\n"
    builder.commit("Never offload", {"pipeline.py": PIPELINE.replace(LEGACY + offload_call, "")})
    builder.checkout("main")
    run(builder.path, "index", "--quiet")
    rewritten = PIPELINE.replace("class Pipeline", "class Engine").replace(LEGACY, "")
    builder.commit("Replace the pipeline (#80)", {"pipeline.py": None, "engine.py": rewritten})

    listed = findings(builder.path, "contributor", "--min-score", "0")
    assert not any(f["verdict"] == "already-merged" for f in listed)
    assert not any("already has this change" in r for f in listed for r in f["reasons"])


def test_json_is_the_documented_surface(story: RepoBuilder):
    run(story.path, "index", "--quiet")
    code, out, _ = run(story.path, "check", "contributor", "--format", "json", "--top", "1")
    data = json.loads(out)
    assert data["schema_version"] == 1
    assert data["query"]["kind"] == "branch"
    assert len(data["findings"]) == 1
    finding = data["findings"][0]
    assert set(finding) >= {"pr", "commit", "state", "verdict", "score", "reasons"}
    assert 0.0 <= finding["score"] <= 1.0

    code, out, _ = run(story.path, "check", "contributor", "--exit-zero")
    assert code == 0 and "Already done in #10" in out

    code, out, _ = run(story.path, "check", "contributor", "--format", "markdown")
    assert "| already-merged | #10 | merged |" in out


def test_check_a_patch_from_stdin(story: RepoBuilder):
    run(story.path, "index", "--quiet")
    patch = story.repo.git.diff("contributor~1", "contributor")
    code, out, _ = run(story.path, "check", "--diff", "-", "--format", "json", input=patch)
    assert code == 1
    assert json.loads(out)["findings"][0]["pr"] == 10


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["check", "no-such-branch"], None, "no-such-branch: no such branch or commit"),
        (["check", "--pr", "999"], None, "PR #999 is not in the index"),
        (["check", "--diff", "-"], "hello, this is not a patch\n", "not a unified diff"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(story: RepoBuilder, args, stdin, message):
    run(story.path, "index", "--quiet")
    code, _, err = run(story.path, *args, input=stdin)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


BINARY_PATCH = (
    "diff --git a/logo.png b/logo.png\nindex 1111111..2222222 100644\n"
    "Binary files a/logo.png and b/logo.png differ\n"
)


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["check", "--diff", "-"], "", "the diff is empty"),
        (["check", "--diff", "-"], BINARY_PATCH, "only binary changes"),
        (["check", "main"], None, "has no commits that main lacks"),
    ],
)
def test_nothing_to_compare_is_one_line_and_exit_0(story: RepoBuilder, args, stdin, message):
    run(story.path, "index", "--quiet")
    code, out, err = run(story.path, *args, input=stdin)
    assert (code, out) == (0, "")
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_pr_without_a_diff_still_gets_a_json_document(story: RepoBuilder):
    # PR 30 is a single root commit sharing no history with main: indexed without a diff.
    story.git("checkout", "-q", "--orphan", "site")
    story.git("rm", "-rqf", ".")
    story.git("update-ref", "refs/pull/30/head", story.commit("Publish the site", {"i.html": "x"}))
    story.checkout("main")
    story.git("branch", "-q", "-D", "site")
    run(story.path, "index", "--quiet")
    code, out, err = run(story.path, "check", "--pr", "30", "--format", "json")
    document = json.loads(out)
    assert code == 0
    assert document["findings"] == []
    assert "PR #30 is in the index without a diff" in document["nothing_to_compare"]
    assert "without a diff" in err


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["check", "--diff", "-"], BINARY_PATCH, "only binary changes"),
        (["check", "main"], None, "has no commits that main lacks"),
    ],
)
def test_nothing_to_compare_in_json_is_a_document(story: RepoBuilder, args, stdin, message):
    run(story.path, "index", "--quiet")
    code, out, _ = run(story.path, *args, "--format", "json", input=stdin)
    assert code == 0
    assert message in json.loads(out)["nothing_to_compare"]


def test_missing_index_says_how_to_build_it(story: RepoBuilder):
    code, _, err = run(story.path, "check", "contributor")
    assert code == 2
    assert "prdup index" in err
