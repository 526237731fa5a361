"""Lines that are not UTF-8 (a Latin-1 source) read as Latin-1, "café", never as replacement
characters, and the same wherever they are read: a diff, a patch file, a replayed file."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from index.git.decoding import decode_text
from tests.repo_builder import RepoBuilder, run_cli

# A French program kept in Latin-1, as old sources often are.
GREETER = """def accueil(nom):
    message = "Bienvenue au café, " + nom
    return message


def au_revoir(nom):
    message = "À bientôt, " + nom
    return message
"""
FIXED = GREETER.replace('"Bienvenue au café, " + nom', '"Bienvenue au café, " + nom.strip()')
REPLACEMENT = "\ufffd"


@pytest.fixture
def latin1(builder: RepoBuilder) -> RepoBuilder:
    """PR 1 strips the name in the café greeting and is merged; PR 2, opened from the older
    base, makes the same fix."""
    builder.commit("Greeter", {"accueil.py": GREETER.encode("latin-1")})
    builder.pr_branch(1, [("Strip the name", {"accueil.py": FIXED.encode("latin-1")})])
    builder.merge_pr(1, how="squash")
    builder.pr_branch(
        2,
        [("Trim the visitor's name", {"accueil.py": FIXED.encode("latin-1")})],
        start=builder.head("main~1"),
    )
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    return builder


def test_a_latin1_line_is_shown_as_latin1_and_still_proven_done(latin1: RepoBuilder):
    code, out, err = run_cli(latin1.path, "check", "--pr", "2")
    assert code == 1, err
    assert "café" in out
    assert REPLACEMENT not in out
    code, out, _ = run_cli(latin1.path, "check", "--pr", "2", "--format", "json")
    found = json.loads(out)["findings"][0]
    assert (found["pr"], found["verdict"]) == (1, "already-merged")
    assert any(reason.startswith("replayed") for reason in found["reasons"])
    assert found["shared_removed_lines"] == ['message = "Bienvenue au café, " + nom']


def test_a_latin1_patch_file_matches_as_the_pr_does(latin1: RepoBuilder, tmp_path: Path):
    patch = tmp_path / "fix.patch"
    patch.write_bytes(latin1.repo.git.diff("main~1", "refs/pull/2/head", stdout_as_string=False))
    assert b"caf\xe9" in patch.read_bytes()
    code, out, err = run_cli(latin1.path, "check", "--diff", str(patch), "--format", "json")
    assert code == 1, err
    found = json.loads(out)["findings"][0]
    assert (found["pr"], found["verdict"]) == (1, "already-merged")
    assert found["shared_added_lines"] == ['message = "Bienvenue au café, " + nom.strip()']


def _line_at_a_time(raw: bytes) -> str:
    """What `decode_text` means: each line UTF-8 if it is, else Latin-1."""
    out = []
    for line in raw.splitlines(keepends=True):
        try:
            out.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            out.append(line.decode("latin-1"))
    return "".join(out)


def test_decoding_mixed_text_gives_what_decoding_line_by_line_gives():
    pieces = [
        b"plain ascii",
        "naïve ünïcode €".encode(),
        "café".encode("latin-1"),
        b"\xff\xfe",
        "é".encode()[:1],  # a character cut short
        b"\n",
        b"\r",
        b"\r\n",
        b"\n\n",
    ]
    rng = random.Random(11)
    for _ in range(3000):
        raw = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert decode_text(raw) == _line_at_a_time(raw), raw
    for _ in range(5):  # long enough to be decoded in several blocks of lines
        raw = b"".join(rng.choice(pieces) for _ in range(120_000))
        assert decode_text(raw) == _line_at_a_time(raw)


def test_decoding_keeps_utf8_lines_and_reads_the_others_as_latin1():
    raw = "naïve\n".encode() + "café\r\n".encode("latin-1") + b"plain"
    assert decode_text(raw) == "naïve\ncafé\r\nplain"
    assert decode_text("déjà vu".encode()) == "déjà vu"
