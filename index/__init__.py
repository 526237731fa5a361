"""Everything that reads a repository or writes the index, in four rooms (`git`, `storage`,
`github`, `questions`; docs/design.md, "Rooms of `index/`") under the indexer."""

from __future__ import annotations

from collections.abc import Callable


def public_names(package: str, homes: dict[str, str]) -> Callable[[str], object]:
    """A room's `__getattr__`: each of its public names (name -> its module) imported on first
    use, not with the room, so that importing one module of a room loads none of the others
    (`prdup index` does not load the matcher `questions` imports)."""

    def __getattr__(name: str) -> object:
        from importlib import import_module

        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{homes[name]}"), name)

    return __getattr__
