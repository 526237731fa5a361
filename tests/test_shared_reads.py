"""What a sweep's replays share from one PR to the next, and what a re-sweep redoes.

Many open PRs are replayed at the same landing: the file versions read there (and what the
replay works out about them) are read once per process, and every answer stays what `check`
says alone. A new landing or a new PR still changes the answers a re-sweep gives.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

from detector import replay
from detector.model import is_trivial, normalise_line
from detector.replay import FileText, _openers
from index.config import Settings
from index.git import gitsource
from index.indexer import index_repository
from index.questions import replay_memory
from index.questions.candidates import FEW_QUERIES, Batch, CandidateEngine, read_change_rows
from index.questions.replay_memory import ReplayMemory, code_digest
from index.questions.replaying import HISTORY_AFTER, SharedReads
from index.storage.store import IndexStore, default_db_path
from prdup.checking import match_pr, pr_info
from prdup.sweep import sweep
from tests.repo_builder import RepoBuilder
from tests.test_check import LEGACY, MERGED_FIX, PIPELINE
from tests.test_own_work import OPENED, PIPELINE_PY, fix_landed_as_a_later_copy, index_with
from tests.test_sweep import READ_UTF8, SETTINGS, run
from tests.test_sweep import backlog as backlog  # a fixture

STUB = "    return None\n"


def findings_of(repo_path: Path, numbers: list[int], shared: SharedReads | None) -> dict:
    """Each PR's findings as the sweep asks for them, replayed with `shared` reads (None: each
    PR reads its own)."""
    repo = gitsource.open_repository(repo_path)
    found = {}
    with IndexStore(default_db_path(repo), create=False) as store:
        engine = CandidateEngine(store)
        for number in numbers:
            row = store.changes.row(number)
            assert row is not None
            findings, _ = match_pr(
                engine,
                repo,
                row,
                pr_info(row, "main"),
                Settings(),
                probe=False,
                deciding_only=True,
                shared=shared,
            )
            found[number] = [(f.candidate.key, f.verdict, round(f.score, 4)) for f in findings]
    return found


def test_prs_replayed_at_one_landing_read_it_once_and_answer_as_alone(backlog: RepoBuilder):
    """PRs 2 and 3 make PR 1's CSV fix in their own words: both are replayed at PR 1's
    landing. The second reads nothing there again, and both answers are what each PR's own
    replay says."""
    alone = findings_of(backlog.path, [2, 3], None)
    assert alone[2][0][1] == "already-merged" and alone[3][0][1] == "already-merged"

    repo = gitsource.open_repository(backlog.path)
    with IndexStore(default_db_path(repo), create=False) as store:
        landing = store.changes.row(1)["sha"]
    shared = SharedReads(repo)
    first = findings_of(backlog.path, [2], shared)
    at_landing = {spec for spec in shared.texts if spec.startswith(landing)}
    assert at_landing  # PR 2 was replayed where PR 1 landed
    second = findings_of(backlog.path, [3], shared)
    assert {spec for spec in shared.texts if spec.startswith(landing)} == at_landing
    assert shared.blobs_read == len(shared.texts)  # each read once, PR 1's landing for PR 2
    assert {**first, **second} == alone


def answers_three_ways(repo_path: Path, *, replayed: bool = True) -> tuple[dict, dict, dict]:
    """Every open PR's findings (candidate, verdict, score, reasons, shared lines; replayed
    and deciding ones, or without `replayed` every one the index's evidence gives), found by
    a sweep batch of these few PRs, by one that reads every candidate whole, and by `check`'s
    engine alone."""
    repo = gitsource.open_repository(repo_path)
    with IndexStore(default_db_path(repo), create=False) as store:
        rows = read_change_rows(store)
        numbers = sorted(r.number for r in rows.values() if r.number and r.is_open_pr)
        batch = Batch.read(store, [cid for cid, r in rows.items() if r.number in numbers], rows)
        assert batch.few
        engines = [
            CandidateEngine(store, batch),
            CandidateEngine(store, replace(batch, queries=FEW_QUERIES + 1)),
            CandidateEngine(store),
        ]
        found = []
        for engine in engines:
            by_number = {}
            for number in numbers:
                row = store.changes.row(number)
                findings, _ = match_pr(
                    engine,
                    repo if replayed else None,
                    row,
                    pr_info(row, "main"),
                    Settings(),
                    probe=False,
                )
                by_number[number] = [
                    (
                        f.candidate.key,
                        f.verdict,
                        round(f.score, 4),
                        f.reasons,
                        sorted(f.candidate.removed | f.candidate.added),
                    )
                    for f in findings
                    if f.decides or not replayed
                ]
            found.append(by_number)
    few, whole, alone = found
    return few, whole, alone


def test_a_few_prs_checked_read_what_they_share_and_answer_as_a_whole_backlog(
    backlog: RepoBuilder,
):
    """A re-sweep after a new PR checks a dozen PRs: each reads only what it shares with its
    candidates instead of every candidate's every line. Every PR's deciding findings (with
    their scores, reasons and shared lines) are those of a batch that reads candidates
    whole, and `check`'s."""
    few, whole, alone = answers_three_ways(backlog.path)
    assert any(verdict == "already-merged" for found in few.values() for _, verdict, *_ in found)
    assert few == whole == alone


