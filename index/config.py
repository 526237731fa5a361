"""prdup's settings: `[tool.prdup]` in pyproject.toml or `.prdup.toml`, read with tomllib.

Flags beat environment beat file beat defaults; an unknown key is an error listing valid ones.
"""

from __future__ import annotations

import fnmatch
import functools
import math
import os
import re
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from detector.evidence import VERDICT_ORDER
from index.errors import BadConfig

# Files whose diffs say nothing about the change a person made: they are regenerated, vendored
# or machine-written, and one lockfile bump would otherwise look like a thousand shared lines.
DEFAULT_IGNORE = (
    "*.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "go.sum",
    "composer.lock",
    "Gemfile.lock",
    "*.min.js",
    "*.min.css",
    "*.map",
    "*_pb2.py",
    "*_pb2.pyi",
    "*.pb.go",
    "vendor/*",
    "*/vendor/*",
    "third_party/*",
    "*/third_party/*",
    "node_modules/*",
    "*/node_modules/*",
    "dist/*",
)

# The verdicts that fail a job (exit 1) unless `fail_on` says otherwise: the change is already
# done, a landing superseded it (it cannot go in as it is), or another PR makes it. A partial
# or nearby finding is worth reading, not a red job.
DEFAULT_FAIL_ON = ("already-merged", "superseded", "duplicate", "covered")
NEVER_FAIL = "none"


@dataclass(frozen=True)
class Settings:
    """Every setting, with its default."""

    targets: tuple[str, ...] = ()
    ignore: tuple[str, ...] = DEFAULT_IGNORE
    extra_ignore: tuple[str, ...] = ()
    max_changed_lines: int = 20_000  # a change larger than this is stored truncated
    # An unmerged PR beyond this many changed lines is stored truncated: past it, its diff from
    # the fork point is mostly other work its branch carries (see docs/design.md).
    max_unmerged_lines: int = 3_000
    max_file_bytes: int = 1_000_000  # files larger than this get no symbols
    symbols: bool = True
    # Read by nothing since indexing finds symbols in git's hunk headers, without worker
    # processes; kept so that configurations which set it still load.
    jobs: int = 0
    min_score: float = 0.7
    top: int = 5
    # A remote to fetch the PR heads a replay needs from, where the clone lacks them (a CI
    # runner fetches only the PR heads that changed); "" never fetches.
    fetch_remote: str = ""
    fail_on: tuple[str, ...] = DEFAULT_FAIL_ON

    def fails_on(self, verdict: str) -> bool:
        """Whether a shown finding with this verdict makes the command exit 1."""
        return verdict in self.fail_on

    def is_ignored(self, path: str) -> str | None:
        """The pattern that ignores `path`, or None."""
        patterns = (*self.ignore, *self.extra_ignore)
        any_pattern = _any_of(patterns)  # one match for the usual answer, "not ignored"
        if not (any_pattern.match(path) or any_pattern.match(path.rsplit("/", 1)[-1])):
            return None
        for pattern in patterns:
            if fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(
                path.rsplit("/", 1)[-1], pattern
            ):
                return pattern
        return None


