"""A PR's change is its own work: not what its branch carries along, nor a port of it.

Each story is a real repository built in a temporary folder, indexed for real, and checked
through the CLI; what is read is the verdict a maintainer would see.
"""

from __future__ import annotations

import json

from tests.repo_builder import RepoBuilder, run_cli
from tests.test_check import LEGACY, MERGED_FIX, PIPELINE

DECIDING = ("already-merged", "duplicate", "covered", "partly-merged")
PIPELINE_PY = "pipelines/pipeline.py"
OPENED = "2023-11-14T22:00:00Z"  # before any commit of these stories
AS_202 = ("--author", "Contributor 202 <author@example.com>")


def check_json(builder: RepoBuilder, *args: str) -> list[dict]:
    code, out, err = run_cli(builder.path, "check", "--format", "json", "--min-score", "0", *args)
    assert code in (0, 1), err
    return json.loads(out)["findings"]


def index_with(builder: RepoBuilder, export: list[dict]) -> None:
    path = builder.path.parent / "prs.json"
    path.write_text(json.dumps(export))
    code, _, err = run_cli(builder.path, "index", "--quiet", "--prs-json", str(path))
    assert code == 0, err


def deciding(found: list[dict]) -> dict[int | None, str]:
    return {f["pr"]: f["verdict"] for f in found if f["verdict"] in DECIDING}


def reasons_about(found: list[dict], number: int) -> list[str]:
    return [reason for f in found if f["pr"] == number for reason in f["reasons"]]


def test_an_open_pr_carrying_a_rebased_copy_of_the_changes_squash_did_not_make_it(
    builder: RepoBuilder,
):
    """#201 is squash-merged as "Ask the offload strategy (#201)". #202, opened before that,
    was rebased over a copy of the squash under work of its own: a conflict resolved by hand
    (the copy's patch is not the squash's), its author date reset (`rebase --ignore-date`).
    Asked about #201, #202 carries its landing: it did not make the change."""
    builder.commit("Add the pipeline", {PIPELINE_PY: PIPELINE})
    fixed = PIPELINE.replace(LEGACY, MERGED_FIX)
    builder.pr_branch(201, [("Ask the offload strategy", {PIPELINE_PY: fixed})])
    builder.pr_branch(202, [("Log the stages", {"pipelines/log.py": "LOG = 1\n"})])
    squash = builder.merge_pr(201, how="squash")
    builder.checkout("pr-202")
    builder.git("cherry-pick", squash)
    resolved = fixed.replace("self.ready = True", "self.ready = bool(config)")
    builder.write({PIPELINE_PY: resolved})
    builder.git("commit", "-q", "--amend", "--no-edit", "--date", "now", *AS_202)
    builder.git("update-ref", "refs/pull/202/head", builder.head())
    builder.checkout("main")
    for number in (201, 202):
        builder.delete_pr_branch(number)
    index_with(builder, [{"number": n, "createdAt": OPENED} for n in (201, 202)])

    found = check_json(builder, "--pr", "201")
    assert 202 not in deciding(found), found
    carried = reasons_about(found, 202)
    assert any("carries this change's own landing" in r for r in carried), _debug(found)


