"""The accuracy page's chart: recall@1 and recall@5 of prdup and the TF-IDF baseline per
repository, read from the DupPR table in docs/accuracy.md, drawn as an SVG beside it.

The figures come from the page itself, so the chart cannot drift from the table it shows;
re-run this after the table changes:

    pip install -e '.[bench]' && python bench/accuracy_chart.py

Run by hand; never by tests.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "accuracy.md"
CHART = ROOT / "docs" / "accuracy-recall.svg"
HEADER = "| repository (labelled pairs) | detector | recall@1 | recall@5 |"


@dataclass(frozen=True)
class Recall:
    repository: str
    detector: str
    at_1: float
    at_5: float


def read_table(page: str) -> list[Recall]:
    """The rows of the table that starts with HEADER: a repository row (TF-IDF) followed by a
    row whose first cell is empty (prdup, the same repository)."""
    start = page.index(HEADER)
    rows: list[Recall] = []
    repository = ""
    for line in page[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0]:
            repository = re.sub(r"\s*\(\d+\)$", "", cells[0])
        rows.append(Recall(repository, cells[1], float(cells[2]), float(cells[3])))
    return rows


def draw(rows: list[Recall], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "prdup"  # stable ids: the file changes with the data
    matplotlib.rcParams["svg.fonttype"] = "none"  # text as text: small, and searchable
    import matplotlib.pyplot as plt

    repositories = list(dict.fromkeys(row.repository for row in rows))
    value = {(row.repository, row.detector): row for row in rows}
    figure, axes = plt.subplots(figsize=(7.5, 3.6))
    width = 0.2
    bars = (
        ("prdup", "at_1", "recall@1, prdup", "#1f5fa8"),
        ("TF-IDF", "at_1", "recall@1, TF-IDF", "#9bb7d9"),
        ("prdup", "at_5", "recall@5, prdup", "#c2571a"),
        ("TF-IDF", "at_5", "recall@5, TF-IDF", "#ecb48f"),
    )
    for offset, (detector, field, label, colour) in enumerate(bars):
        xs = [i + (offset - 1.5) * width for i in range(len(repositories))]
        ys = [getattr(value[(name, detector)], field) for name in repositories]
        axes.bar(xs, ys, width, label=label, color=colour)
    axes.set_xticks(range(len(repositories)))
    axes.set_xticklabels([name.split("/")[1] for name in repositories])
    axes.set_ylim(0, 1)
    axes.set_ylabel("share of labelled duplicates")
    axes.set_title("DupPR: the labelled original ranked first (recall@1) and in the top 5")
    axes.legend(ncols=2, fontsize="small", loc="upper right", frameon=False)
    axes.grid(axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    figure.tight_layout()
    figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", type=Path, default=PAGE)
    parser.add_argument("--out", type=Path, default=CHART)
    args = parser.parse_args()
    rows = read_table(args.page.read_text())
    draw(rows, args.out)
    print(f"{len(rows)} rows -> {args.out}")


if __name__ == "__main__":
    main()
