"""Two changes that pin the same package to different versions compete; neither is the other.

`filelock==3.20.1` and `filelock==3.20.3` written over the same `filelock==3.20.0` share the
removed line and, in a regenerated requirements file, most of the rest: the versions decide.
"""

from __future__ import annotations

from detector.pins import competing_pins, pin
from detector.versions import at_least, first_version, version_key
from tests.repo_builder import RepoBuilder
from tests.test_replay_verdicts import check_json, index

PINS = """attrs==23.1.0
coverage==7.4.0
filelock==3.20.0
iniconfig==2.0.0
pytest==8.0.0
pluggy==1.4.0
tomli==2.0.1
zipp==3.17.0
"""


def _bump(filelock: str) -> str:
    return (
        PINS.replace("attrs==23.1.0", "attrs==23.2.0")
        .replace("filelock==3.20.0", f"filelock=={filelock}")
        .replace("pytest==8.0.0", "pytest==8.1.0")
        .replace("tomli==2.0.1", "tomli==2.3.0")
    )


def test_two_prs_bumping_one_package_to_different_versions_overlap(builder: RepoBuilder):
    """PR 20 and PR 21 refresh the same test requirements; #20 takes filelock to 3.20.1, #21
    to 3.20.3. Every other line agrees, yet neither is a duplicate of the other."""
    builder.commit("Test requirements", {"test-requirements.txt": PINS})
    builder.pr_branch(20, [("Bump filelock to 3.20.1", {"test-requirements.txt": _bump("3.20.1")})])
    builder.pr_branch(21, [("Bump filelock to 3.20.3", {"test-requirements.txt": _bump("3.20.3")})])
    index(builder)

    for query, other, ours, theirs in ((21, 20, "3.20.3", "3.20.1"), (20, 21, "3.20.1", "3.20.3")):
        _, found = check_json(builder.path, "--pr", str(query))
        finding = next(f for f in found if f["pr"] == other)
        assert finding["verdict"] == "overlap"
        assert f"#{other} pins filelock =={theirs} (this change: =={ours})" in " ".join(
            finding["reasons"]
        )


def test_the_same_bump_is_still_a_duplicate(builder: RepoBuilder):
    builder.commit("Test requirements", {"test-requirements.txt": PINS})
    builder.pr_branch(20, [("Bump filelock", {"test-requirements.txt": _bump("3.20.3")})])
    builder.pr_branch(21, [("Bump filelock again", {"test-requirements.txt": _bump("3.20.3")})])
    index(builder)

    _, found = check_json(builder.path, "--pr", "21")
    assert (found[0]["pr"], found[0]["verdict"]) == (20, "duplicate")


def test_pins_in_the_manifests_read():
    assert pin("test-requirements.txt", "filelock==3.20.3") == ("filelock", "==3.20.3")
    assert pin("requirements.txt", "tomli>=1.1.0; python_version<'3.11'") == ("tomli", ">=1.1.0")
    assert pin("pyproject.toml", '    "typing_extensions>=4.6.0",') == (
        "typing-extensions",
        ">=4.6.0",
    )
    assert pin("setup.py", '        "mypy_extensions>=1.0.0",') == ("mypy-extensions", ">=1.0.0")
    assert pin("package.json", '    "lodash": "^4.17.21",') == ("lodash", "^4.17.21")
    assert pin("package.json", '  "version": "1.2.3",') is None  # the project's own version
    assert pin("go.mod", "\tgolang.org/x/net v0.17.0 // indirect") == (
        "golang.org/x/net",
        "v0.17.0",
    )
    assert pin("Cargo.toml", 'serde = { version = "1.0", features = ["derive"] }') == (
        "serde",
        "1.0",
    )
    assert pin("mypy/checker.py", "x == 1") is None  # code is no manifest
    assert pin("requirements.txt", "# via -r mypy-requirements.txt") is None


def test_a_candidate_that_did_not_repin_the_package_does_not_compete():
    before = ["filelock==3.20.0", "attrs==23.1.0"]
    bumped = ["filelock==3.20.1", "attrs==23.1.0"]
    assert competing_pins("requirements.txt", ["filelock==3.20.3"], before, bumped)
    assert not competing_pins("requirements.txt", ["filelock==3.20.3"], before, before)
    assert not competing_pins("requirements.txt", ["filelock==3.20.1"], before, bumped)
    assert at_least("==3.20.3", "==3.20.1") and not at_least("==3.20.1", "==3.20.3")