def test_a_branch_whose_commits_that_made_the_change_are_not_its_own_did_not_make_it(
    builder: RepoBuilder,
):
    """Dan's commit on main makes #31's fix. #30's branch left main before it and took it in
    as a merge squashed into one commit (one parent, a merge's subject), then added its own
    log module; #32's branch was rebased over a copy of Dan's commit, a hundred commits of
    its own above it (its range reads as far back as its fork point, a stale one). Neither
    wrote the fix: the commits of theirs that touch it are not their own work."""
    start = builder.commit("Add the pipeline", {PIPELINE_PY: PIPELINE})
    fixed = PIPELINE.replace(LEGACY, MERGED_FIX)
    builder._author, builder._email = "Dan", "dan@example.org"
    dans = builder.commit("Ask the offload strategy", {PIPELINE_PY: fixed})
    builder.commit("Name the version", {"pipelines/__init__.py": "VERSION = 2\n"})
    builder._author, builder._email = "Test Author", "author@example.com"
    main = builder.head()
    test = {"tests/test_pipeline.py": "def test_offload():\n    assert strategy_asked()\n"}
    builder.pr_branch(31, [("Use the offload strategy", {PIPELINE_PY: fixed, **test})], start=start)
    builder.pr_branch(30, [], start=start)
    builder.checkout("pr-30")
    builder.git("merge", "-q", "--squash", main)
    builder.git("commit", "-q", "-m", "Merge branch 'main' into topic")
    builder.commit("Log the stages", {"pipelines/log.py": "LOG = 1\n"})
    builder.git("update-ref", "refs/pull/30/head", builder.head())
    builder.pr_branch(32, [], start=start)
    builder.checkout("pr-32")
    builder.git("cherry-pick", dans)
    for step in range(101):
        builder.commit(f"Note step {step}", {"notes.txt": f"step {step}\n"})
    builder.git("update-ref", "refs/pull/32/head", builder.head())
    builder.checkout("main")
    for number in (30, 31, 32):
        builder.delete_pr_branch(number)
    index_with(builder, [{"number": n, "createdAt": OPENED} for n in (30, 31, 32)])

    found = check_json(builder, "--pr", "31")
    named = deciding(found)
    landed = [f["verdict"] for f in found if f["commit"] == dans]
    assert landed == ["already-merged"], _debug(found)
    assert 30 not in named and 32 not in named, _debug(found)
    for number in (30, 32):
        assert any("not its own work" in r for r in reasons_about(found, number)), _debug(found)


def fix_landed_as_a_later_copy(builder: RepoBuilder, making_it: list[int]) -> None:
    """#71 asks the offload strategy, then logs the stages; #73 later lands a cherry-picked
    copy of #71's fix and nothing of its own; each of `making_it`, from before that landing,
    makes the same fix. Indexed with their numbers."""
    start = builder.commit("Add the pipeline", {PIPELINE_PY: PIPELINE})
    fixed = PIPELINE.replace(LEGACY, MERGED_FIX)
    builder.pr_branch(
        71,
        [
            ("Ask the offload strategy", {PIPELINE_PY: fixed}),
            ("Log the stages", {"pipelines/log.py": "LOG = 1\n"}),
        ],
    )
    original = builder.head("refs/pull/71/head^")
    builder.pr_branch(73, [])
    builder.checkout("pr-73")
    builder.git("cherry-pick", original)
    builder.git("update-ref", "refs/pull/73/head", builder.head())
    builder.merge_pr(73)
    for number in making_it:
        builder.pr_branch(number, [("Use the offload strategy", {PIPELINE_PY: fixed})], start=start)
    numbers = [71, 73, *making_it]
    for number in numbers:
        builder.delete_pr_branch(number)
    index_with(builder, [{"number": n, "createdAt": OPENED} for n in numbers])


def test_an_open_pr_whose_commit_another_pr_landed_later_made_the_change(
    builder: RepoBuilder,
):
    """#71 asks the offload strategy, then logs the stages. Later #73 lands a copy of #71's
    fix (cherry-picked: the same patch, written after #71's commit) and nothing of its own.
    #72, from before that landing, makes the same fix later. #71's commit came first: it is
    the original, #73's landing the copy, so #71 made the change #72 repeats."""
    fix_landed_as_a_later_copy(builder, [72])

    found = check_json(builder, "--pr", "72")
    assert 71 in deciding(found), _debug(found)
    assert not any("not its own work" in r for r in reasons_about(found, 71)), _debug(found)


def test_the_same_version_number_written_by_a_release_is_no_part_of_a_proposal(
    builder: RepoBuilder,
):
    """#41 proposes 1.0.0: the version number and the offload strategy. The release #42 writes
    the same "1.0.0" much later, and nothing else of #41: the rest is still to do, so #41 is
    not partly done by it."""
    version = "pipelines/__init__.py"
    start = builder.commit(
        "Add the pipeline", {PIPELINE_PY: PIPELINE, version: '__version__ = "0.9.0"\n'}
    )
    fixed = PIPELINE.replace(LEGACY, MERGED_FIX)
    one = '__version__ = "1.0.0"\n'
    builder.pr_branch(
        41, [("Release 1.0 with the offload strategy", {PIPELINE_PY: fixed, version: one})]
    )
    builder.pr_branch(
        42,
        [("Release 1.0.0", {version: one, "CHANGELOG.md": "## 1.0.0\n\n- Faster runs.\n"})],
        start=start,
    )
    builder.merge_pr(42)
    for number in (41, 42):
        builder.delete_pr_branch(number)
    index_with(builder, [{"number": n, "createdAt": OPENED} for n in (41, 42)])

    found = check_json(builder, "--pr", "41")
    assert 42 not in deciding(found), _debug(found)


