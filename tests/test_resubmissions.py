"""Same-author resubmissions and superseded bumps: two open PRs by one author with the same
head commit or the same patch leave one PR to close, the older; the newer is the one kept. A
dependency bump whose lines a later merged PR bumped higher is already done.

The story: units.py's converter.
- Ann opens #3 (refuse a missing distance), then opens the same patch again as #4 from the
  same base: #3 is to close, resubmitted as #4.
- Bob's branch is opened twice, as #7 and #8, with one head commit: #7 is to close.
- Cy opens #10, a follow-up on his own #9 that keeps #9's fix and adds to it: no claim, as
  before (an author's own earlier open PR is a follow-up, not a duplicate).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.repo_builder import RepoBuilder, run_cli

UNITS = (
    "KILOMETRES_PER_MILE = 1.609344\n\n\ndef miles_to_kilometres(miles):\n"
    "    return miles * KILOMETRES_PER_MILE\n"
)
CONVERT = UNITS.replace(
    "    return miles * KILOMETRES_PER_MILE\n",
    "    if miles is None:\n        raise ValueError('no distance given')\n"
    "    return miles * KILOMETRES_PER_MILE\n",
)
BOB = CONVERT.replace("no distance given", "the distance is missing")
CY = CONVERT.replace("no distance given", "miles is required")


@pytest.fixture
def resubmitted(builder: RepoBuilder) -> RepoBuilder:
    builder.commit("Add units", {"units.py": UNITS})
    base = builder.head()
    builder.pr_branch(3, [("Refuse a missing distance", {"units.py": CONVERT})], author="Ann")
    builder.pr_branch(4, [("Raise on None miles", {"units.py": CONVERT})], start=base, author="Ann")
    head = builder.pr_branch(7, [("Refuse no miles", {"units.py": BOB})], author="Bob")
    builder.git("update-ref", "refs/pull/8/head", head)  # the same branch opened again
    builder.pr_branch(9, [("Require miles", {"units.py": CY})], author="Cy")
    follow_up = CY.replace(
        "    return miles * KILOMETRES_PER_MILE\n",
        "    if miles < 0:\n        raise ValueError('a distance is never negative')\n"
        "    return miles * KILOMETRES_PER_MILE\n",
    )
    builder.pr_branch(
        10,
        [("Require miles", {"units.py": CY}), ("And positive", {"units.py": follow_up})],
        author="Cy",
    )
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    return builder


def sweep_json(repo: Path) -> dict:
    code, out, err = run_cli(repo, "sweep", "--format", "json", "--exit-zero")
    assert code == 0, err
    return json.loads(out)


def check_first(repo: Path, number: int) -> dict | None:
    code, out, err = run_cli(repo, "check", "--pr", str(number), "--format", "json")
    assert code in (0, 1), err
    findings = json.loads(out)["findings"]
    return findings[0] if findings else None


def test_the_older_of_two_identical_patches_by_one_author_is_to_close(resubmitted: RepoBuilder):
    first = check_first(resubmitted.path, 3)
    assert first is not None
    assert (first["pr"], first["verdict"]) == (4, "duplicate")
    assert (
        "resubmitted by the same author as #4 (the same patch): close this one, #4 is the newer"
        in first["reasons"]
    )
    newer = check_first(resubmitted.path, 4)
    assert newer is not None and (newer["pr"], newer["verdict"]) == (3, "overlap")
    assert (
        "this change resubmits #3 (the same author, the same patch): #3 is the one to close"
        in newer["reasons"]
    )


def test_two_prs_with_one_head_commit_are_one_group_keeping_the_newer(resubmitted: RepoBuilder):
    first = check_first(resubmitted.path, 7)
    assert first is not None and (first["pr"], first["verdict"]) == (8, "duplicate")
    assert any("the same head commit" in reason for reason in first["reasons"])
    data = sweep_json(resubmitted.path)
    groups = {g["keep"]: [(m["pr"], m["against"]) for m in g["members"]] for g in data["groups"]}
    assert groups == {4: [(4, None), (3, 4)], 8: [(8, None), (7, 8)]}
    answers = {p["pr"]: (p["class"], p["finding"]["pr"]) for p in data["prs"]}
    assert answers[3] == ("duplicate", 4) and answers[7] == ("duplicate", 8)
    # Each answer is the finding `check --pr N` shows first (the one engine).
    for number in (3, 4, 7, 8, 9, 10):
        first = check_first(resubmitted.path, number)
        swept = next((p for p in data["prs"] if p["pr"] == number), None)
        assert (swept and swept["finding"]["pr"]) == (first and first["pr"])


def test_an_authors_follow_up_on_their_own_open_pr_is_no_claim(resubmitted: RepoBuilder):
    """#10 keeps #9's fix and adds to it: not the same patch, so no resubmission either way."""
    for number in (9, 10):
        first = check_first(resubmitted.path, number)
        assert first is None or first["verdict"] in ("overlap", "related")
    code, out, _ = run_cli(resubmitted.path, "check", "--pr", "9", "--format", "json")
    [other] = [f for f in json.loads(out)["findings"] if f["pr"] == 10]
    assert other["verdict"] == "overlap"
    assert (
        "#10 is by the same author: a follow-up or a resubmission, not a duplicate"
        in (other["reasons"])
    )


