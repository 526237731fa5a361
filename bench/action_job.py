"""Time the GitHub Action's job, step by step, as a user pays it: first run, steady state, one
new PR.

Run by hand (not a test). GitHub Actions is not reachable from here, so this runs the action's
own steps on this machine: `action.yml`'s shell scripts verbatim (read from the file), and the
`uses:` steps done the way those actions do them:

* actions/checkout with fetch-depth 0: `git init`, a fetch of every branch and tag, a checkout
  of the default branch, from `--work`'s copy of the mirror, which stands in for GitHub's git
  side (it holds `refs/pull/N/head` as GitHub does);
* actions/cache: an entry is the directory packed as actions/cache packs it (`tar` piped to
  `zstd -T0 --long=30`), restored by unpacking it;
* actions/setup-python: the interpreter running this script (not timed);
* GitHub's API: tests/fake_github.py as a real local HTTP server (`GITHUB_API_URL`). It knows
  only the PR the job comments on, so `prdup index --github` imports that one PR's metadata,
  not the pages of every PR a real first import reads.

Each scenario is a whole job on a fresh clone: the first run (no cache at all, pip's download
cache cold), the steady state (the index and the downloads restored, nothing new, the same PR
commented on again), and one new PR (`refs/pull/99999/head`: one commit on top of the commented
PR's head, pushed to the copy of the mirror and listed by the fake GitHub). The baseline, in the
same run, is `git log -p --first-parent` of the default branch. Wall and CPU seconds (user +
system of every child process, git included) per step:

    python bench/action_job.py "$MYPY" --work "$WORK" [--pr N]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPO = "python/mypy"
NEW_PR = 99999
TOKEN = "bench-token"


@dataclass
class Step:
    name: str
    wall: float
    cpu: float
    note: str = ""


@dataclass
class Job:
    name: str
    steps: list[Step] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return sum(step.wall for step in self.steps)

    @property
    def cpu(self) -> float:
        return sum(step.cpu for step in self.steps)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def timing(job: Job, name: str, note: str = "") -> Iterator[Step]:
    """Time the block's wall seconds and its child processes' CPU seconds as one step."""
    step = Step(name, 0.0, 0.0, note)
    cpu, start = _children_cpu(), time.perf_counter()
    yield step
    step.wall, step.cpu = time.perf_counter() - start, _children_cpu() - cpu
    job.steps.append(step)
    print(f"  {job.name}: {name}: {step.wall:.2f} s, {step.cpu:.2f} CPU-s {step.note}", flush=True)


def run(command: list[str], cwd: Path | None = None, **env: str) -> str:
    done = subprocess.run(
        command, cwd=cwd, env={**os.environ, **env}, check=True, capture_output=True, text=True
    )
    return done.stdout


def action_scripts() -> dict[str, str]:
    """The `run:` script of each of action.yml's shell steps, by step name."""
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    return {step["name"]: step["run"] for step in action["runs"]["steps"] if "run" in step}