def test_a_release_proposal_whose_notes_are_still_to_do_is_not_done_by_a_later_release(
    builder: RepoBuilder,
):
    """#43 proposes releasing the current code as 1.0.0: the version number and its notes.
    Two years later the release #44 writes the same "1.0.0" over a pre-release with its own
    notes. The version line is all of #43's code, but the notes are what it proposes: still to
    do, so #43 is not already done by the release."""
    version = "pipelines/__init__.py"
    start = builder.commit(
        "Add the pipeline",
        {PIPELINE_PY: PIPELINE, version: '__version__ = "0.19.0"\n', "CHANGELOG.md": "# Log\n"},
    )
    one = '__version__ = "1.0.0"\n'
    notes = "# Log\n\n## 1.0.0\n\n- 0.19.1 released as 1.0.0: no breaking change.\n"
    builder.pr_branch(
        43, [("Release 0.19.1 as 1.0.0", {version: one, "CHANGELOG.md": notes})], start=start
    )
    builder.commit("Start 1.0", {version: '__version__ = "1.0.0-alpha.1"\n'})
    release = "# Log\n\n## 1.0.0\n\n- The offload strategy.\n"
    builder.pr_branch(44, [("Release 1.0.0", {version: one, "CHANGELOG.md": release})])
    builder.merge_pr(44)
    for number in (43, 44):
        builder.delete_pr_branch(number)
    index_with(builder, [{"number": n, "createdAt": OPENED} for n in (43, 44)])

    found = check_json(builder, "--pr", "43")
    assert 44 not in deciding(found), _debug(found)


def test_the_same_rewrite_made_for_two_release_lines_on_purpose_is_a_port(
    builder: RepoBuilder,
):
    """#50 asks the offload strategy on the 2.x line; #51 ports it to main, and says so. Two
    PRs for two lines, made on purpose: a port, not a duplicate. (Without a word of porting, a
    fix on the older line stays a duplicate of the same fix for main: it is merged upwards.)"""
    builder.commit("Add the pipeline", {PIPELINE_PY: PIPELINE})
    builder.checkout("2.x", "main")
    builder.commit("Open the 2.x line", {"pipelines/__init__.py": 'LINE = "2.x"\n'})
    builder.checkout("main")
    builder.commit("Start 3.0", {"pipelines/__init__.py": 'LINE = "3.0"\n'})
    fixed = PIPELINE.replace(LEGACY, MERGED_FIX)
    builder.pr_branch(50, [("Ask the offload strategy", {PIPELINE_PY: fixed})], base="2.x")
    builder.pr_branch(51, [("Ask the offload strategy", {PIPELINE_PY: fixed})])
    for number in (50, 51):
        builder.delete_pr_branch(number)
    opened = {"createdAt": OPENED, "state": "OPEN"}
    index_with(
        builder,
        [
            {"number": 50, "baseRefName": "2.x", "title": "Ask the offload strategy", **opened},
            {"number": 51, "baseRefName": "main", "title": "Port #50 to main", **opened},
        ],
    )

    found = check_json(builder, "--pr", "51")
    assert 50 not in deciding(found), _debug(found)
    assert any("a port, not a duplicate" in r for r in reasons_about(found, 50)), _debug(found)


