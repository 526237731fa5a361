"""What a check gives CI: workflow annotations on the shared lines, a job summary, the action's
step outputs, and SARIF for code scanning.

The story (test_output_safety's): PR 30 and PR 31 (both open) make the same fix and share a
line; PR 30's title is hostile (a mention, HTML, a pipe, terminal escape sequences).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from detector.evidence import Finding
from detector.model import parse_patch
from prdup.escaping import workflow_data, workflow_property
from prdup.locations import shared_regions
from tests.fake_github import FakeGitHub
from tests.repo_builder import RepoBuilder, run_cli
from tests.test_bot import REPO, TOKEN
from tests.test_output_safety import ESCAPES, story  # noqa: F401  (a fixture)

COMMAND = re.compile(r"^::(\w+) ([^:]*)::(.*)$")


@pytest.fixture(autouse=True)
def _no_actions_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_TOKEN", "GITHUB_REPOSITORY"):
        monkeypatch.delenv(name, raising=False)


def _unescape(text: str, prop: bool = False) -> str:
    """The runner's unescaping of a workflow command (actions/runner's ActionCommand)."""
    if prop:
        text = text.replace("%3A", ":").replace("%2C", ",")
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _annotations(out: str) -> list[tuple[str, dict[str, str], str]]:
    found = []
    for line in out.splitlines():
        match = COMMAND.match(line)
        if match:
            properties = dict(part.split("=", 1) for part in match[2].split(","))
            properties = {k: _unescape(v, prop=True) for k, v in properties.items()}
            found.append((match[1], properties, _unescape(match[3])))
    return found


def test_workflow_command_escaping_follows_the_runner():
    hostile = "50% done\r\n::add-mask::secret, key: value"
    data, prop = workflow_data(hostile), workflow_property(hostile)
    assert "\n" not in data and "\r" not in data and _unescape(data) == hostile
    assert ":" not in prop and "," not in prop and _unescape(prop, prop=True) == hostile


def test_check_format_github_annotates_the_shared_lines(
    story: RepoBuilder,  # noqa: F811
    db_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, err = run_cli(
        story.path, "check", "--pr", "31", "--db", str(db_path), "--format", "github"
    )

    assert code == 1, err
    [(kind, properties, message)] = _annotations(out)
    assert kind == "warning"
    # PR 31 replaces line 8 (the legacy flag) and adds the shared log line as line 9.
    assert properties == {
        "file": "pipeline.py",
        "line": "8",
        "endLine": "9",
        "title": "prdup: Duplicate of #30",
    }
    assert message.startswith("Duplicate of #30 (unmerged, score ")
    assert "lines shared here: 1 removed and 1 added" in message
    assert not any(escape in out for escape in ESCAPES)  # the title's escape sequences are gone
    assert out.splitlines()[-1] == "prdup: 1 finding(s) for PR #31"
    # Every line that is not ours is plain: PR text cannot start a workflow command.
    assert all(line.startswith(("::warning ", "prdup: ")) for line in out.splitlines())

    written = summary.read_text()
    assert "| duplicate | #30 | unmerged |" in written
    assert "<img" not in written and "@\u200docto-org" in written


def test_nothing_found_is_one_plain_line(story: RepoBuilder, db_path: Path):  # noqa: F811
    code, out, _ = run_cli(
        story.path, "check", "--pr", "31", "--db", str(db_path), "--format", "github",
        "--min-score", "1",
    )  # fmt: skip
    assert (code, out.strip()) == (0, "prdup: nothing already covers PR #31.")


# The parts of SARIF 2.1.0 (OASIS) that GitHub code scanning reads, as a JSON schema.
SARIF_SCHEMA = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "$schema": {"type": "string"},
        "runs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name", "rules"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id", "shortDescription"],
                                        },
                                    },
                                },
                            }
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["ruleId", "message", "locations"],
                            "properties": {
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": {
                                    "type": "object",
                                    "required": ["text"],
                                    "properties": {"text": {"type": "string", "minLength": 1}},
                                },
                                "locations": {
                                    "type": "array",
                                    "minItems": 1,
                                    "items": {
                                        "type": "object",
                                        "required": ["physicalLocation"],
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "required": ["artifactLocation", "region"],
                                                "properties": {
                                                    "artifactLocation": {
                                                        "type": "object",
                                                        "required": ["uri"],
                                                    },
                                                    "region": {
                                                        "type": "object",
                                                        "required": ["startLine"],
                                                        "properties": {
                                                            "startLine": {
                                                                "type": "integer",
                                                                "minimum": 1,
                                                            },
                                                            "endLine": {
                                                                "type": "integer",
                                                                "minimum": 1,
                                                            },
                                                        },
                                                    },
                                                },
                                            }
                                        },
                                    },
                                },
                                "partialFingerprints": {
                                    "type": "object",
                                    "additionalProperties": {"type": "string"},
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def test_check_format_sarif_is_one_result_per_finding_on_changed_lines(
    story: RepoBuilder,  # noqa: F811
    db_path: Path,
):
    code, out, err = run_cli(
        story.path, "check", "--pr", "31", "--db", str(db_path), "--format", "sarif",
        "--min-score", "0",
    )  # fmt: skip
    assert code == 1, err
    log = json.loads(out)
    jsonschema.validate(log, SARIF_SCHEMA)
    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    _, json_out, _ = run_cli(
        story.path, "check", "--pr", "31", "--db", str(db_path), "--format", "json",
        "--min-score", "0",
    )  # fmt: skip
    findings = json.loads(json_out)["findings"]
    assert len(run["results"]) == len(findings) >= 1
    for result, finding in zip(run["results"], findings, strict=True):
        assert result["ruleId"] == f"prdup/{finding['verdict']}"
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["properties"]["pr"] == finding["pr"]
    best = run["results"][0]
    assert best["level"] == "warning"
    region = best["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"] == "pipeline.py"
    assert (region["region"]["startLine"], region["region"]["endLine"]) == (8, 9)
    assert "<img" in best["message"]["text"]  # plain text: JSON-escaped, nothing renders it
    assert not any(escape in out for escape in ESCAPES)
    assert not any(escape in json.loads(out)["runs"][0]["results"][0]["message"]["text"]
                   for escape in ESCAPES)  # fmt: skip


PATCH = """\
diff --git a/app.py b/app.py
--- a/app.py
+++ b/app.py
@@ -10,7 +10,7 @@ def run():
     first()
     second()
     third()
