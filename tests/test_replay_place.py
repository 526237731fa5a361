""" "Already there" means at the same place, and a line replaced means what it became.

A hunk is done by a candidate where its result sits between the same neighbouring lines, not
where an equal line appears elsewhere in the file (another method, further down a long
function). Two changes that replace the same line are the same change only where the lines
become the same thing: not where one name is shared beside the candidate's own purpose, nor
where the candidate's rewrite keeps what this change deletes.

Each story is a real repository built in a temporary folder, indexed, and checked through
the CLI; what is read is the verdict a maintainer would see.
"""

from __future__ import annotations

from tests.repo_builder import RepoBuilder
from tests.test_replay_verdicts import _replayed, check_json, deciding, index

CLIENT = """import socket


class Client:
    def __init__(self, host):
        self.host = host
        self.retries = 0
        self.session = None

    def connect(self):
        self.session = socket.create_connection((self.host, 443))
        self.session.settimeout(30)
        return self.session

    def close(self, reset=False):
        if self.session is not None:
            self.session.close()
        self.session = None
        return True
"""
CONNECT_TAIL = "        self.session.settimeout(30)\n        return self.session\n"
CLOSE_TAIL = "        self.session = None\n        return True\n"


def test_a_line_written_in_another_method_is_not_the_change_made_in_this_one(
    builder: RepoBuilder,
):
    """This change resets the retry count on every connect. #40 made the same reset line an
    opt-in of `close` (its test asserts that a plain close keeps the count): the line is in
    the file, not where this change puts it. #41 resets in `connect`, after a log line of
    its own: the same change with other surrounding lines."""
    builder.commit("Add the client", {"net/client.py": CLIENT})
    base = builder.head()
    opt_in = CLIENT.replace(
        CLOSE_TAIL,
        "        self.session = None\n        if reset:\n            self.retries = 0\n"
        "        return True\n",
    )
    builder.pr_branch(
        40,
        [
            (
                "Let close reset the retry count on request",
                {
                    "net/client.py": opt_in,
                    "tests/test_client.py": "def test_close_keeps_retries(client):\n"
                    "    client.retries = 2\n    client.close()\n    assert client.retries == 2\n",
                },
            )
        ],
    )
    builder.merge_pr(40, how="squash")
    logged = CLIENT.replace(
        CONNECT_TAIL,
        "        self.session.settimeout(30)\n        log.debug('connected to %s', self.host)\n"
        "        self.retries = 0\n        return self.session\n",
    )
    builder.pr_branch(41, [("Reset retries once connected", {"net/client.py": logged})], start=base)
    reset = CLIENT.replace(
        CONNECT_TAIL,
        "        self.session.settimeout(30)\n        self.retries = 0\n"
        "        return self.session\n",
    )
    builder.checkout("contributor", base)
    builder._author = "Grace"
    builder.commit("Reset the retry count on every connect", {"net/client.py": reset})
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "contributor")
    assert deciding(found) == [(41, "covered")]


def _job_branch(section: str) -> str:
    return f"""            if not job.{section}_ready():
                self.log.warning("{section} not ready: %s", job)
                self.report(job)
                continue
"""


def _runner(extra: str = "") -> str:
    """A long `run`: two sections that each skip a job the same way, far apart."""
    filler = "".join(f"            self.metrics.observe('step_{n}', job)\n" for n in range(40))
    return (
        "class Runner:\n    def run(self, jobs):\n        self.lock.acquire()\n"
        "        for job in jobs:\n"
        + _job_branch("input")
        + "            job.load()\n"
        + filler
        + _job_branch("output")
        + "            job.save()\n"
        + extra
        + "        self.lock.release()\n"
    )


