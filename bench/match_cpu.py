"""CPU time of the sweep's matching, PR by PR, in one process: no interpreter start, no batch
read, git's own processes not counted, so two builds' matching compares closely.

Run by hand (not a test), on an index built with `prdup index` and its repository:

    python bench/match_cpu.py --db "$WORK/mypy.db" --repo "$MYPY" --random 400 --seed 11 \
        [--prs 12029,12667] [--build CHECKOUT] [--save OUT.json] [--against OTHER.json]

Matches the chosen open PRs as the sweep does (`prdup.sweep`'s matcher: the lines every PR
shares read once, then `check --pr N`'s path without the target probe), 16 PRs' diffs read
together, and prints the CPU seconds of the matching and the heaviest PRs. With --save, writes
each PR's CPU time and verdicts; with --against, compares the verdicts with another run's
(two builds must give the same). --build times another checkout's prdup. Runs with
PYTHONHASHSEED=0, as `bench/sweep_speed.py` does. The replays the index keeps
(`index.questions.replay_memory`) are read, as the sweep reads them: on an index a sweep has
run on, most replays are read back, not made; time replaying on an index no sweep has run on.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.sweep_inputs import open_prs, sample_parser, sweep_inputs, with_fixed_hash_seed  # noqa: E402


def main() -> None:
    parser = sample_parser(400)
    parser.add_argument("--build", type=Path, default=ROOT, help="time this checkout's prdup")
    parser.add_argument("--save", type=Path)
    parser.add_argument("--against", type=Path, help="compare verdicts with this saved run")
    args = parser.parse_args()
    build = str(args.build.resolve())
    with_fixed_hash_seed(PRDUP_BENCH_BUILD=build)
    sys.path.insert(0, build)
    from bench.compiled import compile_build  # the build's own, as an installed prdup has
    from prdup import sweep

    compile_build(Path(build))
    source, snapshot = sweep_inputs(args.db, args.repo)
    numbers = open_prs(snapshot, args.prs, args.random, args.seed)
    matcher = sweep._prepare(args.db, numbers, snapshot, source)
    timed: dict[int, tuple[float, list[str]]] = {}
    for start in range(0, len(numbers), sweep.DIFFS_READ_TOGETHER):
        part = numbers[start : start + sweep.DIFFS_READ_TOGETHER]
        matcher.read_diffs(part)
        for number in part:
            began = time.process_time()
            verdicts = [f.verdict for f in matcher.check(number)]
            timed[number] = (time.process_time() - began, verdicts)
    matcher.close()
    total = sum(cpu for cpu, _ in timed.values())
    print(f"build {build}: {len(timed)} PRs matched in {total:.1f} CPU-s")
    for number, (cpu, verdicts) in sorted(timed.items(), key=lambda item: -item[1][0])[:10]:
        print(f"  #{number}: {cpu:.2f} CPU-s, {verdicts[:3]}")
    if args.save is not None:
        args.save.write_text(json.dumps({str(n): v for n, v in timed.items()}))
    if args.against is not None:
        other = {int(n): v[1] for n, v in json.loads(args.against.read_text()).items()}
        differ = [n for n, (_, verdicts) in timed.items() if n in other and other[n] != verdicts]
        print(f"verdicts compared with {args.against}: {len(differ)} PRs differ {differ[:20]}")


if __name__ == "__main__":
    main()
