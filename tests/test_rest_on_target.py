"""What a partly done PR still has to do is read against the target's tip, not only against the
landing that did a part: work that landed through another PR, or in a file main deleted since,
is not "still to do".

The story: stats.py's four functions and a helper module.
- #1 (open) rounds `mean` and `median` the same way: #2 makes the `mean` edit and is squash-
  merged, then #3 makes the `median` edit and is squash-merged. #1 is done, across #2 and #3.
- #10 (open) rounds `mean` and `median`, checks `spread`'s input and tidies legacy.py;
  #2 and #3 landed the first two edits, and main deleted legacy.py since: only the `spread`
  check is still to do.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from detector.evidence import RemainingHunk
from prdup.sweep import SweptFinding
from tests.repo_builder import RepoBuilder, run_cli

STATS = "".join(
    f"def {name}(values):\n"
    f"    ordered = sorted(values)\n"
    f"    {name}_result = ordered[len(ordered) // 2] + 0\n"
    f"    count = len(ordered)\n"
    f"    return {name}_result, count\n\n\n"
    for name in ("mean", "median", "spread", "extent")
)
LEGACY = "def old_mean(values):\n    total = sum(values)\n    return total / len(values)\n"


def rounded(text: str, name: str) -> str:
    """`name`'s result rounded to two places, and named so: one hunk of stats.py."""
    return text.replace(
        f"    {name}_result = ordered[len(ordered) // 2] + 0\n",
        f"    {name}_result = round(ordered[len(ordered) // 2], 2)\n"
        f"    {name}_result = float({name}_result)\n",
    )


def checked(text: str, name: str = "spread") -> str:
    return text.replace(
        f"def {name}(values):\n",
        f"def {name}(values):\n    if not values:\n        raise ValueError('{name} of nothing')\n",
    )


@pytest.fixture
def across(builder: RepoBuilder) -> RepoBuilder:
    builder.commit("Add stats", {"stats.py": STATS, "legacy.py": LEGACY})
    base = builder.head()
    both = rounded(rounded(STATS, "mean"), "median")
    builder.pr_branch(1, [("Round mean and median", {"stats.py": both})])
    tidy = LEGACY.replace("    total = sum(values)\n", "    total = float(sum(values))\n")
    builder.pr_branch(
        10,
        [("Round, check, tidy", {"stats.py": checked(both), "legacy.py": tidy})],
        start=base,
    )
    builder.pr_branch(2, [("Round the mean", {"stats.py": rounded(STATS, "mean")})], start=base)
    builder.merge_pr(2, how="squash")
    builder.pr_branch(3, [("Round the median", {"stats.py": both})])
    builder.merge_pr(3, how="squash")
    builder.commit("Drop the legacy module", {"legacy.py": None})
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    return builder


def sweep_json(repo: Path) -> dict:
    code, out, err = run_cli(repo, "sweep", "--format", "json", "--exit-zero")
    assert code == 0, err
    return json.loads(out)


def check_first(repo: Path, number: int) -> dict:
    code, out, err = run_cli(repo, "check", "--pr", str(number), "--format", "json")
    assert code in (0, 1), err
    return json.loads(out)["findings"][0]


def test_work_landed_across_two_prs_is_already_done(across: RepoBuilder):
    first = check_first(across.path, 1)
    assert (first["verdict"], first["pr"]) in {("already-merged", 2), ("already-merged", 3)}
    other = 5 - first["pr"]
    assert (
        f"already done across #{first['pr']} and #{other}: the rest is on main"
        in (first["reasons"])
    )
    assert first["remaining"] == []
    data = sweep_json(across.path)
    [done] = [d for d in data["already_done"] if d["pr"] == 1]
    assert done["by"] == first["pr"]


