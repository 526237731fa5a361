"""Reading the repository: what git prints (`gitsource`), decoded (`decoding`), cut to the
lines the index keeps (`diff_budget`, `stored_diff`), with each hunk's symbol (`hunk_symbols`,
`symbols`, `doc_sections`), and where PRs landed (`landing_branches`, `rebase_landings`).

Imports no other room of `index/`: only `index.errors`, `index.config` and `index.metadata`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from index import public_names

__all__ = ["BlobReader", "decode_text", "open_repository"]

if TYPE_CHECKING:
    from index.git.decoding import decode_text
    from index.git.gitsource import BlobReader, open_repository
else:
    __getattr__ = public_names(
        __name__,
        {"open_repository": "gitsource", "BlobReader": "gitsource", "decode_text": "decoding"},
    )
