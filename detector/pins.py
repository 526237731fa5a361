"""Dependency pins read from manifest lines: which package a line sets to which version.

Two changes that set the same package to different versions are competing bumps, however
much of the rest of their diffs (regenerated comments, the same neighbouring lines) agrees:
`filelock==3.20.1` and `filelock==3.20.3` are not the same change. Only lines of the shape
`name <op> version` in a manifest are read (pip requirements and constraints, PEP 508 strings
of `pyproject.toml`, `setup.py` and `setup.cfg`, `package.json`, `go.mod`, `Cargo.toml` and
Poetry or Pipfile tables); anything else is no pin.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_NAME = r"[A-Za-z0-9@][A-Za-z0-9._/@-]*"
_VERSION = r"v?[0-9][0-9A-Za-z.*+!_-]*"
# `filelock==3.20.3`, `"tomli>=1.1.0; python_version<'3.11'",`, `flake8-pyi>=22.7.0  # note`
_PEP508 = re.compile(
    rf"""^["']?(?P<name>{_NAME})(?:\[[^\]]*\])?\s*(?P<op>===|==|~=|>=|<=|!=|>|<)\s*"""
    rf"""(?P<version>{_VERSION})(?:\s*,\s*[<>=!~]=?\s*{_VERSION})*["']?\s*,?\s*(?:;.*|#.*|\\)?$"""
)
# `"lodash": "^4.17.21",` (package.json), `serde = "1.0"` and `serde = { version = "1.0" }`
# (Cargo.toml, Poetry, Pipfile)
_KEYED = re.compile(
    rf"""^["']?(?P<name>{_NAME})["']?\s*[:=]\s*(?:\{{\s*version\s*=\s*)?["']"""
    rf"""(?P<op>[~^]|[<>=!]=?|)\s*(?P<version>{_VERSION})["']"""
)
# `require golang.org/x/net v0.17.0`, or a `require (...)` block's `golang.org/x/net v0.17.0`
_GO = re.compile(rf"^(?:require\s+)?(?P<name>{_NAME})\s+(?P<version>v[0-9][0-9A-Za-z.+-]*)")
# Keys that look like pins and are not dependencies: the project's own version, the language's.
_NOT_PACKAGES = frozenset(
    ["version", "edition", "rust-version", "python", "python_requires", "go", "toolchain"]
)
_REQUIREMENTS = re.compile(
    r"(^|/)([^/]*[-_.])?(requirements|constraints)([-_.][^/]*)?\.(txt|in)$"
    r"|(^|/)requirements/[^/]*\.(txt|in)$",
    re.IGNORECASE,
)
_PEP508_FILES = re.compile(r"(^|/)(pyproject\.toml|setup\.py|setup\.cfg)$")
_KEYED_FILES = re.compile(r"(^|/)(package\.json|Cargo\.toml|pyproject\.toml|Pipfile)$")
_GO_FILES = re.compile(r"(^|/)go\.mod$")


@dataclass(frozen=True, slots=True)
class CompetingPin:
    """A package this change pins to one version and the candidate to another."""

    package: str
    ours: str
    theirs: str


def is_manifest(path: str) -> bool:
    """A file whose lines may pin dependencies."""
    return any(
        pattern.search(path) for pattern in (_REQUIREMENTS, _PEP508_FILES, _KEYED_FILES, _GO_FILES)
    )


def pin(path: str, line: str) -> tuple[str, str] | None:
    """(package, version) the line of `path` pins, with the operator that bounds it: `==3.20.3`,
    `^4.17.21`, `v0.17.0`; None for any other line."""
    text = line.strip()
    patterns = []
    if _REQUIREMENTS.search(path) or _PEP508_FILES.search(path):
        patterns.append(_PEP508)
    if _KEYED_FILES.search(path):
        patterns.append(_KEYED)
    if _GO_FILES.search(path):
        patterns.append(_GO)
    for pattern in patterns:
        found = pattern.match(text)
        if found is None:
            continue
        name = found["name"].lower().replace("_", "-")
        if name in _NOT_PACKAGES:
            return None
        operator = found.groupdict().get("op") or ""
        return name, f"{operator}{found['version']}"
    return None


def pins(path: str, lines: Iterable[str]) -> dict[str, set[str]]:
    """Every package the lines pin, with the versions they pin it to."""
    found: dict[str, set[str]] = {}
    for line in lines:
        pinned = pin(path, line)
        if pinned is not None:
            found.setdefault(pinned[0], set()).add(pinned[1])
    return found


def competing_pins(
    path: str, added: Iterable[str], before: Iterable[str], after: Iterable[str]
) -> tuple[CompetingPin, ...]:
    """The packages this change's `added` lines pin, that the candidate re-pinned (the file
    `after` it pins them otherwise than `before` it) to a version this change does not write."""
    ours = pins(path, added)
    if not ours:
        return ()
    there, then = pins(path, after), pins(path, before)
    competing = []
    for package, versions in sorted(ours.items()):
        theirs = there.get(package, set())
        if theirs and theirs != then.get(package, set()) and not theirs & versions:
            competing.append(CompetingPin(package, min(versions), min(theirs)))
    return tuple(competing)
