""" "Already done in #N" is said only where replaying the change at #N proves it.

Each story is a real repository built in a temporary folder, indexed for real, and checked
through the CLI; what is read is the verdict a maintainer would see.
"""

from __future__ import annotations

import json
from pathlib import Path

from detector.model import parse_patch
from detector.replay import FileVersions, file_kind, replay
from tests.repo_builder import RepoBuilder, run_cli
from tests.test_check import LEGACY, PIPELINE

DECIDING = ("already-merged", "duplicate", "covered", "partly-merged")
PIPELINE_PY = "pipelines/pipeline.py"

# The merged fix asks the strategy resolver through its class.
MERGED_FIX = "        if OffloadStrategy.resolve(config).wants_cpu_offload:\n"
MERGED_IMPORT = "from pipelines.strategy import OffloadStrategy\n"
# The contributor's fix calls a resolver function, imported over several lines.
BRANCH_FIX = "        if resolve_offload_strategy(config) == 'cpu':\n"
BRANCH_IMPORT = "from pipelines.strategy import (\n    resolve_offload_strategy,\n)\n"
IMPORT_ANCHOR = "import logging\n"
TEST_FILE = """from pipelines.pipeline import Pipeline


def test_legacy_flag_is_ignored():
    config = {"legacy_offload": True}
    assert Pipeline(config).ready
"""


def check_json(repo: Path, *args: str) -> tuple[int, list[dict]]:
    from tests.test_verdict_accounting import assert_reasons_agree

    code, out, err = run_cli(repo, "check", "--format", "json", "--min-score", "0", *args)
    assert code in (0, 1), err
    found = json.loads(out)["findings"]
    assert_reasons_agree(found)  # every story's findings: a verdict is what its reasons say
    return code, found


def index(builder: RepoBuilder) -> None:
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err


def deciding(found: list[dict]) -> list[tuple[int | None, str]]:
    return [(f["pr"], f["verdict"]) for f in found if f["verdict"] in DECIDING]


def test_the_seed_case_a_fix_written_differently_with_a_test_is_already_done(
    builder: RepoBuilder,
):
    """The case prdup exists for: a branch cut before the merged fix makes the same fix with
    other code, imports its resolver over several lines and adds a test file, so the one
    removed line is a small share of the change. Another contributor's open PR makes the
    branch's edit too."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    old_base = builder.head()
    merged = PIPELINE.replace(LEGACY, MERGED_FIX).replace(
        IMPORT_ANCHOR, IMPORT_ANCHOR + MERGED_IMPORT
    )
    builder.pr_branch(10, [("Ask the offload strategy", {"pipelines/pipeline.py": merged})])
    builder.merge_pr(10, how="merge")
    builder.commit("Docs", {"README.md": "Pipelines.\n"})
    branch = PIPELINE.replace(LEGACY, BRANCH_FIX).replace(
        IMPORT_ANCHOR, IMPORT_ANCHOR + BRANCH_IMPORT
    )
    builder.pr_branch(
        11,
        [("Stop reading legacy_offload", {"pipelines/pipeline.py": branch})],
        start=old_base,
    )
    builder.checkout("contributor", old_base)
    builder._author = "Grace"  # authors differ, as in real life
    builder.commit(
        "Stop reading the legacy offload flag",
        {"pipelines/pipeline.py": branch, "tests/test_pipeline.py": TEST_FILE},
    )
    builder.checkout("main")
    index(builder)

    code, found = check_json(builder.path, "contributor")
    assert code == 1
    first = found[0]
    assert (first["pr"], first["verdict"]) == (10, "already-merged")
    assert any("already there" in reason for reason in first["reasons"])
    assert first["residual"] == ["tests/test_pipeline.py (new file)"]
    assert (11, "duplicate") in deciding(found)

    code, out, _ = run_cli(builder.path, "check", "contributor")
    assert code == 1
    assert out.splitlines()[2].startswith("Already done in #10")
    assert "tests/test_pipeline.py (new file)" in out


def test_a_branch_that_carries_a_landed_commit_is_partly_done_and_names_what_remains(
    builder: RepoBuilder,
):
    """A stale base: the branch was cut from #20's branch before #20 was squashed, so it carries
    #20's commit; its own work, one script, is not on main."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    merged = PIPELINE.replace(LEGACY, MERGED_FIX)
    builder.pr_branch(20, [("Ask the offload strategy", {"pipelines/pipeline.py": merged})])
    builder.checkout("stale", "pr-20")
    builder._author = "Grace"
    builder.commit(
        "Add a benchmark script",
        {
            "scripts/bench.py": (
                "import time\n\nstarted = time.time()\nprint(time.time() - started)\n"
            )
        },
    )
    builder.checkout("main")
    builder.merge_pr(20, how="squash")
    index(builder)

    code, found = check_json(builder.path, "stale")
    assert code == 0  # worth reading, not a failure unless asked (--fail-on partly-merged)
    assert (found[0]["pr"], found[0]["verdict"]) == (20, "partly-merged")
    assert found[0]["residual"] == ["scripts/bench.py (new file)"]
    code, out, _ = run_cli(builder.path, "check", "stale")
    assert "Partly done in #20" in out
    assert "still to do: scripts/bench.py (new file)" in out


RUNNER = "".join(
    f"    def step_{n}(self, batch):\n        return self.device.run_kernel({n}, batch)\n\n"
    for n in range(8)
)


def test_a_new_backend_that_copies_another_backends_runner_is_not_already_done(
    builder: RepoBuilder,
):
    builder.commit("Backends", {"backends/__init__.py": "BACKENDS = ['cpu']\n"})
    builder.pr_branch(
        5,
        [
            (
                "Add the CUDA backend",
                {
                    "backends/cuda/runner.py": f"class CudaRunner:\n{RUNNER}",
                    "backends/__init__.py": "BACKENDS = ['cpu', 'cuda']\n",
                },
            )
        ],
    )
    builder.merge_pr(5, how="squash")
    builder.checkout("npu", "main")
    builder._author = "Grace"
    builder.commit(
        "Add the NPU backend",
        {
            "backends/npu/runner.py": f"class NpuRunner:\n{RUNNER}",
            "backends/__init__.py": "BACKENDS = ['cpu', 'cuda', 'npu']\n",
        },
    )
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "npu")
    assert deciding(found) == []


LOOP = """def publish(items, ready):
    for item in items:
        item.prepare()
        item.send()
    return len(items)
"""


def test_two_changes_that_reindent_the_same_loop_for_different_purposes_are_not_the_same(
    builder: RepoBuilder,
):
    builder.commit("Publishing", {"publish.py": LOOP})
    base = builder.head()
    guarded = LOOP.replace(
        "    for item in items:\n        item.prepare()\n        item.send()\n",
        "    if ready:\n        for item in items:\n            item.prepare()\n"
        "            item.send()\n",
    )
    builder.pr_branch(30, [("Publish only when ready", {"publish.py": guarded})])
    builder.merge_pr(30, how="squash")
    builder.checkout("retry", base)
    builder._author = "Grace"
    retried = LOOP.replace(
        "    for item in items:\n        item.prepare()\n        item.send()\n",
        "    with retrying():\n        for item in items:\n            item.prepare()\n"
        "            item.send()\n",
    )
    builder.commit("Retry publishing", {"publish.py": retried})
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "retry")
    assert deciding(found) == []


SETTINGS = """def load(path):
    value = compute(path)
    return value


def compute(path):
    return len(path)
"""