def test_a_bots_fixes_on_top_leave_the_pr_its_authors(resubmitted: RepoBuilder):
    """pre-commit.ci pushed a formatting commit on top of Cy's follow-up: the PR is still
    Cy's (its author is read below the bot's commit), so it is his follow-up, not a claim."""
    follow_up = resubmitted.pr_branch(
        11,
        [
            ("Require miles", {"units.py": CY}),
            ("And positive", {"units.py": CY.replace("return miles", "return abs(miles)")}),
        ],
        author="Cy",
    )
    resubmitted.checkout("pr-11", follow_up)
    resubmitted._author = "pre-commit-ci[bot]"
    try:
        resubmitted.commit(
            "[pre-commit.ci] auto fixes",
            {"units.py": CY.replace("return miles", "return abs(miles)") + "\n"},  # a blank line
        )
    finally:
        resubmitted._author = "Test Author"
    resubmitted.git("update-ref", "refs/pull/11/head", resubmitted.head())
    resubmitted.checkout("main")
    code, _, err = run_cli(resubmitted.path, "index", "--quiet")
    assert code == 0, err
    code, out, _ = run_cli(resubmitted.path, "check", "--pr", "9", "--format", "json")
    [other] = [f for f in json.loads(out)["findings"] if f["pr"] == 11]
    assert other["verdict"] == "overlap"
    assert (
        "#11 is by the same author: a follow-up or a resubmission, not a duplicate"
        in (other["reasons"])
    )


PACKAGE = (
    '{\n  "name": "widget",\n  "version": "1.2.0",\n  "dependencies": {\n'
    '    "left-pad": "^1.1.0",\n    "lodash": "^4.17.15",\n    "moment": "^2.29.1"\n  }\n}\n'
)


def bumped(text: str, package: str, old: str, new: str) -> str:
    return text.replace(f'"{package}": "^{old}"', f'"{package}": "^{new}"')


@pytest.fixture
def bumps(builder: RepoBuilder) -> RepoBuilder:
    """A bot bumps lodash to 4.17.19 (#20, left open), then to 4.17.21 (#21, merged); it
    bumps moment to 2.29.4 (#22, open) and a person bumps it to 2.29.2 (#23, merged): a lower
    version, so #22 is not superseded. #24 bumps lodash to 4.17.19 and adds a dependency:
    more than a bump, so not superseded either."""
    builder.commit("Add the package", {"package.json": PACKAGE})
    base = builder.head()
    bot = {"author": "dependabot[bot]", "email": "bot@example.com"}
    lodash_19 = bumped(PACKAGE, "lodash", "4.17.15", "4.17.19")
    builder.pr_branch(20, [("Bump lodash to 4.17.19", {"package.json": lodash_19})], **bot)
    builder.pr_branch(
        21,
        [
            (
                "Bump lodash to 4.17.21",
                {"package.json": bumped(PACKAGE, "lodash", "4.17.15", "4.17.21")},
            )
        ],
        **bot,
    )
    builder.merge_pr(21, how="squash")
    moment = bumped(PACKAGE, "moment", "2.29.1", "2.29.4")
    builder.pr_branch(22, [("Bump moment to 2.29.4", {"package.json": moment})], start=base, **bot)
    builder.pr_branch(
        23, [("moment 2.29.2", {"package.json": bumped(PACKAGE, "moment", "2.29.1", "2.29.2")})]
    )
    builder.merge_pr(23, how="squash")
    more = lodash_19.replace(
        '"left-pad": "^1.1.0",', '"left-pad": "^1.1.0",\n    "leven": "^3.1.0",'
    )
    builder.pr_branch(24, [("lodash and leven", {"package.json": more})], start=base)
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    return builder


