"""The sweep as a triage list: every open PR's answer is the one `check --pr N` gives first,
and that answer puts it in one class, listed in every format in the same order.

The story: a report module and a few small ones.
- #1 fixes the CSV parser and is squash-merged; #2 (another author, the older base) makes the
  same fix in its own words: already done by #1.
- #5 renames a constant and documents the module, in two commits, and is rebase-merged; #6
  makes the same change: already done, by the first rebased commit (nothing says it is #5's).
- #8 fixes y.py and lands with a merge commit; #9 is the same patch: already done by #8.
- #40 tidies four report functions; #41, opened later by someone else, makes three of those
  four edits among more work and is merged: #40 is partly done, only `footer` remains.
- #30 fixes x.py, #32 fixes y.py's reader, #31 (opened between them) makes both fixes: keep
  #31, close #32 into it; #30 came first, so it is closed into no later PR (only overlaps it).
- #50 and #51 make one fix to units.py's converter; neither landed: one group.
- #60 rewrites `title` in report.py differently from anything else: no claim.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commands.sweep import to_text
from detector.evidence import RemainingHunk
from detector.grouping import Group
from prdup.sweep import PullInfo, SweepResult, SweepStats, SweptFinding
from tests.repo_builder import RepoBuilder, run_cli

REPORT = "".join(
    f"def {name}(rows):\n"
    f"    values = [row.{name}_value for row in rows]\n"
    f"    total = sum(values)\n"
    f"    return '{name}: ' + str(total)\n\n\n"
    for name in ("header", "body", "summary", "footer", "title", "legend")
)
PARSER = 'def parse_csv_line(text):\n    fields = text.split(",")\n    return fields\n'
UNITS = (
    "KILOMETRES_PER_MILE = 1.609344\n\n\ndef miles_to_kilometres(miles):\n"
    "    return miles * KILOMETRES_PER_MILE\n"
)
X_MODULE = "def load_x(path):\n    handle = open(path)\n    return handle.read()\n"
Y_MODULE = (
    "def save_y(path, payload):\n    handle = open(path, 'w')\n    handle.write(payload)\n\n\n"
    "def read_y(path):\n    handle = open(path)\n    return handle.read()\n"
)


def tidy(text: str, name: str) -> str:
    """`name`'s total, rounded and labelled in a new way: one hunk in report.py."""
    return text.replace(
        f"    return '{name}: ' + str(total)\n",
        f"    rounded_{name} = round(total, 2)\n    return f'{name} = {{rounded_{name}:.2f}}'\n",
    )


