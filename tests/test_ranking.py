"""Which earlier PR is named first, and when shared code is not enough to call a duplicate.

The story: `Pipeline.__init__` reads the legacy flag `config.enable_cpu_offload`, and several
contributors replace it with the same line; the JSON of `prdup check --pr N` is what is read.
"""

from __future__ import annotations

import json

import pytest

from detector.evidence import ChangeEvidence, Finding, Signals
from detector.matcher import replay_reasons, worth_replaying
from detector.signals import is_backport
from index.questions import replay_memory
from index.storage.store import IndexStore, default_db_path
from prdup.sweep import sweep
from tests.repo_builder import RepoBuilder, run_cli
from tests.test_check import LEGACY, PIPELINE

FIX = "        if resolve_offload_strategy(config) == 'cpu':\n"
DECIDING = ("already-merged", "duplicate", "covered", "partly-merged")


def findings(builder: RepoBuilder, number: int) -> list[dict]:
    code, out, err = run_cli(
        builder.path, "check", "--pr", str(number), "--format", "json", "--min-score", "0"
    )
    assert code in (0, 1), err
    return json.loads(out)["findings"]


def index(builder: RepoBuilder) -> None:
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err


def add_pipeline(builder: RepoBuilder) -> str:
    """The story's starting point on main; returns that commit, where later PRs start."""
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE})
    return builder.head()


def test_among_identical_changes_the_merged_one_is_named_first(builder: RepoBuilder):
    base = add_pipeline(builder)
    fixed = {"pipeline.py": PIPELINE.replace(LEGACY, FIX)}
    builder.pr_branch(20, [("Resolve the offload strategy", fixed)])
    builder.merge_pr(20, how="merge")
    builder.pr_branch(21, [("Use the strategy resolver", fixed)], start=base)
    builder.pr_branch(22, [("Stop reading the legacy flag", fixed)], start=base)
    builder.pr_branch(23, [("Offload by strategy", fixed)], start=base)
    index(builder)

    found = findings(builder, 23)
    # #22 is the newest copy and scores as high, but #20 is the one that already landed.
    assert [(f["pr"], f["verdict"]) for f in found[:1]] == [(20, "already-merged")]
    # The copies are one finding: the original, with the others folded into it.
    assert found[0]["also_identical"] == [21, 22]
    assert "also identical: #21, #22" in found[0]["reasons"]
    assert not {21, 22} & {f["pr"] for f in found}


def test_an_authors_own_earlier_pr_is_a_follow_up_not_a_duplicate(builder: RepoBuilder):
    base = add_pipeline(builder)
    fixed = {"pipeline.py": PIPELINE.replace(LEGACY, FIX)}
    builder.pr_branch(30, [("Resolve the offload strategy", fixed)], author="Ada")
    builder.pr_branch(
        31, [("Resolve the offload strategy, take two", fixed)], start=base, author="Ada"
    )
    builder.pr_branch(32, [("Stop reading the legacy flag", fixed)], start=base, author="Bob")
    index(builder)

    [about_30] = [f for f in findings(builder, 31) if f["pr"] == 30]
    assert about_30["verdict"] == "overlap"
    assert any("same author" in reason for reason in about_30["reasons"])
    # Someone else making the same change is still told.
    found = findings(builder, 32)
    by_bob = {f["pr"]: f["verdict"] for f in found}
    assert by_bob[30] == "duplicate"
    assert found[0]["pr"] == 30 and found[0]["also_identical"] == [31]


def test_one_person_under_two_names_is_still_the_same_author(builder: RepoBuilder):
    """A login in one place and a real name in another: the head commits' e-mail ties them."""
    base = add_pipeline(builder)
    fixed = {"pipeline.py": PIPELINE.replace(LEGACY, FIX)}
    ada = "1234+ada@users.noreply.github.com"
    builder.pr_branch(50, [("Resolve the offload strategy", fixed)], author="Ada L.", email=ada)
    builder.pr_branch(51, [("Resolve it again", fixed)], start=base, author="ada", email=ada)
    builder.pr_branch(52, [("Drop the legacy flag", fixed)], start=base, author="Bob")
    index(builder)

    [about_50] = [f for f in findings(builder, 51) if f["pr"] == 50]
    assert about_50["verdict"] == "overlap"
    assert any("same author" in reason for reason in about_50["reasons"])
    assert {f["pr"]: f["verdict"] for f in findings(builder, 52)}[50] == "duplicate"


