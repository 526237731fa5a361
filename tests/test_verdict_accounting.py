"""A verdict is what its reasons say, and "already done in X" names the commit that did it.

Stories on repositories built in a temporary folder: a landing whose merge threw the change
away is no landing (whatever the patch identity says), a verdict never says more than the hunk
count it prints, and a merge that only brought the lines in is never named as their landing.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from detector.replay import HunkCount
from tests.repo_builder import RepoBuilder, run_cli
from tests.test_rebase_landings import CONFIG, STEP_1
from tests.test_replay_verdicts import _replayed, check_json, deciding, index

# UTF8 is the first step of the config reader's story in the rebase tests.
UTF8 = STEP_1
BINARY = CONFIG.replace(
    "    with open(path) as handle:\n", "    with open(path, 'rb') as handle:\n"
)
STRIPPED = CONFIG.replace(
    '    return dict(line.split("=", 1) for line in text.splitlines())\n',
    '    pairs = [line.split("=", 1) for line in text.splitlines() if line.strip()]\n'
    "    return {key.strip(): value.strip() for key, value in pairs}\n",
)
TEST = "def test_strip():\n    assert parse(' a = b ')\n"
NOT_CODE = re.compile(r"(^|/)(tests?|docs?)/|\.(md|rst|txt) ")
HUNKS = re.compile(r"(\d+) of (\d+) hunk\(s\)|all (\d+) hunk\(s\)")


def assert_reasons_agree(found: list[dict]) -> None:
    """The invariant over findings: a deciding verdict never says "0 of N" hunks, "k of N"
    comes only with a verdict that says a part is done (partly-merged, or an open PR that
    makes most of the change) or a takeover (which lists nothing as still to do), and "all N"
    lists no code as still to do unless it says how many hunks of tests, docs or comments are
    left."""
    for finding in found:
        if finding["verdict"] not in ("already-merged", "duplicate", "covered", "partly-merged"):
            continue
        text = " ".join(finding["reasons"])
        for done, total, whole in HUNKS.findall(text):
            if whole:
                code_left = [p for p in finding["residual"] if not NOT_CODE.search(p)]
                assert not code_left or "more hunk(s)" in text, finding
                continue
            assert done != "0", finding
            assert int(done) < int(total), finding
            if "takes over this change" in text:
                # A takeover did the part it kept: the rest is no work still to do.
                assert not finding["residual"] and "not work still to do" in text, finding
                continue
            assert finding["verdict"] != "already-merged" and finding["residual"], finding


def test_an_identical_patch_whose_merge_threw_the_change_away_is_not_already_done(
    builder: RepoBuilder,
):
    """PR 7 is merged, but its merge resolved the conflict with main's own edit of the same
    line: the landing kept none of #7's change. PR 9 makes #7's very patch: the patch identity
    says "identical", the replay at #7's landing says "0 of 1 hunks there"; the replay wins."""
    builder.commit("Add the config reader", {"config.py": CONFIG})
    base = builder.head()
    builder.pr_branch(7, [("Read the config as UTF-8", {"config.py": UTF8})])
    builder.commit("Read the config as bytes", {"config.py": BINARY})
    builder.checkout("main")
    builder.git(
        "merge", "-q", "--no-ff", "-X", "ours", "pr-7", "-m", "Merge pull request #7 from c/pr-7"
    )
    assert (builder.path / "config.py").read_text() == BINARY  # the merge kept main's line
    builder.pr_branch(9, [("Read the config as UTF-8", {"config.py": UTF8})], start=base)
    index(builder)

    _, found = check_json(builder.path, "--pr", "9")
    assert deciding(found) == []
    seven = next(f for f in found if f["pr"] == 7)
    assert any("identical patch to #7" in reason for reason in seven["reasons"])
    assert any("0 of 1 hunk(s) are there" in reason for reason in seven["reasons"])
    assert_reasons_agree(found)


