"""Superseded: a landed PR already rewrote, its own way, the lines a PR edits.

The story: heartbeat.py logs a warning with a typo ("recieve"). #90 fixes the typo; #89, opened
just before and landed first, reworded the same warning ("No heartbeat received"): the same
purpose, other words. #90 cannot go in as it is, and a maintainer closes it as "superseded by
#89". Each guard has a story of its own where the rewrite is no proof: a rewrite for another
purpose, one inside a change many times larger, one landed long after #90 was opened by a PR
opened after it, and one reverted since.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prdup.checking import check
from prdup.comment import render_comment
from tests.repo_builder import RepoBuilder, run_cli

HEARTBEAT = '''import logging

log = logging.getLogger(__name__)


def beat(host, sock):
    """Send one heartbeat to `host` and wait for its answer."""
    sock.send(b"ping")
    answer = sock.recv(4)
    if answer != b"pong":
        log.warning("Could not recieve the heartbeat from %s", host)
        return False
    return True


def serve(sock, hosts):
    """Answer every host's heartbeat."""
    for host in hosts:
        beat(host, sock)
    return len(hosts)
'''
TYPO = 'log.warning("Could not recieve the heartbeat from %s", host)'
FIXED = 'log.warning("Could not receive the heartbeat from %s", host)'
REWORDED = 'log.warning("No heartbeat received from %s", host)'
ERRORS = 'log.error("ping %r from %s unanswered", answer, host)'


def heartbeat(line: str) -> str:
    return HEARTBEAT.replace(TYPO, line)


def first_finding(repo: Path, number: int, *flags: str) -> tuple[int, dict]:
    code, out, err = run_cli(repo, "check", "--pr", str(number), "--format", "json", *flags)
    assert code in (0, 1), err
    return code, json.loads(out)["findings"][0]


def index(repo: Path, *flags: str) -> None:
    code, _, err = run_cli(repo, "index", "--quiet", *flags)
    assert code == 0, err


def rewritten_first(builder: RepoBuilder, theirs: str, title: str, more: dict | None = None) -> str:
    """#89 (`title`) rewrites the warning as `theirs` and lands; #90, from the same base, fixes
    the typo. Returns #89's landing commit."""
    files = {"heartbeat.py": (HEARTBEAT, heartbeat(theirs), heartbeat(FIXED))}
    return landed_first(builder, files, title, "Fix typo in heartbeat warning", more)


def landed_first(
    builder: RepoBuilder,
    files: dict[str, tuple[str, str, str]],
    their_title: str,
    our_title: str,
    more: dict | None = None,
) -> str:
    """Each file (base, #89's version, #90's version) committed; #89 and #90 opened from that
    base, and #89 landed first. Returns #89's landing commit; the index is not built."""
    builder.commit("Add the files", {path: base for path, (base, _, _) in files.items()})
    ours = {path: mine for path, (_, _, mine) in files.items()}
    theirs = {path: other for path, (_, other, _) in files.items()}
    builder.pr_branch(89, [(their_title, {**theirs, **(more or {})})])
    builder.pr_branch(90, [(our_title, ours)])
    return builder.merge_pr(89, how="squash")


def test_the_same_warning_reworded_by_a_landed_pr_supersedes_the_typo_fix(builder: RepoBuilder):
    """#89 reworded the warning #90 fixes, and landed: #90 is superseded by #89, said with the
    line #89 wrote, in every door, and it fails the check as an already done change does."""
    landed = rewritten_first(builder, REWORDED, "Fix the typo in the heartbeat warning")
    index(builder.path)

    code, found = first_finding(builder.path, 90)
    assert code == 1, found  # --fail-on's default: a change that cannot go in as it is
    assert (found["pr"], found["verdict"]) == (89, "superseded"), found
    said = " ".join(found["reasons"])
    assert f"superseded by #89: #89 (landed {landed[:10]}) already rewrote 1 of the 1 lines" in said
    assert f"now `{REWORDED}`" in said, found["reasons"]
    assert found["residual"] == [], found
    assert [h["path"] for h in found["rewritten"]] == ["heartbeat.py"], found
    code, _ = first_finding(builder.path, 90, "--fail-on", "none")
    assert code == 0

    code, out, err = run_cli(builder.path, "check", "--pr", "90")
    assert code == 1, err
    assert "Superseded by #89" in out
    code, out, err = run_cli(builder.path, "check", "--pr", "90", "--format", "sarif")
    assert code == 1, err
    assert json.loads(out)["runs"][0]["results"][0]["ruleId"] == "prdup/superseded"
    body = render_comment(check(builder.path, pr=90))  # the bot speaks: it cannot go in as is
    assert body is not None and "### prdup: Superseded by #89" in body, body
    assert "**#89** (merged) already rewrote, on the target branch, the lines this change" in body

    code, out, err = run_cli(builder.path, "sweep", "--format", "json", "--exit-zero")
    assert code == 0, err
    swept = json.loads(out)
    assert [(s["pr"], s["by"]) for s in swept["superseded"]] == [(90, 89)], swept
    assert {p["pr"]: p["class"] for p in swept["prs"]}[90] == "superseded"
    code, out, err = run_cli(builder.path, "sweep", "--exit-zero")
    assert code == 0, err
    assert "1 superseded" in out and "#90 superseded by #89 (merged" in out, out
    for form in ("markdown", "html"):
        code, out, err = run_cli(builder.path, "sweep", "--format", form, "--exit-zero")
        assert code == 0, err
        assert "Superseded" in out and "#90" in out, form


def test_a_message_reworded_with_the_words_of_this_one_is_superseded(builder: RepoBuilder):
    """#90 says which ports are valid in the error for a bad one; #89, titled otherwise, had
    reworded the same message to say the port is out of range, and landed: the message both
    write names the range, which is the purpose, so #90 is superseded by #89."""
    port = (
        "def listen(port):\n"
        '    """Open the server socket on `port`."""\n'
        "    port = int(port)\n"
        "    if port < 1 or port > 65535:\n"
        '        raise ValueError("bad port %d" % port)\n'
        "    return port\n"
    )
    theirs = port.replace('"bad port %d"', '"port %d out of range"')
    ours = port.replace('"bad port %d"', '"port %d not in the range 1-65535"')
    files = {"server.py": (port, theirs, ours)}
    landed_first(builder, files, "Explain the error on startup", "Say which ports are valid")
    index(builder.path)

    _, found = first_finding(builder.path, 90)
    assert (found["pr"], found["verdict"]) == (89, "superseded"), found


FETCH = '''import logging

