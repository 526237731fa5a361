"""The documentation describes the product for anyone with a clone: no path that exists on one
machine only, no pointer outside the repository, no development history or run names (that
lives in `git log` and CHANGELOG.md). The README is the front door (short, its links lead
somewhere, its two commands are there); every page under docs/ is on the site's nav."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md"))
DOCS = [ROOT / "README.md", *PAGES]

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


def _nav_pages(nav: list) -> set[str]:
    pages: set[str] = set()
    for entry in nav:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages |= _nav_pages(value) if isinstance(value, list) else {value}
    return pages


def test_every_page_is_on_the_sites_nav_and_every_nav_entry_is_a_page():
    """mkdocs builds a page left off the nav without a way to reach it; --strict in .ci/run
    catches it too, this says it in the tests."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    on_disk = {str(page.relative_to(ROOT / "docs")) for page in PAGES}
    assert _nav_pages(config["nav"]) == on_disk


def test_the_cli_reference_is_generated_from_the_click_group():
    from cli import main

    page = (ROOT / "docs" / "cli.md").read_text()
    assert "::: mkdocs-click\n    :module: cli\n    :command: main\n" in page
    assert (
        "mkdocs-click" in yaml.safe_load((ROOT / "mkdocs.yml").read_text())["markdown_extensions"]
    )
    assert {"index", "check", "show", "sweep", "comment"} <= set(main.commands)


README_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    links = README_LINK.findall(readme)
    relative = [link for link in links if "://" not in link]
    assert relative and [link for link in relative if not (ROOT / link).exists()] == []
    # The two commands a new user copies: install and run prdup on a real repository, and
    # run the tests (the command .ci/run ends with).
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    assert any(
        "pip install ." in block and "prdup index" in block and "prdup check" in block
        for block in blocks
    )
    assert "pip install -e '.[test]' && python -m pytest" in "".join(blocks)
    # One line per verdict.
    for verdict in ("already-merged", "superseded", "partly-merged", "duplicate", "covered"):
        assert re.search(rf"^- `{verdict}`: ", readme, re.M), verdict