def test_all_hunks_there_names_the_hunks_it_counts_and_what_is_left(builder: RepoBuilder):
    """#12 landed the code of PR 13's fix, not its test or its docs: "already done", and the
    reasons count the code's hunks as such, and say the test and docs are still to do."""
    builder.commit("Add the config reader", {"config.py": CONFIG, "docs/config.md": "Config.\n"})
    base = builder.head()
    builder.pr_branch(12, [("Strip keys and values", {"config.py": STRIPPED})])
    builder.merge_pr(12, how="squash")
    builder.pr_branch(
        13,
        [
            (
                "Strip keys and values, with a test",
                {
                    "config.py": STRIPPED,
                    "tests/test_config.py": TEST,
                    "docs/config.md": "Config.\n\nKeys and values are stripped.\n",
                },
            )
        ],
        start=base,
    )
    index(builder)

    _, found = check_json(builder.path, "--pr", "13")
    assert deciding(found) == [(12, "already-merged")]
    reasons = " ".join(found[0]["reasons"])
    assert "all 1 hunk(s) of the change's code are already there" in reasons
    assert "2 more hunk(s) in tests, docs or comments are not" in reasons
    assert found[0]["residual"] == ["docs/config.md (lines 2-3)", "tests/test_config.py (new file)"]
    assert_reasons_agree(found)


