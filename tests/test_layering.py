"""The layers hold: every SQL statement lives in `index/`; `prdup/`, `commands/` and `cli.py`
hold none, and the library (`prdup/`) imports no click: the command line is a skin. Inside
`index/`, each room imports only the rooms below it, and no module imports itself back.

Read from the sources themselves (Python's own parser), so a query written anywhere else
fails here, whatever its shape: a string literal with SQL in it, or a call that runs one.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = (
    sorted((ROOT / "prdup").glob("*.py"))
    + sorted((ROOT / "commands").glob("*.py"))
    + [ROOT / "cli.py"]
)
SQL = re.compile(
    r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|BEGIN|COMMIT|ROLLBACK)\b"
    r"[\s\S]*\b(FROM|INTO|SET|TABLE|INDEX|WHERE|VALUES|IMMEDIATE|TRANSACTION|mmap|=)"
)
# Calls that run SQL: on a connection, or the store's raw reading methods.
SQL_CALLS = {"execute", "executemany", "executescript", "rows", "query"}


def sql_in(path: Path) -> list[str]:
    """Where a file writes or runs SQL: (line, what) for each string and call that does."""
    tree = ast.parse(path.read_text(), str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if SQL.search(node.value):
                found.append(f"{path.name}:{node.lineno}: {node.value.strip()[:60]!r}")
        elif isinstance(node, ast.JoinedStr):
            text = "".join(part.value for part in node.values if isinstance(part, ast.Constant))
            if SQL.search(str(text)):
                found.append(f"{path.name}:{node.lineno}: f-string {str(text)[:60]!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in SQL_CALLS:
                found.append(f"{path.name}:{node.lineno}: .{node.func.attr}(...)")
        elif isinstance(node, ast.Attribute) and node.attr == "conn":
            found.append(f"{path.name}:{node.lineno}: .conn")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [alias.name for alias in node.names]
            module = node.module if isinstance(node, ast.ImportFrom) else None
            if "sqlite3" in names or module == "sqlite3" or "sqlite_utils" in names:
                found.append(f"{path.name}:{node.lineno}: imports sqlite")
    return found


@pytest.mark.parametrize("path", LIBRARY, ids=lambda path: path.name)
def test_the_library_and_cli_hold_no_sql(path: Path):
    assert sql_in(path) == []


def test_the_scan_finds_sql_where_there_is_some(tmp_path: Path):
    """The scan itself is not blind: the shapes of SQL the index writes are all caught."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import sqlite3\n"
        "def f(store, ids, marks):\n"
        '    store.query("SELECT number FROM changes WHERE id = ?", (1,))\n'
        '    list(store.rows(f"SELECT hash FROM lines WHERE change_id IN ({marks})", ids))\n'
        '    store.conn.execute("PRAGMA mmap_size = 1")\n'
        '    sql = "INSERT OR REPLACE INTO sweep_results(number) VALUES (?)"\n'
        '    return "select a word from a sentence"\n'
    )
    found = sql_in(sample)
    assert {int(where.split(":")[1]) for where in found} == {1, 3, 4, 5, 6}, found
    assert sql_in(ROOT / "index" / "questions" / "sweep_cache.py")  # where SQL belongs, it is seen


# The tables the parts of `IndexStore` own (`store.changes`, `.lines`, `.derived`, `.landings`):
# only `index/storage/` writes them. GitHub's records and the sweep's cache write their own.
STORAGE_TABLES = frozenset(
    {
        *("changes", "files", "hunks", "symbols", "issue_refs"),
        *("line_sets", "line_changes", "line_texts", "line_texts_pending"),
        *("change_words", "code_word_df", "code_terms", "line_df", "rarity_sums"),
        *("text_docs", "term_tf", "text_norms", "term_idf"),
        "part_landings",
    }
)
WRITES = re.compile(r"\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)")


def _is_db_table(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "db"
        and isinstance(node.slice, ast.Constant)
    )


def storage_writes(path: Path) -> list[str]:
    """Where a file writes a table of the store's parts: in SQL, or through sqlite-utils."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            tables = WRITES.findall(node.value)
        elif _is_db_table(node):  # sqlite-utils: `store.db["changes"].update(...)`
            tables = [node.slice.value]  # type: ignore[attr-defined]
        else:
            continue
        found += [f"{path.name}:{node.lineno}: writes {t}" for t in tables if t in STORAGE_TABLES]
    return found


OUTSIDE_STORAGE = sorted(
    path
    for path in [*(ROOT / "index").rglob("*.py"), *LIBRARY]
    if "storage" not in path.relative_to(ROOT).parts
)


@pytest.mark.parametrize("path", OUTSIDE_STORAGE, ids=lambda path: str(path.relative_to(ROOT)))
def test_only_the_store_writes_the_tables_its_parts_own(path: Path):
    assert storage_writes(path) == []


def test_the_write_scan_sees_a_write_to_a_part_s_table(tmp_path: Path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f(store, number):\n"
        '    store.conn.execute("UPDATE changes SET state = ? WHERE number = ?", ("x", 1))\n'
        '    store.conn.execute("INSERT OR IGNORE INTO line_texts(hash, text) VALUES (1, 2)")\n'
        '    store.conn.execute(f"DELETE FROM part_landings WHERE change_id = {number}")\n'
        '    store.db["changes"].update(1, {"title": "x"})\n'
        '    store.conn.execute("DELETE FROM sweep_results WHERE number = ?", (number,))\n'
        '    return "update the changes for a reader"\n'
    )
    found = storage_writes(sample)
    assert [int(where.split(":")[1]) for where in found] == [2, 3, 4, 5], found
    assert storage_writes(ROOT / "index" / "storage" / "change_rows.py")  # its owner is seen


def click_in(path: Path) -> list[str]:
    """Where a file imports click (at its top or inside a function)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        if any(name == "click" or name.startswith("click.") for name in names):
            found.append(f"{path.name}:{node.lineno}")
        if any(name == "commands" or name.startswith("commands.") for name in names):
            found.append(f"{path.name}:{node.lineno}: imports the command line")
    return found


