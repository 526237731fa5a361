"""`prdup check` starts fast: it imports no GitHub client (PyGithub alone costs a tenth of a
second or more), only the bot's and the import's commands do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.repo_builder import RepoBuilder, run_in

ROOT = Path(__file__).resolve().parents[1]


def test_check_imports_no_github_client(builder: RepoBuilder):
    builder.commit("Start", {"app.py": "VALUE = 1\n"})
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from cli import main\n"
        "CliRunner().invoke(main, ['check', '--repo', sys.argv[1]])\n"
        "print(sorted(m for m in sys.modules if m == 'github' or m.startswith('github.'))[:3])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(builder.path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=run_in(builder.path) | {"PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