@pytest.fixture
def triage(builder: RepoBuilder) -> RepoBuilder:
    builder.commit(
        "Add the modules",
        {
            "report.py": REPORT,
            "parser.py": PARSER,
            "units.py": UNITS,
            "x.py": X_MODULE,
            "y.py": Y_MODULE,
        },
    )
    base = builder.head()
    strip = '    fields = [part.strip() for part in text.split(",")]\n'
    fix = {"parser.py": PARSER.replace('    fields = text.split(",")\n', strip)}
    builder.pr_branch(1, [("Strip spaces around CSV fields", fix)])
    builder.merge_pr(1, how="squash")
    renamed = UNITS.replace("KILOMETRES_PER_MILE", "KM_PER_MILE")
    noted = "# Conversions between units.\n" + renamed
    builder.pr_branch(
        5, [("Rename the constant", {"units.py": renamed}), ("Say what it is", {"units.py": noted})]
    )
    builder.merge_pr(5, how="rebase")
    y_fix = Y_MODULE.replace("open(path, 'w')", "open(path, 'w', newline='')")
    builder.pr_branch(8, [("Write y without newline translation", {"y.py": y_fix})])
    builder.merge_pr(8, how="merge")
    tidy_three = tidy(tidy(tidy(REPORT, "header"), "body"), "summary")
    more = tidy_three.replace(
        "def legend(rows):", "def caption(rows):\n    return ''\n\n\ndef legend(rows):"
    )
    builder.pr_branch(41, [("Round every report total", {"report.py": more})], start=base)
    builder.merge_pr(41, how="squash")

    other_strip = '    fields = [piece.strip() for piece in text.split(",")]\n'
    builder.pr_branch(
        2,
        [
            (
                "csv: trim fields",
                {"parser.py": PARSER.replace('    fields = text.split(",")\n', other_strip)},
            )
        ],
        start=base,
    )
    builder.pr_branch(6, [("Shorter constant name", {"units.py": noted})], start=base)
    builder.pr_branch(9, [("Do not translate newlines in y", {"y.py": y_fix})], start=base)
    builder.pr_branch(
        40,
        [("Round the report totals", {"report.py": tidy(tidy_three, "footer")})],
        start=base,
    )
    x_fix = X_MODULE.replace("open(path)", "open(path, encoding='utf-8')")
    y_read = Y_MODULE.replace(
        "def read_y(path):\n    handle = open(path)",
        "def read_y(path):\n    handle = open(path, 'rb')",
    )
    builder.pr_branch(30, [("Read x as UTF-8", {"x.py": x_fix})], start=base)
    builder.pr_branch(
        31, [("Fix file modes in x and y", {"x.py": x_fix, "y.py": y_read})], start=base
    )
    builder.pr_branch(32, [("Read y as bytes", {"y.py": y_read})], start=base)
    convert = UNITS.replace(
        "    return miles * KILOMETRES_PER_MILE\n",
        "    if miles is None:\n        raise ValueError('no distance given')\n"
        "    return miles * KILOMETRES_PER_MILE\n",
    )
    builder.pr_branch(50, [("Refuse a missing distance", {"units.py": convert})], start=base)
    builder.pr_branch(51, [("Raise on None miles", {"units.py": convert})], start=base)
    builder.pr_branch(
        60,
        [("Title in capitals", {"report.py": REPORT.replace("'title: '", "'TITLE: '")})],
        start=base,
    )
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    return builder


def sweep_json(repo: Path, *args: str) -> dict:
    code, out, err = run_cli(repo, "sweep", "--format", "json", "--exit-zero", *args)
    assert code == 0, err
    return json.loads(out)


def check_first(repo: Path, number: int) -> tuple | None:
    """(PR, verdict, commit) of the finding `check --pr N` shows first, if any."""
    code, out, err = run_cli(repo, "check", "--pr", str(number), "--format", "json")
    assert code in (0, 1), err
    findings = json.loads(out)["findings"]
    return (findings[0]["pr"], findings[0]["verdict"], findings[0]["commit"]) if findings else None


OPEN = (2, 6, 9, 30, 31, 32, 40, 50, 51, 60)


def test_the_sweep_gives_every_open_pr_checks_first_answer(triage: RepoBuilder):
    """The acceptance test: on every open PR of a repository with squashed, rebased, merged,
    partly landed and duplicated PRs, the sweep names the PR, verdict and landing commit that
    `check --pr N` shows first."""
    data = sweep_json(triage.path)
    assert data["stats"]["open_prs"] == len(OPEN)
    swept = {
        p["pr"]: (p["finding"]["pr"], p["finding"]["verdict"], p["finding"]["commit"])
        for p in data["prs"]
    }
    checked = {number: check_first(triage.path, number) for number in OPEN}
    assert swept == {n: first for n, first in checked.items() if first is not None}
    # The story has every class, so the comparison covered each of them.
    classes = {p["pr"]: p["class"] for p in data["prs"]}
    assert {2: "already-done", 6: "already-done", 9: "already-done"}.items() <= classes.items()
    assert classes[40] == "partly-done"
    assert {classes[n] for n in (32, 51)} == {"duplicate"}
    assert classes[30] == "related"  # the first PR is closed into no later one
    # #50 and #51 make one change; #51, opened later, is the copy to close, and #50's own
    # answer names it as related work, not as a PR to close #50 into.
    assert classes[50] == "related"


def test_already_done_names_the_landing_of_squashed_rebased_and_merged_prs(triage: RepoBuilder):
    data = sweep_json(triage.path)
    done = {d["pr"]: d for d in data["already_done"]}
    assert {n: d["by"] for n, d in done.items()} == {2: 1, 6: None, 9: 8}
    assert done[2]["commit"] == triage.head("main~4")  # #1's squashed commit
    assert done[6]["commit"] == triage.head("main~3")  # #5's first rebased commit
    assert done[9]["commit"] == triage.head("main~1")  # #8's merge commit
    assert all(d["reasons"] for d in done.values())