def test_a_swept_pr_stored_cut_is_matched_by_its_whole_diff_as_check_does(builder: RepoBuilder):
    """#2, stored cut at the line limit, redoes merged #1's forty checked betas but the last
    limit: matched by its whole diff, read from git. Lines the batch never read (past the
    cut) are still shared lines: #1 removes all of #2's removed lines, as `check` says, and
    the sweep weighs them by their own rarity, as `check` does (the batch's rarity lacks the
    lines past the cut)."""
    alpha = "".join(f"alpha_{i} = compute_alpha({i})\n" for i in range(10))
    beta = "".join(f"beta_{i} = compute_beta({i})\n" for i in range(40))
    builder.commit("Initial", {"a.py": alpha, "b.py": beta})
    base = builder.head()
    alpha_fix = alpha.replace("compute_alpha(3)", "compute_alpha_safely(3, strict=True)")
    checked = "".join(f"beta_{i} = compute_beta_checked({i}, limit={i * 7})\n" for i in range(40))
    builder.pr_branch(1, [("Check the betas", {"a.py": alpha_fix, "b.py": checked})])
    builder.merge_pr(1, how="squash")
    last = checked.replace("(39, limit=273)", "(39, limit=999)")
    builder.pr_branch(2, [("Check the betas too", {"a.py": alpha_fix, "b.py": last})], start=base)
    index_repository(builder.path, settings=Settings(max_unmerged_lines=20))

    few, whole, alone = answers_three_ways(builder.path)
    assert [key for key, *_ in few[2]] == ["#1"]
    assert any("removes 100% of the same lines" in reason for reason in few[2][0][3])
    assert any("adds 95% of the lines" in reason for reason in few[2][0][3])
    assert few == whole == alone


def test_a_few_prs_checked_quote_the_line_check_quotes(builder: RepoBuilder):
    """Five open PRs rewrite overlapping runs of sixty lines of one length: the line a reason
    quotes ("e.g. ...") is the first of lines alike in the lookup's order, for a few PRs
    checked as for `check` alone."""
    lines = 60

    def rewrite(low: int, high: int) -> str:
        return "".join(
            f"value_{i:02d} = new_compute_{i:02d}(x, k)\n"
            if low <= i < high
            else f"value_{i:02d} = old_4_compute_{i:02d}(x)\n"
            for i in range(lines)
        )

    builder.commit("Initial", {"a.py": rewrite(0, 0)})
    base = builder.head()
    for number, (low, high) in enumerate([(0, 30), (5, 40), (10, 50), (0, 60), (20, 45)], 1):
        builder.pr_branch(number, [(f"Rewrite {number}", {"a.py": rewrite(low, high)})], start=base)
    index_repository(builder.path)

    few, whole, alone = answers_three_ways(builder.path, replayed=False)
    assert any("e.g." in reason for found in few.values() for f in found for reason in f[3])
    assert few == whole == alone