def test_a_continue_after_a_call_further_down_a_long_function_is_not_this_hunks_place(
    builder: RepoBuilder,
):
    """This change releases the lock before the first section's `continue`. Since it was cut,
    main reworded that section's report call; #50 then released the lock before the second
    section's `continue` (and flushed the metrics at the end). With one line of context the
    result (the call, the release, the `continue`) is in the file, but in the other section.
    #51 released it in the first section, next to the reworded call: the change is there."""
    builder.commit("Add the runner", {"jobs/runner.py": _runner()})
    base = builder.head()
    release = "                self.report(job)\n                self.lock.release()\n"
    first = _job_branch("input")
    query = _runner().replace(first, first.replace("                self.report(job)\n", release))
    builder.checkout("contributor", base)
    builder._author = "Grace"
    builder.commit("Release the lock when an input is not ready", {"jobs/runner.py": query})
    builder.checkout("main")
    reworded = _runner().replace(first, first.replace("report(job)", "report(job, 'input')"))
    builder.commit("Say which section skipped a job", {"jobs/runner.py": reworded})
    second = _job_branch("output")
    flushed = _runner("        self.metrics.flush()\n").replace(
        first, first.replace("report(job)", "report(job, 'input')")
    )
    other = flushed.replace(second, second.replace("                self.report(job)\n", release))
    builder.pr_branch(
        50, [("Release the lock when an output is not ready", {"jobs/runner.py": other})]
    )
    builder.merge_pr(50, how="squash")
    same = other.replace(
        "                self.report(job, 'input')\n",
        "                self.report(job, 'input')\n                self.lock.release()\n",
    )
    builder.pr_branch(51, [("Release the lock on skipped inputs", {"jobs/runner.py": same})])
    index(builder)

    _, found = check_json(builder.path, "contributor")
    assert deciding(found) == [(51, "duplicate")]


LINK = """import { escape } from './escape';

export function link(base, relativeURL, label) {
  const href = base + relativeURL;
  return `<a href="${escape(href)}">${escape(label)}</a>`;
}
"""


def test_a_line_rewritten_around_a_new_dependency_is_not_the_same_fix(builder: RepoBuilder):
    """This change coerces the URL with `String(relativeURL)`; #60 replaced the same line
    with a new dependency that joins the URL (and also spells `String`). The same line
    became another thing: one name in common, where the replacement rests on a name the
    candidate imported for it, is another purpose. #61 coerced it with `String(...)` too,
    written another way: that is the same fix."""
    builder.commit("Add links", {"src/link.js": LINK})
    base = builder.head()
    old = "  const href = base + relativeURL;\n"
    joined = LINK.replace(old, "  const href = urlJoin(base, String(relativeURL));\n").replace(
        "import { escape }", "import urlJoin from 'url-join';\nimport { escape }"
    )
    builder.pr_branch(60, [("Join URLs with url-join", {"src/link.js": joined})])
    builder.merge_pr(60, how="squash")
    builder.pr_branch(
        61,
        [
            (
                "Coerce the relative URL",
                {
                    "src/link.js": LINK.replace(
                        old, "  const href = `${base}${String(relativeURL)}`;\n"
                    )
                },
            )
        ],
        start=base,
    )
    builder.checkout("contributor", base)
    builder._author = "Grace"
    builder.commit(
        "Accept URL objects",
        {"src/link.js": LINK.replace(old, "  const href = base + String(relativeURL);\n")},
    )
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "contributor")
    assert deciding(found) == [(61, "duplicate")]


SETTINGS = """TIMEOUT_SECONDS = 30.0


def timeout(settings):
    value = settings.get("timeout") or settings.get("legacy_timeout")
    return float(value)
"""
FALLBACK = '    value = settings.get("timeout") or settings.get("legacy_timeout")\n'