def test_a_dependency_bumped_again_later_is_superseded(bumps: RepoBuilder):
    """The target is past the bump: nothing of it applies. `check` and the sweep say
    "superseded by" alike, as a bump bot closing its older PR does."""
    first = check_first(bumps.path, 20)
    assert first is not None and (first["pr"], first["verdict"]) == (21, "superseded")
    assert first["reasons"][0].startswith(
        'superseded by #21 (the same package bumped again, to a later version: `"lodash": '
        '"^4.17.21",`)'
    )
    assert first["remaining"] == []
    swept = sweep_json(bumps.path)
    assert {d["pr"]: d["by"] for d in swept["superseded"]} == {20: 21}
    assert 20 not in {d["pr"] for d in swept["already_done"]}


def test_a_bump_bumped_past_is_superseded_before_it_is_a_copy(bumps: RepoBuilder):
    """#25, a person's, bumps lodash to 4.17.19 as #20 does, still open: #20 is named superseded
    by #21 first, which the target is past, before the open copy a maintainer would close too."""
    base = bumps.repo.git.rev_list("--max-parents=0", "main")
    lodash_19 = bumped(PACKAGE, "lodash", "4.17.15", "4.17.19")
    bumps.pr_branch(25, [("lodash 4.17.19", {"package.json": lodash_19})], start=base)
    code, _, err = run_cli(bumps.path, "index", "--quiet")
    assert code == 0, err
    first = check_first(bumps.path, 20)
    assert first is not None and (first["pr"], first["verdict"]) == (21, "superseded")


def test_a_bump_to_a_lower_version_or_with_more_work_is_not_superseded(bumps: RepoBuilder):
    for number in (22, 24):
        first = check_first(bumps.path, number)
        assert first is None or first["verdict"] not in ("already-merged", "duplicate")


README = (
    "# widget\n\nA small widget.\n\n## Sponsors\n\n<!-- sponsors -->\n"
    "- Acme\n- Globex\n<!-- /sponsors -->\n\n## Licence\n\nMIT\n"
)


def sponsors(*names: str) -> str:
    block = "".join(f"- {name}\n" for name in names)
    return README.replace("- Acme\n- Globex\n", block)


def test_bot_prs_rewriting_one_block_are_one_group_keeping_the_newest(builder: RepoBuilder):
    """A bot rewrites the sponsor block three times, none merged: one group, the newest kept.
    A person's PR rewriting the same block is not the bot's resubmission."""
    builder.commit("Add the readme", {"README.md": README})
    base = builder.head()
    bot = {"author": "sponsors-bot", "email": "sponsors-bot@example.com"}
    for number, names in ((30, ("Acme", "Initech")), (31, ("Initech",)), (32, ("Umbrella",))):
        builder.pr_branch(
            number, [("Update the sponsors", {"README.md": sponsors(*names)})], start=base, **bot
        )
    builder.pr_branch(33, [("Thank Hooli", {"README.md": sponsors("Hooli")})], start=base)
    assert run_cli(builder.path, "index", "--quiet")[0] == 0
    first = check_first(builder.path, 30)
    assert first is not None and first["verdict"] == "duplicate" and first["pr"] in (31, 32)
    assert (
        f"resubmitted by the same author as #{first['pr']} (the same lines of the same files "
        f"rewritten again, by a bot): close this one, #{first['pr']} is the newer"
    ) in first["reasons"]
    data = sweep_json(builder.path)
    groups = {g["keep"]: sorted(m["pr"] for m in g["members"]) for g in data["groups"]}
    assert groups == {32: [30, 31, 32]}


WORKFLOW = (
    "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - uses: actions/checkout@{checkout} # v4\n"
    "      - uses: ruby/setup-ruby@{ruby} # v1\n      - run: make test\n"
)
OLD_RUBY, RUBY_19, RUBY_21 = "9eb537ca036e" * 3 + "bace", "003a5c4d8d63" * 3 + "f066", "ab" * 20
CHECKOUT = "08c6903cd8c0fde910a37f88322edcfb5dd907a8"