def test_a_pr_renaming_the_file_a_landing_fixed_is_replayed_there_by_check_as_by_the_sweep(
    builder: RepoBuilder,
):
    """#1 landed a strict dispatch in `old.py` and a fallback in `other.py`; #2 makes both,
    and renames `old.py` to `new.py`. The landing touched the renamed file under its old name:
    `check` replays both files there, as the sweep does (it read only the files #1 shares by
    name, and left the renamed one's hunk to do)."""
    handlers = "".join(
        f"def handler_{i}(request):\n    return dispatch_{i}(request)\n\n" for i in range(12)
    )
    settings = "".join(f"setting_{i} = load_setting({i})\n" for i in range(12))
    builder.commit("Initial", {"old.py": handlers, "other.py": settings})
    base = builder.head()
    strict = handlers.replace("dispatch_5(request)", "dispatch_5(request, strict_mode=True)")
    fallback = settings.replace("load_setting(7)", "load_setting(7, fallback=None)")
    builder.pr_branch(1, [("Strict dispatch", {"old.py": strict, "other.py": fallback})])
    builder.merge_pr(1, how="squash")
    renamed = {"old.py": None, "new.py": strict, "other.py": fallback}
    builder.pr_branch(2, [("Strict dispatch, renamed", renamed)], start=base)
    index_repository(builder.path)

    few, whole, alone = answers_three_ways(builder.path)
    [(key, verdict, _, reasons, _)] = alone[2]
    assert (key, verdict) == ("#1", "already-merged")
    assert "all 2 hunk(s)" in reasons[0]
    assert few == whole == alone


def test_commits_of_a_range_asked_about_by_two_prs_are_read_once(builder: RepoBuilder):
    """#71 asks the offload strategy and logs the stages; #73 landed a cherry-picked copy of
    its fix later. #72 and #74 make the same fix: each is replayed at #71, whose commits are
    read to tell its own work from copies. The second PR reads none of them again (only its
    own commit), and both answers are what each PR's own replay says (#71 made the change
    first)."""
    fix_landed_as_a_later_copy(builder, [72, 74])

    alone = findings_of(builder.path, [72, 74], None)
    assert ("#71", "covered") in {(key, verdict) for key, verdict, _ in alone[72]}
    shared = SharedReads(gitsource.open_repository(builder.path))
    first = findings_of(builder.path, [72], shared)
    read = shared.patches_read
    assert read == 3  # #71's two commits and #72's own
    second = findings_of(builder.path, [74], shared)
    assert shared.patches_read == read + 1  # #74's own commit only
    assert {**first, **second} == alone


def test_a_prs_own_base_is_a_shared_text(backlog: RepoBuilder):
    """The file as a PR found it (the blob its diff starts from) is a shared text too: PRs 2
    and 3, cut from one commit, place their hunks in one text of parser.py, the very text
    PR 1's landing is replayed from (its parent holds the same blob)."""
    repo = gitsource.open_repository(backlog.path)
    with IndexStore(default_db_path(repo), create=False) as store:
        landing = store.changes.row(1)["sha"]
    shared = SharedReads(repo)
    findings_of(backlog.path, [2, 3], shared)
    bases = [spec for spec in shared.texts if ":" not in spec]  # read by blob id
    assert len(bases) == 1
    before = shared.texts.get(f"{landing}^1:parser.py")
    assert before is not None and shared.texts[bases[0]][0] is before[0]


def test_shared_texts_keep_the_newest_within_their_budget(builder: RepoBuilder):
    builder.commit("Add two modules", {"a.py": "a = 1\n" * 50, "b.py": "b = 2\n" * 50})
    repo = gitsource.open_repository(builder.path)
    shared = SharedReads(repo, max_chars=400)
    blobs = gitsource.BlobReader(repo)

    def read(spec: str) -> tuple[str, bytes] | None:
        return blobs.read_blob(spec, 10_000)

    a = shared.text("HEAD:a.py", read)
    assert a is not None and a.lines[0] == "a = 1"
    assert shared.text("HEAD:a.py", read) is a and shared.blobs_read == 1
    shared.text("HEAD:b.py", read)  # 300 more characters: a.py no longer fits
    again = shared.text("HEAD:a.py", read)
    assert shared.blobs_read == 3 and again is not None and again.lines == a.lines
    assert shared.text("HEAD:missing.py", read) is None