def test_a_rewrite_that_keeps_what_this_change_deletes_is_another_change(builder: RepoBuilder):
    """This change drops the `legacy_timeout` fallback for a default; #70 rewrote the same
    line with the same default but kept the fallback, the very thing this change deletes.
    #71 dropped it for the default, written another way."""
    builder.commit("Read the timeout", {"conf/settings.py": SETTINGS})
    base = builder.head()
    kept = SETTINGS.replace(
        FALLBACK,
        '    value = settings.get("timeout", settings.get("legacy_timeout", TIMEOUT_SECONDS))\n',
    )
    builder.pr_branch(70, [("Default the timeout", {"conf/settings.py": kept})])
    builder.merge_pr(70, how="squash")
    dropped = SETTINGS.replace(FALLBACK, '    value = settings.get("timeout") or TIMEOUT_SECONDS\n')
    builder.pr_branch(71, [("Drop the legacy timeout", {"conf/settings.py": dropped})], start=base)
    builder.checkout("contributor", base)
    builder._author = "Grace"
    builder.commit(
        "Stop reading legacy_timeout",
        {
            "conf/settings.py": SETTINGS.replace(
                FALLBACK, '    value = settings.get("timeout", TIMEOUT_SECONDS)\n'
            )
        },
    )
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "contributor")
    assert deciding(found) == [(71, "duplicate")]


# --- the replay itself, on plain text -----------------------------------------------------

LEGACY_READ = (
    'def timeout(settings):\n    value = settings.get("legacy_timeout")\n    return value\n'
)
READ_TIMEOUT = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -2 +2,2 @@
-    value = settings.get("legacy_timeout")
+    value = settings.get("timeout")
+    value = value or TIMEOUT_SECONDS
"""


def test_lines_written_beside_a_kept_deletion_are_not_the_same_code():
    """The candidate writes both lines this change adds, with a line between them that still
    reads the legacy setting this change stops reading: another change. Without that line,
    the same fix."""
    kept = LEGACY_READ.replace(
        '    value = settings.get("legacy_timeout")\n',
        '    value = settings.get("timeout")\n    if value is None:\n'
        '        value = settings.get("legacy_timeout_s")\n    value = value or TIMEOUT_SECONDS\n',
    )
    assert not _replayed(READ_TIMEOUT, LEGACY_READ, LEGACY_READ, kept).complete
    dropped = kept.replace('        value = settings.get("legacy_timeout_s")\n', "        pass\n")
    assert _replayed(READ_TIMEOUT, LEGACY_READ, LEGACY_READ, dropped).complete


ROUTES = """class Route:
    def exit(self):
        self.deactivate()

    def send(self, *args):
        return self.router.send(*args)


class View:
    def render(self):
        return self.template()
"""
CONTROLLER_NAME = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -6,0 +7,2 @@ class Route:
+
+    controller_name = None
"""


def test_a_member_declared_elsewhere_in_the_same_class_is_there_not_in_another_class():
    """A class's members may sit in any order: the same declaration further up the same
    class is the change (its neighbours differ); in another class it is not."""
    first = ROUTES.replace("class Route:\n", "class Route:\n    controller_name = None\n\n")
    assert _replayed(CONTROLLER_NAME, ROUTES, ROUTES, first).complete
    other = ROUTES.replace("class View:\n", "class View:\n    controller_name = None\n\n")
    assert not _replayed(CONTROLLER_NAME, ROUTES, ROUTES, other).complete