def test_still_to_do_leaves_out_what_main_holds_and_files_it_deleted(across: RepoBuilder):
    first = check_first(across.path, 10)
    assert first["verdict"] == "partly-merged" and first["pr"] in (2, 3)
    after = across.git("show", "refs/pull/10/head:stats.py").splitlines()
    line = after.index("    if not values:") + 1
    assert first["remaining"] == [
        {"path": "stats.py", "first_line": line, "last_line": line + 1, "new_file": False}
    ]
    reasons = first["reasons"]
    # Where the rest is not all done, which commit made each part is not looked for (a
    # bisection of the branch for each candidate): the reason says only that it is there.
    assert "already on main, so not still to do: stats.py (lines " in " ".join(reasons)
    assert f"not in #{first['pr']}, in files main no longer has (nothing to apply): legacy.py" in (
        reasons
    )
    data = sweep_json(across.path)
    [partly] = [p for p in data["partly_done"] if p["pr"] == 10]
    assert partly["by"] == first["pr"]
    assert partly["remaining"] == [
        {"path": "stats.py", "lines": [[line, line + 1]], "new_file": False}
    ]
    # The rest in the file main deleted is named apart: there is nothing of it to apply.
    assert first["gone_files"] == partly["gone_files"] == ["legacy.py"]


def legacy_moved(builder: RepoBuilder) -> tuple[str, str]:
    """#10 rounds the mean and median (#2 lands that) and tidies legacy.py, which main then
    moves to compat/legacy.py; returns #10's base and its tidied legacy.py."""
    builder.commit("Add stats", {"stats.py": STATS, "legacy.py": LEGACY})
    base = builder.head()
    both = rounded(rounded(STATS, "mean"), "median")
    tidy = LEGACY.replace("    total = sum(values)\n", "    total = float(sum(values))\n")
    builder.pr_branch(10, [("Round, tidy", {"stats.py": both, "legacy.py": tidy})], start=base)
    builder.pr_branch(2, [("Round mean and median", {"stats.py": both})], start=base)
    builder.merge_pr(2, how="squash")
    builder.commit("Move the legacy module", {"legacy.py": None, "compat/legacy.py": LEGACY})
    return base, tidy


def test_a_rest_in_a_file_main_moved_since_is_replayed_where_it_went(builder: RepoBuilder):
    """#10's story, but main moved legacy.py to compat/legacy.py instead of deleting it: the
    tidy still applies there, so it is still to do, not "nothing to apply", and the reasons
    say where the file went. Once main makes the tidy in the moved file, nothing is left."""
    _, tidy = legacy_moved(builder)
    assert run_cli(builder.path, "index", "--quiet")[0] == 0

    first = check_first(builder.path, 10)
    assert (first["verdict"], first["pr"], first["gone_files"]) == ("partly-merged", 2, [])
    assert first["remaining"] == [
        {"path": "legacy.py", "first_line": 2, "last_line": 2, "new_file": False}
    ]
    assert (
        "main has moved legacy.py to compat/legacy.py since this change's base: its rest "
        "there was replayed where the file went"
    ) in first["reasons"]
    [partly] = [p for p in sweep_json(builder.path)["partly_done"] if p["pr"] == 10]
    assert (partly["remaining"], partly["gone_files"]) == (
        [{"path": "legacy.py", "lines": [[2, 2]], "new_file": False}],
        [],
    )

    builder.commit("Tidy the legacy mean", {"compat/legacy.py": tidy})
    assert run_cli(builder.path, "index", "--quiet")[0] == 0
    first = check_first(builder.path, 10)
    assert (first["verdict"], first["pr"], first["remaining"]) == ("already-merged", 2, [])
    assert any(reason.startswith("already on main") for reason in first["reasons"])


