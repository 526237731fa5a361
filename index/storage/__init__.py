"""The index file: its schema (`schema`), the open file (`index_file`), the store that writes
and reads it (`store`) through its parts, each owning its tables (`change_rows`, `line_rows`,
`derived`, `landing_rows`), the packed tables (`packed`, `line_sets`, `line_postings`), the
counts it keeps as it writes (`rarity`, `word_counts`, `text_model`, `code_model`), who holds
its lock (`file_holders`) and which repository it belongs to (`identity`).

Imports `index.git` (what it stores is what git read), no other room.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from index import public_names

__all__ = ["default_db_path", "IndexStore"]

if TYPE_CHECKING:
    from index.storage.store import IndexStore, default_db_path
else:
    __getattr__ = public_names(__name__, {"IndexStore": "store", "default_db_path": "store"})
