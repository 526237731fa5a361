"""`prdup sweep` end to end: real repositories, a real index, the real CLI, a real browser.

The story: `parse_csv_line` keeps the spaces around fields. PR 1 fixes it and is merged; PRs 2
and 3, opened from the older base, make the same fix in their own words. PR 5 renames a unit
and is merged; PR 6 is the very same patch, still open. PRs 20 and 21 change other functions of
the same file. PR 30 fixes x.py, PR 32 fixes y.py, and PR 31 makes both fixes at once: 30~31
and 31~32, while 30 and 32 share nothing: 31 is the PR to keep, 30 and 32 close into it.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from cli import main
from detector.evidence import DECIDING_VERDICTS, ChangeEvidence, LineWeights
from detector.grouping import (
    Link,
    Pull,
    answers,
    done_answers,
    done_through_kept,
    group_by_kept,
    shares_code,
)
from detector.matcher import Query, match
from index.config import Settings
from index.git import gitsource
from index.github import dismissals
from index.indexer import index_repository
from index.questions import lookup, whole_lines
from index.questions.candidates import read_change_rows
from index.questions.replay_memory import ReplayMemory
from index.storage.store import IndexStore
from prdup import sweep as sweep_module
from prdup.checking import _check_pr, pr_span
from prdup.checking import whole_lines as whole_lines_of
from prdup.sweep import sweep
from tests.repo_builder import RepoBuilder

PARSER = """def parse_csv_line(text):
    fields = text.split(",")
    return [field for field in fields if field]


def parse_header(text):
    names = text.split(";")
    return names


def parse_number(text):
    value = int(text)
    return value
"""
UNITS = """KILOMETRES_PER_MILE = 1.609344


def miles_to_kilometres(miles):
    return miles * KILOMETRES_PER_MILE
"""
X_MODULE = """def load_x(path):
    handle = open(path)
    return handle.read()
"""
Y_MODULE = """def save_y(path, payload):
    handle = open(path, "w")
    handle.write(payload)
"""
BUG = '    fields = text.split(",")\n'
TITLE_WITH_HTML = "Strip <b>fields</b> & <script>alert(1)</script>"
SETTINGS = """import os


def load_settings(path):
    return None


def save_settings(path, settings):
    with open(path, "w") as handle:
        handle.write(settings)
"""
READ = "    return read_text(path)\n"
READ_UTF8 = "    return read_text(path, 'utf-8')\n"


def run(repo: Path, *args: str) -> tuple[int, str, str]:
    runner = CliRunner()
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        result = runner.invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(cwd)
    return result.exit_code, result.stdout, result.stderr


def sweep_json(repo: Path, *args: str) -> dict:
    code, out, err = run(repo, "sweep", "--format", "json", *args)
    assert code in (0, 1), err
    return json.loads(out)


def grouped(data: dict) -> list[set[int]]:
    return [{m["pr"] for m in group["members"]} for group in data["groups"]]


@pytest.fixture
def backlog(builder: RepoBuilder) -> RepoBuilder:
    builder.commit(
        "Add the parsers",
        {
            "parser.py": PARSER,
            "units.py": UNITS,
            "x.py": X_MODULE,
            "y.py": Y_MODULE,
        },
    )
    base = builder.head()
    builder.pr_branch(
        1,
        [
            (
                "Strip spaces around CSV fields",
                {
                    "parser.py": PARSER.replace(
                        BUG, '    fields = [part.strip() for part in text.split(",")]\n'
                    )
                },
            )
        ],
    )
    builder.merge_pr(1, how="squash")
    builder.pr_branch(
        5,
        [
            (
                "Name the mile constant",
                {"units.py": UNITS.replace("KILOMETRES_PER_MILE", "KM_PER_MILE")},
            )
        ],
    )
    builder.merge_pr(5, how="merge")
    builder.pr_branch(
        2,
        [
            (
                TITLE_WITH_HTML,
                {
                    "parser.py": PARSER.replace(
                        BUG, '    fields = [piece.strip() for piece in text.split(",")]\n'
                    )
                },
            )
        ],
        start=base,
    )
    builder.pr_branch(
        3,
        [
            (
                "csv: ignore whitespace",
                {
                    "parser.py": PARSER.replace(
                        BUG, '    fields = list(map(str.strip, text.split(",")))\n'
                    )
                },
            )
        ],
        start=base,
    )
    builder.pr_branch(
        6,
        [
            (
                "Shorter constant name",
                {"units.py": UNITS.replace("KILOMETRES_PER_MILE", "KM_PER_MILE")},
            )
        ],
        start=base,
    )
    builder.pr_branch(
        20,
        [
            (
                "Lower-case header names",
                {
                    "parser.py": PARSER.replace(
                        '    names = text.split(";")\n',
                        '    names = [name.lower() for name in text.split(";")]\n',
                    )
                },
            )
        ],
        start=base,
    )
    builder.pr_branch(
        21,
        [
            (
                "Accept padded numbers",
                {
                    "parser.py": PARSER.replace(
                        "    value = int(text)\n", "    value = int(text.strip() or 0)\n"
                    )
                },
            )
        ],
        start=base,
    )
    x_fix = X_MODULE.replace("open(path)", "open(path, encoding='utf-8')")
    y_fix = Y_MODULE.replace('open(path, "w")', 'open(path, "w", newline="")')
    builder.pr_branch(30, [("Read x as UTF-8", {"x.py": x_fix})], start=base)
    builder.pr_branch(
        31, [("Fix file modes in x and y", {"x.py": x_fix, "y.py": y_fix})], start=base
    )
    builder.pr_branch(32, [("Write y without newline translation", {"y.py": y_fix})], start=base)
    code, _, err = run(builder.path, "index", "--quiet")
    assert code == 0, err
    return builder


# --- end to end -----------------------------------------------------------------------------


def test_prs_a_merged_pr_already_made_are_done_not_grouped(backlog: RepoBuilder):
    """PRs 2 and 3 redo merged PR 1's fix: `check --pr 2` says "already done in #1" first, so
    the sweep lists them once, as done by #1, and in no group."""
    data = sweep_json(backlog.path)
    done = {d["pr"]: d for d in data["already_done"]}
    assert done[2]["by"] == done[3]["by"] == 1
    assert done[2]["title"] == TITLE_WITH_HTML and done[2]["reasons"]
    assert not any({1, 2, 3} & members for members in grouped(data))