def test_a_file_moved_then_grown_is_followed_through_the_commit_that_moved_it(
    builder: RepoBuilder,
):
    """main moved legacy.py to compat/legacy.py, then grew it far past what it was: from #10's
    base to the tip git no longer pairs the two files (black's `blib2to3/`, moved under `src/`
    and edited for years), but the commit that deleted legacy.py moved it, so #10's tidy is
    replayed in compat/legacy.py, where it is still to do."""
    base, tidy = legacy_moved(builder)
    grown = LEGACY + "".join(
        f"\n\ndef old_stat_{n}(values):\n    return sorted(values)[{n}] * {n + 2}\n"
        for n in range(12)
    )
    builder.commit("Grow the legacy module", {"compat/legacy.py": grown})
    assert run_cli(builder.path, "index", "--quiet")[0] == 0
    whole_span = builder.git("diff", "-M", "--name-status", base, "HEAD")
    assert "D\tlegacy.py" in whole_span.splitlines()  # not paired with its new name

    first = check_first(builder.path, 10)
    assert (first["verdict"], first["pr"], first["gone_files"]) == ("partly-merged", 2, [])
    assert first["remaining"] == [
        {"path": "legacy.py", "first_line": 2, "last_line": 2, "new_file": False}
    ]
    assert any("main has moved legacy.py to compat/legacy.py" in r for r in first["reasons"])


def test_ignore_entries_main_lists_elsewhere_are_not_still_to_do(builder: RepoBuilder):
    """#10 rounds the mean and median (#2 landed that) and ignores `build/` and `dist/` after
    `__pycache__`; main lists both since, after a line of its own (psf/black #534's
    `.gitignore`). An ignore file is a set of patterns: they are on main, not still to do,
    so #10 is done, across #2 and main's commit."""
    ignored = "*.pyc\n__pycache__\n"
    builder.commit("Add stats", {"stats.py": STATS, ".gitignore": ignored})
    base = builder.head()
    both = rounded(rounded(STATS, "mean"), "median")
    mine = ignored + "build/\ndist/\n"
    builder.pr_branch(10, [("Round, ignore builds", {"stats.py": both, ".gitignore": mine})])
    builder.pr_branch(2, [("Round mean and median", {"stats.py": both})], start=base)
    builder.merge_pr(2, how="squash")
    builder.commit("Ignore packaging", {".gitignore": ignored + "*.egg-info\nbuild/\ndist/\n"})
    assert run_cli(builder.path, "index", "--quiet")[0] == 0

    first = check_first(builder.path, 10)
    assert (first["verdict"], first["pr"], first["remaining"]) == ("already-merged", 2, [])
    assert any(
        reason.startswith("already on main") and ".gitignore (lines 3-4)" in reason
        for reason in first["reasons"]
    ), first["reasons"]


def test_a_part_landed_and_the_rest_rewritten_on_main_since_is_no_partly_done(
    builder: RepoBuilder,
):
    """#20 (open) rounds `mean` and renames `spread`'s count. #21 landed the `mean` edit; main
    then rewrote the `spread` lines #20 edits (gin's `cacheQuery`, renamed `queryCache` on
    master): #20's rest no longer applies, so "partly done: rebase, only spread is left" would
    be false. #22 (open) rounds `mean` and checks `spread`'s input, whose lines main kept:
    partly done in #21, the check still to do."""
    builder.commit("Add stats", {"stats.py": STATS})
    base = builder.head()
    renamed = rounded(STATS, "mean").replace(
        "    count = len(ordered)\n    return spread_result, count\n",
        "    size = len(ordered)\n    return spread_result, size\n",
    )
    builder.pr_branch(20, [("Round the mean, name the size", {"stats.py": renamed})])
    builder.pr_branch(
        22, [("Round the mean, check spread", {"stats.py": checked(rounded(STATS, "mean"))})]
    )
    builder.pr_branch(21, [("Round the mean", {"stats.py": rounded(STATS, "mean")})], start=base)
    builder.merge_pr(21, how="squash")
    rewritten = rounded(STATS, "mean").replace(
        "    spread_result = ordered[len(ordered) // 2] + 0\n    count = len(ordered)\n"
        "    return spread_result, count\n",
        "    return ordered[len(ordered) // 2], len(ordered)\n",
    )
    builder.commit("Inline spread", {"stats.py": rewritten})
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    code, out, err = run_cli(builder.path, "check", "--pr", "20", "--format", "json")
    assert code == 0, err  # nothing deciding
    landed = next(f for f in json.loads(out)["findings"] if f["pr"] == 21)
    assert landed["verdict"] == "overlap", landed
    text = " ".join(landed["reasons"])
    assert "main has those lines written otherwise" in text and "still to do" not in text, landed
    kept = check_first(builder.path, 22)
    assert (kept["pr"], kept["verdict"]) == (21, "partly-merged"), kept
    assert kept["residual"] == ["stats.py (lines 17-18)"], kept