def test_a_file_unchanged_between_commits_is_one_text(builder: RepoBuilder):
    """A file no commit between two landings touched is the same blob at both: what a replay
    worked out about it at one (its normalised lines) serves the other; a changed file is
    its own text."""
    builder.commit("Add two modules", {"a.py": "a = 1\n" * 5, "b.py": "b = 2\n"})
    builder.commit("Change b", {"b.py": "b = 3\n"})
    repo = gitsource.open_repository(builder.path)
    shared = SharedReads(repo)
    blobs = gitsource.BlobReader(repo)

    def read(spec: str) -> tuple[str, bytes] | None:
        return blobs.read_blob(spec, 10_000)

    def text(spec: str) -> FileText | None:
        return shared.text(spec, read, blobs.identify)

    old_a, new_a = text("HEAD~1:a.py"), text("HEAD:a.py")
    assert old_a is not None and new_a is old_a and new_a.normalised["a = 1"] == 5
    old_b, new_b = text("HEAD~1:b.py"), text("HEAD:b.py")
    assert old_b is not None and new_b is not None and new_b is not old_b
    assert (old_b.lines, new_b.lines) == (["b = 2"], ["b = 3"])
    assert text("HEAD:missing.py") is None
    assert shared.blobs_read == 5 and shared.contents_read == 3  # a.py read once


def test_a_line_found_once_is_where_the_map_puts_it():
    text = FileText(["def f():", "    x = 1", "    return x", "", "    x = 1", "y = 2  "])
    assert text.once("    return x") == 2
    assert text.once("y = 2") == 5  # right-hand whitespace is dropped
    assert text.once("    x = 1") is None  # twice
    assert text.once("z = 3") is None
    assert text.where["    return x"] == [2]  # the map built, the answers stay
    assert text.once("    return x") == 2 and text.once("    x = 1") is None


def _openers_scanned(lines: list[str], start: int, changed: list[str]) -> tuple[str, ...]:
    """The openers as a plain scan up the file finds them: each line above `start`, within
    `BLOCK_SEARCH`, that says something and is indented less than the last kept (first: less
    than the least indented changed line that says something)."""
    saying = [line for line in changed if not is_trivial(normalise_line(line))]
    if not saying:
        return ()
    depth = min(len(line) - len(line.lstrip()) for line in saying)
    found: list[str] = []
    for number in range(min(start, len(lines)) - 1, max(-1, start - 1 - replay.BLOCK_SEARCH), -1):
        line = lines[number].rstrip()
        indentation = len(line) - len(line.lstrip())
        if depth and line and indentation < depth and not is_trivial(normalise_line(line)):
            found.append(line)
            depth = indentation
    return tuple(found)


def test_a_lines_block_openers_from_the_chain_are_those_a_scan_finds(monkeypatch):
    """`FileText.openers` walks the file's opener chain, worked out once; it names the lines
    a scan up the file names, innermost first, within `BLOCK_SEARCH` lines (made small here,
    so every start meets the bound), in files with blank and trivial lines, tabs, trailing
    whitespace kept (exact) or not, and lines shorter than the depth."""
    monkeypatch.setattr(replay, "BLOCK_SEARCH", 5)
    pieces = ["", "}", "  ", "\t", "    ", "        ", "  \t"]
    words = ["class A:", "def f(x):", "if x:", "return x", "x = 1  ", "# note", ")"]
    randomly = random.Random(7)
    for _ in range(40):
        lines = [
            randomly.choice(pieces) + randomly.choice(words) for _ in range(randomly.randint(0, 30))
        ]
        changes = [["        x = 2", "  y = 3"], ["\t\tz"], ["    a", "b"], [""], ["  )"]]
        for exact in (False, True):
            text = FileText(lines, exact=exact)
            for start in range(-2, len(lines) + 3):
                for changed in changes:
                    expected = _openers_scanned(text.lines, start, changed)
                    assert text.openers(start, replay._opening_depth(changed)) == expected
                    assert _openers(text.lines, start, changed) == expected
    nested = FileText(["class A:", "", "    def f(self):", "        # note", "        x = 1"])
    depth = replay._opening_depth(["            y = 2", "        z = 3", "    )"])
    assert depth == 8  # the least indented changed line that says something
    assert nested.openers(5, depth) == ("    def f(self):", "class A:")
    assert nested.openers(5, replay._opening_depth(["y = 2"])) == ()  # nothing less indented
    assert FileText([]).openers(3, 4) == () and nested.openers(5, None) == ()