def test_open_pr_already_on_the_target_is_listed_as_done(backlog: RepoBuilder):
    done = {d["pr"]: d for d in sweep_json(backlog.path)["already_done"]}
    assert done[6]["by"] == 5
    assert done[6]["score"] >= 0.5
    assert {2, 3} <= set(done)  # the merged fix made them done too
    assert not {20, 21, 30, 31, 32} & set(done)


def test_unrelated_prs_in_the_same_file_are_not_grouped(backlog: RepoBuilder):
    for members in grouped(sweep_json(backlog.path)):
        assert not members & {20, 21}


def test_a_pr_making_two_fixes_is_kept_once_for_both(backlog: RepoBuilder):
    """31 makes both 30's and 32's fix: one group keeps 31 and closes 32 into it, with its
    own evidence (it names 31). 30 came first: it is closed into no later PR, and its answer
    says 31 makes its change too."""
    data = sweep_json(backlog.path)
    [group] = [g for g in data["groups"] if g["keep"] == 31]
    assert [m["pr"] for m in group["members"]] == [31, 32]
    for member in group["members"][1:]:
        assert member["verdict"] in ("duplicate", "covered") and member["against"] == 31
    assert sum(31 in members for members in grouped(data)) == 1
    [first] = [p for p in data["prs"] if p["pr"] == 30]
    assert first["class"] == "related" and first["finding"]["verdict"] == "overlap"


def test_json_is_the_documented_surface(backlog: RepoBuilder):
    data = sweep_json(backlog.path, "--exit-zero")
    assert data["schema_version"] == 2
    keys = ["schema_version", "min_score", "stats", "counts", "already_done", "superseded"]
    keys += ["groups", "partly_done"]
    assert list(data) == [*keys, "related", "prs"]
    # The PRs to close: those already done and the members of groups, never a kept PR.
    members = sum(len(g["members"]) - 1 for g in data["groups"])
    assert data["counts"]["to_close"] == len(data["already_done"]) + members
    assert data["counts"]["duplicate_groups"] == len(data["groups"])
    assert data["groups"], "the story has groups"
    for group in data["groups"]:
        assert set(group) == {"keep", "keep_class", "issues", "members"}
        assert group["members"][0]["pr"] == group["keep"]
        for member in group["members"]:
            assert set(member) >= {"pr", "state", "verdict", "score", "against", "commit"}
            assert member["verdict"] in ("keep", "duplicate", "covered")
            assert member["score"] is None or 0.5 <= member["score"] <= 1.0
    for done in data["already_done"]:
        assert set(done) >= {"pr", "by", "commit", "score", "title", "reasons"}
    # Each answered PR is in exactly the section its class names.
    where = {
        "already-done": {d["pr"] for d in data["already_done"]},
        "duplicate": {m["pr"] for g in data["groups"] for m in g["members"][1:]}
        | {g["keep"] for g in data["groups"] if g["keep_class"] == "duplicate"},
        "partly-done": {p["pr"] for p in data["partly_done"]},
        "related": {r["pr"] for r in data["related"]},
    }
    for answer in data["prs"]:
        assert [c for c, prs in where.items() if answer["pr"] in prs] == [answer["class"]]
    code, out, _ = run(backlog.path, "sweep")
    assert code == 1
    assert out.index("Already done on the target") < out.index("Group 1: keep #")
    code, out, _ = run(backlog.path, "sweep", "--format", "markdown", "--exit-zero")
    assert code == 0 and "| #6 | #5 |" in out


def check_says(repo: Path, number: int) -> set[tuple]:
    """What `prdup check --pr N` says that the sweep keeps: every deciding finding."""
    code, out, err = run(
        repo, "check", "--pr", str(number), "--format", "json", "--min-score", "0", "--top", "999"
    )
    assert code in (0, 1), err
    return {
        (f["pr"], f["commit"], f["verdict"], f["score"], tuple(f["reasons"]))
        for f in json.loads(out)["findings"]
        if f["verdict"] in DECIDING_VERDICTS
    }


