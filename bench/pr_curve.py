"""Precision-recall curve of prdup's score over (query, candidate) rows, as a PNG."""

from __future__ import annotations

from pathlib import Path


def write_curve(rows: list[dict], out: Path) -> None:
    """Each row is one candidate of one query with its `score` and `label` (1: the real orig)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import precision_recall_curve

    labels = [row["label"] for row in rows]
    scores = [row["score"] for row in rows]
    precision, recall, thresholds = precision_recall_curve(labels, scores)
    figure, axes = plt.subplots(figsize=(6, 4.5))
    axes.plot(recall, precision, label="prdup score")
    for mark in (0.5, 0.7, 0.9):
        index = next((i for i, t in enumerate(thresholds) if t >= mark), None)
        if index is not None:
            axes.scatter([recall[index]], [precision[index]])
            axes.annotate(f"{mark}", (recall[index], precision[index]))
    axes.set_xlabel("recall (candidate pairs)")
    axes.set_ylabel("precision")
    axes.set_title("prdup on DupPR: precision-recall over the score")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(out, dpi=120)