def test_normalised_lines_are_counted_as_every_line_would_be():
    """A file's normalised lines are counted one by one as a replay asks about them, and all
    at once past `COUNTED_LINES`: either way each count is that of every line normalised."""
    lines = [
        "def f(x):",
        "    return x  +  1",
        "\treturn x + 1",
        "return x + 12",
        "x = x + x",
        "    x = x   + x  ",
        *(f"value_{n} = {n}" for n in range(100)),
    ]
    expected = Counter(normalise_line(line) for line in lines)
    asked = [*expected, "return x", "x", "missing line", "x = x", *(f"y{n}" for n in range(70))]
    text = FileText(lines)
    assert [text.normalised[line] for line in asked] == [expected[line] for line in asked]
    assert text.normalised["return x + 1"] == 2 and text.normalised["x = x + x"] == 2
    assert text.normalised.get("missing line", 0) == 0
    fresh = FileText(lines)
    assert [fresh.normalised[line] for line in asked[:5]] == [expected[line] for line in asked[:5]]


def test_a_resweep_sees_a_new_landing_and_a_new_pr(builder: RepoBuilder):
    """PR 2 reads the settings file; nothing has done it yet. Then PR 1 (opened earlier,
    sharing its new line) lands: a sweep from the cache says PR 2 is done by PR 1. Then PR 3
    proposes PR 2's very patch again: the next sweep answers it too. (A landing sharing only
    common lines with a cached PR is not followed: `--full` redoes everything.)"""
    builder.commit("Add the settings module", {"settings.py": SETTINGS})
    base = builder.head()
    builder.pr_branch(
        2,
        [("Load settings from the file", {"settings.py": SETTINGS.replace(STUB, READ_UTF8)})],
        start=base,
    )
    code, _, err = run(builder.path, "index", "--quiet")
    assert code == 0, err
    first = sweep(builder.path, jobs=1)
    assert first.answer(2) is None and first.rechecked == [2]

    builder.pr_branch(
        1, [("Read the settings file", {"settings.py": SETTINGS.replace(STUB, READ_UTF8)})]
    )
    builder.merge_pr(1, how="squash")
    run(builder.path, "index", "--quiet")
    landed = sweep(builder.path, jobs=1)
    assert landed.rechecked == [2]
    answer = landed.answer(2)
    assert answer is not None and (answer.pr, answer.verdict) == (1, "already-merged")

    builder.pr_branch(
        3,
        [("Read settings as UTF-8", {"settings.py": SETTINGS.replace(STUB, READ_UTF8)})],
        start=base,
    )
    run(builder.path, "index", "--quiet")
    proposed = sweep(builder.path, jobs=1)
    assert 3 in proposed.rechecked
    again = proposed.answer(3)
    assert again is not None and again.verdict in ("already-merged", "duplicate")


def test_an_open_prs_own_newest_commit_answers_before_its_copies_are_read(
    builder: RepoBuilder,
):
    """#81 was rebased onto upstream by cherry-picking five landed fixes of the pipeline file
    (copies, made after they landed), then wrote a note and made the offload fix in commits
    of its own; #82 makes the same fix. #82 is replayed at #81's head, and #81's commits
    touching the file are read to tell its work from copies: its newest commit is its own,
    which answers (it is #81's work), without reading the patches of the five copies."""
    start = builder.commit("Add the pipeline", {PIPELINE_PY: PIPELINE})
    landed = []
    text = PIPELINE
    for number in range(61, 66):
        text += f"STEP_{number} = {number}\n"
        landed.append(builder.pr_branch(number, [(f"Add step {number}", {PIPELINE_PY: text})]))
        builder.merge_pr(number)
    builder.checkout("pr-81", start)
    for commit in landed:
        builder.git("cherry-pick", commit)
    builder._author = "Contributor 81"
    builder.commit("Note the strategy", {"NOTES.md": "Offload follows the strategy.\n"})
    builder.commit("Ask the offload strategy", {PIPELINE_PY: text.replace(LEGACY, MERGED_FIX)})
    builder._author = "Test Author"
    builder.git("update-ref", "refs/pull/81/head", builder.head())
    builder.checkout("main")
    fixed = PIPELINE.replace(LEGACY, MERGED_FIX)
    builder.pr_branch(82, [("Use the offload strategy", {PIPELINE_PY: fixed})], start=start)
    for number in [*range(61, 66), 81, 82]:
        builder.delete_pr_branch(number)
    export = [{"number": n, "createdAt": OPENED, "state": "MERGED"} for n in range(61, 66)]
    export += [{"number": n, "createdAt": OPENED, "state": "OPEN"} for n in (81, 82)]
    index_with(builder, export)

    shared = SharedReads(gitsource.open_repository(builder.path))
    found = findings_of(builder.path, [82], shared)
    assert ("#81", "covered") in {(key, verdict) for key, verdict, _ in found[82]}
    assert shared.patches_read <= 3  # not the five copies'


