"""The documentation describes the product for anyone with a clone: no path that exists on one
machine only, no pointer outside the repository, no development history or run names (that
lives in `git log` and CHANGELOG.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

MACHINE_PATHS = re.compile(r"(?<![\w.$}])/(work|root|tmp|home|Users)/|\.\./shared\b")
HISTORY = re.compile(
    r"\b(sessions?|rounds?|previous (code|indexer|checkout)|earlier code|the code of|"
    r"starting design|design card)\b|\b(ae|zs|h2)-[a-z0-9]{1,4}\b",
    re.IGNORECASE,
)


def found(pattern: re.Pattern[str], text: str) -> list[str]:
    return [
        f"line {number}: {line.strip()[:100]}"
        for number, line in enumerate(text.splitlines(), 1)
        if pattern.search(line)
    ]


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_no_machine_paths_or_pointers_outside_the_repository(doc: Path):
    assert found(MACHINE_PATHS, doc.read_text()) == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_no_development_history_or_run_names(doc: Path):
    assert found(HISTORY, doc.read_text()) == []


def test_the_patterns_catch_what_they_are_for():
    bad = (
        "python bench/index_speed.py /work/.mirror/python+mypy/repo --db /tmp/mypy.db\n"
        "see ../shared/STYLE.md\n"
        "(/root/.cache/x)\n"
        "measured in the third session against the previous code (ae-ct, zs-h)\n"
    )
    assert len(found(MACHINE_PATHS, bad)) == 3
    assert len(found(HISTORY, bad)) == 1
    good = 'OMNI="$(mktemp -d)/vllm-omni"; python bench/index_speed.py "$MYPY" --db "$WORK/m.db"'
    assert found(MACHINE_PATHS, good) == [] and found(HISTORY, good) == []
