"""Replays kept in the index by their inputs: read again where the inputs are the same, never
where they differ, and the answers the same as replaying anew.

The story: stats.py's four functions (`tests/test_rest_on_target.py`). #2 rounds `mean` and is
squash-merged; #1 (open) rounds `mean` too, and checks `spread`'s input: partly done in #2. #3
(open) rounds `mean` alone: already done in #2.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from detector.model import parse_patch
from detector.replay import FileVersions, replay
from index.questions import replay_memory
from tests.repo_builder import RepoBuilder, run_cli
from tests.test_rest_on_target import STATS, checked, rounded

ROUNDED = rounded(STATS, "mean")
CHECKED = checked(ROUNDED)


@pytest.fixture
def story(builder: RepoBuilder) -> RepoBuilder:
    builder.commit("Add stats", {"stats.py": STATS})
    base = builder.head()
    builder.pr_branch(1, [("Round the mean, check spread", {"stats.py": CHECKED})])
    builder.pr_branch(3, [("Round the mean", {"stats.py": ROUNDED})], start=base)
    builder.pr_branch(2, [("Round", {"stats.py": ROUNDED})], start=base)
    builder.merge_pr(2, how="squash")
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    return builder


def kept(repo: Path) -> list[tuple[str, str, bytes]]:
    """(key, query, replay) of every kept replay."""
    with sqlite3.connect(repo / ".git" / "prdup.db") as conn:
        return list(conn.execute("SELECT key, query, replay FROM replays ORDER BY key"))


def undo_every_kept_replay(repo: Path) -> None:
    """Rewrite every kept replay to say that nothing was done there."""
    with sqlite3.connect(repo / ".git" / "prdup.db") as conn:
        for key, _, text in kept(repo):
            found, gone, moved = replay_memory.decode(text)
            undone = tuple(replace(h, after="new", how="") for h in found.hunks)
            text = replay_memory.encode(replace(found, hunks=undone), gone, moved)
            conn.execute("UPDATE replays SET replay = ? WHERE key = ?", (text, key))


def sweep_json(repo: Path, *flags: str) -> dict:
    code, out, err = run_cli(repo, "sweep", "--format", "json", "--exit-zero", *flags)
    assert code == 0, err
    data = json.loads(out)
    data["stats"].pop("seconds")
    return data


def check_json(repo: Path, number: int) -> list[dict]:
    code, out, err = run_cli(repo, "check", "--pr", str(number), "--format", "json")
    assert code in (0, 1), err
    return json.loads(out)["findings"]


def test_a_replay_reads_back_as_it_was_made():
    """What is kept is the replay itself: every hunk's every field, read back equal."""
    diff = (
        "diff --git a/stats.py b/stats.py\n--- a/stats.py\n+++ b/stats.py\n"
        "@@ -1,5 +1,6 @@\n def mean(values):\n     ordered = sorted(values)\n"
        "-    mean_result = ordered[len(ordered) // 2] + 0\n"
        "+    mean_result = round(ordered[len(ordered) // 2], 2)\n"
        "+    mean_result = float(mean_result)\n"
        "     count = len(ordered)\n     return mean_result, count\n"
    )
    change = parse_patch(diff)
    versions = {
        "stats.py": FileVersions(
            base=STATS.splitlines(), before=STATS.splitlines(), after=ROUNDED.splitlines()
        )
    }
    made = replay(change, versions, "abc123")
    assert made.complete  # a replay that found something, so its fields say something
    assert replay_memory.decode(replay_memory.encode(made)) == (made, frozenset(), {})
    gone = {"docs/old.md", "examples/a.py"}
    moved = {"legacy.py": "compat/legacy.py"}
    assert replay_memory.decode(replay_memory.encode(made, gone, moved)) == (made, gone, moved)


def test_a_second_sweep_reads_the_kept_replays_and_answers_the_same(story: RepoBuilder):
    first = sweep_json(story.path)
    assert [d["pr"] for d in first["already_done"]] == [3]
    assert [p["pr"] for p in first["partly_done"]] == [1]
    rows = kept(story.path)
    heads = {story.head(f"refs/pull/{n}/head") for n in (1, 3)}
    assert rows and {query for _, query, _ in rows} <= heads
    # Every replay read back, none made again: nothing new is written, the answers the same.
    assert sweep_json(story.path, "--full") == first
    assert kept(story.path) == rows
    # Read back, not made again: kept replays that say nothing was done are what it reads.
    undo_every_kept_replay(story.path)
    assert sweep_json(story.path, "--full")["already_done"] == []


def test_a_kept_replay_is_what_a_check_reads(story: RepoBuilder):
    """`check` keeps its replays too, and reads them the next time: a kept replay that says
    nothing was done (written here by hand) makes the next check say so too. This is why the
    key holds every input: what is kept is trusted."""
    [first, *_] = check_json(story.path, 3)
    assert (first["pr"], first["verdict"]) == (2, "already-merged")
    rows = kept(story.path)
    assert rows
    undo_every_kept_replay(story.path)
    again = check_json(story.path, 3)
    assert all(f["verdict"] != "already-merged" for f in again if f["pr"] == 2), again


def test_a_pr_pushed_again_is_replayed_anew_and_its_old_replays_go(story: RepoBuilder):
    sweep_json(story.path)
    old_head = story.head("refs/pull/1/head")
    # #1 drops its median check: now it only rounds the mean, as #2 did.
    story.pr_branch(1, [("Only round the mean", {"stats.py": ROUNDED})], start=old_head)
    code, _, err = run_cli(story.path, "index", "--quiet")
    assert code == 0, err
    data = sweep_json(story.path)
    assert sorted(d["pr"] for d in data["already_done"]) == [1, 3]
    assert data["partly_done"] == []
    queries = {query for _, query, _ in kept(story.path)}
    assert old_head not in queries and story.head("refs/pull/1/head") in queries


def test_a_read_only_index_is_swept_with_nothing_kept(story: RepoBuilder):
    first = sweep_json(story.path)
    rows = kept(story.path)
    db = story.path / ".git" / "prdup.db"
    db.chmod(0o444)
    try:
        assert sweep_json(story.path, "--full") == first
        assert check_json(story.path, 3)[0]["verdict"] == "already-merged"
    finally:
        db.chmod(0o644)
    assert kept(story.path) == rows


def test_replays_made_by_other_code_are_never_read_and_a_sweep_drops_them(story: RepoBuilder):
    """A rule changed since (another prdup) makes other replays: the key holds the code, so
    the old ones are never read, and the next sweep drops them rather than keep them forever."""
    first = sweep_json(story.path)
    db = story.path / ".git" / "prdup.db"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE replays SET code = 'an older prdup'")
    undo_every_kept_replay(story.path)  # under this code's keys: proof the new ones are made
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE replays SET key = 'old:' || key")
    assert sweep_json(story.path, "--full") == first
    with sqlite3.connect(db) as conn:
        codes = {code for (code,) in conn.execute("SELECT DISTINCT code FROM replays")}
    assert codes and "an older prdup" not in codes