def test_duplicates_of_open_prs_are_one_group_per_kept_pr(triage: RepoBuilder):
    data = sweep_json(triage.path)
    groups = {g["keep"]: [m["pr"] for m in g["members"]] for g in data["groups"]}
    assert sorted(groups[31][1:]) == [32]
    assert sorted([keep, *members[1:]] for keep, members in groups.items() if keep != 31) == [
        [50, 51]
    ] or sorted([keep, *members[1:]] for keep, members in groups.items() if keep != 31) == [
        [51, 50]
    ]
    assert len(groups) == 2
    # 50 and 51 make one change: the older is kept, and only the later names it.
    [loop] = [g for g in data["groups"] if g["keep"] == 50]
    assert loop["keep_class"] == "related"
    assert [(m["pr"], m["against"]) for m in loop["members"]] == [(50, None), (51, 50)]


@pytest.mark.xfail(
    strict=True,
    reason="the sweep does not run check's target probe, which alone finds a landing whose "
    "commit has this PR's very patch when the index does not say whose commit it is",
)
def test_a_pr_identical_to_one_rebased_commit_is_done_in_the_sweep_too(builder: RepoBuilder):
    """#5 is rebase-merged as two commits; #6 is the first commit's patch exactly. The index
    does not name the commit against #6 (a commit with a PR's own patch is usually its own
    landing); `check --pr 6` finds it by probing the target, the sweep does not probe."""
    builder.commit("Add units", {"units.py": UNITS})
    base = builder.head()
    renamed = UNITS.replace("KILOMETRES_PER_MILE", "KM_PER_MILE")
    noted = "# Conversions between units.\n" + renamed
    builder.pr_branch(5, [("Rename", {"units.py": renamed}), ("Note", {"units.py": noted})])
    builder.merge_pr(5, how="rebase")
    builder.pr_branch(6, [("Shorter constant name", {"units.py": renamed})], start=base)
    assert run_cli(builder.path, "index", "--quiet")[0] == 0
    assert check_first(builder.path, 6) == (None, "already-merged", builder.head("main~1"))
    [answer] = sweep_json(builder.path)["prs"]
    assert answer["finding"]["commit"] == builder.head("main~1")


def test_partly_done_says_where_and_exactly_what_remains(triage: RepoBuilder):
    """#41 made three of #40's four edits: #40 is partly done in #41, and what remains is
    `footer`'s edit, on the lines #40's side holds it."""
    data = sweep_json(triage.path)
    [partly] = data["partly_done"]
    assert (partly["pr"], partly["by"], partly["state"]) == (40, 41, "merged")
    assert partly["commit"] == triage.head("main")  # #41's squashed landing
    assert 0.5 < partly["done_share"] < 1
    [remaining] = partly["remaining"]
    after = triage.git("show", "refs/pull/40/head:report.py").splitlines()
    first = after.index("    rounded_footer = round(total, 2)") + 1
    assert remaining == {"path": "report.py", "lines": [[first, first + 1]], "new_file": False}
    assert 40 not in {m["pr"] for g in data["groups"] for m in g["members"]}

    code, out, _ = run_cli(triage.path, "sweep")
    assert code == 1
    assert f"still to do: report.py (lines {first}-{first + 1})" in out
    code, out, _ = run_cli(triage.path, "sweep", "--fail-on", "partly-merged")
    assert code == 1  # shown, so --fail-on reads it
    code, out, _ = run_cli(triage.path, "sweep", "--format", "markdown", "--exit-zero")
    assert "| #40 | #41 |" in out and f"report.py (lines {first}-{first + 1})" in out