def test_a_comment_on_a_pin_is_no_part_of_a_marker_written_on_it(builder: RepoBuilder):
    """#30 keeps tomli for every Python and says why in a comment that mentions
    `--python-version`; #31 limits tomli to `python_version<'3.11'`. The comment's words are
    not the marker's names: #31 is not done by #30 (mypy #15504 against #15589)."""
    builder.commit(
        "Test requirements", {"test-requirements.txt": "setuptools>=65\nsix\ntomli>=1.1.0\n"}
    )
    builder.pr_branch(
        30,
        [
            (
                "Remove six",
                {
                    "test-requirements.txt": "setuptools>=65\n"
                    "tomli>=1.1.0  # needed even on py311+ so the self check passes with "
                    "--python-version 3.7\n"
                },
            )
        ],
    )
    builder.merge_pr(30, how="squash")
    builder.pr_branch(
        31,
        [
            (
                "Only install tomli where it is needed",
                {
                    "test-requirements.txt": "setuptools>=65\nsix\n"
                    "tomli>=1.1.0; python_version<'3.11'\n"
                },
            )
        ],
        start="HEAD~1",
    )
    index(builder)

    _, found = check_json(builder.path, "--pr", "31")
    assert all(f["verdict"] not in ("already-merged", "duplicate", "covered") for f in found), found


def test_a_release_is_at_least_its_pre_release():
    assert at_least("3.20.3", "3.20.1") and not at_least("3.20.1", "3.20.3")
    assert at_least("v0.31.0", "v0.31.0-rc1") and not at_least("v0.31.0-rc1", "v0.31.0")
    assert at_least("v2.3.4", "v2.3.4-0.20260102150405-0123456789ab")  # a Go pseudo-version
    assert at_least("1.0.0", "1.0.0b1") and not at_least("1.0.0b1", "1.0.0")
    assert at_least("^4.17.21", "^4.17.21") and at_least("2.0", "1.9.9")


def test_versions_sort_in_release_order():
    """One order for pins and bumps: pre-releases by stage, then the release, then a
    post-release; `1.0` is `1.0.0`."""
    ordered = [
        "1.0.0-0.3.7",
        "1.0.0.dev1",
        "1.0.0a1",
        "1.0.0-alpha.2",
        "1.0.0b1",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0rc2",
        "1.0.0",
        "1.0.post1",
        "1.0.1",
        "v1.2.0",
    ]
    keys = [version_key(v) for v in ordered]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)
    assert version_key("1.0") == version_key("1.0.0") and at_least("1.0", "1.0.0")
    assert first_version('    "lodash": "^4.18.0-rc.2",') > first_version(
        '"lodash": "^4.18.0-rc.1"'
    )
    assert first_version("filelock==3.13.0rc1  # for 3.99") == version_key("3.13.0rc1")


def test_a_pin_held_back_is_not_superseded_by_a_later_bump(builder: RepoBuilder):
    """#31 holds `symfony/console` at 2.3 (`~2.3` to `~2.3.0`); #30 (merged) raised it to
    `~2.5`. A bump is superseded by a higher one; a pin held back is undone by it, not done
    (composer's #3759 was "already done" by #3761)."""
    manifest = (
        '{\n    "require": {\n        "symfony/console": "~2.3",\n'
        '        "seld/jsonlint": "~1.0"\n    }\n}\n'
    )
    builder.commit("Add the manifest", {"composer.json": manifest})
    base = builder.head()
    raised = manifest.replace('"~2.3"', '"~2.5"')
    builder.pr_branch(30, [("Update dependency version constraint", {"composer.json": raised})])
    builder.merge_pr(30, how="squash")
    held = manifest.replace('"~2.3"', '"~2.3.0"')
    builder.pr_branch(31, [("Stay on symfony/console 2.3", {"composer.json": held})], start=base)
    index(builder)

    _, found = check_json(builder.path, "--pr", "31")

    assert [f["verdict"] for f in found if f["pr"] == 30] == ["overlap"]