def test_the_same_line_in_another_file_is_not_the_same_change(builder: RepoBuilder):
    helpers = "\n\ndef offload(pipeline, config):\n" + LEGACY + "        pipeline.offload()\n"
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE, "helpers.py": helpers})
    base = builder.head()
    builder.pr_branch(
        40, [("Drop the legacy flag from the helper", {"helpers.py": helpers.replace(LEGACY, FIX)})]
    )
    fixed = {"pipeline.py": PIPELINE.replace(LEGACY, FIX)}
    builder.pr_branch(41, [("Drop the legacy flag from the pipeline", fixed)], start=base)
    index(builder)

    [about_40] = [f for f in findings(builder, 41) if f["pr"] == 40]
    assert about_40["verdict"] not in DECIDING
    assert any("in other files" in reason for reason in about_40["reasons"])


RUN_BODY = (
    '        self.log.info("running %s steps", steps)\n'
    "        result = [prompt] * steps\n"
    "        return result\n"
)
RUN_IN_TRY = (
    "        try:\n"
    '            self.log.info("running %s steps", steps)\n'
    "            result = [prompt] * steps\n"
    "        except TypeError:\n"
    "            raise ValueError('bad prompt')\n"
    "        return result\n"
)


def test_a_line_one_pr_only_moves_is_not_the_line_another_removes(builder: RepoBuilder):
    """#60 re-indents `run`'s body into a `try:`; #61 deletes the log line from it. #60 removes
    and adds that line back: it kept it, so #61's deletion is not already done there."""
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE})
    base = builder.head()
    builder.pr_branch(60, [("Guard run", {"pipeline.py": PIPELINE.replace(RUN_BODY, RUN_IN_TRY)})])
    builder.merge_pr(60, how="merge")
    quiet = PIPELINE.replace('        self.log.info("running %s steps", steps)\n', "")
    builder.pr_branch(61, [("Do not log every run", {"pipeline.py": quiet})], start=base)
    index(builder)

    [about_60] = [f for f in findings(builder, 61) if f["pr"] == 60]
    assert about_60["verdict"] not in DECIDING
    assert about_60["shared_removed_lines"] == []


def test_two_prs_moving_the_same_lines_still_share_them(builder: RepoBuilder):
    """Lines both PRs keep (re-indented the same way) are shared evidence, as before."""
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE})
    base = builder.head()
    builder.pr_branch(62, [("Guard run", {"pipeline.py": PIPELINE.replace(RUN_BODY, RUN_IN_TRY)})])
    guarded = PIPELINE.replace(
        RUN_BODY, RUN_IN_TRY.replace("raise ValueError('bad prompt')", "return []")
    )
    builder.pr_branch(63, [("Guard run against bad prompts", {"pipeline.py": guarded})], start=base)
    index(builder)

    [about_62] = [f for f in findings(builder, 63) if f["pr"] == 62]
    assert about_62["verdict"] == "duplicate"
    assert 'self.log.info("running %s steps", steps)' in about_62["shared_removed_lines"]


def test_a_busy_file_still_yields_the_nearest_prs(builder: RepoBuilder):
    """Thirty-one open PRs touch `tasks.py` after #5 landed; asked about #6, which edits the
    same file elsewhere, the lookup by file keeps the PRs nearest to #6, so #5 is listed."""
    functions = {n: f"def task_{n}():\n    return {n}\n\n\n" for n in range(45)}

    def tasks(**changed: str) -> str:
        return "".join(changed.get(f"f{n}", text) for n, text in functions.items())

    builder.commit("Add the tasks", {"tasks.py": tasks()})
    base = builder.head()
    builder.pr_branch(
        5,
        [
            (
                "Make the first one count",
                {"tasks.py": tasks(f1="def task_1():\n    return 100\n\n\n")},
            )
        ],
    )
    builder.merge_pr(5, how="merge")
    builder.pr_branch(
        6,
        [("Speed up number two", {"tasks.py": tasks(f2="def task_2():\n    return 200\n\n\n")})],
        start=base,
    )
    for number in range(10, 41):
        edit = {f"f{number}": f"def task_{number}():\n    return {number * 7}\n\n\n"}
        builder.pr_branch(
            number, [(f"Retune job {number}", {"tasks.py": tasks(**edit)})], start=base
        )
    index(builder)

    code, out, err = run_cli(
        builder.path, "check", "--pr", "6", "--format", "json", "--min-score", "0", "--top", "100"
    )
    assert code in (0, 1), err
    assert 5 in {f["pr"] for f in json.loads(out)["findings"]}


