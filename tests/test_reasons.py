"""Reasons a maintainer can read: a definition by name, a document by its section, a takeover
said as such.

Each story is a real repository built in a temporary folder, indexed and checked through the
CLI; what is read is the text `prdup check` prints.
"""

from __future__ import annotations

import json

from detector.matcher import _first_places
from detector.replay import HunkReplay
from tests.repo_builder import RepoBuilder, run_cli
from tests.test_verdict_accounting import assert_reasons_agree

CACHE_RB = """module Cache
  TTL = 60
  LIMIT = 100

  class Store
    def fetch(key)
      @entries.fetch(key) { load(key) }
    end
  end
end
"""

GUIDE_RST = """Guide
=====

This guide explains how to run the service.

Installation
============

Run the installer with the default options.
It writes the configuration to /etc/service.
Then restart the service so it reads the configuration.
"""

IO_PY = """def read(path):
    with open(path) as stream:
        return stream.read()


def write(path, text):
    with open(path, "w") as stream:
        stream.write(text)
"""


def check(builder: RepoBuilder, number: int) -> list[dict]:
    code, out, err = run_cli(
        builder.path, "check", "--pr", str(number), "--format", "json", "--min-score", "0"
    )
    assert code in (0, 1), err
    found = json.loads(out)["findings"]
    assert_reasons_agree(found)
    return found


def about(found: list[dict], number: int) -> dict:
    return next(f for f in found if f["pr"] == number)


def index(builder: RepoBuilder) -> None:
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err


def test_the_same_code_names_the_method_not_the_module_around_it(builder: RepoBuilder):
    """#10 and #11 both change the cache's time to live (a constant in `module Cache`'s body)
    and `Store#fetch`. git's header for the constant's hunk is `module Cache`: the module is no
    code the two change, `fetch` is."""
    builder.commit("Add the cache", {"lib/cache.rb": CACHE_RB})
    merged = CACHE_RB.replace("TTL = 60", "TTL = 120").replace(
        "{ load(key) }", "{ load(key, ttl: TTL) }"
    )
    builder.pr_branch(10, [("Keep entries longer", {"lib/cache.rb": merged})])
    builder.merge_pr(10)
    proposed = CACHE_RB.replace("TTL = 60", "TTL = 300").replace(
        "{ load(key) }", "{ load(key, ttl: TTL * 2) }"
    )
    builder.pr_branch(11, [("Cache for five minutes", {"lib/cache.rb": proposed})], start="main~1")
    index(builder)

    reasons = about(check(builder, 11), 10)["reasons"]
    assert "changes the same code: fetch" in reasons, reasons
    assert not any("Cache" in reason for reason in reasons), reasons


def test_a_document_is_named_by_its_section_title_not_the_nearest_prose_line(
    builder: RepoBuilder,
):
    """#20 and #21 reword the same sentence of the guide's Installation section. git's hunk
    header for a reStructuredText file is the nearest line of prose above the hunk; the reason
    names the section, whose title is underlined."""
    builder.commit("Add the guide", {"docs/guide.rst": GUIDE_RST})
    old = "Then restart the service so it reads the configuration.\n"
    builder.pr_branch(
        20,
        [("Say reload", {"docs/guide.rst": GUIDE_RST.replace(old, "Then reload the service.\n")})],
    )
    builder.merge_pr(20)
    builder.pr_branch(
        21,
        [("Say restart", {"docs/guide.rst": GUIDE_RST.replace(old, "Then restart it.\n")})],
        start="main~1",
    )
    index(builder)

    found = check(builder, 21)
    reasons = about(found, 20)["reasons"]
    assert "changes the same section: Installation (docs/guide.rst)" in reasons, reasons
    assert not any("Run the installer" in reason for reason in reasons), reasons
    assert about(found, 20)["shared_symbols"] == ["Installation (docs/guide.rst)"]


def _takeover(builder: RepoBuilder) -> None:
    """#30 reads and writes files as UTF-8 and was left; #31 says "Carry #30", keeps the read
    half and lands."""
    builder.commit("Add file helpers", {"fileio.py": IO_PY})
    both = IO_PY.replace("open(path)", 'open(path, encoding="utf-8")').replace(
        'open(path, "w")', 'open(path, "w", encoding="utf-8")'
    )
    builder.pr_branch(30, [("Read and write files as UTF-8", {"fileio.py": both})])
    read_only = IO_PY.replace("open(path)", 'open(path, encoding="utf-8")')
    builder.pr_branch(31, [("Carry #30: read files as UTF-8", {"fileio.py": read_only})])
    builder.merge_pr(31)
    index(builder)


def test_a_takeover_that_landed_does_the_change_it_took_over(builder: RepoBuilder):
    """Asked about #30, #31 is where its work landed: already done, and the half #31 left out
    is its choice, not work still to do."""
    _takeover(builder)

    finding = about(check(builder, 30), 31)
    assert finding["verdict"] == "already-merged", finding
    assert "#31 takes over this change (its title or description says so)" in finding["reasons"]
    assert not any(r.startswith("not in #31, still to do") for r in finding["reasons"]), finding
    assert any("not work still to do" in reason for reason in finding["reasons"]), finding
    assert finding["residual"] == []


def test_the_pr_that_takes_over_says_so_and_is_no_duplicate(builder: RepoBuilder):
    """Asked about #31, #30 is the work it took over: said as such, no verdict."""
    _takeover(builder)

    finding = about(check(builder, 31), 30)
    assert finding["verdict"] == "overlap", finding
    assert any(r.startswith("this change takes over #30") for r in finding["reasons"]), finding


def test_an_open_takeover_covers_the_pr_it_took_over(builder: RepoBuilder):
    """#41 says "Finishes #40" and makes its read half, still open: #40's work goes on in
    #41, so #40 is covered by it, with nothing listed as still to do."""
    builder.commit("Add file helpers", {"fileio.py": IO_PY})
    both = IO_PY.replace("open(path)", 'open(path, encoding="utf-8")').replace(
        'open(path, "w")', 'open(path, "w", encoding="utf-8")'
    )
    builder.pr_branch(40, [("Read and write files as UTF-8", {"fileio.py": both})])
    read_only = IO_PY.replace("open(path)", 'open(path, encoding="utf-8")')
    builder.pr_branch(
        41, [("Read files as UTF-8\n\nFinishes #40.", {"fileio.py": read_only})], start="main"
    )
    index(builder)

    finding = about(check(builder, 40), 41)
    assert finding["verdict"] == "covered", finding
    assert "#41 takes over this change (its title or description says so)" in finding["reasons"]
    assert not any("contained in #41" in reason for reason in finding["reasons"]), finding
    assert finding["residual"] == []


def test_a_rest_listed_by_file_counts_what_it_leaves_out_in_files():
    """Five rewritten hunks of one README are one file listed, nothing more (psf/black #534's
    reason said "README.md (...) and 1 more" with no other file); seven files list four and
    say 3 more."""

    def hunk(path: str, line: int) -> HunkReplay:
        return HunkReplay(path, line, line, 1, "docs", False, "new", "conflict", "")

    one_file = [hunk("README.md", line) for line in (9, 733, 868, 953, 1319)]
    shown, more = _first_places(one_file)
    assert (shown, more) == ("README.md (line 9, line 733, line 868, line 953, line 1319)", "")
    seven = [hunk(f"docs/{n}.md", 1) for n in range(7)]
    shown, more = _first_places(seven)
    assert shown.count("docs/") == 4 and more == " and 3 more"