def sweep_says(found: list[sweep_module.SweptFinding]) -> set[tuple]:
    return {(f.pr, f.commit, f.verdict, f.score, f.reasons) for f in found if f.decides}


def assert_sweep_is_check(repo: Path) -> sweep_module.SweepResult:
    """For every open PR, the sweep's findings are `check --pr N`'s: same candidates,
    verdicts, scores and reasons (the sweep replays as check does)."""
    result = sweep(repo, None, jobs=1, full=True)
    assert result.stats.swept == result.stats.open_prs > 0
    for number, found in result.findings.items():
        assert sweep_says(found) == check_says(repo, number), number
    return result


def test_every_open_prs_sweep_findings_are_checks(backlog: RepoBuilder):
    result = assert_sweep_is_check(backlog.path)
    assert sum(len(found) for found in result.findings.values()) >= 6


def test_a_fix_written_differently_is_found_by_sweep_as_by_check(builder: RepoBuilder):
    """PR 1 replaced a stub's `return None` (too common a line to count as shared) and is
    merged; PR 2, from the older base, replaced it too, in its own words. They share no
    changed line, only the file and the names: the replay proves PR 2 done by PR 1, and the
    sweep, whose candidates come from check's own engine, says so too."""
    builder.commit("Add the settings module", {"settings.py": SETTINGS})
    base = builder.head()
    stub = "    return None\n"
    builder.pr_branch(
        1,
        [("Read the settings file", {"settings.py": SETTINGS.replace(stub, READ)})],
    )
    builder.merge_pr(1, how="squash")
    builder.pr_branch(
        2,
        [("Load settings from the file", {"settings.py": SETTINGS.replace(stub, READ_UTF8)})],
        start=base,
    )
    code, _, err = run(builder.path, "index", "--quiet")
    assert code == 0, err
    result = assert_sweep_is_check(builder.path)
    assert [(f.pr, f.verdict) for f in result.findings[2]] == [(1, "already-merged")]
    assert [(done.pr, done.by) for done in result.already_done] == [(2, 1)]


def test_sweep_without_the_repository_matches_check_without_it(backlog: RepoBuilder, db_path: Path):
    """An index on its own (no repository to replay in): the index's evidence alone decides,
    for the sweep as for check."""
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    result = sweep(None, db_path, jobs=1)
    assert any(result.findings.values())
    with IndexStore(db_path, create=False) as store:
        for number, found in result.findings.items():
            checked = _check_pr(store, None, number, "main", Settings(min_score=0), None)
            expected = {
                (f.candidate.number, f.candidate.commit, f.verdict, round(f.score, 4), f.reasons)
                for f in checked.findings
                if f.decides
            }
            assert sweep_says(found) == expected, number


def test_a_second_sweep_reuses_everything_and_an_update_only_its_neighbours(
    backlog: RepoBuilder, db_path: Path
):
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    first = sweep(None, db_path, jobs=1)
    assert sorted(first.rechecked) == [2, 3, 6, 20, 21, 30, 31, 32]

    again = sweep(None, db_path, jobs=1)
    assert again.rechecked == [] and again.stats.reused == 8
    assert again.to_json()["groups"] == first.to_json()["groups"]

    # PR 7 makes the CSV fix once more: only it and the PRs sharing its lines are redone.
    backlog.pr_branch(
        7,
        [
            (
                "Trim CSV fields",
                {
                    "parser.py": PARSER.replace(
                        BUG, '    fields = [f.strip() for f in text.split(",")]\n'
                    )
                },
            )
        ],
        start="main~2",
    )
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    third = sweep(None, db_path, jobs=1)
    assert sorted(third.rechecked) == [2, 3, 7]
    assert {(d.pr, d.by) for d in third.already_done} >= {(2, 1), (3, 1), (7, 1)}

    # A moved head is redone; so is everyone who found it.
    backlog.pr_branch(
        6,
        [
            (
                "Shorter constant name, again",
                {"units.py": UNITS.replace("KILOMETRES_PER_MILE", "KM_IN_A_MILE")},
            )
        ],
        start="main~2",
    )
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    assert sorted(sweep(None, db_path, jobs=1).rechecked) == [6]

    # A retitled PR (metadata refreshed by `index --github`) is redone, with those it found
    # and those that found it: text and the same-author rule read the row, not the diff.
    with IndexStore(db_path) as store:
        assert store.changes.update_metadata(6, {"title": "Rename the mile constant"}, ())
    assert sorted(sweep(None, db_path, jobs=1).rechecked) == [6]
    # What each sweep saw is kept, the changes that moved written again: the next has no work,
    # and every change of the index is remembered.
    assert sweep(None, db_path, jobs=1).rechecked == []
    with IndexStore(db_path) as store:
        seen = list(store.rows("SELECT count(*) FROM sweep_seen"))
        changes = list(store.rows("SELECT count(*) FROM changes"))
    assert seen == changes

    # A maintainer says 3 is no duplicate of 2: only 2 is redone, and no longer names 3.
    with IndexStore(db_path) as store:
        dismissals.add_local(store, 2, 3, "maintainer", None)
    dismissed = sweep(None, db_path, jobs=1)
    assert dismissed.rechecked == [2]
    assert 3 not in {f.pr for f in dismissed.findings[2]}

    assert sweep(None, db_path, jobs=1, min_score=0.9).rechecked == []  # scores are kept
    assert sweep(None, db_path, jobs=1, full=True).stats.rechecked == 9