def merge_commits_named(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [
            title
            for (title,) in conn.execute(
                "SELECT title FROM changes WHERE kind = 'commit' AND title LIKE 'Merge %'"
            )
        ]


def test_a_merge_that_only_brought_the_lines_is_never_named_as_their_landing(
    builder: RepoBuilder,
):
    """A maintainer merges the long-lived `1.x` line into main ("Merge branch '1.x'", a
    branch sync whose name no pattern knows). The fix came in through that merge, but it was
    made by 1.x's own commit: PR 21, which repeats it with a test, is already done in that
    commit, never in the merge that brought it."""
    builder.commit("Add the config reader", {"config.py": CONFIG})
    base = builder.head()
    builder.checkout("1.x", base)
    builder._author = "Maintainer"
    fix = builder.commit("Strip keys and values in the config", {"config.py": STRIPPED})
    builder._author = "Test Author"
    builder.checkout("main")
    builder.commit("Docs", {"README.md": "Config.\n"})
    builder.git("merge", "-q", "--no-ff", "1.x", "-m", "Merge branch '1.x'")
    builder.git("branch", "-q", "-D", "1.x")
    builder.pr_branch(
        21,
        [("Strip keys and values", {"config.py": STRIPPED, "tests/test_config.py": TEST})],
        start=base,
    )
    index(builder)

    _, found = check_json(builder.path, "--pr", "21")
    decided = [f for f in found if f["verdict"] in ("already-merged", "partly-merged")]
    assert [(f["pr"], f["commit"][:10], f["verdict"]) for f in decided] == [
        (None, fix[:10], "already-merged")
    ]
    code, out, _ = run_cli(builder.path, "check", "--pr", "21")
    assert code == 1
    assert f"commit {fix[:10]}" in out
    assert "Merge branch '1.x'" not in out
    assert_reasons_agree(found)


def rows(db: Path) -> dict[str, tuple[int, int]]:
    with sqlite3.connect(db) as conn:
        return {
            title: (added, removed)
            for title, added, removed in conn.execute(
                "SELECT title, added, removed FROM changes WHERE kind = 'commit'"
            )
        }


def test_a_merge_is_a_change_of_its_own_only_for_the_lines_its_resolution_wrote(
    builder: RepoBuilder,
):
    """Merging the `encoding` branch conflicts with main's own edit of the line, and the
    maintainer resolves it with a line neither side had. The branch's commit is recorded as
    the change it made; the merge only as that one new line, not as everything it brought."""
    builder.commit("Add the config reader", {"config.py": CONFIG})
    base = builder.head()
    builder.checkout("encoding", base)
    builder.commit("Read the config as UTF-8", {"config.py": UTF8, "docs/config.md": "UTF-8.\n"})
    builder.checkout("main")
    builder.commit("Read the config as bytes", {"config.py": BINARY})
    resolved = CONFIG.replace(
        "    with open(path) as handle:\n",
        "    with open(path, encoding=detect_encoding(path)) as handle:\n",
    )
    try:
        builder.git("merge", "-q", "--no-ff", "encoding", "-m", "Merge branch 'encoding'")
    except Exception:  # the conflict, resolved by hand
        builder.write({"config.py": resolved})
        builder.git("commit", "-q", "--no-edit")
    index(builder)

    recorded = rows(builder.path / ".git" / "prdup.db")
    assert recorded["Read the config as UTF-8"] == (2, 1)
    assert recorded["Merge branch 'encoding'"] == (1, 0)


def test_a_prs_own_commit_that_a_nameless_merge_brought_in_is_its_own_landing(
    builder: RepoBuilder,
):
    """PR 30's branch is merged by hand ("Merge remote-tracking branch 'grace/config'"), so
    its commits are recorded as main's own; the first was pushed to the branch by a
    maintainer. That commit is PR 30's own work, not an earlier change that did part of it."""
    builder.commit("Add the config reader", {"config.py": CONFIG})
    base = builder.head()
    builder.checkout("pr-30", base)
    builder._author = "Maintainer"
    builder.commit("Read as UTF-8", {"config.py": UTF8})
    builder._author = "Grace"
    both = STRIPPED.replace("    with open(path) as handle:\n", UTF8.splitlines(True)[1])
    builder.commit("Strip keys", {"config.py": both, "tests/test_config.py": TEST})
    builder.git("update-ref", "refs/pull/30/head", builder.head())
    builder._author = "Test Author"
    builder.checkout("main")
    builder.commit("Docs", {"README.md": "Config.\n"})
    builder.git(
        "merge", "-q", "--no-ff", "pr-30", "-m", "Merge remote-tracking branch 'grace/config'"
    )
    index(builder)

    _, found = check_json(builder.path, "--pr", "30")
    assert deciding(found) == []
    own = next(f for f in found if f["title"] == "Read as UTF-8")
    assert "where this change's own commits landed" in own["reasons"][0]


def test_a_removal_at_the_top_of_a_file_is_replayed_by_the_files_start():
    removal = (
        "diff --git a/webpack.config.js b/webpack.config.js\n"
        "--- a/webpack.config.js\n+++ b/webpack.config.js\n"
        "@@ -1,1 +0,0 @@\n-const legacy = require('legacy-loader');\n"
    )
    before = "const legacy = require('legacy-loader');\nmodule.exports = {};\n"
    replayed = _replayed(removal, before, before, before)
    assert replayed.residual == ("webpack.config.js (line 1)",)
    # Removed by the candidate: the file now starts with what followed the line.
    done = _replayed(removal, before, before, "module.exports = {};\n")
    assert done.complete and done.residual == ()
    # What followed it moved on too (an import added below): less context, as `git apply`.
    longer = before + "module.exports.a = 1;\nmodule.exports.b = 2;\n"
    moved = "module.exports = {};\nconst extra = require('x');\nmodule.exports.a = 1;\n"
    assert _replayed(removal, longer, longer, moved).complete
    # Removed before the candidate: not its doing.
    gone = "module.exports = {};\n"
    assert not _replayed(removal, before, gone, gone).complete


def test_an_identical_patch_whose_removal_landed_with_other_context_is_kept():
    """#15523's landing removed the same doc block as this identical patch, but a blank line
    beside it differs: the removal is made, so the identical patch was kept where it landed,
    and nothing is left to do. Without the patch identity the replay alone proves nothing."""
    removal = (
        "diff --git a/api.js b/api.js\n--- a/api.js\n+++ b/api.js\n"
        "@@ -3,2 +2,0 @@\n-  ### HashLocation\n-  Using HashLocation results in URLs with a hash.\n"
    )
    base = (
        "/**\n  Implementations.\n  ### HashLocation\n"
        "  Using HashLocation results in URLs with a hash.\n  ## Location API\n*/\n"
    )
    landed = "/**\n  Implementations.\n\n\n  ## Location API\n*/\n"
    replayed = _replayed(removal, base, base, landed)
    assert not replayed.complete
    kept = HunkCount.of(replayed, same_patch=True)
    assert (kept.whole, kept.done, kept.total, kept.residual) == (True, 1, 1, ())
    assert not HunkCount.of(replayed, same_patch=False).whole


TYPES = """export interface InterceptorManager<V> {
  use(onFulfilled?: (value: V) => V, onRejected?: (error: any) => any): number;
  eject(id: number): void;
}
"""
TYPED = """export interface InterceptorOptions {
  synchronous?: boolean;
  runWhen?: (config: RequestConfig) => boolean;
}

export interface InterceptorManager<V> {
  use(onFulfilled?: (value: V) => V, onRejected?: (error: any) => any,
    options?: InterceptorOptions): number;
  eject(id: number): void;
}
"""
CHAIN = """function request(config) {
  const chain = [];
  this.interceptors.response.forEach(function push(interceptor) {
    chain.push(interceptor.fulfilled, interceptor.rejected);
  });
  return run(chain, config);
}
"""
PUSH = "    chain.push(interceptor.fulfilled, interceptor.rejected);\n"
GUARDED = CHAIN.replace(
    PUSH,
    "    if (typeof interceptor.runWhen === 'function' &&\n"
    "        interceptor.runWhen(config) === false) {\n"
    "      return;\n    }\n" + PUSH,
)
GUARDED_OTHERWISE = CHAIN.replace(
    PUSH, "    if (interceptor.runWhen && !interceptor.runWhen(config)) return;\n" + PUSH
)


def test_an_open_pr_that_only_types_what_this_change_also_makes_work_is_not_this_change(
    builder: RepoBuilder,
):
    """This change types an interceptor option and makes the response chain honour it. Open
    #20 adds the same types and nothing else: most of the change's lines, but the behaviour,
    in a file #20 never touched, is work #20 did not do, so closing this PR into it would lose
    it. Open #21 adds the types and the same guard written its own way, at the same place:
    that is this change."""
    builder.commit("Add interceptors", {"index.d.ts": TYPES, "lib/core.js": CHAIN})
    base = builder.head()
    builder.pr_branch(20, [("Type the interceptor options", {"index.d.ts": TYPED})])
    builder.pr_branch(
        21,
        [("Skip response interceptors", {"index.d.ts": TYPED, "lib/core.js": GUARDED_OTHERWISE})],
        start=base,
    )
    builder.checkout("contributor", base)
    builder.commit(
        "Run response interceptors only when asked", {"index.d.ts": TYPED, "lib/core.js": GUARDED}
    )
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "contributor")
    assert deciding(found) == [(21, "duplicate")]
    typed = next(f for f in found if f["pr"] == 20)
    assert typed["verdict"] == "overlap", typed


def test_a_pr_syncing_a_branch_does_not_repeat_the_prs_landed_on_that_branch(
    builder: RepoBuilder,
):
    """#30 landed by squash on `next`, a branch maintainers land a few PRs on, which the index
    does not follow (too few landings to be a target): its own PR ref stays unmerged there.
    #32 is opened from `next` into main, carrying #30's squash commit and a maintainer's notes:
    it brings #30 along, it does not repeat it, so #30 is no duplicate of it."""
    builder.commit("Add interceptors", {"index.d.ts": TYPES, "lib/core.js": CHAIN})
    builder.checkout("next", builder.head())
    builder.checkout("main")
    builder.pr_branch(
        30,
        [("Skip response interceptors", {"index.d.ts": TYPED, "lib/core.js": GUARDED})],
        base="next",
    )
    builder.merge_pr(30, how="squash", base="next")
    builder.commit("Notes for the next release", {"NOTES.md": "Interceptors can be skipped.\n"})
    head = builder.head()
    builder.git("update-ref", "refs/pull/32/head", head)
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "--pr", "32")
    assert deciding(found) == []
    carried = next(f for f in found if f["pr"] == 30)
    assert any("carries #30's landing commit" in r for r in carried["reasons"]), carried