def test_a_pr_merged_after_the_same_fix_landed_names_it(builder: RepoBuilder):
    """#81's merge brought nothing (#80 had landed the same fix): its own change is indexed,
    so asking about #81 names #80 as already done."""
    base = add_pipeline(builder)
    fixed = {"pipeline.py": PIPELINE.replace(LEGACY, FIX)}
    builder.pr_branch(80, [("Resolve the offload strategy", fixed)])
    builder.merge_pr(80, how="squash")
    builder.pr_branch(81, [("Stop reading the legacy flag", fixed)], start=base)
    builder.merge_pr(81, how="merge")
    export = builder.path / "prs.json"  # who wrote each PR (git shows who merged it)
    export.write_text(
        json.dumps(
            [{"number": 80, "author": {"login": "ada"}}, {"number": 81, "author": {"login": "bob"}}]
        )
    )
    code, _, err = run_cli(builder.path, "index", "--quiet", "--prs-json", str(export))
    assert code == 0, err

    [about_80] = [f for f in findings(builder, 81) if f["pr"] == 80]
    assert about_80["verdict"] == "already-merged"


def _index_with_bases(builder: RepoBuilder, bases: dict[int, str], *targets: str) -> None:
    """Index with a `gh pr list` export that names each PR's base branch (the first merged)."""
    export = builder.path / "prs.json"
    merged = min(bases)
    export.write_text(
        json.dumps(
            [
                {
                    "number": number,
                    "baseRefName": base,
                    "state": "MERGED" if number == merged else "OPEN",
                    "mergedAt": "2024-01-02T00:00:00Z" if number == merged else None,
                }
                for number, base in bases.items()
            ]
        )
    )
    flags = [part for name in targets for part in ("--target", name)]
    code, _, err = run_cli(builder.path, "index", "--quiet", "--prs-json", str(export), *flags)
    assert code == 0, err


def test_a_backport_of_a_merged_fix_is_not_already_done(builder: RepoBuilder):
    """#70 fixed main; #71 brings the same fix to the 3.12 release line, which lacks it."""
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE})
    builder.checkout("3.12", "main")
    builder.commit("Release 3.12.0", {"VERSION": "3.12.0\n"})
    builder.checkout("main")
    fixed = PIPELINE.replace(LEGACY, FIX)
    builder.pr_branch(70, [("Resolve the offload strategy", {"pipeline.py": fixed})])
    builder.merge_pr(70, how="squash")
    builder.pr_branch(
        71, [("[3.12] Resolve the offload strategy", {"pipeline.py": fixed})], base="3.12"
    )
    _index_with_bases(builder, {70: "main", 71: "3.12"}, "main")

    [about_70] = [f for f in findings(builder, 71) if f["pr"] == 70]
    assert about_70["verdict"] not in DECIDING
    assert any("backport" in reason for reason in about_70["reasons"])
    code, out, err = run_cli(builder.path, "sweep", "--format", "json", "--exit-zero")
    assert code == 0, err
    assert json.loads(out)["stats"]["open_prs"] == 1
    assert json.loads(out)["already_done"] == []  # the sweep agrees


def test_a_fix_merged_on_another_release_line_is_a_port_until_that_line_reaches_this_one(
    builder: RepoBuilder,
):
    """A fix merged into 3.12 is not on main until 3.12 is merged upwards: until then the PR to
    main is a port; afterwards main has it, and the PR is already done."""
    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE})
    base = builder.head()
    builder.checkout("3.12", "main")
    builder.commit("Release 3.12.0", {"VERSION": "3.12.0\n"})
    builder.checkout("main")
    fixed = PIPELINE.replace(LEGACY, FIX)
    builder.pr_branch(72, [("Resolve the offload strategy", {"pipeline.py": fixed})], base="3.12")
    builder.merge_pr(72, how="merge", base="3.12")
    builder.pr_branch(
        73, [("Resolve the offload strategy too", {"pipeline.py": fixed})], start=base
    )
    _index_with_bases(builder, {72: "3.12", 73: "main"}, "main", "3.12")

    [about_72] = [f for f in findings(builder, 73) if f["pr"] == 72]
    assert about_72["verdict"] == "overlap"
    assert any("landed on 3.12" in reason for reason in about_72["reasons"])

    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "3.12", "-m", "Merge branch '3.12'")
    _index_with_bases(builder, {72: "3.12", 73: "main"}, "main", "3.12")
    [about_72] = [f for f in findings(builder, 73) if f["pr"] == 72]
    assert about_72["verdict"] == "already-merged"