def every_finding(result: sweep_module.SweepResult, numbers: tuple[int, ...]) -> list[list]:
    """These PRs' findings, related ones included, in the sweep's order (the other PRs' may
    differ from a full sweep's by the drift of word weights: cached, and not followed)."""
    return [
        [(f.pr, f.commit, f.verdict, f.score, f.reasons) for f in result.findings[number]]
        for number in numbers
    ]


def test_a_new_pr_related_to_a_cached_one_is_placed_among_its_findings(
    backlog: RepoBuilder, db_path: Path
):
    """PR 8 adds a table reader in a new file, one of whose lines PR 20 (lower-case header
    names) writes in the parser: both open, related, neither the other's change. The re-sweep
    after PR 8 is indexed checks PR 8 and places PR 8's finding (related: no claim, no replay)
    among PR 20's cached findings without matching PR 20 again; both PRs' findings are those
    of a full sweep on the same index."""
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    sweep(None, db_path, jobs=1)
    backlog.pr_branch(
        8,
        [
            (
                "Read the header of a table file",
                {
                    "table.py": (
                        "def read_table_header(path, text):\n"
                        '    names = [name.lower() for name in text.split(";")]\n'
                        "    return dict.fromkeys(names, path)\n"
                    )
                },
            )
        ],
        start="main~2",
    )
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    again = sweep(None, db_path, jobs=1)
    assert again.rechecked == [8]  # PR 20 shares a rare line with it, and is not matched again
    assert 8 in {f.pr for f in again.findings[20]}
    assert not any(f.decides for f in again.findings[20] if f.pr == 8)
    full = sweep(None, db_path, jobs=1, full=True)
    assert every_finding(again, (8, 20)) == every_finding(full, (8, 20))


CUT_AT_TWENTY = Settings(max_unmerged_lines=20)


def index_a_cut_catalogue(builder: RepoBuilder, db_path: Path) -> tuple[str, Settings]:
    """PR 40: a first shelf and a catalogue of forty entries, indexed cut at twenty lines (the
    first file's kept); the commit it starts from, and the settings."""
    builder.commit("Start", {"README.md": "A catalogue\n"})
    base = builder.head()
    entries = "".join(
        f"    register_entry('shelf-{n}', weight={n * 7}, colour='c{n}')\n" for n in range(40)
    )
    first = "def first_shelf():\n    register_entry('shelf-17', weight=119, colour='c17')\n"
    catalogue = {"a_shelf.py": first, "catalog.py": "def fill():\n" + entries}
    builder.pr_branch(40, [("Add the catalogue", catalogue)])
    index_repository(builder.path, db_path=db_path, settings=CUT_AT_TWENTY)
    return base, CUT_AT_TWENTY


def index_an_exporter_of_its_entry(
    builder: RepoBuilder, db_path: Path, base: str, settings: Settings, entry: int = 17
) -> None:
    """PR 41, from `base`: an exporter that writes one of the catalogue's entries again (by
    default the first shelf's)."""
    exporter = (
        "def export_sample():\n"
        f"    register_entry('shelf-{entry}', weight={entry * 7}, colour='c{entry}')\n"
        "    return write_export('sample.csv')\n"
    )
    builder.pr_branch(41, [("Export a sample shelf", {"export.py": exporter})], start=base)
    index_repository(builder.path, db_path=db_path, settings=settings)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_cached_pr_stored_cut_is_read_whole_to_place_a_new_prs_finding(
    builder: RepoBuilder, db_path: Path, jobs: int, monkeypatch: pytest.MonkeyPatch
):
    """PR 40 adds a first shelf and a catalogue of forty entries, stored cut at twenty lines
    (the first file's kept); PR 41 then adds an exporter that writes the first shelf's entry
    again. The re-sweep replays in the repository:
    PR 40 is read whole from git (as `check` reads it), PR 41's finding placed among its cached
    ones without matching it again, and both PRs' findings are a full sweep's: in this
    process, and in the matching processes beside the PR matched again."""
    monkeypatch.setattr(sweep_module, "MIN_PARALLEL_REPLAYING", 1)
    base, settings = index_a_cut_catalogue(builder, db_path)
    assert sweep(builder.path, db_path, jobs=1, settings=settings).rechecked == [40]
    index_an_exporter_of_its_entry(builder, db_path, base, settings)
    again = sweep(builder.path, db_path, jobs=jobs, settings=settings)
    assert again.rechecked == [41]
    assert 41 in {f.pr for f in again.findings[40]}
    full = sweep(builder.path, db_path, jobs=1, settings=settings, full=True)
    assert every_finding(again, (40, 41)) == every_finding(full, (40, 41))


