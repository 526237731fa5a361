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

# Signals that speak against a duplicate: the same author's own follow-up, or a revert.
MAY_BE_NEGATIVE = frozenset({"same_author", "reverts"})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("features", type=Path, nargs="+")
    parser.add_argument("--train", required=True, help="comma-separated repositories to fit on")
    parser.add_argument("--write", type=Path, help=f"write the weights (e.g. {WEIGHTS_FILE})")
    parser.add_argument("--c", type=float, default=1.0, help="inverse regularisation strength")
    parser.add_argument(
        "--decide-threshold",
        type=float,
        help="score from which shared code decides (chosen on the training repositories; "
        "default: keep the current file's)",
    )
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
    for row in fitted:  # rows written before a derived signal existed
        row.setdefault("recent_overlap", row["proximity"] * row["query_coverage"])
    if not fitted:
        raise SystemExit(f"no rows for {sorted(train)}")
    y = [row["label"] for row in fitted]
    # Evidence may only count for a match: a fitted negative weight on "identical patch" (it
    # happens: identical resubmissions are unlabelled, and the coverage terms already carry
    # them) would be unexplainable. Such features are fixed at 0 and the rest refitted.
    free = [name for name in FEATURES]
    while True:
        x = [[float(row[name]) for name in free] for row in fitted]
        model = LogisticRegression(C=args.c, class_weight="balanced", max_iter=2000)
        model.fit(x, y)
        fitted_weights = dict(zip(free, model.coef_[0], strict=True))
        wrong = [n for n, w in fitted_weights.items() if w < 0 and n not in MAY_BE_NEGATIVE]
        if not wrong:
            break
        free = [name for name in free if name not in wrong]
    weights = {name: round(float(fitted_weights.get(name, 0.0)), 4) for name in FEATURES}
    data = {
        "comment": (
            f"Logistic score weights over detector.decide.FEATURES, fitted by bench/fit_weights.py "
            f"on {', '.join(sorted(train))} ({len(fitted)} rows, {sum(y)} positives, "
            f"class_weight=balanced, C={args.c}). Evidence weights are constrained to be >= 0. "
            "decide_threshold (shared code plus this score decides) and the default min_score "
            "0.7 were chosen on the same repositories."
        ),
        "intercept": round(float(model.intercept_[0]), 4),
        "weights": weights,
        "decide_threshold": args.decide_threshold
        if args.decide_threshold is not None
        else json.loads(WEIGHTS_FILE.read_text()).get("decide_threshold"),
    }
    print(json.dumps(data, indent=2))
    if args.write:
        args.write.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