def test_a_branch_that_reverts_a_merge_it_took_by_mistake_is_not_the_change_it_reverts(
    builder: RepoBuilder,
):
    """#60 (merged) asks the offload strategy; #61 reverts #60 on purpose. #62 left main
    before #60, merged main in by mistake and reverted that merge: its range starts at what
    the merge brought, so its diff reads as undoing #60, but #62 only undid its own merge."""
    start = builder.commit("Add the pipeline", {PIPELINE_PY: PIPELINE})
    fixed = PIPELINE.replace(LEGACY, MERGED_FIX)
    builder.pr_branch(60, [("Ask the offload strategy", {PIPELINE_PY: fixed})])
    builder.merge_pr(60)
    builder.pr_branch(61, [('Revert "Ask the offload strategy"', {PIPELINE_PY: PIPELINE})])
    builder.pr_branch(62, [("Log the stages", {"pipelines/log.py": "LOG = 1\n"})], start=start)
    builder.checkout("pr-62")
    builder._author = "Contributor 62"
    builder.git("merge", "-q", "--no-ff", "main", "-m", "Merge branch 'main' into pr-62")
    builder.git("revert", "--no-edit", "-m", "1", "HEAD")
    builder.git("update-ref", "refs/pull/62/head", builder.head())
    builder.checkout("main")
    for number in (60, 61, 62):
        builder.delete_pr_branch(number)
    index_with(builder, [{"number": n, "createdAt": OPENED} for n in (60, 61, 62)])

    found = check_json(builder, "--pr", "61")
    assert 62 not in deciding(found), _debug(found)
    assert any("not its own work" in r for r in reasons_about(found, 62)), _debug(found)


def _debug(found: list[dict]) -> str:
    return json.dumps([(f["pr"], f["verdict"], f["reasons"]) for f in found], indent=1)


def test_a_pr_carrying_this_changes_squash_from_a_line_the_index_does_not_read_did_not_make_it(
    builder: RepoBuilder,
):
    """#301's fix is squashed as "Ask the offload strategy (#301)" on `hotfix` (a branch the
    index does not read); #302, a release PR cut from `hotfix`, carries that squash and lands
    on main. The index does not know where #301 landed, but the commit naming it says it did:
    #302 did not make #301's change."""
    builder.commit("Add the pipeline", {PIPELINE_PY: PIPELINE})
    fixed = PIPELINE.replace(LEGACY, MERGED_FIX)
    builder.checkout("hotfix", "main")
    builder.write({PIPELINE_PY: fixed})
    builder.git("commit", "-q", "-m", "Ask the offload strategy (#301)")
    builder.checkout("main")
    # #301's head was pushed again after the squash (amended): git cannot date the landing
    # after the PR, so the index does not take the squash for its landing.
    builder.pr_branch(301, [("Ask the offload strategy", {PIPELINE_PY: fixed})])
    builder.pr_branch(302, [("Prepare the release", {"VERSION": "1.0.1\n"})], start="hotfix")
    builder.merge_pr(302, how="merge")
    for number in (301, 302):
        builder.delete_pr_branch(number)
    builder.git("branch", "-q", "-D", "hotfix")
    index_with(builder, [])

    found = check_json(builder, "--pr", "301")

    assert 302 not in deciding(found), found
    assert any("carries this change's own landing" in r for r in reasons_about(found, 302)), found


def test_a_pr_built_on_a_landed_pr_is_partly_done_not_done(builder: RepoBuilder):
    """#212 was built on #211's branch (a fix), then added a guide of its own; #211 landed by
    squash. The fix is all of #212's code, so its code is "all there", but the guide is
    #212's work: partly done, rebase (tokio's #623, an architecture doc carrying a bump)."""
    builder.commit("Add the pipeline", {PIPELINE_PY: PIPELINE})
    fixed = PIPELINE.replace(LEGACY, MERGED_FIX)
    head = builder.pr_branch(211, [("Ask the offload strategy", {PIPELINE_PY: fixed})])
    guide = "".join(f"Step {n}: read the offload strategy of stage {n}.\n" for n in range(40))
    builder.pr_branch(
        212,
        [("Write the pipeline guide", {"docs/guide.md": guide})],
        start=head,
        author="Contributor 211",
    )
    builder.merge_pr(211, how="squash")
    builder.delete_pr_branch(211)
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    found = check_json(builder, "--pr", "212")

    assert deciding(found) == {211: "partly-merged"}
    assert any("built on #211's commits, which landed" in r for r in reasons_about(found, 211))