def test_a_part_its_author_landed_later_in_a_revised_pr_leaves_no_rest_to_do(
    builder: RepoBuilder,
):
    """Ada's #20 rounds `mean` and checks `spread`'s input; her later #21 landed the rounding
    alone: her revised version, the check left out by her. "Partly done in #21: rebase, only
    the check is left" would say otherwise. For Bo's #30, rounding and checking too, #21 is
    another author's part: the check is #30's own work still to do, partly done."""
    builder.commit("Add stats", {"stats.py": STATS})
    base = builder.head()
    both = checked(rounded(STATS, "mean"))
    builder.pr_branch(
        20,
        [("Round the mean, check spread", {"stats.py": both})],
        author="Ada",
        email="ada@example.com",
    )
    bo = both.replace("spread of nothing", "no values to spread")
    builder.pr_branch(
        30, [("Round and check", {"stats.py": bo})], start=base, author="Bo", email="bo@example.com"
    )
    builder.pr_branch(
        21,
        [("Round the mean", {"stats.py": rounded(STATS, "mean")})],
        start=base,
        author="Ada",
        email="ada@example.com",
    )
    builder.merge_pr(21, how="rebase")  # her commit, as she wrote it
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    code, out, err = run_cli(builder.path, "check", "--pr", "20", "--format", "json")
    assert code in (0, 1), err  # #30, Bo's same patch opened later, is another story
    revised = next(f for f in json.loads(out)["findings"] if f["pr"] == 21)
    assert revised["verdict"] == "overlap", revised
    assert any("author's own later PR" in r for r in revised["reasons"]), revised
    code, out, err = run_cli(builder.path, "check", "--pr", "30", "--format", "json")
    assert code in (0, 1), err
    other = next(f for f in json.loads(out)["findings"] if f["pr"] == 21)
    assert other["verdict"] == "partly-merged", other


TOTAL = "def total(values):\n    ordered = list(values)\n    return sum(ordered)\n"


@pytest.mark.parametrize(
    "theirs",
    [TOTAL, "def total(values):\n    return math.fsum(values)\n"],
    ids=["the-same-lines", "another-body"],
)
def test_a_rest_the_tip_has_at_another_place_is_not_still_to_do(builder: RepoBuilder, theirs):
    """#40 rounds `mean` and adds a `total` helper after `extent`; #41 landed the rounding, and
    main added a `total` of its own at the top of the file since, the same lines (tokio's `mod
    hint`, added by #4491 a few lines above where #3496 put it) or another body (tokio #5016's
    `is_closed`, on master since #6348 in other words): applying #40's rest would define
    `total` twice, so nothing of #40 is left to do as it is."""
    builder.commit("Add stats", {"stats.py": STATS})
    base = builder.head()
    builder.pr_branch(
        40,
        [("Round the mean, add total", {"stats.py": rounded(STATS, "mean") + "\n\n" + TOTAL})],
    )
    builder.pr_branch(41, [("Round", {"stats.py": rounded(STATS, "mean")})], start=base)
    builder.merge_pr(41, how="squash")
    builder.commit("Add total", {"stats.py": theirs + "\n\n" + rounded(STATS, "mean")})
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    code, out, err = run_cli(builder.path, "check", "--pr", "40", "--format", "json")
    assert code == 0, err
    landed = next(f for f in json.loads(out)["findings"] if f["pr"] == 41)
    assert landed["verdict"] == "overlap", landed
    assert any("written otherwise" in r and "stats.py" in r for r in landed["reasons"]), landed