WRITE = """class Bar:
    @classmethod
    def write(cls, s, fp, end="\\n"):
        with cls.lock():
            fp.write(s)
            fp.write(end)

    @classmethod
    def lock(cls):
        return LOCK
"""
FLUSH_ALWAYS = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -6,0 +7 @@ class Bar:
+            fp.flush()
"""


def test_a_line_put_under_a_new_guard_is_not_the_line_this_change_adds_unguarded():
    """This change flushes after every write; the candidate flushes only when asked (a new
    `flush` argument and an `if flush:` around the same line, as tqdm's #1724 does where
    #1056 flushes always): the line stands beside the same neighbours, one block deeper, and
    runs under a condition this change does not set. Written at the same depth, or deeper
    under no new line, it is the same change."""
    guarded = WRITE.replace('end="\\n"):', 'end="\\n", flush=False):').replace(
        "            fp.write(end)\n",
        "            fp.write(end)\n            if flush:\n                fp.flush()\n",
    )
    assert not _replayed(FLUSH_ALWAYS, WRITE, WRITE, guarded).complete
    always = WRITE.replace('end="\\n"):', 'end="\\n", flush=True):').replace(
        "            fp.write(end)\n", "            fp.write(end)\n            fp.flush()\n"
    )
    assert _replayed(FLUSH_ALWAYS, WRITE, WRITE, always).complete
    # Under a test of what was there already, not an option the candidate added: the step it
    # skips would do nothing (click's #3614 and #3690).
    checked = WRITE.replace(
        "            fp.write(end)\n",
        "            fp.write(end)\n            if not fp.closed:\n                fp.flush()\n",
    )
    assert _replayed(FLUSH_ALWAYS, WRITE, WRITE, checked).complete
    # Indented otherwise under no line of the candidate's own: the same line (tokio's #7032
    # wrote its line five spaces deep, #7136 eight).
    indented = WRITE.replace(
        "            fp.write(end)\n", "            fp.write(end)\n                fp.flush()\n"
    )
    assert _replayed(FLUSH_ALWAYS, WRITE, WRITE, indented).complete


POSTFIX = """def set_postfix(self, postfix):
    for key in postfix:
        postfix[key] = str(postfix[key])
    # Stitch together to get the final postfix
    self.postfix = ', '.join(key + '=' + postfix[key].strip()
                             for key in postfix)
    self.refresh()
"""
KEEP_SPACES = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -5 +5 @@ def set_postfix(self, postfix):
-    self.postfix = ', '.join(key + '=' + postfix[key].strip()
+    self.postfix = ', '.join(key + '=' + postfix[key]
"""


def test_a_call_taken_out_of_a_line_and_made_beside_it_is_not_this_removal():
    """This change stops stripping the values (it drops `.strip()`); the candidate's hunk is
    the same, but it strips each value a few lines up, by default (tqdm's #1263, where #884
    keeps the spaces): the call this change takes away is still made at its place. The same
    hunk alone is the change."""
    identical = POSTFIX.replace("postfix[key].strip()\n", "postfix[key]\n")
    assert _replayed(KEEP_SPACES, POSTFIX, POSTFIX, identical).complete
    moved = identical.replace(
        "        postfix[key] = str(postfix[key])\n",
        "        postfix[key] = str(postfix[key])\n        if strip:\n"
        "            postfix[key] = postfix[key].strip()\n",
    ).replace("(self, postfix):", "(self, postfix, strip=True):")
    assert not _replayed(KEEP_SPACES, POSTFIX, POSTFIX, moved).complete


STRIP_EARLIER = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -3,0 +4 @@ def set_postfix(self, postfix):
+        postfix[key] = postfix[key].strip()
@@ -5 +6 @@ def set_postfix(self, postfix):
-    self.postfix = ', '.join(key + '=' + postfix[key].strip()
+    self.postfix = ', '.join(key + '=' + postfix[key]
"""


def test_a_call_this_change_moves_is_not_taken_away_where_the_candidate_moves_it_too():
    """This change strips each value once, up in the loop, rather than in the join; the
    candidate does the same, its loop line written another way: the join's edit is the
    candidate's too (bat's #3618 and #3595 both move `map_err` up a few lines)."""
    moved = POSTFIX.replace("postfix[key].strip()\n", "postfix[key]\n").replace(
        "        postfix[key] = str(postfix[key])\n",
        "        postfix[key] = str(postfix[key]).strip()\n",
    )
    joined = _replayed(STRIP_EARLIER, POSTFIX, POSTFIX, moved).hunks[1]
    assert (joined.first_line, joined.how) == (6, "identical")


STORE_LOAD = """def load(path):
    data = read(path)
    if data is None:
        return {}
    return parse(data)
"""
STORE_LOAD_REWRITTEN = """def load(path):
    raw = fetch(path)
    if raw is None:
        raise LookupError(path)
    return decode(raw)
"""
STORE_SAVE = """def save(path, value):
    data = read(path)
    if data is None:
        return {}
    write(path, value)
"""


def _store(load: str, save: str) -> dict[str, str | bytes | None]:
    return {"store.py": "import os\n\n\n" + load + "\n\n" + save}


def test_the_same_line_fixed_in_another_function_is_not_this_change(builder: RepoBuilder):
    """#11 fixes `if data is None:` in `load`. Since it was cut, #9 rewrote `load` (its
    neighbours are gone) and #10 fixed the identical line in `save`, with this very patch:
    found there, with `save`'s neighbours, it would read as done. `load` is where #11's lines
    are, and there they are not."""
    builder.commit("Add the store", _store(STORE_LOAD, STORE_SAVE))
    base = builder.head()
    builder.pr_branch(9, [("Fetch raw data in load", _store(STORE_LOAD_REWRITTEN, STORE_SAVE))])
    builder.merge_pr(9)
    fixed_save = STORE_SAVE.replace("if data is None", "if not data")
    builder.pr_branch(
        10,
        [("Treat empty data as missing in save", _store(STORE_LOAD_REWRITTEN, fixed_save))],
    )
    builder.merge_pr(10)
    fixed_load = STORE_LOAD.replace("if data is None", "if not data")
    builder.pr_branch(
        11,
        [("Treat empty data as missing in load", _store(fixed_load, STORE_SAVE))],
        start=base,
    )
    index(builder)
    _, found = check_json(builder.path, "--pr", "11")
    assert deciding(found) == []
    by_pr = {f["pr"]: f for f in found}
    assert "identical patch to #10" in by_pr[10]["reasons"]
    assert any("0 of 1 hunk(s) are there" in reason for reason in by_pr[10]["reasons"])


def test_the_same_fix_in_its_own_function_is_found_when_the_signature_changed(
    builder: RepoBuilder,
):
    """#10 made #11's fix in `load` and changed `load`'s signature and first line, so #11's
    neighbours are gone: the function is still `load`, and #11's line is made there."""
    builder.commit("Add the store", _store(STORE_LOAD, STORE_SAVE))
    base = builder.head()
    fixed_load = STORE_LOAD.replace("if data is None", "if not data")
    landed = fixed_load.replace("def load(path):", "def load(path, default=None):").replace(
        "data = read(path)", "data = read(path) or default"
    )
    builder.pr_branch(10, [("Treat empty data as missing in load", _store(landed, STORE_SAVE))])
    builder.merge_pr(10)
    builder.pr_branch(
        11, [("Load: empty data is missing data", _store(fixed_load, STORE_SAVE))], start=base
    )
    index(builder)
    _, found = check_json(builder.path, "--pr", "11")
    assert deciding(found)[:1] == [(10, "already-merged")]


def test_a_header_added_at_a_files_top_is_there_where_the_landing_added_it():
    """A license header added between `<?php` and the namespace: the context above it is two
    lines, fewer than a hunk's three. The landing added the same header, so the hunk is done
    there; with the context above cut to its last (blank) line, the blank line and the
    namespace after the header's ` */` read as "still applies" (symfony #15987, whose
    headers #15984 added)."""
    from tests.test_replay_verdicts import _replayed

    header = (
        "/*\n * This file is part of the Acme package.\n *\n * (c) Acme <dev@acme.test>\n */\n\n"
    )
    base = "<?php\n\nnamespace Acme\\Ldap;\n\nuse Acme\\Ldap\\Exception;\n\nclass Client\n{\n}\n"
    headed = base.replace("namespace", header + "namespace", 1)
    diff = (  # as the index keeps a diff: without context (`git diff -U0`)
        "diff --git a/src/Client.php b/src/Client.php\n"
        "--- a/src/Client.php\n+++ b/src/Client.php\n"
        "@@ -2,0 +3,6 @@\n" + "".join(f"+{line}\n" for line in header.splitlines())
    )
    done = _replayed(diff, base, base, headed)
    assert [(h.before, h.after) for h in done.hunks] == [("new", "there")]
    assert done.complete