def test_a_pinned_action_its_bot_bumped_again_and_landed_is_already_done(builder: RepoBuilder):
    """The bot bumps setup-ruby, pinned by commit hash, to 1.319 (#50, left open), then to
    1.321 (#51, merged): no version is in the lines, only in the titles, but the bot wrote the
    same line again since and that landed, so #50 is stale. Ann's #52 pins setup-ruby to
    another commit and is left alone by the merged bump: a person's change is no bot's block
    generated again; nor is the bot's #53, which bumps checkout too (#51 left that line).
    #53 is #50 generated again, still open: the landing is named first."""
    old = WORKFLOW.format(checkout=CHECKOUT, ruby=OLD_RUBY)
    builder.commit("Add CI", {".github/workflows/ci.yml": old})
    base = builder.head()
    bot = {"author": "dependabot[bot]", "email": "bot@example.com"}
    path = ".github/workflows/ci.yml"
    to_19 = {path: old.replace(OLD_RUBY, RUBY_19)}
    builder.pr_branch(50, [("Bump ruby/setup-ruby from 1.314.0 to 1.319.0", to_19)], **bot)
    to_21 = {path: old.replace(OLD_RUBY, RUBY_21)}
    builder.pr_branch(
        51, [("Bump ruby/setup-ruby from 1.314.0 to 1.321.0", to_21)], start=base, **bot
    )
    builder.merge_pr(51)
    builder.pr_branch(
        52, [("Pin setup-ruby", {path: old.replace(OLD_RUBY, "cd" * 20)})], start=base
    )
    both = {path: old.replace(OLD_RUBY, "12" * 20).replace(CHECKOUT, "ef" * 20)}
    builder.pr_branch(53, [("Bump two actions", both)], start=base, **bot)
    assert run_cli(builder.path, "index", "--quiet")[0] == 0

    first = check_first(builder.path, 50)
    assert first is not None and (first["pr"], first["verdict"]) == (51, "already-merged")
    assert first["reasons"][0].startswith(
        "regenerated by #51: the same bot rewrote every line this change rewrites, in the same "
        "files, and that landed ("
    )
    assert first["remaining"] == []
    assert not any("still to do" in reason for reason in first["reasons"])
    for number in (52, 53):
        first = check_first(builder.path, number)
        assert first is None or first["verdict"] not in ("already-merged", "duplicate")
    done = {d["pr"]: d["by"] for d in sweep_json(builder.path)["already_done"]}
    assert done == {50: 51}


def test_a_block_regenerated_in_part_the_same_lists_nothing_left_to_do(builder: RepoBuilder):
    """The bot's #60 bumps checkout and setup-ruby; its #61, merged, bumps checkout to the same
    commit and setup-ruby further. Nothing of #60 is left: its reasons list no line as not in
    #61."""
    steps = "".join(f"      - run: make {step}\n" for step in ("deps", "lint", "build", "docs"))
    old = WORKFLOW.format(checkout=CHECKOUT, ruby=OLD_RUBY).replace(
        "      - uses: ruby", steps + "      - uses: ruby"
    )
    path = ".github/workflows/ci.yml"
    builder.commit("Add CI", {path: old})
    base = builder.head()
    bot = {"author": "dependabot[bot]", "email": "bot@example.com"}
    both = old.replace(CHECKOUT, "11" * 20)
    builder.pr_branch(60, [("Bump two actions", {path: both.replace(OLD_RUBY, RUBY_19)})], **bot)
    again = {path: both.replace(OLD_RUBY, RUBY_21)}
    builder.pr_branch(61, [("Bump two actions again", again)], start=base, **bot)
    builder.merge_pr(61)
    assert run_cli(builder.path, "index", "--quiet")[0] == 0

    first = check_first(builder.path, 60)
    assert first is not None and (first["pr"], first["verdict"]) == (61, "already-merged")
    assert not any(reason.startswith("not in #61") for reason in first["reasons"]), first


def _index_with_states(builder: RepoBuilder, states: dict[int, str]) -> None:
    """Index with a `gh pr list --json` export saying which PRs closed or merged."""
    path = builder.path.parent / "prs.json"
    path.write_text(json.dumps([{"number": n, "state": s} for n, s in states.items()]))
    code, _, err = run_cli(builder.path, "index", "--quiet", "--prs-json", str(path))
    assert code == 0, err


def findings_of(repo: Path, number: int) -> list[dict]:
    code, out, err = run_cli(
        repo, "check", "--pr", str(number), "--format", "json", "--min-score", "0", "--top", "99"
    )
    assert code in (0, 1), err
    return json.loads(out)["findings"]


def test_a_branch_reopened_as_a_new_pr_is_said_to_be_the_same_branch(builder: RepoBuilder):
    """Dee's #60 was closed; she opened the very same branch again as #61 (one head commit).
    Asked about #61, #60 is the same branch opened as another PR, not a branch that carries
    this change's commits along."""
    builder.commit("Add units", {"units.py": UNITS})
    head = builder.pr_branch(61, [("Refuse no miles", {"units.py": BOB})], author="Dee")
    builder.git("update-ref", "refs/pull/60/head", head)
    _index_with_states(builder, {60: "CLOSED", 61: "OPEN"})

    [about_60] = [f for f in findings_of(builder.path, 61) if f["pr"] == 60]
    assert about_60["verdict"] not in ("already-merged", "duplicate", "covered")
    assert about_60["reasons"][0] == (
        "#60 is this change's branch opened as another PR (the same head commit)"
    )
    assert not any("carries this change's own commits" in r for r in about_60["reasons"])