def test_a_rest_main_rewrote_in_part_since_is_no_partly_done(builder: RepoBuilder):
    """#60 rounds `mean` and `extent` and checks `spread`'s input; #61 landed the `mean`
    rounding, and main rewrote `extent` since (its result renamed): the `extent` edit no
    longer applies, so "rebase, only the `spread` check is left" would be false. A part of
    #60 landed, said as an overlap whose reasons say which rest applies and which does not."""
    builder.commit("Add stats", {"stats.py": STATS})
    base = builder.head()
    mine = checked(rounded(rounded(STATS, "mean"), "extent"))
    builder.pr_branch(60, [("Round mean and extent, check spread", {"stats.py": mine})])
    builder.pr_branch(61, [("Round", {"stats.py": rounded(STATS, "mean")})], start=base)
    builder.merge_pr(61, how="squash")
    renamed = rounded(STATS, "mean").replace("extent_result", "widest")
    builder.commit("Name extent's result", {"stats.py": renamed})
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    code, out, err = run_cli(builder.path, "check", "--pr", "60", "--format", "json")
    assert code == 0, err
    landed = next(f for f in json.loads(out)["findings"] if f["pr"] == 61)
    assert landed["verdict"] == "overlap", landed
    assert landed["residual"] == [], landed
    assert any("written otherwise" in r for r in landed["reasons"]), landed


@pytest.mark.parametrize("suite", [False, True], ids=["the-code-alone", "beside-a-test-suite"])
def test_most_of_it_landed_and_the_rest_rewritten_since_is_superseded(
    builder: RepoBuilder, suite: bool
):
    """#80 rounds `mean`, `median` and `spread` and renames `extent`'s result; #81 landed the
    three roundings, and main renamed `extent`'s result its own way since: most of #80 is on
    main and nothing of the rest applies as it is. A maintainer closes #80 as superseded by
    #81; "partly done: rebase" or a bare overlap would leave that unsaid. Where #80 also
    brings a test suite many times its code, none of it in #81, most of its own work is not
    there: an overlap, not superseded."""
    builder.commit("Add stats", {"stats.py": STATS})
    base = builder.head()
    three = rounded(rounded(rounded(STATS, "mean"), "median"), "spread")
    mine: dict[str, str] = {"stats.py": three.replace("extent_result", "extent_value")}
    if suite:
        for n in range(12):
            mine[f"tests/test_case_{n}.py"] = "".join(
                f"def test_{n}_{k}():\n    assert round({n}.{k}5, 1) == {n}.{k}\n\n\n"
                for k in range(5)
            )
    builder.pr_branch(80, [("Round three, name extent's value", mine)])
    builder.pr_branch(81, [("Round mean, median and spread", {"stats.py": three})], start=base)
    builder.merge_pr(81, how="squash")
    builder.commit("Name extent's result", {"stats.py": three.replace("extent_result", "widest")})
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    code, out, err = run_cli(builder.path, "check", "--pr", "80", "--format", "json")
    landed = json.loads(out)["findings"][0]
    if suite:
        assert (landed["pr"], landed["verdict"]) == (81, "overlap"), landed
        return
    assert code == 1, err
    assert (landed["pr"], landed["verdict"]) == (81, "superseded"), landed
    assert landed["residual"] == [], landed
    assert {h["path"] for h in landed["rewritten"]} == {"stats.py"}, landed
    said = " ".join(landed["reasons"])
    assert "superseded by #81: replayed at" in said and "3 of 5 hunk(s) are there" in said, said
    assert "written otherwise" in said, said