def test_ancestry_asked_often_of_one_tip_is_answered_from_its_history_as_git_answers(
    builder: RepoBuilder,
):
    """A sweep asks of every landing whether the target's tip holds it: once one commit is
    asked about often, its history is read whole, and every answer is still git's (a commit
    itself, an ancestor, one on another branch, a later one, an unknown id, a name)."""
    builder.commit("first", {"a.txt": "1\n"})
    old = builder.head()
    builder.checkout("side", old)
    side = builder.commit("side work", {"b.txt": "side\n"})
    builder.checkout("main")
    middle = builder.commit("second", {"a.txt": "2\n"})
    builder.git("merge", "--no-ff", "-m", "merge side", "side")
    tip = builder.head()
    builder.checkout("later", tip)
    later = builder.commit("later", {"a.txt": "3\n"})
    repo = gitsource.open_repository(builder.path)
    asked = [old, side, middle, tip, later, "0" * 40, "main", f"{middle}^1"]
    expected = {a: gitsource.is_ancestor(repo, a, tip) for a in asked}
    assert expected[side] and not expected[later] and not expected["0" * 40]
    answers = SharedReads(repo).git()
    for n in range(HISTORY_AFTER):  # each answer is kept: ask about other commits
        answers.is_ancestor(f"{n:040x}", tip)
    assert answers._histories.get(tip) is not None  # read whole by now
    assert {a: answers.is_ancestor(a, tip) for a in asked} == expected
    assert not answers.is_ancestor(tip, middle)  # another commit's: asked of git


def test_a_tips_reverts_are_kept_by_the_index_for_a_check_run_again(builder: RepoBuilder):
    """Reading a branch's reverts walks its whole history: a check keeps the tip's in the
    index, and the next check on the same tip reads them there (git is not asked); a tip that
    moved is read anew."""
    builder.commit("first", {"a.txt": "1\n"})
    fix = builder.commit("fix", {"a.txt": "2\n"})
    builder.git("revert", "--no-edit", fix)
    repo = gitsource.open_repository(builder.path)
    tip = builder.head()
    with IndexStore(builder.path.parent / "kept.db", create=True) as store:
        assert replay_memory.kept_reverts(store) is None
        shared = SharedReads(repo, memory=ReplayMemory(store))
        read = shared.reverts_on(tip)
        assert set(read.by_key) == {fix, "fix"}  # the commit it reverts, the subject it quotes
        assert shared.memory is not None and shared.memory.reverts_read == {
            tip: gitsource.reverts_in(repo, tip)
        }
        assert replay_memory.keep_reverts(store, tip, shared.memory.reverts_read[tip])
        again = SharedReads(repo, memory=ReplayMemory(store))
        assert again.reverts_on(tip) == read
        assert again.memory is not None and again.memory.reverts_read == {}  # from the index
        moved = SharedReads(repo, memory=ReplayMemory(store))
        moved.reverts_on(builder.commit("on", {"z.txt": "z\n"}))
        assert moved.memory is not None and len(moved.memory.reverts_read) == 1
        for damaged in (
            "{",
            '{"code": 1}',
            "[1, 2]",
            f'{{"code": "{code_digest()}", "tip": 1, "reverts": [1]}}',
        ):
            store.set_meta(replay_memory.REVERTS_KEY, damaged)
            assert replay_memory.kept_reverts(store) is None  # read from git again
