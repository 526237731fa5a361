"""What `check` and `sweep` ask of the index and the repository: the query's diff and symbols
(`changes`), candidates by lookup (`lookup`, `candidates`), whether the change is on the target
already (`probe`), the replay's reads (`replaying`) and the sweep's cache (`sweep_cache`).

Imports `index.storage` and `index.git`, not `index.github`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from index import public_names

__all__ = ["CandidateEngine", "parse_filtered", "probe_target", "Replayer"]

if TYPE_CHECKING:
    from index.questions.candidates import CandidateEngine
    from index.questions.changes import parse_filtered
    from index.questions.probe import probe_target
    from index.questions.replaying import Replayer
else:
    __getattr__ = public_names(
        __name__,
        {
            "CandidateEngine": "candidates",
            "probe_target": "probe",
            "Replayer": "replaying",
            "parse_filtered": "changes",
        },
    )