def test_a_sweep_keeps_a_cut_prs_whole_lines_for_the_re_sweep(builder: RepoBuilder, db_path: Path):
    """The first sweep keeps what PR 40's whole diff says of its lines (stored cut, read whole
    from git) beside its replays: what reading the diff again gives. The re-sweep after PR 41
    places PR 41's finding among PR 40's cached ones from those kept lines, also once git no
    longer has PR 40's commits (its ref deleted, its objects pruned)."""
    base, settings = index_a_cut_catalogue(builder, db_path)
    first_sweep = sweep(builder.path, db_path, jobs=1, settings=settings)
    repo = gitsource.open_repository(builder.path)
    with IndexStore(db_path) as store:
        row = store.changes.row(40)
        assert row is not None and row["truncated"]
        start, head = pr_span(row)
        assert start is not None and head is not None
        kept = whole_lines.read(ReplayMemory(store), start, head, settings)
        read_again = whole_lines_of(repo, row, settings)
    assert kept is not None and kept == read_again
    # The same order too: a reason quotes the first of its shared lines.
    assert [list(kept.lines.added), list(kept.lines.line_text)] == [
        list(read_again.lines.added),
        list(read_again.lines.line_text),
    ]
    assert "catalog.py" in kept.lines.files and len(kept.lines.added) == 42
    index_an_exporter_of_its_entry(builder, db_path, base, settings)
    builder.git("update-ref", "-d", "refs/pull/40/head")
    builder.git("branch", "-D", "pr-40")
    builder.git("reflog", "expire", "--expire=now", "--all")
    builder.git("gc", "--prune=now", "--quiet")
    with pytest.raises(git.GitCommandError):
        builder.git("cat-file", "-e", head)
    # Read now, git prints no diff for it (as for a head not fetched): nothing is kept.
    memory = ReplayMemory(None)
    gone = whole_lines_of(repo, row, settings, memory, diffs={(start, head): ""})
    assert gone is not None and not gone.lines.files and memory.take() == []
    again = sweep(builder.path, db_path, jobs=1, settings=settings)
    assert again.rechecked == [41]
    assert 41 in {f.pr for f in again.findings[40]}
    assert [f.pr for f in again.findings[40] if f.pr != 41] == [
        f.pr for f in first_sweep.findings[40]
    ]


def test_a_pr_stored_cut_is_handed_out_as_costly_as_its_cut(builder: RepoBuilder, db_path: Path):
    """PR 40's row keeps two of its 44 lines (stored cut at twenty), PR 41 has three: matching
    reads PR 40 whole, so the matching processes get it first, as a PR of twenty lines at
    least, not as the two its row counts."""
    base, settings = index_a_cut_catalogue(builder, db_path)
    index_an_exporter_of_its_entry(builder, db_path, base, settings)
    with IndexStore(db_path) as store:
        snapshot = read_change_rows(store)
    rows = {row.number: row for row in snapshot.values() if row.number in (40, 41)}
    assert rows[40].truncated and not rows[41].truncated
    assert rows[40].added + rows[40].removed < rows[41].added + rows[41].removed
    cost = sweep_module._matching_cost([40, 41], snapshot, settings.max_unmerged_lines)
    assert cost == {40: 20, 41: rows[41].added + rows[41].removed}


def test_a_new_pr_sharing_only_lines_past_a_cut_is_placed_among_the_cut_prs_findings(
    builder: RepoBuilder, db_path: Path
):
    """PR 41, new since the first sweep, writes the catalogue's last entry again: a line past
    PR 40's cut, which no line PR 40's row keeps shares. The first sweep kept PR 40's whole
    lines; by them the re-sweep knows PR 41 shares a line with it, and places PR 41's finding
    among PR 40's cached ones, as a full sweep finds it."""
    base, settings = index_a_cut_catalogue(builder, db_path)
    sweep(builder.path, db_path, jobs=1, settings=settings)
    index_an_exporter_of_its_entry(builder, db_path, base, settings, entry=39)
    again = sweep(builder.path, db_path, jobs=1, settings=settings)
    assert again.rechecked == [41]
    full = sweep(builder.path, db_path, jobs=1, settings=settings, full=True)
    assert 41 in {f.pr for f in full.findings[40]}
    assert every_finding(again, (40, 41)) == every_finding(full, (40, 41))


def test_a_cached_pr_whose_related_change_moved_is_matched_again(
    builder: RepoBuilder, db_path: Path
):
    """PR 40 (stored cut) lists PR 41 as related: both write the first shelf's entry. PR 41 is
    pushed again writing the catalogue's last entry instead, a line past PR 40's cut that no
    line PR 40's row keeps shares. PR 40's cached finding of PR 41 no longer says what PR 41
    is: the re-sweep matches PR 40 again, and its findings are a full sweep's."""
    base, settings = index_a_cut_catalogue(builder, db_path)
    index_an_exporter_of_its_entry(builder, db_path, base, settings)
    first = sweep(builder.path, db_path, jobs=1, settings=settings)
    assert 41 in {f.pr for f in first.findings[40]}
    index_an_exporter_of_its_entry(builder, db_path, base, settings, entry=39)
    again = sweep(builder.path, db_path, jobs=1, settings=settings)
    assert sorted(again.rechecked) == [40, 41]
    full = sweep(builder.path, db_path, jobs=1, settings=settings, full=True)
    assert every_finding(again, (40, 41)) == every_finding(full, (40, 41))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_new_pr_that_decides_about_a_cached_one_has_it_matched_again(
    backlog: RepoBuilder, db_path: Path, jobs: int, monkeypatch: pytest.MonkeyPatch
):
    """PR 9 is PR 20's patch again: a claim about PR 20 is no finding to place among cached
    ones (it changes PR 20's answer and groups), so PR 20 is matched again: in this process,
    or, with two, by the matching processes once PR 9 is handed to them (this process tries
    to place the finding meanwhile)."""
    monkeypatch.setattr(sweep_module, "MIN_PARALLEL", 1)
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    sweep(None, db_path, jobs=1)
    backlog.pr_branch(
        9,
        [
            (
                "Lower-case the header names",
                {
                    "parser.py": PARSER.replace(
                        '    names = text.split(";")\n',
                        '    names = [name.lower() for name in text.split(";")]\n',
                    )
                },
            )
        ],
        start="main~2",
    )
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    again = sweep(None, db_path, jobs=jobs)
    assert sorted(again.rechecked) == [9, 20]
    assert any(f.decides and f.pr == 9 for f in again.findings[20])
    full = sweep(None, db_path, jobs=1, full=True)
    assert every_finding(again, (9, 20)) == every_finding(full, (9, 20))


