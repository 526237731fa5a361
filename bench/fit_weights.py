"""Fit the score's logistic weights on the benchmark rows of some repositories.

Run by hand after `bench/accuracy.py --features FILE`:

    python bench/fit_weights.py FEATURES.jsonl --train symfony+symfony,angular+angular.js \
        [--write detector/weights.json]

Rows are (query, candidate) pairs with the signals in `detector.decide.FEATURES` and a label
(1: the candidate is the labelled original). Only the training repositories are used to fit;
report accuracy on the others, never on the ones fitted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from detector.decide import FEATURES, WEIGHTS_FILE  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("features", type=Path, nargs="+")
    parser.add_argument("--train", required=True, help="comma-separated repositories to fit on")
    parser.add_argument("--write", type=Path, help=f"write the weights (e.g. {WEIGHTS_FILE})")
    parser.add_argument("--c", type=float, default=1.0, help="inverse regularisation strength")
    args = parser.parse_args()
    from sklearn.linear_model import LogisticRegression

    train = set(args.train.split(","))
    rows = [
        json.loads(line)
        for path in args.features
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    fitted = [row for row in rows if row["repo"] in train]
    if not fitted:
        raise SystemExit(f"no rows for {sorted(train)}")
    x = [[row[name] for name in FEATURES] for row in fitted]
    y = [row["label"] for row in fitted]
    model = LogisticRegression(C=args.c, class_weight="balanced", max_iter=2000)
    model.fit(x, y)
    weights = {name: round(float(w), 4) for name, w in zip(FEATURES, model.coef_[0], strict=True)}
    data = {
        "comment": (
            f"Logistic score weights over detector.decide.FEATURES, fitted by bench/fit_weights.py "
            f"on {', '.join(sorted(train))} ({len(fitted)} rows, {sum(y)} positives, "
            f"class_weight=balanced, C={args.c})."
        ),
        "intercept": round(float(model.intercept_[0]), 4),
        "weights": weights,
    }
    print(json.dumps(data, indent=2))
    if args.write:
        args.write.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
