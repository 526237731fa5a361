"""What the index keeps of GitHub: an import's pull requests and comments, page by page
(`github_record`), and maintainers' "not a duplicate" decisions (`dismissals`).

Imports `index.storage` and `index.git`, not `index.questions`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from index import public_names

__all__ = ["Dismissal", "GitHubRecord"]

if TYPE_CHECKING:
    from index.github.dismissals import Dismissal
    from index.github.github_record import GitHubRecord
else:
    __getattr__ = public_names(
        __name__, {"GitHubRecord": "github_record", "Dismissal": "dismissals"}
    )