def test_every_format_lists_the_classes_in_the_same_order(triage: RepoBuilder, tmp_path: Path):
    code, text, _ = run_cli(triage.path, "sweep", "--exit-zero")
    headings = ["Already done", "Duplicates", "Partly done"]
    assert [text.index(h) for h in headings] == sorted(text.index(h) for h in headings)
    code, markdown, _ = run_cli(triage.path, "sweep", "--format", "markdown", "--exit-zero")
    assert [markdown.index(f"### {h}") for h in headings] == sorted(
        markdown.index(f"### {h}") for h in headings
    )
    out = tmp_path / "report.html"
    run_cli(triage.path, "sweep", "--format", "html", "--out", str(out), "--exit-zero")
    page = out.read_text()
    sections = ["Already done on the target", "Duplicate groups", "Partly done:"]
    assert [page.index(s) for s in sections] == sorted(page.index(s) for s in sections)
    assert '<tr data-text="#40' in page and "report.py (lines" in page


def test_related_work_is_listed_last_and_folded(triage: RepoBuilder, tmp_path: Path):
    """#31's own answer is an overlap with #30 (it does more than #30), #30's with #32, and
    #50's with #51 (each earlier than the PR it names): no claim, so they are related work: a
    count and a short list in text, a folded section in markdown and HTML. What they share is
    said, not a score that would read as the odds of a duplicate (1.00)."""
    data = sweep_json(triage.path)
    related = [(r["pr"], r["to"], r["verdict"]) for r in data["related"]]
    assert related == [(30, 32, "overlap"), (31, 30, "overlap"), (50, 51, "overlap")]
    _, text, _ = run_cli(triage.path, "sweep", "--exit-zero")
    last = text.splitlines()[-1]
    assert last.startswith("Related work (no claim), 3 PR(s): #30 overlaps #32 (")
    assert "#31 overlaps #30 (shares lines in load_x)" in last
    assert "#50 overlaps #51 (shares lines in miles_to_kilometres)" in last
    _, checked, _ = run_cli(triage.path, "check", "--pr", "31")
    assert "Overlaps #30  [unmerged, shares lines in load_x]" in checked, checked
    _, markdown, _ = run_cli(triage.path, "sweep", "--format", "markdown", "--exit-zero")
    folded = markdown[markdown.index("<details>") :]
    assert folded.startswith("<details><summary>Related work (no claim): 3 PR(s)</summary>")
    assert "| #31 | overlap | #30 |" in folded and folded.rstrip().endswith("</details>")
    out = tmp_path / "report.html"
    run_cli(triage.path, "sweep", "--format", "html", "--out", str(out), "--exit-zero")
    page = out.read_text()
    folded = page[page.index('<details class="related">') :]
    assert "Related work (no claim): 3 PR(s)" in folded and "overlap" in folded
    assert page.index("Partly done:") < page.index('<details class="related">')


def test_what_remains_is_listed_file_by_file_and_shortened_only_in_words():
    hunks = [RemainingHunk("a.py", n * 10, n * 10 + 2) for n in range(1, 9)]
    found = SweptFinding(
        change_id=1,
        pr=4,
        commit="c" * 40,
        state="merged",
        verdict="partly-merged",
        score=0.9,
        remaining=(*hunks, RemainingHunk("new.py", 1, 5, new_file=True)),
    )
    assert found.remaining_by_file == [
        ("a.py", False, [(n * 10, n * 10 + 2) for n in range(1, 9)]),
        ("new.py", True, [(1, 5)]),
    ]
    assert found.remaining_text(2) == [
        "a.py (lines 10-12, lines 20-22, 6 more)",
        "new.py (new file, lines 1-5)",
    ]
    assert len(found.remaining_text()[0].split(", ")) == 8


def test_a_duplicate_that_does_a_little_more_says_what_is_not_in_the_kept_pr():
    """#7 is closed into #8 though one hunk of it is not in #8: the group lists it."""
    extra = RemainingHunk("b.py", 4, 6)
    found = SweptFinding(1, 8, "h" * 40, "open", "duplicate", 0.95, remaining=(extra,))
    pulls = {n: PullInfo(n, "open", f"PR {n}") for n in (7, 8)}
    stats = SweepStats(2, 2, 2, 0, 0.1, 1)
    result = SweepResult([Group(8, (8, 7))], [], pulls, {7: [found], 8: []}, stats, 0.7)
    [member] = result.to_json()["groups"][0]["members"][1:]
    assert member["remaining"] == [{"path": "b.py", "lines": [[4, 6]], "new_file": False}]
    assert "    not in #8: b.py (lines 4-6)" in to_text(result).splitlines()