def test_an_old_pr_whose_lines_were_rewritten_later_for_another_purpose_is_not_done(
    builder: RepoBuilder,
):
    """The tip no longer has the old PR's removed line, because a later rename rewrote it:
    the lines being gone name no landing, and the rename does not make the old PR's edit."""
    builder.commit("Settings", {"settings.py": SETTINGS})
    builder.pr_branch(
        40,
        [
            (
                "Compute strictly",
                {
                    "settings.py": SETTINGS.replace(
                        "compute(path)\n", "compute(path, strict=True)\n"
                    )
                },
            )
        ],
    )
    renamed = (
        SETTINGS.replace("value = compute(path)", "result = calculate(path)")
        .replace("return value", "return result")
        .replace("def compute(path)", "def calculate(path)")
    )
    builder.pr_branch(45, [("Rename compute to calculate", {"settings.py": renamed})])
    builder.merge_pr(45, how="squash")
    index(builder)

    _, found = check_json(builder.path, "--pr", "40")
    assert deciding(found) == []
    # The sweep gives check's answer: #40 is not listed as already done.
    code, out, err = run_cli(builder.path, "sweep", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["already_done"] == []


def test_the_sweep_replays_in_a_mirror_without_a_config_file(builder: RepoBuilder, tmp_path: Path):
    """Mirrors fetched as snapshots may lack `config`; the sweep still replays there."""
    test_an_old_pr_whose_lines_were_rewritten_later_for_another_purpose_is_not_done(builder)
    mirror = tmp_path / "mirror.git"
    builder.git("clone", "-q", "--mirror", str(builder.path), str(mirror))
    (mirror / "config").unlink()
    db = tmp_path / "mirror.db"
    code, _, err = run_cli(builder.path, "index", str(mirror), "--db", str(db), "--quiet")
    assert code == 0, err
    code, out, err = run_cli(
        builder.path, "sweep", "--repo", str(mirror), "--db", str(db), "--format", "json"
    )
    assert code == 0, err
    assert json.loads(out)["already_done"] == []


def test_a_backport_names_the_original_first(builder: RepoBuilder):
    """#50 fixed main; #53 opened the identical fix later; #54 backports it to 3.12. The
    original is named first, and a backport is never "already done"."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    start = builder.head()
    builder.checkout("3.12", "main")
    builder.commit("Release 3.12.0", {"VERSION": "3.12.0\n"})
    builder.checkout("main")
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.pr_branch(50, [("Ask the offload strategy", fixed)])
    builder.merge_pr(50, how="squash")
    builder.pr_branch(53, [("Use the offload strategy", fixed)], start=start)
    builder.pr_branch(54, [("[3.12] Ask the offload strategy", fixed)], base="3.12")
    bases = {50: ("main", "MERGED"), 53: ("main", "OPEN"), 54: ("3.12", "OPEN")}
    prs_json = builder.path / "prs.json"
    prs_json.write_text(
        json.dumps([{"number": n, "baseRefName": b, "state": s} for n, (b, s) in bases.items()])
    )
    flags = ["--prs-json", str(prs_json), "--target", "main", "--target", "3.12"]
    code, _, err = run_cli(builder.path, "index", "--quiet", *flags)
    assert code == 0, err

    _, found = check_json(builder.path, "--pr", "54")
    assert found[0]["pr"] == 50
    assert deciding(found) == []


# --- the replay itself, on plain text -----------------------------------------------------

BEFORE = "a = 1\nb = read_flag(config)\nc = 3\n"


def _replayed(diff: str, base: str, before: str | None, after: str | None):
    change = parse_patch(diff)
    lines = lambda text: None if text is None else text.splitlines()  # noqa: E731
    versions = {
        f.path: FileVersions(lines(base), lines(before), lines(after)) for f in change.files
    }
    return replay(change, versions, "c0ffee")


DIFF = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -2 +2 @@
-b = read_flag(config)
+b = resolve_strategy(config)
"""


def test_a_hunk_is_there_only_where_its_result_is_and_its_removed_lines_are_not():
    done = _replayed(DIFF, BEFORE, BEFORE, BEFORE.replace("read_flag", "resolve_strategy"))
    assert done.complete and done.hunks[0].how == "identical"
    # Already there before the candidate: the candidate did not do it.
    earlier = BEFORE.replace("read_flag", "resolve_strategy")
    assert not _replayed(DIFF, BEFORE, earlier, earlier).complete
    # Rewritten for another purpose: the removed line is gone, the result is not there.
    rewritten = BEFORE.replace("b = read_flag(config)", "flag = 2")
    assert not _replayed(DIFF, BEFORE, BEFORE, rewritten).complete


def test_the_same_lines_replaced_with_the_same_names_is_the_same_fix():
    other = BEFORE.replace("b = read_flag(config)", "b = StrategyResolver(config).resolve()")
    same = _replayed(DIFF, BEFORE, BEFORE, other)
    assert same.complete and same.hunks[0].how == "same-names"
    bumped = BEFORE.replace("b = read_flag(config)", "b = read_flag(config, 2)")
    assert not _replayed(DIFF, BEFORE, BEFORE, bumped).complete


GO_BEFORE = """func create(err error) error {
	if err != nil {
		return fmt.Errorf("create failed: %s", err)
	}
	return nil
}
"""
SKIP_EXISTING = """diff --git a/m.go b/m.go
--- a/m.go
+++ b/m.go
@@ -3 +3,3 @@
-		return fmt.Errorf("create failed: %s", err)
+		if awsErr, ok := err.(awserr.Error); ok && awsErr.Code() != "AlreadyExists" {
+			return fmt.Errorf("create failed: %s", err)
+		}
"""


def test_the_same_names_around_another_value_or_the_opposite_test_are_another_change():
    """Two fixes of one error path: one skips "AlreadyExists", the other reports it; two
    settings changes: one renames the variable read, the other adds a second one."""
    reports = GO_BEFORE.replace(
        '\t\treturn fmt.Errorf("create failed: %s", err)\n',
        '\t\tif awsErr, ok := err.(awserr.Error); ok && awsErr.Code() == "AlreadyExists" {\n'
        '\t\t\treturn fmt.Errorf("create failed: %s: it exists", err)\n\t\t}\n'
        '\t\treturn fmt.Errorf("create failed: %s", err)\n',
    )
    assert not _replayed(SKIP_EXISTING, GO_BEFORE, GO_BEFORE, reports).complete
    skips = GO_BEFORE.replace(
        '\t\treturn fmt.Errorf("create failed: %s", err)\n',
        '\t\tif e, ok := err.(awserr.Error); !ok || e.Code() != "AlreadyExists" {\n'
        '\t\t\treturn fmt.Errorf("create failed: %s", err)\n\t\t}\n',
    )
    assert _replayed(SKIP_EXISTING, GO_BEFORE, GO_BEFORE, skips).complete

    settings = 'x = 1\nDefault = env_default("CREDENTIALS", None)\ny = 2\n'
    rename = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -2 +2 @@
-Default = env_default("CREDENTIALS", None)
+Default = env_default("KEYFILE", None)
"""
    also = settings.replace(
        'env_default("CREDENTIALS", None)', 'multi_env_default(["CREDENTIALS", "KEYFILE_JSON"])'
    )
    assert not _replayed(rename, settings, settings, also).complete
    same = settings.replace('env_default("CREDENTIALS", None)', "env_default('KEYFILE')")
    assert _replayed(rename, settings, settings, same).complete


CALLS = """def serve(stream):
    if stream:
        return stream_generator(
            request,
            metadata,
            include_usage=True,
        )
    else:
        return full_generator(
            request,
            metadata,
        )
"""
DROP_ARGUMENT = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -6 +5,0 @@ def serve(stream):
-            include_usage=True,
"""


def test_a_removal_is_done_only_where_its_result_is_made_not_where_it_already_was():
    """Dropping an argument from one call: with less context its result is two ordinary lines
    that a sibling call already has. A candidate that replaced the whole call with an error
    (for another purpose) did not drop the argument; one that dropped it did."""
    replaced = CALLS.replace(
        "        return stream_generator(\n            request,\n            metadata,\n"
        "            include_usage=True,\n        )\n",
        "        raise RuntimeError('no streaming')\n",
    )
    assert replaced != CALLS
    assert not _replayed(DROP_ARGUMENT, CALLS, CALLS, replaced).complete
    dropped = CALLS.replace("            include_usage=True,\n", "")
    assert _replayed(DROP_ARGUMENT, CALLS, CALLS, dropped).complete


GO_IMPORTS = 'import (\n\t"fmt"\n)\n\n' + GO_BEFORE
JOIN_ERRORS = """diff --git a/m.go b/m.go
--- a/m.go
+++ b/m.go
@@ -2,0 +3 @@ import (
+	"errors"
@@ -7 +8 @@ func create(err error) error {
-		return fmt.Errorf("create failed: %s", err)
+		return errors.Join(err, errCreate)
"""


def test_an_import_the_candidate_also_added_is_no_part_of_the_change_on_its_own():
    """Both add the `errors` import; the candidate wraps the error otherwise. The import alone
    does not make the change partly done; beside the same fix it counts."""
    wrapped = GO_IMPORTS.replace('\t"fmt"\n', '\t"errors"\n\t"fmt"\n').replace(
        'fmt.Errorf("create failed: %s", err)', 'fmt.Errorf("create: %w", err)'
    )
    done = _replayed(JOIN_ERRORS, GO_IMPORTS, GO_IMPORTS, wrapped)
    assert not done.partial and not done.complete
    joined = GO_IMPORTS.replace('\t"fmt"\n', '\t"errors"\n\t"fmt"\n').replace(
        'fmt.Errorf("create failed: %s", err)', "errors.Join(err, errCreate)"
    )
    assert _replayed(JOIN_ERRORS, GO_IMPORTS, GO_IMPORTS, joined).complete
    # A change that is nothing but the missing import is done where the candidate added it.
    only_import = JOIN_ERRORS.split("@@ -7")[0]
    assert _replayed(only_import, GO_IMPORTS, GO_IMPORTS, wrapped).complete
    # Unused imports removed: where the candidate removed one of the two, half is done.
    imports = 'import (\n\t"fmt"\n\t"os"\n\t"sort"\n\t"strings"\n)\n'
    unused = (
        "diff --git a/m.go b/m.go\n--- a/m.go\n+++ b/m.go\n"
        '@@ -3 +2,0 @@ import (\n-\t"os"\n@@ -5 +3,0 @@ import (\n-\t"strings"\n'
    )
    halfway = _replayed(unused, imports, imports, imports.replace('\t"os"\n', ""))
    assert halfway.partial and not halfway.complete


def test_file_kinds():
    assert file_kind("tests/test_pipeline.py") == "test"
    assert file_kind("pkg/module_test.go") == "test"
    assert file_kind("changelogs/fragments/fix.yml") == "docs"
    assert file_kind(".changes/v1.6/BUG FIXES-20231107-101134.yaml") == "docs"
    assert file_kind("docs/index.rst") == "docs"
    assert file_kind("lib/ansible/module.py") == "code"
    assert file_kind("test-requirements.txt") == "code"  # its pins are the change
    assert file_kind("requirements/docs.txt") == "code"
    assert file_kind("tests/fixtures/package.json") == "test"


def test_an_open_pr_carrying_a_copy_of_a_merged_commit_is_no_duplicate_of_it(
    builder: RepoBuilder,
):
    """#60's branch picked up a copy of #61's landed commit (a rebase onto a stale upstream):
    its head has #61's fix, but not as work of its own. Asked about #61, or about #62 making
    the same fix late, #60 is no duplicate."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    start = builder.head()
    builder.pr_branch(60, [("Add docs", {"docs/pipeline.md": "# Pipeline\n\nHow it runs.\n"})])
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.pr_branch(61, [("Ask the offload strategy", fixed)])
    landed = builder.merge_pr(61, how="squash")
    builder.pr_branch(62, [("Use the offload strategy", fixed)], start=start)
    builder.checkout("pr-60")
    builder.git("cherry-pick", landed)
    builder.git("update-ref", "refs/pull/60/head", "HEAD")
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "--pr", "61")
    assert 60 not in {pr for pr, _ in deciding(found)}
    _, found = check_json(builder.path, "--pr", "62")
    assert deciding(found) == [(61, "already-merged")]


def test_a_pr_stacked_on_another_prs_new_file_did_not_write_that_file():
    """The query creates a file; the candidate, stacked on it, adds one line to that file."""
    body = "".join(f"setting_{n} = {n}\n" for n in range(6))
    diff = "diff --git a/conf.py b/conf.py\nnew file mode 100644\n--- /dev/null\n+++ b/conf.py\n"
    diff += "@@ -0,0 +1,7 @@\n" + "".join(f"+{line}\n" for line in body.splitlines())
    diff += "+extra = True\n"
    stacked = _replayed(diff, "", body, body + "extra = True\n")
    assert not stacked.complete
    written = _replayed(diff, "", None, body + "extra = True\n")
    assert written.complete


def test_a_hunk_whose_code_lines_the_candidate_wrote_is_done_whatever_its_comments():
    base = "def total(files):\n    body = ''\n    return count(files)\n"
    diff = (
        "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -2,0 +3,2 @@\n"
        "+    # declared here so later code never sees it unset\n+    total_files = 0\n"
    )
    theirs = base.replace("    body = ''\n", "    body = ''\n    extra = 1\n    total_files = 0\n")
    assert _replayed(diff, base, base, theirs).complete
    elsewhere = base + "\n\ndef other():\n    total_files = 0\n"
    assert _replayed(diff, base, elsewhere, elsewhere).complete is False


def test_a_branch_that_squashed_main_into_one_big_commit_covers_nothing(builder: RepoBuilder):
    """#70 squashed main (with #71's fix) and its own work into one large commit: the fix is a
    sliver of it, carried along, not made there."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    start = builder.head()
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.pr_branch(71, [("Ask the offload strategy", fixed)])
    builder.merge_pr(71, how="squash")
    bulk = {f"plugins/p{n}.py": f"NAME_{n} = 'plugin {n}'\nORDER_{n} = {n}\n" for n in range(30)}
    builder.pr_branch(70, [("Plugins, with main squashed in", {**fixed, **bulk})], start=start)
    builder.pr_branch(72, [("Use the offload strategy", fixed)], start=start)
    index(builder)

    _, found = check_json(builder.path, "--pr", "72")
    assert deciding(found) == [(71, "already-merged")]
    [about_70] = [f for f in found if f["pr"] == 70]
    assert any("carried along, not made there" in reason for reason in about_70["reasons"])


def test_a_candidate_commit_whose_objects_the_clone_lacks_does_not_stop_the_check(
    builder: RepoBuilder,
):
    """#91 landed the fix; #92 proposes it again beside a file whose blob this clone lacks
    (an incomplete mirror). Checking #93, the same fix, still answers, from what git reads."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    start = builder.head()
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.pr_branch(91, [("Ask the offload strategy", fixed)])
    builder.merge_pr(91)
    builder.pr_branch(
        92,
        [("Ask the offload strategy too", fixed), ("Add notes", {"notes.txt": "unread\n"})],
        start=start,
    )
    builder.pr_branch(93, [("Use the offload strategy", fixed)], start=start)
    index(builder)
    builder.delete_blob("refs/pull/92/head:notes.txt")

    code, found = check_json(builder.path, "--pr", "93")

    assert code == 1
    assert (91, "already-merged") in deciding(found)


def test_a_later_change_that_restores_a_merged_fix_did_not_do_it_first(builder: RepoBuilder):
    """#80 landed the fix; #81 lost it; #82 reverted #81. Asked about #80, #82 is no answer."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.pr_branch(80, [("Ask the offload strategy", fixed)])
    builder.merge_pr(80, how="squash")
    builder.pr_branch(81, [("Rework offloading", {"pipelines/pipeline.py": PIPELINE})])
    builder.merge_pr(81, how="squash")
    builder.pr_branch(82, [("Revert the offloading rework", fixed)])
    builder.merge_pr(82, how="squash")
    index(builder)

    _, found = check_json(builder.path, "--pr", "80")
    assert 82 not in {pr for pr, _ in deciding(found)}


FIVE = "".join(f"def step_{n}(value):\n    return value + {n}\n\n\n" for n in range(5))


def test_an_open_pr_that_makes_most_of_the_change_is_a_duplicate_naming_what_it_lacks(
    builder: RepoBuilder,
):
    builder.commit("Steps", {"steps.py": FIVE})
    start = builder.head()
    ours = FIVE
    for n in range(5):
        ours = ours.replace(f"return value + {n}\n", f"return checked(value) + {n}\n")
    theirs = ours.replace("return checked(value) + 4\n", "return value * 4\n")
    builder.pr_branch(93, [("Check every step's value", {"steps.py": theirs})], start=start)
    builder.pr_branch(94, [("Validate step values", {"steps.py": ours})], start=start)
    index(builder)

    _, found = check_json(builder.path, "--pr", "94")
    first = found[0]
    assert (first["pr"], first["verdict"]) == (93, "duplicate")
    assert first["residual"] == ["steps.py (line 18)"]
    assert any("4 of 5 hunk(s) are already there" in reason for reason in first["reasons"])


def test_rules_that_override_a_complete_replay():
    """A replay that turned still decides nothing where history says the candidate cannot be
    the earlier change: the query's own landing, a landing after the query's, a port."""
    from detector.decide import proven_verdict
    from detector.evidence import Proof, Signals

    done = _replayed(DIFF, BEFORE, BEFORE, BEFORE.replace("read_flag", "resolve_strategy"))
    signals = Signals(query_coverage=1.0, candidate_coverage=1.0, file_overlap=1.0)
    assert proven_verdict(signals, "merged", Proof(done), "open") == "already-merged"
    assert proven_verdict(signals, "merged", Proof(done, own_landing=True), "merged") == "overlap"
    assert proven_verdict(signals, "merged", Proof(done, own_landing=True), "open") == "overlap"
    by_author = Signals(query_coverage=1.0, candidate_coverage=1.0, same_author=True)
    assert proven_verdict(by_author, "merged", Proof(done), "open", direct_commit=True) == "overlap"
    assert proven_verdict(by_author, "merged", Proof(done), "open") == "already-merged"
    assert proven_verdict(signals, "merged", Proof(done, after_query=True), "merged") == "overlap"
    assert proven_verdict(signals, "merged", Proof(done, other_line="3.12"), "open") == "overlap"
    assert proven_verdict(signals, "merged", Proof(done, in_query_base=True), "open") == "overlap"


def test_a_candidate_stored_cut_decides_only_by_patch_or_landing():
    """An unmerged change too large to be stored whole: its lines and its head holding the
    change decide nothing (with a repository or without); the same patch still does, and a
    landed one is still replayed on the target."""
    from detector.decide import proven_verdict, verdict
    from detector.evidence import Proof, Signals

    done = _replayed(DIFF, BEFORE, BEFORE, BEFORE.replace("read_flag", "resolve_strategy"))
    whole = Signals(query_coverage=1.0, candidate_coverage=1.0, file_overlap=1.0)
    cut = Signals(query_coverage=1.0, candidate_coverage=1.0, file_overlap=1.0, candidate_cut=True)
    assert verdict(whole, "open", 1.0) == "duplicate"
    assert verdict(cut, "open", 1.0) == "overlap"
    assert verdict(cut, "closed", 1.0) == "overlap"
    assert verdict(cut, "merged", 1.0) == verdict(whole, "merged", 1.0) == "already-merged"
    assert proven_verdict(whole, "open", Proof(done), "open") == "duplicate"
    assert proven_verdict(cut, "open", Proof(done), "open") == "overlap"
    same_patch = Signals(
        query_coverage=1.0, candidate_coverage=1.0, same_patch=True, candidate_cut=True
    )
    assert proven_verdict(same_patch, "open", Proof(done), "open") == "duplicate"
    assert proven_verdict(cut, "merged", Proof(done), "open") == "already-merged"


def test_a_pr_merged_before_another_is_not_already_done_by_it(builder: RepoBuilder):
    """#98 is merged (GitHub says so; its commits were applied by hand, so the index knows no
    landing for it); #99 landed the same fix later. Asked about #98, #99 came after."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.pr_branch(98, [("Ask the offload strategy", fixed)])
    builder.pr_branch(99, [("Use the offload strategy", fixed)])
    builder.merge_pr(99, how="squash")
    prs = [
        {"number": 98, "state": "MERGED", "mergedAt": "2023-11-14T22:14:20Z"},
        {"number": 99, "state": "MERGED"},
    ]
    prs_json = builder.path / "prs.json"
    prs_json.write_text(json.dumps(prs))
    code, _, err = run_cli(builder.path, "index", "--quiet", "--prs-json", str(prs_json))
    assert code == 0, err

    _, found = check_json(builder.path, "--pr", "98")
    assert 99 not in {pr for pr, _ in deciding(found)}
    assert any(
        "landed after this change" in r for f in found if f["pr"] == 99 for r in f["reasons"]
    )


def test_a_commit_whose_subject_names_the_pr_is_its_own_landing():
    from index.metadata import names_pr

    assert names_pr("Merge branch 'hotfix/#6464-allow-non-boolean-autocomplete'", 6464)
    assert not names_pr("Merge pull request #64645 from someone/topic", 6464)
    assert not names_pr("Merge branch 'hotfix/6464'", None)
    assert names_pr("Merge branch 'merge-5041'", 5041)
    assert names_pr("Merge remote-tracking branch 'origin/pr/5041'", 5041)
    assert not names_pr("Merge branch 'merge-50412'", 5041)
    assert not names_pr("Bump to 1.5041 (merge-friendly)", 5041)


def test_the_sweep_groups_no_pr_that_is_only_partly_done(builder: RepoBuilder):
    """A stale branch partly done by a merged PR needs a rebase, not closing."""
    test_a_branch_that_carries_a_landed_commit_is_partly_done_and_names_what_remains(builder)
    builder.git("update-ref", "refs/pull/21/head", builder.head("stale"))
    builder.git("branch", "-q", "-D", "stale", "pr-20")  # pushed as PR 21: only its ref is left
    index(builder)
    code, out, err = run_cli(builder.path, "sweep", "--format", "json")
    assert code in (0, 1), err
    data = json.loads(out)
    assert all(21 not in {m["pr"] for m in g["members"]} for g in data["groups"])
    _, found = check_json(builder.path, "--pr", "21")
    assert deciding(found)[:1] == [(20, "partly-merged")]


def test_a_backport_with_no_metadata_is_a_port_not_already_done(builder: RepoBuilder):
    """#61 backports #60's fix to 3.12; nothing says #61 is for 3.12 (no metadata), but its
    change starts on 3.12, not on main: main having the fix does not make it done."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    builder.checkout("3.12", "main")
    builder.commit("Release 3.12.0", {"VERSION": "3.12.0\n"})
    builder.checkout("main")
    builder.commit("Start 3.13", {"VERSION": "3.13.dev0\n"})
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.pr_branch(60, [("Ask the offload strategy", fixed)])
    builder.merge_pr(60, how="squash")
    builder.pr_branch(61, [("[3.12] Ask the offload strategy", fixed)], base="3.12")
    index(builder)

    _, found = check_json(builder.path, "--pr", "61")
    assert deciding(found) == []
    [about_60] = [f for f in found if f["pr"] == 60]
    # Its fork point is on 3.12's line alone: git says which line it is for.
    assert any("this change is for 3.12: a backport" in reason for reason in about_60["reasons"]), (
        about_60
    )


def test_a_pr_cut_from_a_merged_side_branch_did_not_do_that_branchs_work(builder: RepoBuilder):
    """A side branch fixed the pipeline and was merged by hand (no PR). #70 was cut from that
    branch, not from main, and landed through a later commit of its own branch, so no merge
    has #70's head as a parent. #70's work is its docs page; the side branch's fix is not #70's,
    and #71, making the same fix, is not "already done in #70"."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    start = builder.head()
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.checkout("side", start)
    builder.commit("Ask the offload strategy", fixed)
    side_tip = builder.commit("Log the strategy", {"pipelines/log.py": "LOG = True\n"})
    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "side", "-m", "Merge branch 'side'")
    builder.git("branch", "-q", "-D", "side")
    builder.pr_branch(
        70, [("Document the pipeline", {"docs/pipeline.md": "# Pipeline\n"})], start=side_tip
    )
    builder.checkout("pr-70")
    builder.commit("Polish the docs", {"docs/pipeline.md": "# The pipeline\n"})
    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "pr-70", "-m", "Merge branch 'docs'")
    builder.delete_pr_branch(70)
    builder.pr_branch(71, [("Use the offload strategy", fixed)], start=start)
    index(builder)

    code, out, err = run_cli(builder.path, "show", "70")
    assert code == 0, err
    assert "docs/pipeline.md" in out and "pipelines/pipeline.py" not in out
    _, found = check_json(builder.path, "--pr", "71")
    assert 70 not in {pr for pr, _ in deciding(found)}


def test_a_pr_opened_after_a_merged_change_landed_did_not_do_it_first(builder: RepoBuilder):
    """#80 landed; #81 was opened a month later from a branch that holds a copy of #80's
    fix (rebased with a conflict resolved, so no patch identity ties the two) beside its own
    work. Asked about #80, #81 came after: no verdict names it."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    start = builder.head()
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.pr_branch(80, [("Ask the offload strategy", fixed)])
    builder.merge_pr(80)
    resolved = {"pipelines/pipeline.py": fixed["pipelines/pipeline.py"] + "# resolved\n"}
    builder.pr_branch(
        81,
        [("Ask the offload strategy", resolved), ("Log it", {"pipelines/log.py": "LOG = 1\n"})],
        start=start,
    )
    prs = [
        {
            "number": 80,
            "state": "MERGED",
            "createdAt": "2024-01-01T10:00:00Z",
            "mergedAt": "2024-01-02T10:00:00Z",
        },
        {"number": 81, "state": "OPEN", "createdAt": "2024-02-01T10:00:00Z"},
    ]
    prs_json = builder.path / "prs.json"
    prs_json.write_text(json.dumps(prs))
    code, _, err = run_cli(builder.path, "index", "--quiet", "--prs-json", str(prs_json))
    assert code == 0, err

    _, found = check_json(builder.path, "--pr", "80")
    assert 81 not in {pr for pr, _ in deciding(found)}
    assert any(
        "was opened after this change landed" in r
        for f in found
        if f["pr"] == 81
        for r in f["reasons"]
    )


def test_a_commit_landing_the_prs_own_change_after_the_index_is_not_another_change(
    builder: RepoBuilder,
):
    """After the last index run, a maintainer landed #90's change by hand, re-authored, with
    "Closes #90" in its message, and cherry-picked #91's commit (its author kept). Neither
    commit is known to the index; the tip probe finds them. Each is its PR's own landing."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE, "notes.py": "A = 1\n"})
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.pr_branch(90, [("Ask the offload strategy", fixed)])
    head_91 = builder.pr_branch(91, [("Raise the note", {"notes.py": "A = 2\n"})])
    index(builder)
    builder.commit("pipeline: ask the offload strategy\n\nCloses #90", fixed)
    builder.git("cherry-pick", head_91)

    for number in (90, 91):
        _, found = check_json(builder.path, "--pr", str(number))
        assert deciding(found) == [], found
        assert any("own commits landed" in r for f in found for r in f["reasons"]), found


def test_a_pr_built_on_another_or_carrying_its_commits_does_not_make_it_a_duplicate(
    builder: RepoBuilder,
):
    """#101 is stacked on open #100; #102 cherry-picked #100's commit under its own work. Both
    carry #100 along: #100 is no duplicate of either. #103 is nothing but a copy of #100's
    commit: the same change proposed again, still named, as the later copy to close (#103
    is the duplicate of #100, not #100 of #103)."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    head_100 = builder.pr_branch(100, [("Ask the offload strategy", fixed)])
    builder.pr_branch(101, [("Log it", {"pipelines/log.py": "LOG = 1\n"})], start=head_100)
    builder.pr_branch(102, [("Trace it", {"pipelines/trace.py": "TRACE = 1\n"})])
    builder.checkout("pr-102")
    builder.git("cherry-pick", head_100)
    builder.git("update-ref", "refs/pull/102/head", "HEAD")
    builder.pr_branch(103, [])
    builder.checkout("pr-103")
    builder.git("cherry-pick", head_100)
    builder.git("commit", "-q", "--amend", "--no-edit", "--author", "Contributor 103 <c@e.org>")
    builder.git("update-ref", "refs/pull/103/head", "HEAD")
    builder.checkout("main")
    for number in (100, 101, 102, 103):
        builder.delete_pr_branch(number)  # as in a clone: the PRs are refs/pull/N/head only
    index(builder)

    _, found = check_json(builder.path, "--pr", "100")
    named = dict(deciding(found))
    assert 101 not in named and 102 not in named, found
    [copy] = [f for f in found if f["pr"] == 103]
    assert copy["verdict"] == "overlap" and "this one came first" in copy["reasons"][0]
    carried = {f["pr"] for f in found if any("carries this change" in r for r in f["reasons"])}
    assert {101, 102} <= carried, found
    _, found = check_json(builder.path, "--pr", "103")
    assert deciding(found)[:1] == [(100, "duplicate")]


def test_a_pr_built_on_another_open_pr_is_not_its_duplicate(builder: RepoBuilder):
    """#121 is stacked on open #120: its branch holds #120's two commits and one small commit
    of its own. Most of #121's diff is at #120's head, but as #120's work carried along."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    docs = "# Pipeline\n\n" + "".join(f"Step {n} runs the stage {n}.\n" for n in range(12))
    head_120 = builder.pr_branch(
        120,
        [
            ("Document the pipeline", {"docs/pipeline.md": docs}),
            ("Document the stages", {"docs/stages.md": docs.replace("Step", "Stage")}),
        ],
    )
    builder.pr_branch(121, [("Link the docs", {"README.md": "See docs/.\n"})], start=head_120)
    for number in (120, 121):
        builder.delete_pr_branch(number)
    index(builder)

    _, found = check_json(builder.path, "--pr", "121")
    assert 120 not in {pr for pr, _ in deciding(found)}, found
    assert any("built on #120's commits" in r for f in found for r in f["reasons"]), found


def test_a_merged_pr_whose_landing_is_unknown_proves_nothing_by_its_head(builder: RepoBuilder):
    """GitHub says #130 merged, but its commits are on no branch and no commit says it landed
    it (a maintainer rewrote it into a commit of their own). Its head's content is not proof of
    what landed: #131's same fix is done by the commit on main, and #130 decides nothing."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    start = builder.head()
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.pr_branch(130, [("Ask the offload strategy", fixed)])
    reworked = {"pipelines/pipeline.py": "# offload: see the strategy\n" + fixed[PIPELINE_PY]}
    builder.commit("pipeline: ask the strategy", reworked)
    landing = builder.head()
    builder.pr_branch(131, [("Use the offload strategy", fixed)], start=start)
    for number in (130, 131):
        builder.delete_pr_branch(number)
    prs = [{"number": 130, "state": "MERGED", "mergedAt": "2023-11-14T22:20:00Z"}]
    prs_json = builder.path / "prs.json"
    prs_json.write_text(json.dumps(prs))
    code, _, err = run_cli(builder.path, "index", "--quiet", "--prs-json", str(prs_json))
    assert code == 0, err

    _, found = check_json(builder.path, "--pr", "131")
    named = [(f["pr"], f["commit"], f["verdict"]) for f in found if f["verdict"] in DECIDING]
    assert named and all(pr is None and commit == landing for pr, commit, _ in named), found
    [about_130] = [f for f in found if f["pr"] == 130]
    assert about_130["verdict"] not in DECIDING
    assert any("no commit is known to have landed it" in r for r in about_130["reasons"])


def test_a_takeover_that_landed_is_the_same_change_as_the_closed_pr_it_took_over(
    builder: RepoBuilder,
):
    """#141 took over closed #140's commit (picked onto a fresh branch), added a tidy-up and
    landed: #140's work landed through it, so the two are the same change (as a maintainer
    labels them)."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    fixed = {
        "pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX).replace(
            IMPORT_ANCHOR, IMPORT_ANCHOR + MERGED_IMPORT
        )
    }
    head_140 = builder.pr_branch(140, [("Ask the offload strategy", fixed)])
    builder.pr_branch(141, [("Name the version", {"pipelines/__init__.py": "VERSION = 2\n"})])
    builder.checkout("pr-141")
    builder.git("cherry-pick", head_140)
    builder.git("update-ref", "refs/pull/141/head", "HEAD")
    builder.merge_pr(141)
    for number in (140, 141):
        builder.delete_pr_branch(number)
    _index_with(builder, [{"number": 140, "state": "CLOSED"}])

    _, found = check_json(builder.path, "--pr", "141")
    assert 140 in {pr for pr, _ in deciding(found)}, found


def test_an_unmerged_pr_carrying_a_closed_prs_commits_does_not_cover_it(builder: RepoBuilder):
    """#161's branch holds closed #160's commit under its own, unrelated work, and neither
    landed: #161 did not finish #160, it carries it. Asked about #160, #161 is no verdict."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    head_160 = builder.pr_branch(160, [("Ask the offload strategy", fixed)])
    builder.pr_branch(161, [("Bump the year", {"LICENSE": "Copyright 2015\n"})], start=head_160)
    for number in (160, 161):
        builder.delete_pr_branch(number)
    _index_with(builder, [{"number": 160, "state": "CLOSED"}])

    _, found = check_json(builder.path, "--pr", "160")
    assert 161 not in {pr for pr, _ in deciding(found)}, found
    assert any("carries this change's own commits" in r for f in found for r in f["reasons"])


DOCBLOCK_PHP = """<?php
class Loader
{
    /**
     * Parses a XML file
     */
    public function parse($file)
    {
        $method = 'set'.str_replace('-', '', $key);
        return $this->load($file);
    }
}
"""
DOCBLOCK_FIX = """diff --git a/Loader.php b/Loader.php
--- a/Loader.php
+++ b/Loader.php
@@ -5 +5 @@
-     * Parses a XML file
+     * Parses a XML file.
@@ -9 +9 @@
-        $method = 'set'.str_replace('-', '', $key);
+        $method = 'set'.explode('-', $key)[0];
"""


def test_a_docblock_line_two_fixes_both_correct_is_no_part_of_either():
    """Two fixes of one method both add the docblock's full stop; the candidate's fix is
    another (a deprecation notice). The shared comment makes neither a part of the other;
    a change of nothing but that comment is done by it."""
    other_fix = DOCBLOCK_PHP.replace("Parses a XML file\n", "Parses a XML file.\n").replace(
        "        return $this->load($file);",
        "        trigger_error('deprecated', E_USER_DEPRECATED);\n"
        "        return $this->load($file);",
    )
    done = _replayed(DOCBLOCK_FIX, DOCBLOCK_PHP, DOCBLOCK_PHP, other_fix)
    assert not done.partial and not done.complete
    comment_only = DOCBLOCK_FIX.split("@@ -9")[0]
    assert _replayed(comment_only, DOCBLOCK_PHP, DOCBLOCK_PHP, other_fix).complete
    # `*ptr` and `#include` are code, not comments.
    c_code = "diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-*ptr = 1;\n+*ptr = 2;\n"
    replayed = _replayed(c_code, "*ptr = 1;\n", "*ptr = 1;\n", "*ptr = 2;\n")
    assert not replayed.hunks[0].comments_only and replayed.complete


VERSION_FILE = 'VERSION = "{version}"\nMAJOR = {major}\nMINOR = 0\nEXTRA = "{extra}"\n'


def _release(version: str, extra: str) -> dict[str, str | bytes | None]:
    return {"version.py": VERSION_FILE.format(version=version, major=version[0], extra=extra)}


BRANCHES = {80: "1.x", 82: "1.x", 81: "main", 83: "main"}


def _pr_item(builder: RepoBuilder, number: int, base: str, merged: bool) -> dict:
    """A `gh pr list --json` record: which branch each PR is for (the merge-ups need it)."""
    return {
        "number": number,
        "title": builder.repo.git.log("-1", "--format=%s", f"refs/pull/{number}/head"),
        "body": "",
        "state": "MERGED" if merged else "OPEN",
        "createdAt": f"2024-01-{number - 70:02d}T00:00:00Z",
        "closedAt": None,
        "mergedAt": f"2024-01-{number - 70:02d}T01:00:00Z" if merged else None,
        "headRefOid": builder.head(f"refs/pull/{number}/head"),
        "baseRefName": base,
        "author": {"login": f"author{number}"},
    }


def _index_with(builder: RepoBuilder, export: list[dict], *targets: str) -> None:
    """Index with a `gh pr list --json` export (which branch each PR is for, which closed)."""
    path = builder.path.parent / "prs.json"
    path.write_text(json.dumps(export))
    flags = [flag for target in targets for flag in ("--target", target)]
    code, _, err = run_cli(builder.path, "index", "--quiet", *flags, "--prs-json", str(path))
    assert code == 0, err


def test_a_change_merged_up_after_this_one_landed_did_not_do_it_first(builder: RepoBuilder):
    """Release 1.0.4 (#80, on 1.x) and release 2.0.0 (#81, on main) both clear `EXTRA`; 1.x
    reached main by a merge after #81 had landed there, so #81 is no part of #80. An open PR
    making a fix that landed on 1.x (#82) is already done."""
    builder.commit("Start", {**_release("1.0.4-DEV", "DEV"), "pipelines/pipeline.py": PIPELINE})
    builder.checkout("1.x", "main")
    builder.checkout("main")
    builder.commit("Start 2.0", _release("2.0.0-DEV", "DEV"))
    fork = builder.head()
    builder.pr_branch(80, [("Release 1.0.4", _release("1.0.4", ""))], base="1.x")
    builder.merge_pr(80, base="1.x")
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.pr_branch(82, [("Ask the offload strategy", fixed)], base="1.x")
    builder.merge_pr(82, base="1.x")
    builder.commit("Bump to 1.0.5-DEV", _release("1.0.5-DEV", "DEV"))
    builder.pr_branch(81, [("Release 2.0.0", _release("2.0.0", ""))], start=fork)
    builder.merge_pr(81)
    builder.git("merge", "-q", "--no-ff", "-X", "ours", "1.x", "-m", "Merge branch '1.x'")
    builder.pr_branch(
        83, [("Use the offload strategy", fixed)], start=fork, author="Grace", email="g@x"
    )
    export = [_pr_item(builder, n, b, merged=n != 83) for n, b in BRANCHES.items()]
    _index_with(builder, export, "main", "1.x")

    _, found = check_json(builder.path, "--pr", "81")
    assert 80 not in {pr for pr, _ in deciding(found)}
    [about_80] = [f for f in found if f["pr"] == 80]
    assert any("branch (by a merge) after" in reason for reason in about_80["reasons"])
    _, found = check_json(builder.path, "--pr", "83")
    [about_82] = [f for f in found if f["pr"] == 82]
    assert about_82["verdict"] == "already-merged"


def test_a_pr_that_landed_only_copies_of_a_merged_prs_commits_is_that_prs_own_landing(
    builder: RepoBuilder,
):
    """#90's commit landed twice, reworded, each copy saying `Closes #90`: on 1.x, and on main,
    where #91 was opened from the landed commit. #90 is merged; #91 did not do it first."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    builder.checkout("1.x", "main")
    builder.checkout("main")
    builder.commit("Docs", {"README.md": "Pipelines.\n"})
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    head = builder.pr_branch(90, [("chore: stop reading the legacy flag", fixed)])
    for branch in ("1.x", "main"):
        builder.checkout(branch)
        builder.git("cherry-pick", head)
        builder.git("commit", "-q", "--amend", "-m", "refact: ask the strategy\n\nCloses #90")
    builder.git("update-ref", "refs/pull/91/head", builder.head())
    export = [_pr_item(builder, n, "main", merged=True) for n in (90, 91)]
    _index_with(builder, export, "main", "1.x")

    _, found = check_json(builder.path, "--pr", "90")
    assert 91 not in {pr for pr, _ in deciding(found)}
    [about_91] = [f for f in found if f["pr"] == 91]
    assert any("own commits landed" in reason for reason in about_91["reasons"])


def test_a_pr_that_landed_a_forks_branch_is_not_credited_with_others_commits(
    builder: RepoBuilder,
):
    """#50 is Ann's fork branch: it merged Bob's feature branch (which makes the fix) and adds
    Ann's docs. Dan merged it into his cache branch, and main took that branch as it was, so
    no merge names #50 and its range reaches back past Bob's commit. Carol's #51 makes Bob's
    fix: it is on main, but it is not #50's work."""
    start = builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    fixed = {"pipelines/pipeline.py": PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.checkout("feature", start)
    builder._author, builder._email = "Bob", "bob@example.com"
    builder.commit("Ask the offload strategy", fixed)
    builder.checkout("pr-50", start)
    builder._author, builder._email = "Ann", "ann@example.com"
    builder.git("merge", "-q", "--no-ff", "feature", "-m", "Merge branch 'feature' of bob")
    builder.commit("Document the pipeline", {"docs/pipeline.md": "# Pipeline\n"})
    builder.git("update-ref", "refs/pull/50/head", builder.head())
    builder.checkout("cache", start)
    builder._author, builder._email = "Dan", "dan@example.com"
    builder.commit("Cache the pipeline", {"pipelines/cache.py": "CACHE = {}\n"})
    builder.git("merge", "-q", "--no-ff", "pr-50", "-m", "Merge branch 'master' of ann into cache")
    builder.checkout("main")
    builder.git("merge", "-q", "--ff-only", "cache")
    builder.git("branch", "-q", "-D", "feature", "pr-50", "cache")
    builder.pr_branch(51, [("Use the offload strategy", fixed)], start=start, author="Carol")
    index(builder)

    _, found = check_json(builder.path, "--pr", "51")
    assert 50 not in {pr for pr, _ in deciding(found)}
    [about_50] = [f for f in found if f["pr"] == 50]
    assert any("other people's" in reason for reason in about_50["reasons"])


def test_a_revert_that_brings_back_an_earlier_fix_did_not_make_it(builder: RepoBuilder):
    """Dan's direct commit made #60's fix; a later commit switched the line to something else,
    and #61 reverted that (GitHub's revert button: only the subject names what it reverts).
    #60 is already done by Dan's commit, not by the revert (nor by #62, reverting it again).
    A PR that reverts the same commit is the revert's duplicate."""
    builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    fixed = PIPELINE.replace(LEGACY, MERGED_FIX)
    builder.pr_branch(
        60,
        [
            (
                "Ask the offload strategy",
                {"pipelines/pipeline.py": fixed, "tests/test_pipeline.py": "import pipelines\n"},
            )
        ],
    )
    builder._author = "Dan"
    dans = builder.commit("Use the offload strategy", {"pipelines/pipeline.py": fixed})
    other = fixed.replace(MERGED_FIX, BRANCH_FIX)
    builder.commit("Switch to the resolver function", {"pipelines/pipeline.py": other})
    switched = builder.head()
    builder.pr_branch(
        61, [('Revert "Switch to the resolver function"', {"pipelines/pipeline.py": fixed})]
    )
    builder.merge_pr(61)
    builder.pr_branch(
        62,
        [('Revert "Switch to the resolver function"', {"pipelines/pipeline.py": fixed})],
        start=switched,
    )
    index(builder)

    _, found = check_json(builder.path, "--pr", "60")
    assert not {61, 62} & {pr for pr, _ in deciding(found)}
    [about_61] = [f for f in found if f["pr"] == 61]
    assert any("reverts a later commit" in reason for reason in about_61["reasons"])
    assert (found[0]["commit"] or "")[:7] == dans[:7]
    assert found[0]["verdict"] == "already-merged"
    _, found = check_json(builder.path, "--pr", "62")
    assert (61, "already-merged") in deciding(found)


def test_a_branch_that_reverts_its_own_commit_is_not_a_revert_of_earlier_work(
    builder: RepoBuilder,
):
    """#71's author made #70's fix, switched it to another call, and reverted the switch on
    the branch: what it reverts is its own history, and it is #70's duplicate (and #70,
    the first, is no duplicate of it)."""
    start = builder.commit("Add the pipeline", {"pipelines/pipeline.py": PIPELINE})
    fixed = PIPELINE.replace(LEGACY, MERGED_FIX)
    builder.pr_branch(70, [("Ask the offload strategy", {"pipelines/pipeline.py": fixed})])
    other = {"pipelines/pipeline.py": fixed.replace(MERGED_FIX, BRANCH_FIX)}
    builder.pr_branch(
        71,
        [("Ask the strategy", {"pipelines/pipeline.py": fixed}), ("Call the resolver", other)],
        start=start,
    )
    builder.checkout("pr-71")
    builder._author = "Contributor 71"
    builder.git("revert", "--no-edit", "HEAD")
    builder.git("update-ref", "refs/pull/71/head", builder.head())
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "--pr", "71")
    assert (70, "duplicate") in deciding(found)
    _, found = check_json(builder.path, "--pr", "70")
    assert deciding(found) == []


FLAKE8_CONFIG = """[flake8]
max-line-length = 99
exclude = build,docs
extend-ignore = E128,E203,E501
per-file-ignores = tests/*: E402
"""
LINT_PINS = """attrs>=18.0
flake8==3.9.2
flake8-bugbear==22.3.20
flake8-pyi>=20.5
lxml>=4.4.0
pytest>=6.2.0
"""


def test_a_version_bump_in_a_requirements_file_is_the_change_not_a_test(builder: RepoBuilder):
    """PR 11 bumps flake8 in test-requirements.txt and adds an ignore to setup.cfg for it; the
    merged PR 10 adds the same ignore but keeps the old pins. The bump is the change: #11 is
    partly done by #10, never already done with its bump "still to do"."""
    builder.commit("Lint setup", {"setup.cfg": FLAKE8_CONFIG, "test-requirements.txt": LINT_PINS})
    base = builder.head()
    config = FLAKE8_CONFIG.replace("E128,E203,E501", "E128,E203,E501,B023")
    builder.pr_branch(10, [("Update the flake8 setup", {"setup.cfg": config})])
    builder.merge_pr(10, how="squash")
    pins = (
        LINT_PINS.replace("flake8==3.9.2", "flake8==5.0.4")
        .replace("flake8-bugbear==22.3.20", "flake8-bugbear==22.7.1")
        .replace("flake8-pyi>=20.5", "flake8-pyi>=22.7.0")
    )
    builder.pr_branch(
        11,
        [("Update flake8 to 5.0.4", {"setup.cfg": config, "test-requirements.txt": pins})],
        start=base,
    )
    index(builder)

    _, found = check_json(builder.path, "--pr", "11")
    first = found[0]
    assert (first["pr"], first["verdict"]) == (10, "partly-merged")
    assert first["residual"] == ["test-requirements.txt (lines 2-4)"]


JOIN = """def meet_types(s, t):
    s = true_or_false(s)
    t = true_or_false(t)

    if isinstance(s, AnyType):
        return s

    return s.accept(TypeMeetVisitor(t))


def join_types(s, t):
    s = true_or_false(s)
    t = true_or_false(t)

    if isinstance(s, AnyType):
        return s

    if isinstance(s, ErasedType):
        return t

    if isinstance(s, UnionType) and not isinstance(t, UnionType):
        s, t = t, s

    if isinstance(s, NoneType) and not isinstance(t, NoneType):
        s, t = t, s

    return t.accept(TypeJoinVisitor(s))
"""
SWAP = """    if isinstance(s, UnionType) and not isinstance(t, UnionType):
        s, t = t, s

"""
ERASE = """def erase_last_known_values(t):
    return t.accept(LastKnownValueEraser())


class LastKnownValueEraser(TypeTranslator):
    def visit_instance(self, t):
        if not t.last_known_value and not t.args:
            return t
        return t.copy_modified(args=[a.accept(self) for a in t.args], last_known_value=None)
"""
ERASE_FIX = (
    ERASE
    + """
    def visit_union_type(self, t):
        new = cast(UnionType, super().visit_union_type(t))
        instances = [item for item in new.items if isinstance(item, Instance)]
        if len(instances) > 1:
            return make_simplified_union(new.items)
        return new
"""
)


def _moved_swap(text: str) -> str:
    """join_types with the Union swap put above the Any check (the first fix of two)."""
    head, tail = text.split("def join_types", 1)
    tail = tail.replace(SWAP, "").replace(
        "    if isinstance(s, AnyType):", SWAP + "    if isinstance(s, AnyType):", 1
    )
    return head + "def join_types" + tail


def test_a_moved_block_is_done_only_where_it_stands_in_its_new_place(builder: RepoBuilder):
    """PR 11 makes two fixes: it moves join_types's Union swap above the Any check, and
    simplifies unions when erasing last known values. The merged PR 12 takes only the second
    ("one of the fixes extracted from #11"): the swap still stands where it was, below, so #11
    is partly done, the move still to do. PR 13, merged, makes both: that is #11 done."""
    builder.commit("Joins and erasure", {"join.py": JOIN, "erasetype.py": ERASE})
    base = builder.head()
    builder.pr_branch(
        12, [("Simplify unions when erasing last known values", {"erasetype.py": ERASE_FIX})]
    )
    builder.merge_pr(12, how="squash")
    fixes = {"join.py": _moved_swap(JOIN), "erasetype.py": ERASE_FIX}
    builder.pr_branch(11, [("Fix two bugs with enum value attributes", fixes)], start=base)
    index(builder)

    _, found = check_json(builder.path, "--pr", "11")
    first = found[0]
    assert (first["pr"], first["verdict"]) == (12, "partly-merged")
    assert first["residual"] == ["join.py (lines 15-17, line 23)"]


def test_a_candidate_that_made_the_same_move_did_it(builder: RepoBuilder):
    builder.commit("Joins and erasure", {"join.py": JOIN, "erasetype.py": ERASE})
    base = builder.head()
    moved = _moved_swap(JOIN).replace("def join_types(s, t):", "def join_types(s, t):  # s | t")
    builder.pr_branch(13, [("Fix the joins of unions", {"join.py": moved})])
    builder.merge_pr(13, how="squash")
    builder.pr_branch(11, [("Swap unions first", {"join.py": _moved_swap(JOIN)})], start=base)
    index(builder)

    _, found = check_json(builder.path, "--pr", "11")
    assert (found[0]["pr"], found[0]["verdict"]) == (13, "already-merged")


def test_a_merged_pr_is_no_duplicate_of_a_copy_opened_after_it(builder: RepoBuilder):
    """#70 is opened, then #71 makes the same fix (its commit made before #70 lands, so the
    head commit's date, all git knows without metadata, says nothing); #70 lands. Checked
    afterwards, #70 is no duplicate of #71: GitHub numbers PRs in order, and #70 landed."""
    builder.commit("Add the pipeline", {PIPELINE_PY: PIPELINE})
    fixed = {PIPELINE_PY: PIPELINE.replace(LEGACY, MERGED_FIX)}
    builder.pr_branch(70, [("Ask the offload strategy", fixed)])
    builder.pr_branch(71, [("Ask the offload strategy first", fixed)])
    builder.merge_pr(70, how="squash")
    index(builder)

    _, found = check_json(builder.path, "--pr", "70")

    assert deciding(found) == [], found


NEAR_THE_TOP = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -0,0 +1,2 @@
+import re
+import json
@@ -3 +5 @@
-limit = read_limit(config)
+limit = read_limit(config, default=10)
"""


def test_a_hunk_below_another_near_the_top_of_a_file_is_read_at_its_own_place():
    """The change's two imports at the top put three lines above its last hunk in its result,
    where the base has two: the hunk is still looked for where its removed line stands (the
    last line of the file), and another edit of that line is neither this one nor an error."""
    base = "import os\nimport sys\nlimit = read_limit(config)\n"
    other = base.replace("read_limit(config)", "read_limit(settings)")
    replayed = _replayed(NEAR_THE_TOP, base, base, other)
    assert [hunk.after for hunk in replayed.hunks] == ["new", "conflict"]
    done = "import re\nimport json\n" + base.replace("(config)", "(config, default=10)")
    assert _replayed(NEAR_THE_TOP, base, base, done).complete