def test_a_branch_carrying_a_copy_of_the_landing_is_not_superseded_by_it(builder: RepoBuilder):
    """#82's branch starts with a cherry-picked copy of #81's commit (the three roundings, the
    same author at the same moment) and adds its own rename of `extent`'s result, which main
    wrote its own way since. Most of #82's diff is #81's commit carried along, not work of
    #82's that #81 made: no "superseded by #81" (ember.js #2640, a test on a branch that
    carried a copy of Backburner's landing)."""
    builder.commit("Add stats", {"stats.py": STATS})
    base = builder.head()
    three = rounded(rounded(rounded(STATS, "mean"), "median"), "spread")
    landed = builder.pr_branch(81, [("Round mean, median and spread", {"stats.py": three})])
    builder.checkout("pr-82", base)
    builder.git("cherry-pick", landed)
    builder.commit("Name extent's value", {"stats.py": three.replace("extent_result", "value")})
    builder.git("update-ref", "refs/pull/82/head", builder.head())
    builder.checkout("main")
    builder.merge_pr(81, how="rebase")
    builder.commit("Name extent's result", {"stats.py": three.replace("extent_result", "widest")})
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    code, out, err = run_cli(builder.path, "check", "--pr", "82", "--format", "json")
    assert code == 0, err
    found = {f["pr"]: f for f in json.loads(out)["findings"]}
    assert found[81]["verdict"] == "overlap", found[81]


def test_a_new_file_in_a_folder_main_removed_since_is_nothing_to_apply(builder: RepoBuilder):
    """#50 rounds `mean` and adds an example under `examples/`; #51 landed the rounding, and
    main moved the examples to their own repository since (gin's `examples/`, tokio's
    `tokio-trace/`): the example has no folder to go in, so nothing of #50 is left to do:
    partly done, with nothing to apply, not "rebase, only the example is left"."""
    builder.commit("Add stats", {"stats.py": STATS, "examples/README.md": "Examples.\n"})
    base = builder.head()
    example = "from stats import mean\n\nprint(mean([1, 2, 3]))\nprint(mean([4]))\n"
    builder.pr_branch(
        50,
        [
            (
                "Round the mean, with an example",
                {"stats.py": rounded(STATS, "mean"), "examples/mean.py": example},
            )
        ],
    )
    builder.pr_branch(51, [("Round", {"stats.py": rounded(STATS, "mean")})], start=base)
    builder.merge_pr(51, how="squash")
    builder.commit("Move the examples out", {"examples/README.md": None})
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    landed = check_first(builder.path, 50)
    assert (landed["pr"], landed["verdict"]) == (51, "partly-merged"), landed
    assert landed["residual"] == [], landed
    assert any("no longer has (nothing to apply): examples/mean.py" in r for r in landed["reasons"])
    # The sweep lists it as partly done with nothing left to do, and says why in every format:
    # a maintainer reading an empty "still to do" could not tell it from a missing one.
    [partly] = [p for p in sweep_json(builder.path)["partly_done"] if p["pr"] == 50]
    assert (partly["remaining"], partly["gone_files"]) == ([], ["examples/mean.py"])
    said = "nothing to apply: in files the target no longer has: examples/mean.py"
    for form in ("text", "markdown", "html"):
        code, out, err = run_cli(builder.path, "sweep", "--format", form, "--exit-zero")
        assert code == 0, err
        assert said in out, form
    code, out, err = run_cli(builder.path, "sweep", "--exit-zero")
    assert "still to do:" not in out.split("#50 partly done")[1], out


def test_a_rest_only_in_a_folder_main_removed_beside_most_of_it_landed_is_no_rest(
    builder: RepoBuilder,
):
    """#52 rounds `mean`, `median` and `spread` and adds an example under `examples/`; #53
    landed the three roundings, and main moved the examples out since: the landing holds
    most of #52 (as "contained" means) and the rest has nowhere to go. Already done in #53,
    the example named as nothing to apply; with only half landed (#50's story above) the
    rest is work of its own, and the PR stays partly done."""
    builder.commit("Add stats", {"stats.py": STATS, "examples/README.md": "Examples.\n"})
    base = builder.head()
    three = rounded(rounded(rounded(STATS, "mean"), "median"), "spread")
    example = "from stats import mean\n\nprint(mean([1, 2, 3]))\nprint(mean([4]))\n"
    builder.pr_branch(
        52, [("Round three, with an example", {"stats.py": three, "examples/mean.py": example})]
    )
    builder.pr_branch(53, [("Round three", {"stats.py": three})], start=base)
    builder.merge_pr(53, how="squash")
    builder.commit("Move the examples out", {"examples/README.md": None})
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    landed = check_first(builder.path, 52)
    assert (landed["pr"], landed["verdict"]) == (53, "already-merged"), landed
    assert landed["residual"] == [], landed
    assert any("no longer has (nothing to apply): examples/mean.py" in r for r in landed["reasons"])