@pytest.mark.parametrize(
    ("branch", "candidate_branch", "backport"),
    [
        ("3.12", "main", True),
        ("8.3.x", "8.4.x", True),
        ("lts-2-8", "release-2-12", True),
        ("release/1.13", "master", True),
        ("2.8", "2.7", False),  # fixed on 2.7 first, merged upwards: still a duplicate
        ("main", "3.12", False),
        ("3.12", "3.12", False),
        ("fix-42", "main", False),  # a topic branch, not release 42
        ("3.12", "feature/offload", False),
        (None, "main", False),
    ],
)
def test_which_branch_pairs_are_backports(
    branch: str | None, candidate_branch: str, backport: bool
) -> None:
    assert is_backport(branch, candidate_branch) is backport


def test_the_same_names_rank_a_fix_written_differently_above_nearer_work(builder: RepoBuilder):
    """No line in common with either earlier PR: the one whose changed lines use the same
    names (the strategy resolver, the offload call) is named before a nearer edit of the same
    method's logger, and neither is called a duplicate on names alone."""
    base = add_pipeline(builder)
    strategy = PIPELINE.replace(LEGACY, "        if OffloadStrategy.resolve(config).wants_cpu:\n")
    builder.pr_branch(60, [("Resolve the offload strategy", {"pipeline.py": strategy})])
    logger = PIPELINE.replace('getLogger("pipeline")', "getLogger(__name__)")
    builder.pr_branch(61, [("Name the logger by module", {"pipeline.py": logger})], start=base)
    offload_call = PIPELINE.replace(
        "            self.enable_model_cpu_offload()\n",
        "            self.enable_model_cpu_offload(OffloadStrategy.resolve(config).wants_cpu)\n",
    )
    builder.pr_branch(62, [("Pass it along", {"pipeline.py": offload_call})], start=base)
    index(builder)

    found = findings(builder, 62)
    assert [f["pr"] for f in found[:2]] == [60, 61]
    assert all(f["verdict"] not in DECIDING for f in found)
    assert any(
        "same names" in reason and "offloadstrategy" in reason for reason in found[0]["reasons"]
    )


def test_a_fix_in_another_file_is_found_by_the_names_it_uses(builder: RepoBuilder):
    """The callee fixed in one PR, its caller in another: no file and no line in common."""
    add_pipeline(builder)
    builder.commit("Add the strategies", {"strategies.py": "STRATEGIES = {}\n"})
    base = builder.head()
    resolver = "def resolve_offload_strategy(config):\n    return config.offload_strategy\n"
    builder.pr_branch(70, [("Strategies know their default", {"strategies.py": resolver})])
    caller = PIPELINE.replace(LEGACY, "        if resolve_offload_strategy(config) == 'cpu':\n")
    builder.pr_branch(71, [("Pipeline asks first", {"pipeline.py": caller})], start=base)
    index(builder)

    [about_70] = [f for f in findings(builder, 71) if f["pr"] == 70]
    assert about_70["verdict"] == "related"
    assert any("resolve_offload_strategy" in reason for reason in about_70["reasons"])


def test_among_equal_open_duplicates_the_one_opened_before_is_named_first(
    builder: RepoBuilder,
):
    """#30 and #32 both make #31's fix, each beside a note of its own: #30 was there first."""
    base = add_pipeline(builder)
    fixed = PIPELINE.replace(LEGACY, FIX)
    for number, note in ((30, "docs/a.md"), (31, "docs/b.md"), (32, "docs/c.md")):
        builder.pr_branch(
            number,
            [("Resolve the offload strategy", {"pipeline.py": fixed, note: "Offload.\n"})],
            start=base,
        )
    index(builder)

    found = findings(builder, 31)
    named = [(f["pr"], f["verdict"]) for f in found if f["pr"] in (30, 32)]
    assert named[0] == (30, "duplicate")
    assert (32, "overlap") in named  # #32, opened after #31, is its copy: #31 came first