def test_one_branch_opened_twice_is_one_finding_naming_the_pr_that_landed(builder: RepoBuilder):
    """Dee opened her branch as #70, closed it, and opened it again as #71, which landed (one
    head commit). Eve's #72 makes the same fix and adds a test: one finding, already done in
    #71, also opened as #70; #70 takes no rank of its own."""
    builder.commit("Add units", {"units.py": UNITS})
    base = builder.head()
    head = builder.pr_branch(71, [("Refuse no miles", {"units.py": BOB})], author="Dee")
    builder.git("update-ref", "refs/pull/70/head", head)
    builder.merge_pr(71, how="squash")
    test = "from units import miles_to_kilometres\n\n\ndef test_no_miles():\n    pass\n"
    builder.pr_branch(
        72,
        [("Refuse a missing distance", {"units.py": BOB, "test_units.py": test})],
        start=base,
        author="Eve",
    )
    _index_with_states(builder, {70: "CLOSED", 71: "MERGED", 72: "OPEN"})

    found = findings_of(builder.path, 72)
    assert (found[0]["pr"], found[0]["verdict"]) == (71, "already-merged")
    assert found[0]["also_opened_as"] == [70]
    assert "also opened as #70 (the same head commit)" in found[0]["reasons"]
    assert 70 not in {f["pr"] for f in found}


REQUIREMENTS = "requests==2.31.0\nfilelock==3.12.0  # pinned for py3.8\n"


@pytest.fixture
def pinned(builder: RepoBuilder) -> RepoBuilder:
    """requirements.txt pins filelock, with a comment saying why. A bot bumps it to
    3.13.0rc1 (#40, open), a person to 3.12.2 keeping the comment (#42, open); #41 bumps it to
    3.13.0, the release, and drops the comment, and lands."""
    builder.commit("Pin the requirements", {"requirements.txt": REQUIREMENTS})
    base = builder.head()
    bot = {"author": "dependabot[bot]", "email": "bot@example.com"}
    rc = REQUIREMENTS.replace("filelock==3.12.0", "filelock==3.13.0rc1")
    builder.pr_branch(40, [("Bump filelock to 3.13.0rc1", {"requirements.txt": rc})], **bot)
    release = "requests==2.31.0\nfilelock==3.13.0\n"
    builder.pr_branch(41, [("filelock 3.13.0", {"requirements.txt": release})], start=base)
    builder.merge_pr(41, how="squash")
    patch = REQUIREMENTS.replace("filelock==3.12.0", "filelock==3.12.2")
    builder.pr_branch(42, [("filelock 3.12.2", {"requirements.txt": patch})], start=base)
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    return builder


def test_a_pre_release_bump_is_superseded_by_its_release(pinned: RepoBuilder):
    first = check_first(pinned.path, 40)
    assert first is not None and (first["pr"], first["verdict"]) == (41, "superseded")
    assert first["reasons"][0].startswith(
        "superseded by #41 (the same package bumped again, to a later version: `filelock==3.13.0`)"
    )


def test_a_comment_after_a_pin_is_no_part_of_the_bump(pinned: RepoBuilder):
    """#42 keeps the pin's comment, #41 dropped it: the same package bumped again all the same."""
    first = check_first(pinned.path, 42)
    assert first is not None and (first["pr"], first["verdict"]) == (41, "superseded")
    assert first["remaining"] == []


def test_a_test_added_beside_a_bump_bumped_again_later_is_still_to_do(builder: RepoBuilder):
    """#41 bumps lodash to 4.17.19 (stacked on that bump) to add a test of its own; #40 bumps
    lodash to 4.17.21 and lands. The bump is superseded, the test is not: not already done."""
    builder.commit("Add the package", {"package.json": PACKAGE})
    base = builder.head()
    lodash_19 = bumped(PACKAGE, "lodash", "4.17.15", "4.17.19")
    test = "const _ = require('lodash');\ntest('chunks', () => expect(_.chunk([1, 2], 1)));\n"
    builder.pr_branch(
        40, [("Bump lodash", {"package.json": bumped(PACKAGE, "lodash", "4.17.15", "4.17.21")})]
    )
    builder.merge_pr(40, how="squash")
    builder.pr_branch(
        41,
        [("Bump lodash and test chunk", {"package.json": lodash_19, "test/chunk.test.js": test})],
        start=base,
    )
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err

    first = check_first(builder.path, 41)

    assert first is not None and first["pr"] == 40, first
    assert first["verdict"] not in ("already-merged", "duplicate"), first