@pytest.mark.parametrize("path", sorted((ROOT / "prdup").glob("*.py")), ids=lambda path: path.name)
def test_the_library_imports_no_click(path: Path):
    assert click_in(path) == []


def test_the_click_scan_sees_an_import(tmp_path: Path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import click\ndef f():\n    from click import echo\n    from commands import sweep\n"
    )
    assert [where.split(":")[1] for where in click_in(sample)] == ["1", "3", "4"]


# index/'s rooms, each with the rooms it may import (docs/design.md, "Rooms of index/"). Any
# room may import the shared modules at the top of index/; none imports the indexer, which
# imports them all. `detector/` imports nothing of index/.
ROOM_IMPORTS: dict[str, frozenset[str]] = {
    "git": frozenset(),
    "storage": frozenset({"git"}),
    "github": frozenset({"git", "storage"}),
    "questions": frozenset({"git", "storage"}),
}
# index/__init__.py, errors.py, config.py and metadata.py
SHARED = frozenset({"__init__", "errors", "config", "metadata"})


def index_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for each module of index/ a file imports: at its top, under
    `TYPE_CHECKING` or inside a function. `from index.git import gitsource` names the module
    `index.git.gitsource`; one of a room's public names (`from index.storage import IndexStore`)
    names the room, `index.storage`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "index"]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] != "index":
                continue
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                is_module = (ROOT / f"{dotted.replace('.', '/')}.py").exists()
                found.append((node.lineno, dotted if is_module else node.module))
    return found


def room_of(module: str) -> str:
    """`index.git.gitsource` -> `git`; `index.config` -> `config`; `index` -> `__init__`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def room_breaches(path: Path, room: str) -> list[str]:
    """Where a file of `room` imports what its room may not: a room above or beside it, the
    indexer, or (from a shared module or `detector/`) any room at all."""
    allowed = ROOM_IMPORTS.get(room, frozenset()) | {room} | SHARED
    if room in SHARED or room == "detector":
        allowed = SHARED if room in SHARED else frozenset()
    return [
        f"{path.name}:{line}: imports {module}"
        for line, module in index_imports(path)
        if room_of(module) not in allowed
    ]


def _room_files() -> list[tuple[Path, str]]:
    files = [
        (path, path.parent.name)
        for room in ROOM_IMPORTS
        for path in (ROOT / "index" / room).glob("*.py")
    ]
    files += [(ROOT / "index" / f"{name}.py", name) for name in sorted(SHARED)]
    files += [(path, "detector") for path in (ROOT / "detector").glob("*.py")]
    return sorted(files)


@pytest.mark.parametrize(
    ("path", "room"), _room_files(), ids=lambda value: getattr(value, "name", value)
)
def test_each_room_imports_only_the_rooms_below_it(path: Path, room: str):
    assert room_breaches(path, room) == []


def test_every_module_of_index_sits_in_a_room():
    loose = {path.stem for path in (ROOT / "index").glob("*.py")}
    assert loose == {"indexer", *SHARED}
    rooms = {path.parent.name for path in (ROOT / "index").glob("*/__init__.py")}
    assert rooms == set(ROOM_IMPORTS)


def circles(root: Path) -> list[list[str]]:
    """Modules of `root`/index that import themselves back through others (imports inside
    functions and under `TYPE_CHECKING` count: they are the same dependency, only later)."""
    graph: dict[str, set[str]] = {}
    for path in (root / "index").rglob("*.py"):
        module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        graph[module] = {imported for _, imported in index_imports(path) if imported != module}
    found: list[list[str]] = []
    state: dict[str, str] = {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == "open":
                found.append([*trail[trail.index(imported) :], imported])
            elif imported not in state:
                visit(imported, [*trail, imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def test_no_module_of_index_imports_itself_back():
    assert circles(ROOT) == []


def test_the_import_scans_see_a_forbidden_import(tmp_path: Path, monkeypatch):
    """Both scans are not blind: a room importing a room above it, at its top, under
    `TYPE_CHECKING` or inside a function, and the circle `changes`, `store`, `stored_diff`."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "from index.git import gitsource\n"
        "from index.storage.packed import pack_ints\n"
        "from index import errors, indexer\n"
        "if TYPE_CHECKING:\n"
        "    from index.questions.lookup import Scope\n"
        "def f():\n"
        "    from index.questions.changes import parse_filtered\n"
        "    import index.github.dismissals\n"
        "    from index.github import GitHubRecord\n"
    )
    found = room_breaches(sample, "storage")
    assert [int(where.split(":")[1]) for where in found] == [4, 6, 8, 9, 10], found
    assert [int(where.split(":")[1]) for where in room_breaches(sample, "git")] == [
        3, 4, 6, 8, 9, 10
    ]  # fmt: skip

    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)  # where index_imports looks
    for where, text in {
        "questions/changes.py": "from index.storage.store import IndexStore\n",
        "storage/store.py": "from index.git.stored_diff import CUT\n",
        "git/stored_diff.py": "def f():\n    from index.questions.changes import parse_filtered\n",
    }.items():
        (tmp_path / "index" / where).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "index" / where).write_text(text)
    assert circles(tmp_path) == [
        [
            "index.git.stored_diff",
            "index.questions.changes",
            "index.storage.store",
            "index.git.stored_diff",
        ]
    ]