-    legacy_call(flag=True)
+    modern_call()
     fourth()
     fifth()
     sixth()
@@ -30,2 +30,0 @@ def stop():
-    cleanup_everything()
-    really_stop()
"""


def test_shared_lines_sit_on_the_new_side_also_with_context_and_removals():
    change = parse_patch(PATCH)
    finding = Finding(
        verdict="duplicate",
        score=1.0,
        candidate=None,  # type: ignore[arg-type]  # where lines sit needs no candidate
        signals=None,  # type: ignore[arg-type]
        reasons=(),
        shared_removed=("legacy_call(flag=True)", "really_stop()", "cleanup_everything()"),
        shared_added=("modern_call()",),
    )
    regions = [
        (r.path, r.start, r.end, r.removed, r.added) for r in shared_regions(change, finding)
    ]
    # The removed line 13 is replaced where line 13 of the new side now stands; the two lines
    # removed at the end of the file are placed where the new side goes on (line 30).
    assert regions == [("app.py", 13, 13, 1, 1), ("app.py", 30, 30, 2, 0)]


def test_the_bot_door_writes_a_job_summary_and_step_outputs(
    builder: RepoBuilder, db_path: Path, fake_github: FakeGitHub, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
):  # fmt: skip
    from tests.test_bot import FIX_20, FIX_21, LEGACY, PIPELINE, index

    builder.commit("Add the pipeline", {"pipeline.py": PIPELINE})
    builder.pr_branch(20, [("Resolver", {"pipeline.py": PIPELINE.replace(LEGACY, FIX_20)})])
    builder.pr_branch(21, [("No flag", {"pipeline.py": PIPELINE.replace(LEGACY, FIX_21)})])
    index(builder, db_path)
    fake_github.add_pull(20, "Use the <b>resolver</b> @octo")
    fake_github.add_pull(21)
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs"
    for name, value in {
        "GITHUB_API_URL": fake_github.url,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(outputs),
    }.items():
        monkeypatch.setenv(name, value)

    code, out, err = run_cli(builder.path, "comment", "--pr", "21", "--post", "--db", str(db_path))

    assert (code, out.strip()) == (0, "created comment on octo/demo#21"), err
    assert outputs.read_text().splitlines() == [
        "comment=created",
        "verdict=duplicate",
        "pr=20",
        "prs=[20]",
    ]
    [posted] = fake_github.comments_on(21)
    written = summary.read_text()
    assert written.startswith("**prdup**: created comment on octo/demo#21")
    assert posted["body"].strip() in written  # the comment itself, escaped as posted

    outputs.write_text("")
    code, out, _ = run_cli(builder.path, "comment", "--pr", "20", "--post", "--db", str(db_path))
    assert code == 0
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert values["verdict"] in ("none", "duplicate")
    assert json.loads(values["prs"]) == ([] if values["verdict"] == "none" else [21])