@functools.lru_cache(maxsize=16)
def _any_of(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regular expression matching what any of the glob patterns matches."""
    if not patterns:
        return re.compile(r"(?!)")
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


_KEYS = {f.name: f for f in fields(Settings)}
_ENV_PREFIX = "PRDUP_"
# Variables prdup reads that are not settings: the index file (as --db) and the bot's login.
OTHER_VARIABLES = frozenset({"PRDUP_DB", "PRDUP_BOT_LOGIN"})


def _coerce(name: str, value: Any, source: str) -> Any:
    default = getattr(Settings(), name)
    try:
        if isinstance(default, tuple):
            if isinstance(value, str):
                return tuple(part.strip() for part in value.split(",") if part.strip())
            return tuple(str(item) for item in value)
        if isinstance(default, bool):
            if isinstance(value, str):
                return value.lower() in ("1", "true", "yes", "on")
            return bool(value)
        return type(default)(value)
    except (TypeError, ValueError):
        raise BadConfig(f"{source}: {name} = {value!r} is not a valid value") from None


def _file_settings(root: Path) -> tuple[dict[str, Any], str]:
    dotfile = root / ".prdup.toml"
    pyproject = root / "pyproject.toml"
    reading = dotfile if dotfile.is_file() else pyproject
    try:
        if dotfile.is_file():
            return tomllib.loads(dotfile.read_text()), str(dotfile)
        if pyproject.is_file():
            data = tomllib.loads(pyproject.read_text())
            tool = data.get("tool", {})
            section = tool.get("prdup", {}) if isinstance(tool, dict) else {}
            if not isinstance(section, dict):
                raise BadConfig(f"{pyproject}: [tool.prdup] must be a table of settings")
            return section, f"{pyproject} [tool.prdup]"
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise BadConfig(f"{reading}: cannot read prdup settings: {error}") from None
    return {}, ""


def load_settings(work_tree: Path | None, **flags: Any) -> Settings:
    """Defaults, then the settings file, then PRDUP_* variables, then flags that were given."""
    settings = Settings()
    if work_tree is not None:
        values, source = _file_settings(work_tree)
        unknown = sorted(set(k.replace("-", "_") for k in values) - set(_KEYS))
        if unknown:
            raise BadConfig(
                f"{source}: unknown setting {', '.join(unknown)}; valid: {', '.join(sorted(_KEYS))}"
            )
        from_file = {
            k.replace("-", "_"): _coerce(k.replace("-", "_"), v, source) for k, v in values.items()
        }
        _check_ranges(from_file, source)
        settings = replace(settings, **from_file)
    _check_variables()
    from_env = {
        name: _coerce(name, os.environ[_ENV_PREFIX + name.upper()], _ENV_PREFIX + name.upper())
        for name in _KEYS
        if _ENV_PREFIX + name.upper() in os.environ
    }
    for name, value in from_env.items():
        _check_ranges({name: value}, _ENV_PREFIX + name.upper())
    given = {name: value for name, value in flags.items() if value not in (None, ())}
    unknown_flags = set(given) - set(_KEYS)
    if unknown_flags:
        raise BadConfig(f"unknown setting {', '.join(sorted(unknown_flags))}")
    for name, value in given.items():
        _check_ranges({name: value}, "--" + name.replace("_", "-"))
    return _without_never(replace(settings, **from_env, **given))


def _without_never(settings: Settings) -> Settings:
    """`fail_on = "none"` is the empty set, written so it can be given as a flag."""
    if settings.fail_on == (NEVER_FAIL,):
        return replace(settings, fail_on=())
    return settings


def _check_variables() -> None:
    """A misspelt PRDUP_* variable would be ignored without a word: say so, as for a key."""
    valid = {_ENV_PREFIX + name.upper() for name in _KEYS} | OTHER_VARIABLES
    unknown = sorted(
        name for name in os.environ if name.startswith(_ENV_PREFIX) and name not in valid
    )
    if unknown:
        raise BadConfig(
            f"unknown environment variable {', '.join(unknown)}; valid: {', '.join(sorted(valid))}"
        )


# Values outside these hide every finding or break every check without saying so.
_RANGES: dict[str, tuple[float, float | None, str]] = {
    "min_score": (0.0, 1.0, "a score from 0 to 1"),
    "top": (1, None, "a whole number of at least 1"),
    "max_changed_lines": (1, None, "a whole number of at least 1"),
    "max_unmerged_lines": (1, None, "a whole number of at least 1"),
    "max_file_bytes": (1, None, "a whole number of at least 1"),
    "jobs": (0, None, "0 (one per core) or a whole number of processes"),
}


def _check_ranges(values: dict[str, Any], source: str) -> None:
    for name, value in values.items():
        if name == "fail_on":
            _check_verdicts(value, source)
        if name not in _RANGES:
            continue
        low, high, valid = _RANGES[name]
        if math.isnan(value) or value < low or (high is not None and value > high):
            given = (
                f"{source} {value!r}"
                if source.startswith("--")
                else f"{source}: {name} = {value!r}"
            )
            raise BadConfig(f"{given} is out of range; expected {valid}")


def _check_verdicts(verdicts: tuple[str, ...], source: str) -> None:
    """Verdict names only, or "none" alone: a misspelt verdict would silently never fail."""
    unknown = sorted(set(verdicts) - set(VERDICT_ORDER) - {NEVER_FAIL})
    if unknown or (NEVER_FAIL in verdicts and len(verdicts) > 1):
        given = ",".join(verdicts)
        where = f"{source} {given!r}"
        if not source.startswith("--"):
            where = f"{source}: fail_on = {given!r}"
        raise BadConfig(
            f"{where} is not a list of verdicts; expected some of "
            f"{', '.join(VERDICT_ORDER)}, or {NEVER_FAIL}"
        )


def default_settings() -> Settings:
    return Settings()