def test_an_already_done_prs_own_test_is_still_to_do_in_every_sweep_format(
    builder: RepoBuilder,
):
    """#62 rounds `mean` and adds its test; #63 landed the rounding alone: #62 is already done,
    and its test is still to do. The sweep's text and markdown say so on #62's line, where a
    maintainer closing already done PRs reads it (it was only in the JSON and in `check`)."""
    builder.commit("Add stats", {"stats.py": STATS})
    base = builder.head()
    test = "from stats import mean\n\n\ndef test_mean_is_rounded():\n    assert mean([1])\n"
    both = {"stats.py": rounded(STATS, "mean"), "tests/test_stats.py": test}
    builder.pr_branch(62, [("Round the mean, with a test", both)])
    builder.pr_branch(63, [("Round", {"stats.py": rounded(STATS, "mean")})], start=base)
    builder.merge_pr(63, how="squash")
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    assert check_first(builder.path, 62)["verdict"] == "already-merged"
    code, text, err = run_cli(builder.path, "sweep", "--exit-zero")
    assert code == 0, err
    assert "#62 done by #63" in text
    assert "    still to do: tests/test_stats.py (new file, lines 1-5)" in text, text
    code, markdown, err = run_cli(builder.path, "sweep", "--format", "markdown", "--exit-zero")
    assert "| tests/test\\_stats.py (new file, lines 1-5) |" in markdown, markdown


def test_a_note_main_rewrote_since_is_named_apart_from_what_is_still_to_do(builder: RepoBuilder):
    """#70 rounds `mean`, checks `spread`'s input and says so in the README; #71 landed the
    rounding, and main rewrote the README line #70 edits since. The code decides: partly done
    in #71, the `spread` check still to do; the README edit no longer applies as it stands,
    and is named apart, not left out unsaid nor listed as still to do."""
    readme = "# stats\n\nSmall statistics helpers.\nThe mean is exact.\n\nMIT licensed.\n"
    builder.commit("Add stats", {"stats.py": STATS, "README.md": readme})
    base = builder.head()
    said = readme.replace("The mean is exact.\n", "The mean is rounded; spread checks input.\n")
    mine = checked(rounded(STATS, "mean"))
    builder.pr_branch(70, [("Round the mean, check spread", {"stats.py": mine, "README.md": said})])
    builder.pr_branch(71, [("Round", {"stats.py": rounded(STATS, "mean")})], start=base)
    builder.merge_pr(71, how="squash")
    builder.commit(
        "Say what the helpers return",
        {"README.md": readme.replace("The mean is exact.\n", "Results are floats.\n")},
    )
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    landed = check_first(builder.path, 70)
    assert (landed["pr"], landed["verdict"]) == (71, "partly-merged"), landed
    assert [h["path"] for h in landed["remaining"]] == ["stats.py"], landed
    assert [(h["path"], h["first_line"]) for h in landed["rewritten"]] == [("README.md", 4)]
    [partly] = [p for p in sweep_json(builder.path)["partly_done"] if p["pr"] == 70]
    assert partly["rewritten"] == [{"path": "README.md", "lines": [[4, 4]], "new_file": False}]
    code, out, err = run_cli(builder.path, "sweep", "--exit-zero")
    assert code == 0, err
    assert "written otherwise on the target since, not to apply as it is: README.md (line 4)" in out