def test_the_landing_that_made_the_lines_is_named_before_those_that_carried_them(
    builder: RepoBuilder,
):
    """#20 fixed main; #21 made the same fix on the release line `1.x`, which was merged up
    later. Both landings hold #24's whole change, but #20 made it first: "Already done in #20"
    (tokio's release PRs and merge-ups were named before the fix they carried)."""
    base = add_pipeline(builder)
    builder.checkout("1.x", base)
    builder.checkout("main")
    fixed = PIPELINE.replace(LEGACY, FIX)
    builder.pr_branch(20, [("Resolve the offload strategy", {"pipeline.py": fixed, "A.md": "a\n"})])
    builder.merge_pr(20, how="merge")
    backport = {"pipeline.py": fixed, "B.md": "b\n"}
    builder.pr_branch(21, [("Prepare the 1.1 release", backport)], base="1.x")
    builder.merge_pr(21, how="merge", base="1.x")
    builder.checkout("main")
    builder.git("merge", "-q", "--no-ff", "1.x", "-m", "Merge branch '1.x'")
    builder.pr_branch(24, [("Stop reading the legacy flag", {"pipeline.py": fixed})], start=base)
    index(builder)

    found = findings(builder, 24)

    assert [(f["pr"], f["verdict"]) for f in found[:2]] == [
        (20, "already-merged"),
        (21, "already-merged"),
    ]


def test_a_landing_reverted_since_is_named_after_the_one_that_made_the_change_again(
    builder: RepoBuilder,
):
    """#20 fixed main and was reverted; #22 made the same fix again later, and main holds it
    from #22. #23, opened from before #20, is the same patch as #20: already done, in #22
    (axios #2305 was "already done in #2189", whose change #2683 reverted and #4942 made
    again). #20 is still listed, after it, and says why."""
    base = add_pipeline(builder)
    fixed = {"pipeline.py": PIPELINE.replace(LEGACY, FIX)}
    builder.pr_branch(20, [("Resolve the offload strategy", fixed)])
    builder.merge_pr(20, how="merge")
    builder.commit("Revert the offload strategy", {"pipeline.py": PIPELINE})
    again = {"pipeline.py": PIPELINE.replace(LEGACY, FIX), "NOTES.md": "Offload again.\n"}
    builder.pr_branch(22, [("Resolve the strategy again", again)])
    builder.merge_pr(22, how="squash")
    builder.pr_branch(23, [("Offload by strategy", fixed)], start=base)
    index(builder)

    found = findings(builder, 23)
    assert [(f["pr"], f["verdict"]) for f in found[:2]] == [
        (22, "already-merged"),
        (20, "already-merged"),
    ]
    assert (
        "#20's change was taken off again after it landed, and #22 made it again: the target "
        "holds #22's"
    ) in found[1]["reasons"]


def landed_then_reverted(builder: RepoBuilder) -> tuple[str, dict[str, str]]:
    """#20 fixes main by squash and #21 reverts it (GitHub's button: `Revert "Title (#20)"`);
    returns where the pipeline was added (later PRs start there) and #20's files."""
    base = add_pipeline(builder)
    fixed = {"pipeline.py": PIPELINE.replace(LEGACY, FIX)}
    builder.pr_branch(20, [("Resolve the offload strategy", fixed)])
    builder.merge_pr(20, how="squash")
    builder.pr_branch(
        21, [('Revert "Resolve the offload strategy (#20)"', {"pipeline.py": PIPELINE})]
    )
    builder.merge_pr(21, how="squash")
    return base, fixed


