"""The layers hold: every SQL statement lives in `index/`; `prdup/`, `commands/` and `cli.py`
hold none, and the library (`prdup/`) imports no click: the command line is a skin.

Read from the sources themselves (Python's own parser), so a query written anywhere else
fails here, whatever its shape: a string literal with SQL in it, or a call that runs one.
"""

from __future__ import annotations

import ast
import re
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
    assert sql_in(ROOT / "index" / "sweep_cache.py")  # where SQL belongs, it is seen


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