LOWER_CASE_HEADERS = PARSER.replace(
    '    names = text.split(";")\n', '    names = [name.lower() for name in text.split(";")]\n'
)


def test_a_cached_pr_a_limited_sweep_leaves_out_is_matched_again_later(
    backlog: RepoBuilder, db_path: Path
):
    """PR 40 is PR 20's patch again; a `--limit 1` sweep takes PR 40 alone. PR 20's cached
    row no longer holds: it goes, and the next sweep matches PR 20 again (a duplicate of 40)."""
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    sweep(None, db_path, jobs=1)
    backlog.pr_branch(40, [("Lower-case the headers", {"parser.py": LOWER_CASE_HEADERS})])
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    assert sorted(sweep(None, db_path, jobs=1, limit=1).findings) == [40]
    again = sweep(None, db_path, jobs=1)
    assert 20 in again.rechecked
    assert any(f.decides and f.pr == 40 for f in again.findings[20])
    full = sweep(None, db_path, jobs=1, full=True)
    assert every_finding(again, (20,)) == every_finding(full, (20,))


def test_a_cached_pr_is_matched_again_when_another_new_change_shares_no_rare_line(
    backlog: RepoBuilder, db_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """With every line in more than two changes common, PR 8 shares a rare line with PR 20
    and PRs 9 and 10 share only common lines with it (the line it edits): their findings come
    from the whole lookup, so PR 20 is matched again, not given PR 8's finding alone."""
    monkeypatch.setattr(lookup, "rare_line_limit", lambda total: 2)
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    sweep(None, db_path, jobs=1)
    table = (
        "def read_table_header(path, text):\n"
        '    names = [name.lower() for name in text.split(";")]\n'
        "    return dict.fromkeys(names, path)\n"
    )
    backlog.pr_branch(8, [("Read the header of a table file", {"table.py": table})], start="main~2")
    for number, new in (
        (9, "[n for n in text.split(';') if n]"),
        (10, "[n.strip() for n in text.split(';')]"),
    ):
        edited = PARSER.replace('    names = text.split(";")\n', f"    names = {new}\n")
        backlog.pr_branch(
            number, [(f"Header names, {number}", {"parser.py": edited})], start="main~2"
        )
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    again = sweep(None, db_path, jobs=1)
    assert 20 in again.rechecked
    full = sweep(None, db_path, jobs=1, full=True)
    assert every_finding(again, (20,)) == every_finding(full, (20,))


def test_limit_sweeps_the_newest_prs(backlog: RepoBuilder, db_path: Path):
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    result = sweep(None, db_path, jobs=1, limit=3)
    assert sorted(result.findings) == [30, 31, 32]
    assert result.stats.open_prs == 8 and result.stats.swept == 3


def test_two_processes_find_what_one_finds(
    backlog: RepoBuilder, db_path: Path, monkeypatch: pytest.MonkeyPatch
):
    run(backlog.path, "index", "--quiet", "--db", str(db_path))
    one = sweep(None, db_path, jobs=1, full=True).to_json()
    monkeypatch.setattr(sweep_module, "MIN_PARALLEL", 1)
    two = sweep(None, db_path, jobs=2, full=True).to_json()
    del one["stats"], two["stats"]
    assert two == one


def test_sweep_without_a_terminal_prints_plain_progress_lines(backlog: RepoBuilder):
    """A sweep in CI or in the background (stderr not a terminal) says it is moving, as
    `prdup index` does: a line when a step starts, every few seconds, and when it ends."""
    run(backlog.path, "index", "--quiet")
    code, _, err = run(backlog.path, "sweep", "--format", "json", "--jobs", "1")
    assert code in (0, 1)
    lines = err.splitlines()
    checked = [line for line in lines if line.startswith("prdup sweep: checking open PRs ")]
    assert checked[0].startswith("prdup sweep: checking open PRs 1/")
    done, total = checked[-1].split()[-1].split("/")
    assert done == total


def test_plain_sweep_progress_beats_while_the_index_is_read():
    import io
    import time

    from prdup.progress import sweep_progress

    stream = io.StringIO()
    with sweep_progress(stream=stream, every=0.05) as report:
        time.sleep(1.2)
        report(1, 2)
        report(2, 2)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "prdup sweep: reading the index"  # said by the heartbeat, once it lasts
    assert any(line.startswith("prdup sweep: reading the index (") for line in lines)
    assert lines[-1].startswith("prdup sweep: checking open PRs 2/2")


def test_sweep_without_an_index_is_an_error(builder: RepoBuilder):
    builder.commit("Add the parsers", {"parser.py": PARSER})
    code, _, err = run(builder.path, "sweep")
    assert code == 2 and "prdup index" in err


# --- the HTML report ------------------------------------------------------------------------


def write_report(repo: Path, tmp_path: Path) -> Path:
    out = tmp_path / "report.html"
    code, _, err = run(repo, "sweep", "--format", "html", "--out", str(out))
    assert code == 1, err
    return out


def test_html_report_is_self_contained_and_escapes_pr_text(backlog: RepoBuilder, tmp_path):
    page = write_report(backlog.path, tmp_path).read_text()
    assert "<script>alert(1)</script>" not in page
    assert "Strip &lt;b&gt;fields&lt;/b&gt; &amp; &lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "http://" not in page and "https://" not in page
    assert page.count('<section class="group"') == len(grouped(sweep_json(backlog.path)))
    assert "{{" not in page


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def browser(found: str | None = CHROMIUM) -> str:
    """Headless Chromium, or a skip; in CI (`CI=true`) a missing browser fails the run, so
    the report is never left untested without anyone noticing."""
    if found is None:
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(
                "CI=true and chromium is not installed: install it (apt-get install chromium)"
            )
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def dump_dom(page: Path, profile: Path, fragment: str = "") -> str:
    completed = subprocess.run(
        [
            browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.as_uri() + fragment,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return completed.stdout


def test_html_report_in_a_real_browser(backlog: RepoBuilder, tmp_path: Path):
    browser()
    page = write_report(backlog.path, tmp_path)
    groups = len(grouped(sweep_json(backlog.path)))

    dom = dump_dom(page, tmp_path / "profile")
    assert 'data-js="ready"' in dom
    assert f'data-shown-groups="{groups}"' in dom
    assert f"{groups} of {groups} groups" in dom
    assert 'data-rank="1"' in dom
    assert "<script>alert(1)</script>" not in dom.split("<script>")[0]
    # The chart of the classes is drawn: one bar for each class that has PRs.
    data = sweep_json(backlog.path)
    drawn = re.findall(r'<rect class="bar" data-class="([^"]+)"', dom)
    assert drawn[0] == "already done" and "duplicates" in drawn
    assert len(drawn) == sum(
        1
        for count in (
            data["counts"]["already_done"],
            data["counts"]["superseded"],
            data["counts"]["to_close"] - data["counts"]["already_done"],
            data["counts"]["partly_done"],
            data["counts"]["related"],
        )
        if count
    )

    filtered = dump_dom(page, tmp_path / "profile", "#q=%2331&sort=keep")
    assert 'data-shown-groups="1"' in filtered  # the one group kept by #31
    assert 'data-sorted-by="keep"' in filtered
    assert f"1 of {groups} groups" in filtered


def test_a_missing_browser_fails_in_ci_and_skips_elsewhere(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true and chromium is not installed"):
        browser(None)
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        browser(None)
    assert browser("/usr/bin/chromium") == "/usr/bin/chromium"


# --- the grouping rules, on plain values ----------------------------------------------------


def grouping(pulls: dict[int, Pull], links: list[Link], issues=None) -> list[set[int]]:
    groups = group_by_kept(pulls, answers(links, 0.5), links, issues or {}, 0.5)
    return [set(g.members) for g in groups]


def test_a_kept_pr_with_many_duplicates_is_one_group():
    """Five PRs say they are #11 again (two through another member): one group keeps #11."""
    pulls = {n: Pull(n, "open", 4) for n in range(10, 16)}
    links = [
        Link(10, 11, "duplicate", 0.9),
        Link(12, 11, "covered", 0.9),
        Link(13, 12, "duplicate", 0.9),  # 12 closes into 11: 13 joins 11's group
        Link(14, 13, "duplicate", 0.8),
        Link(15, 11, "duplicate", 0.95),
        Link(11, 15, "duplicate", 0.9),  # 11 and 15 name each other: one loop, one group
    ]
    groups = group_by_kept(pulls, answers(links, 0.5), links, {}, 0.5)
    assert [(g.keep, set(g.members)) for g in groups] == [(11, set(range(10, 16)))]


def test_the_kept_pr_of_a_loop_is_the_merged_then_the_earliest_opened():
    """Where answers do not say which PR to keep (they name each other in a loop), a
    maintainer keeps the one that landed, else the one opened first, however large the
    others are."""
    links = [Link(a, b, "duplicate", 0.9) for a, b in ((4, 5), (5, 6), (6, 4))]
    open_pulls = {4: Pull(4, "open", 3), 5: Pull(5, "open", 9), 6: Pull(6, "open", 9)}
    assert group_by_kept(open_pulls, answers(links, 0.5), links, {}, 0.5)[0].keep == 4
    merged = {**open_pulls, 6: Pull(6, "merged", 1)}
    assert group_by_kept(merged, answers(links, 0.5), links, {}, 0.5)[0].keep == 6


def test_a_group_whose_kept_pr_is_done_is_done_all_of_it():
    """#11 is already done by #3; #12 and #13 duplicate #11 (#13 names #3 itself): all three
    are already done by #3, #12 through #11, and no group keeps #11. A group whose kept PR
    landed (#21, merged, in a loop with #20) is done by it."""
    pulls = {n: Pull(n, "open") for n in (11, 12, 13, 20)} | {21: Pull(21, "merged")}
    links = [
        Link(11, 3, "already-merged", 0.95, "merged", commit="c3"),
        Link(12, 11, "duplicate", 0.9),
        Link(13, 11, "duplicate", 0.9),
        Link(20, 21, "duplicate", 0.8),
        Link(21, 20, "duplicate", 0.8),
    ]
    answered = answers(links, 0.5)
    groups = group_by_kept(pulls, answered, links, {}, 0.5)
    assert {g.keep for g in groups} == {11, 21}
    kept, done = done_through_kept(groups, answered, pulls)
    assert kept == []
    assert sorted((d.pr, d.by, d.commit, d.through) for d in done) == [
        (12, 3, "c3", 11),
        (13, 3, "c3", 11),
        (20, 21, None, None),
    ]


def test_prs_naming_the_same_issue_are_one_group():
    """Fixes of #7 ended in two groups by their answers (20 and 22 name 21, 23 names 24); 22
    also duplicates 23 (a deciding link, not its answer): both groups name #7, so they are one.
    #30 names #7 too but has only an overlap with them: it joins nothing."""
    pulls = {n: Pull(n, "open", 4) for n in (20, 21, 22, 23, 24, 30, 31)}
    links = [
        Link(20, 21, "duplicate", 0.95),
        Link(22, 21, "duplicate", 0.95),
        Link(22, 23, "duplicate", 0.9),
        Link(23, 24, "covered", 0.9),
        Link(30, 31, "duplicate", 0.9),
        Link(30, 20, "overlap", 0.9),
    ]
    issues = {n: frozenset({"#7"}) for n in (20, 22, 23, 30)}
    assert grouping(pulls, links, issues) == [{20, 21, 22, 23, 24}, {30, 31}]
    assert sorted(map(len, grouping(pulls, links))) == [2, 2, 3]  # without the issue: apart


def test_no_group_chains_through_a_weak_link():
    """13's answer names 12 below the threshold, and 14's is an overlap: neither joins 11's
    group, though 12 is in it; 15 names the same issue as 10 with a weak link only."""
    pulls = {n: Pull(n, "open", 4) for n in range(10, 16)}
    links = [
        Link(10, 11, "duplicate", 0.9),
        Link(12, 11, "covered", 0.9),
        Link(13, 12, "duplicate", 0.4),
        Link(14, 12, "overlap", 0.95),
        Link(15, 16, "duplicate", 0.9),
        Link(15, 10, "duplicate", 0.3),
    ]
    issues = {10: frozenset({"#3"}), 15: frozenset({"#3"})}
    assert grouping(pulls, links, issues) == [{10, 11, 12}, {15, 16}]


def test_a_prs_answer_is_its_first_finding_at_or_above_the_threshold():
    links = [
        Link(1, 2, "already-merged", 0.4, "merged"),  # check hides it below 0.5
        Link(1, None, "already-merged", 0.95, "merged", commit="abc"),
        Link(1, 3, "already-merged", 0.99, "merged"),  # ranked after the commit by check
        Link(4, 1, "duplicate", 0.9, "open"),
    ]
    answered = answers(links, 0.5)
    assert [(d.pr, d.by, d.commit) for d in done_answers(answered)] == [(1, None, "abc")]
    assert answered[4].candidate == 1


def test_no_pair_decides_without_shared_code():
    """The sweep skips pairs sharing no code: on random changes, `match` never decides them."""
    rng = random.Random(7)
    weights = LineWeights({h: rng.choice([0, 1, 3, 8, 40, 90]) for h in range(40)}, 100)

    def lines(like: frozenset[int] = frozenset()) -> frozenset[int]:
        kept = {h for h in like if rng.random() < 0.8}
        return frozenset(kept | set(rng.sample(range(40), rng.randint(0, 5))))

    def change(number: int, like: ChangeEvidence | None = None) -> ChangeEvidence:
        return ChangeEvidence(
            key=f"#{number}",
            number=number,
            state=rng.choice(["open", "merged"]),
            removed=lines(like.removed if like else frozenset()),
            added=lines(like.added if like else frozenset()),
            files=frozenset(rng.sample(["a.py", "b.py"], rng.randint(0, 2))),
            issues=frozenset(rng.sample(["#1", "#2"], rng.randint(0, 1))),
            terms={"fix": 1.0} if rng.random() < 0.5 else {"docs": 1.0},
            patch_id="same" if rng.random() < 0.05 else None,
        )

    decided = apart = 0
    for trial in range(3000):
        query = change(1)
        candidate = change(trial + 2, like=query if trial % 2 else None)
        found = match(Query(query, reference_number=trial + 3), [candidate], weights)
        if found and found[0].decides:
            decided += 1
            assert shares_code(query, candidate), (query, candidate, found[0].signals)
        apart += not shares_code(query, candidate)
    assert decided > 300 and apart > 300  # both sides of the rule were exercised