def test_a_sweep_in_two_processes_knows_a_landing_was_reverted_as_check_does(
    builder: RepoBuilder,
):
    """#20 fixed main by squash and #21 reverted it; #23 to #26 each make #20's patch again,
    from before it. The sweep matches them in two processes, main's reverts read once before
    they start: none is "already done in #20", and each answer is `check --pr N`'s."""
    base, fixed = landed_then_reverted(builder)
    for number in (23, 24, 25, 26):
        builder.pr_branch(number, [(f"Offload by strategy, take {number}", fixed)], start=base)
    index(builder)

    result = sweep(builder.path, None, jobs=2, full=True)
    for number in (23, 24, 25, 26):
        swept = [(f.pr, f.verdict) for f in result.findings[number] if f.decides]
        checked = [(f["pr"], f["verdict"]) for f in findings(builder, number)]
        assert (20, "already-merged") not in swept
        assert swept == [found for found in checked if found[1] in DECIDING]
    # The index keeps main's reverts for its tip: the next sweep reads them there.
    with IndexStore(default_db_path(builder.repo), create=False) as store:
        kept = replay_memory.kept_reverts(store)
    assert kept is not None and kept[0] == builder.head("main") and kept[1]
    assert sweep(builder.path, None, jobs=2, full=True).findings == result.findings


def test_a_landing_reverted_since_and_not_made_again_is_not_done(builder: RepoBuilder):
    """#20 fixed main by squash and #21 reverted it the next day (GitHub's button: `Revert
    "Title (#20)"`); nothing made the fix again. #23, opened from before #20, makes #20's very
    patch: main does not have it, so it is not "already done in #20", and the reasons say which
    commit took it off. Once #24 reverts the revert, the change is back: already done, however
    main's lines are rewritten later (ember.js's run loop, reverted and restored in 2013)."""
    base, fixed = landed_then_reverted(builder)
    builder.pr_branch(23, [("Offload by strategy", fixed)], start=base)
    index(builder)

    found = findings(builder, 23)
    assert not [f for f in found if f["verdict"] in ("already-merged", "partly-merged")], found
    twenty = next(f for f in found if f["pr"] == 20)
    assert "#20 made this change, and #21 reverted it since" in " ".join(twenty["reasons"])

    builder.pr_branch(24, [('Revert "Revert "Resolve the offload strategy (#20)" (#21)"', fixed)])
    builder.merge_pr(24, how="squash")
    rewritten = PIPELINE.replace(LEGACY, "        if strategy_of(config).offloads:\n")
    builder.commit("Read the strategy once", {"pipeline.py": rewritten})
    index(builder)
    # #20 is done again: folded, as the same patch, into #24 that made it again (a change
    # still reverted would be listed apart, as an overlap).
    again = [(f["pr"], f["verdict"], f["also_identical"]) for f in findings(builder, 23)]
    assert again[0] == (24, "already-merged", [20]), again

    # A third revert takes it off again: #21 is in effect once more.
    builder.pr_branch(
        25,
        [
            (
                'Revert "Revert "Revert "Resolve the offload strategy (#20)" (#21)" (#24)"',
                {"pipeline.py": PIPELINE},
            )
        ],
    )
    builder.merge_pr(25, how="squash")
    index(builder)
    thrice = {f["pr"]: f["verdict"] for f in findings(builder, 23)}
    assert thrice[24] == "overlap" and thrice.get(20) != "already-merged", thrice


def test_the_candidates_replayed_are_those_the_index_gives_a_reason_for_deciding_first():
    def found(key: str, verdict: str, **signals: object) -> Finding:
        landed = signals.pop("landed", ())
        return Finding(
            verdict,  # type: ignore[arg-type]
            0.5,
            ChangeEvidence(key=key),
            Signals(**signals),  # type: ignore[arg-type]
            (),
            landed_commits=landed,  # type: ignore[arg-type]
        )

    same = found("#1", "duplicate", same_patch=True)
    removes = found("#2", "overlap", removed_in_candidate=0.2)
    nothing = found("#3", "overlap", file_overlap=0.5, code_similarity=0.1)
    similar = found("#4", "overlap", file_overlap=0.5, code_similarity=0.3)
    proven = found("#5", "overlap", query_coverage=1.0, landed=(("a" * 40, "b" * 40),))
    assert replay_reasons(same) == ["index verdict", "same patch"]
    assert replay_reasons(removes) == ["removed lines"]
    assert replay_reasons(similar) == ["file and code"]
    assert replay_reasons(nothing) == replay_reasons(proven) == []
    # The deciding one first, then the others in their order; at most `limit`.
    ranked = [nothing, removes, proven, similar, same]
    assert worth_replaying(ranked) == [same, removes, similar]
    assert worth_replaying(ranked, limit=2) == [same, removes]