def test_a_rest_beside_code_all_done_is_said_so_not_as_a_hundred_percent():
    """The share done counts the hunks that carry the change (its code, where it has code):
    with all of them done and a test still to do, "100% done" beside a line still to do reads
    as a contradiction (psf/black #2951); it is said "all its code done"."""
    rest = (RemainingHunk("test_stats.py", 1, 5, new_file=True),)
    found = SweptFinding(1, 80, "abc", "merged", "partly-merged", 0.9, done_share=0.999)
    assert replace(found, remaining=rest).share_done == "all its code done"
    assert found.share_done == "100% done"  # nothing left: the whole of it
    assert replace(found, done_share=0.75, remaining=rest).share_done == "75% done"
    assert replace(found, done_share=None).share_done is None


def noted(text: str, note: str) -> str:
    """`note` (comment lines) inserted just above `extent`'s definition."""
    return text.replace("def extent(values):\n", note + "def extent(values):\n")


PR_NOTE = (
    "# extent() returns the middle value of the sorted values and their count,\n"
    "# rounded the same way as mean() and median().\n"
)


def rest_after_main_noted(builder: RepoBuilder, main_note: str, ours: str = PR_NOTE) -> dict:
    """#90 rounds `mean`, checks `median`'s input and adds `ours` (by default a note on what
    `extent` returns) above `extent`; #91 landed the rounding, then main put `main_note` at
    that place, with a blank line below it (#90's lines still apply as text: below the last
    blank line). #90's first finding."""
    builder.commit("Add stats", {"stats.py": STATS})
    base = builder.head()
    mine = noted(checked(rounded(STATS, "mean"), "median"), ours)
    builder.pr_branch(90, [("Round the mean, check median, note extent", {"stats.py": mine})])
    builder.pr_branch(91, [("Round", {"stats.py": rounded(STATS, "mean")})], start=base)
    builder.merge_pr(91, how="squash")
    builder.commit("Note extent", {"stats.py": noted(rounded(STATS, "mean"), main_note)})
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    return check_first(builder.path, 90)


def test_a_note_main_wrote_in_other_words_at_its_place_is_not_still_to_do(builder: RepoBuilder):
    """Main wrote #90's note at its place since, in other words (three quarters of its names:
    extent, middle value, count, rounded as mean and median): applying it would say it twice.
    It is named as written otherwise, and only the `median` check is still to do."""
    said = (
        "# extent() gives the middle value of the sorted values and the count, rounded as\n"
        "# mean() and median() are.\n\n"
    )
    landed = rest_after_main_noted(builder, said)
    assert (landed["pr"], landed["verdict"]) == (91, "partly-merged"), landed
    after = builder.git("show", "refs/pull/90/head:stats.py").splitlines()
    check = after.index("    if not values:") + 1
    note = after.index(PR_NOTE.splitlines()[0]) + 1
    assert [(h["path"], h["first_line"]) for h in landed["remaining"]] == [("stats.py", check)]
    assert [(h["path"], h["first_line"]) for h in landed["rewritten"]] == [("stats.py", note)]


def test_a_note_main_wrote_about_something_else_at_its_place_is_still_to_do(
    builder: RepoBuilder,
):
    """Main's note at the same place says something else (one name shared): #90's note is
    still to do, beside the `median` check."""
    other = "# extent() is kept for callers of the old API; new code should use span().\n\n"
    landed = rest_after_main_noted(builder, other)
    assert (landed["pr"], landed["verdict"]) == (91, "partly-merged"), landed
    assert len(landed["remaining"]) == 2 and landed["rewritten"] == [], landed


def test_a_sibling_entry_main_wrote_at_its_place_is_no_note_said_again(builder: RepoBuilder):
    """Main registered another event where #90 registers its own: the same words but the
    event and handler, which are what the line is about. #90's line is still to do."""
    ours = "HANDLERS.register('hover', handle_hover_event, priority=Priority.HIGH)\n"
    theirs = "HANDLERS.register('focus', handle_focus_event, priority=Priority.HIGH)\n\n"
    landed = rest_after_main_noted(builder, theirs, ours)
    assert (landed["pr"], landed["verdict"]) == (91, "partly-merged"), landed
    assert len(landed["remaining"]) == 2 and landed["rewritten"] == [], landed
