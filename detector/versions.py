"""Version numbers in release order: the one order every comparison of two versions uses.

`3.20.3` comes after `3.20.1` and `1.0` is `1.0.0`; a pre-release comes before its release
(`v0.31.0-rc1`, `1.0.0b1`, `1.0.0.dev1`, Go's pseudo-version `v2.3.4-0.20260102150405-abc`
before `v2.3.4`), a development release before an alpha, an alpha before a beta, a beta
before a release candidate (PEP 440 and SemVer agree on these); a post-release
(`1.0.post1`) after its release.
"""

from __future__ import annotations

import re

# (release numbers without trailing zeros, 1 for a release and 0 for a pre-release, the
# pre-release's stage, the numbers after the release)
VersionKey = tuple[tuple[int, ...], int, int, tuple[int, ...]]

# A version number within a line: `^4.17.21`, `v0.17.0`, `1.0.0-rc.1+build`, `1.0.0b1`,
# `2.0.dev3`; a number of one part (`3`) is no version here.
VERSION_IN_TEXT = re.compile(
    r"v?\d+(?:\.\d+)+(?:[-+][0-9a-z.-]+|\.?(?:a|b|c|rc|alpha|beta|pre|preview|dev|post)\d*"
    r"(?![a-z]))?",
    re.IGNORECASE,
)
_RELEASE = re.compile(r"(\d+(?:\.\d+)*)(.*)")
_PRE_RELEASE = re.compile(
    r"\s*(?:-|\.?(?:a|b|c|rc|alpha|beta|pre|preview|dev)\d*\b)", re.IGNORECASE
)
# The stages of a pre-release, in order; a pre-release naming none (Go's pseudo-versions, a
# SemVer `-0.3`) comes first, as SemVer orders numeric identifiers before words.
_STAGES = {
    "dev": 0,
    "a": 1,
    "alpha": 1,
    "b": 2,
    "beta": 2,
    "c": 3,
    "rc": 3,
    "pre": 3,
    "preview": 3,
}


def version_key(version: str) -> VersionKey:
    """Where `version` (`==3.20.3`, `^4.17.21`, `v0.31.0-rc1`; operators aside) sorts."""
    found = _RELEASE.search(version)
    if found is None:
        return ((), 1, 0, ())
    release = tuple(int(part) for part in found.group(1).split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    rest = found.group(2)
    after = tuple(int(part) for part in re.findall(r"\d+", rest))
    if not _PRE_RELEASE.match(rest):
        return (release, 1, 0, after)
    stage = re.search(r"[a-z]+", rest.lower())
    return (release, 0, _STAGES.get(stage.group(), 0) if stage else 0, after)


def at_least(version: str, other: str) -> bool:
    """`version` is at least `other` in release order (`3.20.3` >= `3.20.1`, a release >= its
    pre-release), operators aside."""
    return version_key(version) >= version_key(other)


def first_version(text: str) -> VersionKey | None:
    """Where the first version number a line holds sorts (`"lodash": "^4.17.21",`), if any."""
    found = VERSION_IN_TEXT.search(text)
    return version_key(found.group()) if found is not None else None