class Runner:
    """One machine's worth of state across jobs: the stand-in for GitHub (a copy of the mirror
    and the fake API) and the Actions cache (packed entries in a directory)."""

    def __init__(self, mirror: Path, work: Path, github: Any, pr: int, default_branch: str):
        self.work, self.github, self.pr = work, github, pr
        self.default_branch = default_branch
        self.origin = work / "origin.git"
        self.cache = work / "cache"
        self.scripts = action_scripts()
        self.cache.mkdir(parents=True)
        # The action's own checkout (`uses: owner/prdup@ref`): this checkout's committed tree.
        self.action = work / "action"
        self.action.mkdir()
        archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", "HEAD"], stdout=-1)
        run_with_stdin(["tar", "-xf", "-", "-C", str(self.action)], archive)
        # Local clone: objects hardlinked, so the copy is cheap; refs/pull/* kept as on GitHub.
        run(["git", "clone", "--quiet", "--mirror", str(mirror), str(self.origin)])
        self.partial = any((mirror / "objects" / "pack").glob("*.promisor"))
        self.git_config = work / "gitconfig"
        self.git_config.write_text("")
        if self.partial:
            self.serve_what_there_is()

    def serve_what_there_is(self) -> None:
        """A mirror made as a partial clone lacks some objects some PR heads reach, so serving
        every PR head fails. Let the copy's upload-pack leave those out (a pack-objects hook,
        which git reads only from global configuration), and make each runner clone a partial
        clone of it (`checkout`), which accepts a pack that leaves objects out."""
        hook = self.work / "pack-objects-hook"
        hook.write_text('#!/bin/sh\nexec "$@" --missing=allow-any\n')
        hook.chmod(0o755)
        self.git_config.write_text(f"[uploadpack]\n\tpackObjectsHook = {hook}\n")
        run(["git", "config", "uploadpack.allowFilter", "true"], cwd=self.origin)

    def step_env(self, temp: Path, pr: int) -> dict[str, str]:
        """The environment the action's scripts read, with the job's prdup first on the PATH."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        return {
            **env,
            "PATH": f"{temp / 'prdup-venv' / 'bin'}{os.pathsep}{env['PATH']}",
            "GITHUB_API_URL": self.github.url,
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_OUTPUT": str(temp / "output"),
            "GITHUB_ENV": str(temp / "env"),
            "GITHUB_PATH": str(temp / "path"),
            "GITHUB_STEP_SUMMARY": str(temp / "summary.md"),
            "RUNNER_OS": "Linux",
            "RUNNER_TEMP_DIR": str(temp),
            "ACTION_PATH": str(self.action),
            "PYTHON_VERSION": f"{sys.version_info.major}.{sys.version_info.minor}",
            "COMMAND": "comment",
            "REPO": REPO,
            "PR": str(pr),
            "DEFAULT_BRANCH": self.default_branch,
            "PRDUP_DB": str(temp / "prdup-index" / "prdup.db"),
            "MIN_SCORE": "0.5",
            "CHECK_RUN": "true",
            "FAIL_ON": "none",
            "PRDUP_FETCH_REMOTE": "origin",
            "GIT_CONFIG_GLOBAL": str(self.git_config),
        }

    def script(self, name: str, cwd: Path, env: dict[str, str]) -> dict[str, str]:
        """Run one of action.yml's scripts as the runner does; return its step outputs."""
        outputs = Path(env["GITHUB_OUTPUT"])
        outputs.write_text("")
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", self.scripts[name]],
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if done.returncode:
            raise SystemExit(f"{name}: exit {done.returncode}\n{done.stderr[-2000:]}")
        lines = outputs.read_text().splitlines()
        return dict(line.split("=", 1) for line in lines if "=" in line)

    def collect_wheels(self, directory: Path, env: dict[str, str]) -> None:
        """The locked wheels, as files in `directory` (what a warm download cache gives)."""
        pip = [str(Path(env["RUNNER_TEMP_DIR"]) / "prdup-venv" / "bin" / "python"), "-m", "pip"]
        lock = str(self.action / "requirements.lock")
        subprocess.run(
            [*pip, "download", "--quiet", "--no-deps", "--require-hashes", "-r", lock],
            cwd=directory.parent,
            env={**env, "PIP_DEST": str(directory)},
            check=True,
        )

    def checkout(self, clone: Path, env: dict[str, str]) -> None:
        """actions/checkout with fetch-depth 0: every branch and tag, the default branch
        checked out."""
        run(["git", "init", "--quiet", str(clone)])
        run(["git", "remote", "add", "origin", str(self.origin)], cwd=clone)
        if self.partial:  # see serve_what_there_is; the filter keeps every blob under 1 GiB
            for key, value in (
                ("core.repositoryformatversion", "1"),
                ("extensions.partialClone", "origin"),
                ("remote.origin.promisor", "true"),
                ("remote.origin.partialclonefilter", "blob:limit=1g"),
            ):
                run(["git", "config", key, value], cwd=clone)
        refspecs = ["+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"]
        git = {"GIT_CONFIG_GLOBAL": env["GIT_CONFIG_GLOBAL"]}
        fetch = ["git", "fetch", "--quiet", "--no-tags", "--prune", "origin", *refspecs]
        run(fetch, cwd=clone, **git)
        branch = self.default_branch
        checkout = ["git", "checkout", "--quiet", "--force", "-B", branch, f"origin/{branch}"]
        run(checkout, cwd=clone, **git)

    def save(self, key: str, directory: Path) -> int:
        """actions/cache/save: the directory packed as the action packs it."""
        entry = self.cache / f"{key}.tzst"
        packed = subprocess.Popen(["tar", "-cf", "-", "-C", str(directory), "."], stdout=-1)
        run_with_stdin(["zstd", "-T0", "--long=30", "-q", "-f", "-o", str(entry)], packed)
        return entry.stat().st_size

    def restore(self, key: str, directory: Path) -> bool:
        """actions/cache/restore: unpack the entry if there is one (a hit)."""
        entry = self.cache / f"{key}.tzst"
        if not entry.exists():
            return False
        directory.mkdir(parents=True, exist_ok=True)
        unpacked = subprocess.Popen(["zstd", "-d", "--long=30", "-q", "-c", str(entry)], stdout=-1)
        run_with_stdin(["tar", "-xf", "-", "-C", str(directory)], unpacked)
        return True

    def job(self, name: str, pr: int) -> Job:
        """One whole job of the action's comment command, on a fresh runner."""
        job = Job(name)
        temp = self.work / f"{name.replace(' ', '-')}-temp"
        clone = self.work / f"{name.replace(' ', '-')}-clone"
        temp.mkdir()
        env = self.step_env(temp, pr)
        with timing(job, "checkout"):
            self.checkout(clone, env)
        with timing(job, "restore the downloads") as step:
            step.note = "hit" if self.restore("pip", temp / "prdup-pip-cache") else "miss"
        hit = step.note == "hit"
        downloads = temp / "prdup-pip-cache"
        # pip as on a runner: PyPI, none of this machine's pip configuration.
        install_env = {k: v for k, v in env.items() if not k.startswith("PIP_")}
        install_env |= {"PIP_CONFIG_FILE": os.devnull, "PIP_CACHE_DIR": str(downloads)}
        if hit:
            # The proxy in front of PyPI here drops Cache-Control, so pip's HTTP cache keeps
            # nothing: a warm cache is stood in for by the same wheels, found in the restored
            # directory instead of downloaded.
            install_env |= {"PIP_FIND_LINKS": str(downloads), "PIP_NO_INDEX": "1"}
        with timing(job, "install", "warm: wheels restored" if hit else "cold: from PyPI"):
            self.script("Install prdup", clone, install_env)
        if not hit:
            self.collect_wheels(downloads, install_env)  # not timed: what pip's cache would hold
            with timing(job, "save the downloads") as step:
                step.note = f"{self.save('pip', downloads) / 2**20:.0f} MiB"
        with timing(job, "read the default branch's state"):
            self.script("Read the default branch's state", clone, env)
        with timing(job, "restore the index") as step:
            step.note = "hit" if self.restore("index", temp / "prdup-index") else "miss"
        with timing(job, "fetch PR heads") as step:
            self.script("Fetch the pull request heads that changed", clone, env)
            step.note = f"{len(refs(clone, 'refs/pull'))} heads in the clone"
        if self.partial:
            # Not timed. A partial clone would ask origin for each object it lacks, and fail:
            # after the fetch the clone lacks them plainly, as the mirror itself does.
            for key in (
                "extensions.partialClone",
                "remote.origin.promisor",
                "remote.origin.partialclonefilter",
            ):
                run(["git", "config", "--unset", key], cwd=clone)
        with timing(job, "index") as step:
            changed = self.script("Index merged and open pull requests", clone, env)
            step.note = f"changed={changed.get('changed', '?')}"
        with timing(job, "comment") as step:
            said = self.script("Comment on the pull request", clone, env)
            step.note = f"comment={said.get('comment')} verdict={said.get('verdict')}"
        if changed.get("changed") == "true":
            with timing(job, "save the index") as step:
                step.note = f"{self.save('index', temp / 'prdup-index') / 2**20:.0f} MiB"
            with timing(job, "delete superseded entries"):
                self.script(
                    "Delete the cache entries the new one supersedes",
                    clone,
                    {**env, "KEEP": f"prdup-index-{REPO}-bench"},
                )
        return job

    def add_new_pr(self, number: int) -> None:
        """A new PR: one commit on top of the commented PR's head, pushed to GitHub's side as
        refs/pull/N/head and listed by the API as just updated."""
        base = run(["git", "rev-parse", f"refs/pull/{self.pr}/head"], cwd=self.origin).strip()
        tree = run(["git", "rev-parse", f"{base}^{{tree}}"], cwd=self.origin).strip()
        blob = subprocess.run(
            ["git", "hash-object", "-w", "--stdin"],
            cwd=self.origin,
            input="A file the new PR adds.\n",
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        listing = run(["git", "ls-tree", tree], cwd=self.origin)
        new_tree = subprocess.run(
            ["git", "mktree"],
            cwd=self.origin,
            input=f"{listing}100644 blob {blob}\tPRDUP_BENCH_NEW_PR.txt\n",
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        pinned = {
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.com",
        }
        commit = run(
            ["git", "commit-tree", new_tree, "-p", base, "-m", "One more file"],
            cwd=self.origin,
            **pinned,
        ).strip()
        run(["git", "update-ref", f"refs/pull/{number}/head", commit], cwd=self.origin)
        self.github.add_pull(
            number, updated_at=_iso_now(), head_sha=commit, base_ref=self.default_branch
        )


def run_with_stdin(command: list[str], feeder: subprocess.Popen[bytes]) -> None:
    subprocess.run(command, stdin=feeder.stdout, check=True)
    if feeder.stdout is not None:
        feeder.stdout.close()
    if feeder.wait():
        raise subprocess.CalledProcessError(feeder.returncode, feeder.args)


def refs(repo: Path, prefix: str) -> list[str]:
    return run(["git", "for-each-ref", "--format=%(refname)", prefix], cwd=repo).split()


def _iso_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def baseline(clone: Path, branch: str) -> Job:
    """`git log -p --first-parent` of the default branch: the floor of what git must print."""
    job = Job("baseline")
    with timing(job, "git log -p --first-parent"):
        subprocess.run(
            ["git", "log", "-p", "--first-parent", f"origin/{branch}"],
            cwd=clone,
            stdout=subprocess.DEVNULL,
            check=True,
        )
    return job


def report(jobs: list[Job], floor: Job, load: list[tuple[float, float, float]]) -> None:
    print(f"\nload average (1, 5, 15 min) before each job: {load}")
    print(f"baseline: {floor.wall:.1f} s, {floor.cpu:.1f} CPU-s\n")
    names = [step.name for step in jobs[0].steps]
    for job in jobs[1:]:
        names += [step.name for step in job.steps if step.name not in names]
    print("| step | " + " | ".join(job.name for job in jobs) + " |")
    print("|---|" + "---|" * len(jobs))
    for name in names:
        cells = []
        for job in jobs:
            found = [s for s in job.steps if s.name == name]
            cells.append(
                f"{found[0].wall:.1f} s, {found[0].cpu:.1f} CPU-s {found[0].note}".strip()
                if found
                else "-"
            )
        print(f"| {name} | " + " | ".join(cells) + " |")
    totals = [f"{job.wall:.1f} s, {job.cpu:.1f} CPU-s" for job in jobs]
    print("| **the job** | " + " | ".join(totals) + " |")
    ratios = [f"{job.wall / floor.wall:.1f}x, {job.cpu / floor.cpu:.1f}x" for job in jobs]
    print("| job / baseline (wall, CPU) | " + " | ".join(ratios) + " |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mirror", type=Path, help="a bare mirror holding refs/pull/N/head")
    parser.add_argument("--work", type=Path, required=True, help="an empty scratch directory")
    parser.add_argument("--pr", type=int, help="the PR commented on (default: the highest)")
    parser.add_argument("--branch", default=None, help="default branch (default: mirror HEAD)")
    args = parser.parse_args(argv)
    if args.work.exists() and any(args.work.iterdir()):
        parser.error(f"{args.work} is not empty")
    from tests.fake_github import FakeGitHub

    mirror = args.mirror.resolve()
    branch = args.branch or run(["git", "symbolic-ref", "--short", "HEAD"], cwd=mirror).strip()
    pr = args.pr or max(int(ref.split("/")[2]) for ref in refs(mirror, "refs/pull/*/head"))
    with FakeGitHub(REPO) as github:
        head = run(["git", "rev-parse", f"refs/pull/{pr}/head"], cwd=mirror).strip()
        github.add_pull(pr, updated_at=_iso_now(), head_sha=head, base_ref=branch)
        runner = Runner(mirror, args.work.resolve(), github, pr, branch)
        jobs, load = [], []
        for name, number in (("first run", pr), ("steady state", pr), ("one new PR", NEW_PR)):
            if number == NEW_PR:
                time.sleep(1.1)  # GitHub's updated_at has whole seconds
                runner.add_new_pr(NEW_PR)
            load.append(os.getloadavg())
            jobs.append(runner.job(name, number))
        floor = baseline(runner.work / "first-run-clone", branch)
    report(jobs, floor, load)
    shutil.rmtree(runner.work / "cache", ignore_errors=True)


if __name__ == "__main__":
    main()