log = logging.getLogger(__name__)


def fetch(url, session):
    """Fetch `url` with the shared session."""
    log.debug("fetching %s", url)
    reply = session.get(url)
    reply.raise_for_status()
    return reply.text


def close(session):
    """Close the shared session."""
    session.close()
'''


def checked_after_89(
    builder: RepoBuilder, files: dict[str, tuple[str, str, str]], their_title: str, our_title: str
) -> tuple[int, dict]:
    """#89 (`their_title`) lands first; #90 (`our_title`)'s exit code and first finding."""
    landed_first(builder, files, their_title, our_title)
    index(builder.path)
    return first_finding(builder.path, 90)


def superseded_by_89(
    builder: RepoBuilder, files: dict[str, tuple[str, str, str]], their_title: str, our_title: str
) -> list[str]:
    """#90 must be superseded by #89 (`checked_after_89`); returns the reasons given."""
    _, found = checked_after_89(builder, files, their_title, our_title)
    assert (found["pr"], found["verdict"]) == (89, "superseded"), found
    return found["reasons"]


def test_a_call_given_the_same_new_name_by_a_landed_pr_is_superseded(builder: RepoBuilder):
    """#89 ("Stop waiting forever on slow servers") and #90 ("Fix hang in fetch") each give the
    same call a timeout, #89 a number, #90 a setting, and their titles share no word. The
    file never named a `timeout` before: both bring it in at the same line, which is the
    purpose a maintainer reads there. #89 landed first: #90 is superseded, the reason names
    the word."""
    theirs = FETCH.replace("session.get(url)", "session.get(url, timeout=30)")
    ours = FETCH.replace("session.get(url)", "session.get(url, timeout=config.FETCH_TIMEOUT)")
    files = {"client.py": (FETCH, theirs, ours)}

    reasons = superseded_by_89(builder, files, "Stop waiting forever on slow servers", "Fix hang")

    assert "the same purpose: this change and #89 both bring `timeout` in there" in reasons


def test_a_landing_that_made_part_as_it_is_and_rewrote_the_rest_supersedes(
    builder: RepoBuilder,
):
    """#89 and #90 both let `head()` follow redirects, in the same words, and both give the
    fetch a timeout, #89 a number, #90 a setting. #89 landed: one of #90's two hunks is
    there as it is, the other #89 rewrote its own way as it landed, bringing in the same new
    `timeout`. Half of the change landed, and nothing of the rest applies: #90 is superseded
    by #89, not an overlap whose rest "is for a maintainer to read"."""
    spacer = (
        "def head(url, session):\n"
        '    """Ask `url` for its headers only."""\n'
        '    log.debug("asking %s", url)\n'
        "    reply = session.head(url)\n"
        "    return reply.headers\n\n\n"
    )
    base = FETCH.replace("def close(", spacer + "def close(")
    both = base.replace("session.head(url)", "session.head(url, allow_redirects=True)")
    theirs = both.replace("session.get(url)", "session.get(url, timeout=30)")
    ours = both.replace("session.get(url)", "session.get(url, timeout=config.FETCH_TIMEOUT)")
    files = {"client.py": (base, theirs, ours)}

    reasons = superseded_by_89(builder, files, "Stop waiting forever on slow servers", "Fix hang")

    rest = "#89 rewrote the rest its own way as it landed: client.py"
    assert any(r.startswith(rest) for r in reasons), reasons


def test_a_name_the_file_already_used_is_no_shared_purpose(builder: RepoBuilder):
    """#89 ("Pass the session's headers on") and #90 ("Give up fetching after ten seconds")
    both add `headers` to the same call, but the file already used that name elsewhere: it is
    what both pass along, not what either is for (#90's purpose is its `timeout`, which #89
    does not bring in). #90 no longer applies as it is: an overlap that says so."""
    base = FETCH.replace(
        "    session.close()\n",
        '    log.debug("closing with %s", session.headers)\n    session.close()\n',
    )
    theirs = base.replace("session.get(url)", "session.get(url, headers=session.headers)")
    ours = base.replace(
        "session.get(url)", "session.get(url, headers=session.headers.copy(), timeout=10)"
    )
    files = {"client.py": (base, theirs, ours)}

    code, found = checked_after_89(
        builder, files, "Pass the session's headers on", "Give up fetching after ten seconds"
    )

    assert code == 0, found
    assert (found["pr"], found["verdict"]) == (89, "overlap"), found
    assert any("#89 rewrote these lines since" in r for r in found["reasons"]), found["reasons"]


def test_lines_rewritten_for_another_purpose_are_an_overlap_that_says_so(builder: RepoBuilder):
    """#89 turned the warning into an error naming the answer (its own purpose: reporting
    unanswered pings); no word of #90's fix is in it and the titles share none: #90 no longer
    applies, which is worth saying, but #89 did not do it."""
    rewritten_first(builder, ERRORS, "Report unanswered pings as errors")
    index(builder.path)

    code, found = first_finding(builder.path, 90)
    assert code == 0, found
    assert (found["pr"], found["verdict"]) == (89, "overlap"), found
    assert any(
        "#89 rewrote these lines since" in r
        and r.endswith("and nothing shows #89 was made for the same purpose")
        for r in found["reasons"]
    ), found["reasons"]


def test_a_rewrite_inside_a_much_larger_change_supersedes_nothing(builder: RepoBuilder):
    """#89 reworded the warning as part of a reformat of the whole code base (a change thirty
    times #90's size): a mass change rewrites every line it passes, whatever its title."""
    big = "".join(f"VALUE_{n} = {n}\n" for n in range(40))
    builder.commit("Add values", {"values.py": big})
    reformatted = {"values.py": big.replace(" = ", ": int = ")}
    rewritten_first(
        builder, REWORDED, "Fix the typo in the heartbeat warning, reformat", more=reformatted
    )
    index(builder.path)

    code, found = first_finding(builder.path, 90)
    assert code == 0, found
    assert (found["pr"], found["verdict"]) == (89, "overlap"), found
    # The reason says which proof is missing: the size, not the purpose.
    assert any("as part of a change 41 times this one's size" in r for r in found["reasons"]), (
        found["reasons"]
    )


@pytest.mark.parametrize(
    ("their_title", "our_title", "verdict"),
    [
        (
            "Fix the typo in the heartbeat message",
            "Fix typo in heartbeat message",
            "superseded",
        ),
        ("Correct the wording of a warning", "Correct the wording of the warning", "overlap"),
        (
            "[heartbeat] Correct the wording",
            "[heartbeat] Correct the wording of the warning",
            "overlap",
        ),
    ],
    ids=["titles-name-the-line", "titles-name-nothing-of-it", "only-a-tag-names-it"],
)
def test_a_rewrite_in_no_definition_supersedes_where_both_titles_name_the_lines(
    builder: RepoBuilder, their_title: str, our_title: str, verdict: str
):
    """The message is a module constant: no function or section holds it, so the line alone
    would say where both changes are, and that is what any rewrite shares. Where both titles
    name what the line is ("heartbeat", a word few PRs use), a maintainer has the place to
    check: superseded. Titles alike in their prose only, or naming the line only in a tag
    ("[heartbeat]": the component, as "[Form]" is), leave #90 an overlap."""
    messages = '"""Messages."""\n\nUNANSWERED = "Could not recieve the heartbeat from %s"\n'
    fixed = messages.replace("recieve", "receive")
    reworded = messages.replace("Could not recieve the heartbeat", "No heartbeat received")
    files = {"messages.py": (messages, reworded, fixed)}
    landed_first(builder, files, their_title, our_title)
    index(builder.path)

    _, found = first_finding(builder.path, 90)
    assert (found["pr"], found["verdict"]) == (89, verdict), found
    if verdict == "superseded":
        assert (
            "the same purpose: this change's title and #89's both name `heartbeat`"
            in (found["reasons"])
        ), found["reasons"]


def test_a_license_year_bumped_by_a_landed_pr_supersedes_another_bump(builder: RepoBuilder):
    """LICENSE has no definitions or sections: #89 ("Update the license year") made the year
    a range, #90 ("Update license year to 2017") sets it to 2017. Both titles name the file:
    superseded, as ember.js closed #14799 for #14771."""
    notice = "MIT License\n\nCopyright (c) 2016 Acme and contributors\n\nPermission is granted.\n"
    theirs = notice.replace("(c) 2016", "(c) 2016-2017")
    ours = notice.replace("(c) 2016", "(c) 2017")
    files = {"LICENSE": (notice, theirs, ours)}

    reasons = superseded_by_89(
        builder, files, "Update the license year", "Update license year to 2017"
    )

    assert any("now `Copyright (c) 2016-2017 Acme and contributors`" in r for r in reasons)


@pytest.mark.parametrize(
    ("merged_at", "verdict"),
    [("2020-02-01T00:00:00Z", "superseded"), ("2022-03-01T00:00:00Z", "overlap")],
    ids=["landed-while-open", "landed-two-years-later"],
)
def test_a_rewrite_by_a_later_pr_supersedes_only_while_this_one_was_fresh(
    builder: RepoBuilder, tmp_path: Path, merged_at: str, verdict: str
):
    """#91, opened after #90, reworded the warning #90 fixes. Landed a month after #90 was
    opened, it is the fix that went in instead; landed two years later, it is a rewrite of
    its own time, no proof that #90's purpose was met."""
    builder.commit("Add heartbeats", {"heartbeat.py": HEARTBEAT})
    head90 = builder.pr_branch(
        90, [("Fix typo in heartbeat warning", {"heartbeat.py": heartbeat(FIXED)})]
    )
    head91 = builder.pr_branch(
        91, [("Fix the typo in the heartbeat warning", {"heartbeat.py": heartbeat(REWORDED)})]
    )
    builder.merge_pr(91, how="squash")
    export = tmp_path / "prs.json"
    export.write_text(
        json.dumps(
            [
                _pr(90, "Fix typo in heartbeat warning", "OPEN", "2020-01-01T00:00:00Z", head90),
                _pr(
                    91,
                    "Fix the typo in the heartbeat warning",
                    "MERGED",
                    "2020-01-15T00:00:00Z",
                    head91,
                    merged_at,
                ),
            ]
        )
    )
    index(builder.path, "--prs-json", str(export))

    _, found = first_finding(builder.path, 90)
    assert (found["pr"], found["verdict"]) == (91, verdict), found


def test_a_rewrite_reverted_since_supersedes_nothing(builder: RepoBuilder):
    """#89's rewording was reverted on main: the typo is back, and #90's fix applies again."""
    landed = rewritten_first(builder, REWORDED, "Fix the typo in the heartbeat warning")
    builder.git("revert", "--no-edit", landed)
    index(builder.path)

    code, found = first_finding(builder.path, 90)
    assert code == 0, found
    assert found["verdict"] not in ("superseded", "already-merged"), found


def _pr(
    number: int, title: str, state: str, created: str, head: str, merged: str | None = None
) -> dict:
    return {
        "number": number,
        "title": title,
        "body": "",
        "state": state,
        "createdAt": created,
        "closedAt": merged,
        "mergedAt": merged,
        "headRefOid": head,
        "baseRefName": "main",
        "author": {"login": f"contributor{number}"},
    }


INTRO = "# Introduction\n\nprdup finds pull requests already done.\n\n    pip install prdup\n"
OURS_ZH = "# 简介\n\nprdup 找出已经完成的拉取请求。\n\n    pip install prdup\n\n它还会给出理由。\n"
THEIRS_ZH = (
    "# 介绍\n\nprdup 会找到已经做完的 PR。\n\n    pip install prdup\n\n每个结论都附带证据。\n"
)


@pytest.mark.parametrize("beside", [None, "feature"], ids=["the-page-alone", "beside-a-feature"])
def test_the_same_new_page_added_by_a_landed_pr_supersedes_it(
    builder: RepoBuilder, beside: str | None
):
    """#40 translates the introduction into Chinese; #41, opened after it, translated the
    same page its own way and landed first: #40 adds a file main already has, added there by
    #41, and is superseded by it. Where #41's page came beside a feature many times its size,
    the page is that feature's part, no competing translation: nothing decides."""
    builder.commit("Add the introduction", {"docs/en/intro.md": INTRO})
    builder.pr_branch(40, [("Translate the introduction", {"docs/zh/intro.md": OURS_ZH})])
    theirs = {"docs/zh/intro.md": THEIRS_ZH}
    if beside:
        theirs["feature.py"] = "".join(f"def step_{n}():\n    return {n}\n\n\n" for n in range(10))
    builder.pr_branch(41, [("Add a Chinese introduction", theirs)])
    builder.merge_pr(41, how="squash")
    index(builder.path)

    code, out, err = run_cli(builder.path, "check", "--pr", "40", "--format", "json")
    assert code in (0, 1), err
    found = {f["pr"]: f for f in json.loads(out)["findings"]}
    if beside:
        assert found[41]["verdict"] == "overlap", found[41]
        return
    assert code == 1 and found[41]["verdict"] == "superseded", found[41]
    said = " ".join(found[41]["reasons"])
    assert "superseded by #41: #41 already added docs/zh/intro.md with lines of its own" in said


@pytest.mark.parametrize("beside", [None, "feature"], ids=["the-page-alone", "beside-a-feature"])
def test_two_open_prs_adding_the_same_new_page_are_one_group(
    builder: RepoBuilder, beside: str | None
):
    """#42 and #43, both open, translate the introduction into Chinese, each its own way (no
    line in common): the same new page twice, of which one can go in. #43, opened later, is a
    duplicate of #42, which the sweep keeps. Where #42's page comes beside a feature many
    times its size, the page is that feature's part: nothing decides."""
    builder.commit("Add the introduction", {"docs/en/intro.md": INTRO})
    base = builder.head()
    ours = {"docs/zh/intro.md": OURS_ZH.replace("    pip install prdup\n\n", "")}
    if beside:
        ours["feature.py"] = "".join(f"def step_{n}():\n    return {n}\n\n\n" for n in range(10))
    builder.pr_branch(42, [("Translate the introduction", ours)], start=base)
    builder.pr_branch(43, [("Add a Chinese introduction", {"docs/zh/intro.md": THEIRS_ZH})])
    index(builder.path)

    code, out, err = run_cli(
        builder.path, "check", "--pr", "43", "--format", "json", "--min-score", "0"
    )
    assert code in (0, 1), err
    found = {f["pr"]: f for f in json.loads(out)["findings"]}
    if beside:
        assert found[42]["verdict"] == "overlap", found[42]
        return
    assert code == 1 and found[42]["verdict"] == "duplicate", found[42]
    assert found[42]["remaining"] == [], found[42]
    said = " ".join(found[42]["reasons"])
    assert "both add docs/zh/intro.md, each with lines of its own" in said, said
    assert "still to do" not in said, said
    _, first = first_finding(builder.path, 42, "--min-score", "0")
    assert (first["pr"], first["verdict"]) == (43, "overlap"), first
    assert "was opened after this one" in " ".join(first["reasons"]), first
    code, out, err = run_cli(builder.path, "sweep", "--format", "json", "--exit-zero")
    assert code == 0, err
    [group] = json.loads(out)["groups"]
    assert group["keep"] == 42 and [m["pr"] for m in group["members"]] == [42, 43], group
    assert json.loads(out)["counts"]["to_close"] == 1


def test_two_open_prs_adding_one_test_module_are_no_duplicates(builder: RepoBuilder):
    """#44 tests the clock's helper, #45 adds a feature's tests, each in a new
    tests/test_clock.py of its own: two changes that chose one file name, not one page
    written twice. Nothing decides."""
    builder.commit("Add the clock", {"clock.py": "def now():\n    return 0\n"})
    base = builder.head()
    ours = "".join(f"def test_now_{n}():\n    assert now() == 0\n\n\n" for n in range(6))
    theirs = "".join(f"def test_tick_{n}():\n    assert tick({n}) == {n}\n\n\n" for n in range(6))
    builder.pr_branch(44, [("Test now()", {"tests/test_clock.py": ours})], start=base)
    builder.pr_branch(45, [("Tick tests", {"tests/test_clock.py": theirs})], start=base)
    index(builder.path)
    code, out, err = run_cli(
        builder.path, "check", "--pr", "45", "--format", "json", "--min-score", "0"
    )
    assert code == 0, err
    found = {f["pr"]: f for f in json.loads(out)["findings"]}
    assert found[44]["verdict"] == "overlap", found[44]


def test_a_titles_subject_leaves_out_its_tags_and_numbers():
    """What a title is about, without the component it tags ("[Form]", "fix($aria):") or the
    numbers of a version range (two Starlette bumps both naming "37" say nothing alike)."""
    from detector.text import subject_words

    assert subject_words("[Form] [HttpKernel] Choice fix") == {"choice"}
    assert subject_words("fix($aria): pass $event in ngClick") == {
        "pass",
        "event",
        "ngclick",
        "ng",
        "click",
    }
    assert subject_words("Allow Starlette 0.39.x, update the pin to >=0.37.2,<0.40.0") == {
        "allow",
        "starlette",
        "pin",
    }
    assert subject_words("[Form]") == {"form"}  # a title that is only a tag keeps it
