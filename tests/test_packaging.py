"""What `pip install prdup` brings is what prdup imports: no module that only happens to be
installed (a dependency's dependency), no declared package that nothing uses, and the license
file the metadata names."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
OWN = {"index", "detector", "prdup", "commands", "cli", "tests", "bench"}


def _name(requirement: str) -> str:
    """`PyGithub>=2.3` -> `pygithub`: a distribution's name as PEP 503 compares it."""
    bare = re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", bare).lower()


def imported_modules(paths: list[Path]) -> set[str]:
    """Top-level modules the given files import, other than the standard library and prdup's."""
    found: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - OWN - {"__future__"}


def distributions_of(modules: set[str]) -> dict[str, set[str]]:
    installed = packages_distributions()
    return {module: {_name(d) for d in installed.get(module, [])} for module in modules}


def package_sources() -> list[Path]:
    return [
        *(ROOT / "index").rglob("*.py"),
        *(ROOT / "detector").glob("*.py"),
        *(ROOT / "prdup").glob("*.py"),
        *(ROOT / "commands").glob("*.py"),
        ROOT / "cli.py",
    ]


def test_every_module_prdup_imports_is_a_declared_dependency():
    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    undeclared = {
        module: dists
        for module, dists in distributions_of(imported_modules(package_sources())).items()
        if not dists & declared
    }
    assert undeclared == {}


def test_every_declared_dependency_is_imported():
    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    used = set().union(*distributions_of(imported_modules(package_sources())).values())
    assert declared - used == set()


def test_the_tests_import_only_what_the_test_extra_declares():
    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    declared |= {_name(r) for r in PYPROJECT["project"]["optional-dependencies"]["test"]}
    tests = sorted((ROOT / "tests").glob("*.py"))
    undeclared = {
        module: dists
        for module, dists in distributions_of(imported_modules(tests)).items()
        if not dists & declared
    }
    assert undeclared == {}


def test_every_file_a_package_reads_is_shipped_with_it():
    """A file beside the code (git's attributes file, the report's template, the weights) is in
    the wheel only when `package-data` names it; the packages are every folder with an
    `__init__.py` under the ones `packages.find` includes."""
    find = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    assert find == ["index*", "detector*", "prdup*", "commands*"]
    declared = PYPROJECT["tool"]["setuptools"]["package-data"]
    packages = {
        ".".join(init.parent.relative_to(ROOT).parts): init.parent
        for top in ("index", "detector", "prdup", "commands")
        for init in (ROOT / top).rglob("__init__.py")
    }
    unshipped = []
    for name, folder in packages.items():
        patterns = [*declared.get("*", []), *declared.get(name, [])]
        for path in folder.rglob("*"):
            inner = path.relative_to(folder)
            if path.is_dir() or path.suffix in {".py", ".pyc"} or "__pycache__" in inner.parts:
                continue
            if any((folder / part / "__init__.py").exists() for part in inner.parents[:-1]):
                continue  # a sub-package's own file: its own entry says
            if not any(inner.match(pattern) for pattern in patterns):
                unshipped.append(f"{name}: {inner}")
    assert unshipped == []


def test_the_license_the_metadata_names_is_shipped():
    assert PYPROJECT["project"]["license"] == "MIT"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]
    license_text = (ROOT / "LICENSE").read_text()
    assert license_text.startswith("MIT License")
    assert "Permission is hereby granted, free of charge" in license_text


def test_the_changelog_keeps_a_changelog():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert changelog.startswith("# Changelog")
    assert "keepachangelog.com" in changelog
    assert "## [Unreleased]" in changelog
    assert PYPROJECT["project"]["version"] in changelog  # the first release it describes
