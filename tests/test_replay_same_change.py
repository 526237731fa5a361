""" "Done in #N" means #N's change holds this one: what this change adds is there, each part at
its own place.

The same line touched for another purpose is not the same change: passing the caller's
context to a call is not wrapping that call in a timeout, and appending a lint comment to the
lines a change rewrites is not the rewrite. Equal hunks of one change (the same line added to
three lists) are each looked for in their own block, and done only as often as the other
change made them.

Each story is a real repository built in a temporary folder, indexed, and checked through the
CLI; what is read is the verdict and the reasons a maintainer would see.
"""

from __future__ import annotations

from tests.repo_builder import RepoBuilder
from tests.test_replay_verdicts import _replayed, check_json, deciding, index

KILL = """package daemon

import (
	"context"
	"syscall"
	"time"
)

func (daemon *Daemon) killWithSignal(container *Container, stopSignal syscall.Signal) error {
	task, err := container.GetRunningTask()
	if err != nil {
		return err
	}

	if err := task.Kill(context.Background(), stopSignal); err != nil {
		return err
	}
	return container.Wait(time.Minute)
}
"""
KILL_LINE = "\tif err := task.Kill(context.Background(), stopSignal); err != nil {\n"
SIGNATURE = (
    "func (daemon *Daemon) killWithSignal(container *Container, "
    "stopSignal syscall.Signal) error {\n"
)
WITH_CTX = (
    "func (daemon *Daemon) killWithSignal(ctx context.Context, container *Container, "
    "stopSignal syscall.Signal) error {\n"
)


def test_passing_the_callers_context_is_not_the_timeout_this_change_adds(builder: RepoBuilder):
    """This change wraps `task.Kill` in a 30-second timeout and defers its cancel. #30 (merged)
    changed the same line to pass the caller's context instead; #31 (open) to detach it from
    cancellation: both bring in `ctx`, #31 a `cancel` too, neither brings in the timeout.
    #32 (open) adds the timeout with other names: that is this change written differently."""
    builder.commit("Add kill", {"daemon/kill.go": KILL})
    base = builder.head()
    passed = KILL.replace(SIGNATURE, WITH_CTX).replace(
        KILL_LINE, "\tif err := task.Kill(ctx, stopSignal); err != nil {\n"
    )
    builder.pr_branch(30, [("Pass the context through kill", {"daemon/kill.go": passed})])
    builder.merge_pr(30, how="merge")
    detached = KILL.replace(SIGNATURE, WITH_CTX).replace(
        KILL_LINE, "\tif err := task.Kill(context.WithoutCancel(ctx), stopSignal); err != nil {\n"
    )
    builder.pr_branch(
        31, [("Kill even when the request is gone", {"daemon/kill.go": detached})], start=base
    )
    bounded = KILL.replace(
        KILL_LINE,
        "\tctx, cancel := context.WithTimeout(context.Background(), shimTimeout)\n"
        "\tdefer cancel()\n"
        "\tif err := task.Kill(ctx, stopSignal); err != nil {\n",
    )
    builder.pr_branch(32, [("Bound the kill RPC", {"daemon/kill.go": bounded})], start=base)
    builder.checkout("contributor", base)
    builder._author = "Grace"
    builder.commit(
        "Add a timeout to the shim kill call",
        {
            "daemon/kill.go": KILL.replace(
                KILL_LINE,
                "\tkillCtx, killCancel := "
                "context.WithTimeout(context.Background(), 30*time.Second)\n"
                "\tdefer killCancel()\n"
                "\tif err := task.Kill(killCtx, stopSignal); err != nil {\n",
            )
        },
    )
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "contributor")
    assert deciding(found) == [(32, "duplicate")]
    by_pr = {f["pr"]: f for f in found}
    for other in (30, 31):
        assert any("0 of 1 hunk(s) are there" in r for r in by_pr[other]["reasons"]), by_pr[other]
    assert any("same names" in r for r in by_pr[32]["reasons"])


CONFIG = """package supervisor

type GRPCConfig struct {
	Address string `toml:"address"`
}

func (r *remote) defaults(stateDir string) {
	r.Config = Config{
		Version: 2,
		GRPC: GRPCConfig{
			Address: defaultGRPCAddress(stateDir),
		},
	}
}

func (r *remote) restart() error {
	if err := os.RemoveAll(r.GRPC.Address); err != nil {
		return err
	}
	return r.start(r.GRPC.Address)
}
"""
NOLINT = " //nolint:staticcheck // Deprecated in config v4, but required for config v3."
TAG = '\tAddress string `toml:"address"`\n'
GRPC_BLOCK = "\t\tGRPC: GRPCConfig{\n\t\t\tAddress: defaultGRPCAddress(stateDir),\n"
RESTART = (
    "\tif err := os.RemoveAll(r.GRPC.Address); err != nil {\n\t\treturn err\n\t}\n"
    "\treturn r.start(r.GRPC.Address)\n"
)
REFACTORED = (
    "\tgrpcAddress := r.Address()\n\tif err := os.RemoveAll(grpcAddress); err != nil {\n"
    "\t\treturn err\n\t}\n\treturn r.start(grpcAddress)\n"
)


def test_a_lint_comment_on_the_same_lines_is_not_the_code_they_become(builder: RepoBuilder):
    """This change moves the gRPC settings to config v4's plugin table and makes a field
    optional; #40 (merged) only marked the same lines `//nolint:staticcheck // Deprecated in
    config v4, but required for config v3.`, as this change also does, and made the same
    `grpcAddress := r.Address()` refactor. The comment's words are not the change's names: the
    refactor is done, the plugin table and the optional field are not. #40 rewrote those very
    lines (its comments on them), so the rest no longer applies as it is: no "partly done,
    rebase", an overlap that says which part landed and that the rest was rewritten."""
    builder.commit("Add the containerd config", {"supervisor/remote.go": CONFIG})
    base = builder.head()
    marked = (
        CONFIG.replace(TAG, TAG.rstrip("\n") + NOLINT + "\n")
        .replace(
            GRPC_BLOCK,
            "\t\tGRPC: GRPCConfig{" + NOLINT + "\n"
            "\t\t\tAddress: defaultGRPCAddress(stateDir)," + NOLINT + "\n",
        )
        .replace(RESTART, REFACTORED)
    )
    builder.pr_branch(40, [("vendor: containerd v2.3", {"supervisor/remote.go": marked})])
    builder.merge_pr(40, how="merge")
    v4 = (
        CONFIG.replace(TAG, '\tAddress string `toml:"address,omitempty"`' + NOLINT + "\n")
        .replace(
            GRPC_BLOCK,
            "\t\tPlugins: map[string]any{\n"
            '\t\t\t"io.containerd.server.v1.grpc": map[string]any{\n'
            '\t\t\t\t"address": defaultGRPCAddress(stateDir),\n'
            "\t\t\t},\n\t\t},\n"
            "\t\tGRPC: GRPCConfig{" + NOLINT + "\n"
            "\t\t\tAddress: defaultGRPCAddress(stateDir)," + NOLINT + "\n",
        )
        .replace(RESTART, REFACTORED)
    )
    builder.checkout("contributor", base)
    builder._author = "Grace"
    builder.commit("Adjust the config for containerd v2.3", {"supervisor/remote.go": v4})
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "contributor")
    assert deciding(found) == []
    assert found[0]["pr"] == 40, found[0]
    reasons = " ".join(found[0]["reasons"])
    assert "2 of 4 hunk(s) are there" in reasons, found[0]
    assert "has those lines written otherwise" in reasons
    assert "supervisor/remote.go (line 4" in reasons


COPY = """package client

// CopyToContainerOptions holds information
// about files to copy into a container
type CopyToContainerOptions struct {
	DestinationPath           string
	Content                   io.Reader
	AllowOverwriteDirWithFile bool
	CopyUIDGID                bool
}
"""
FIELDS = "\tDestinationPath           string\n\tContent                   io.Reader\n"
TAIL = "\tAllowOverwriteDirWithFile bool\n\tCopyUIDGID                bool\n"


def test_fields_documented_in_other_words_are_the_same_documentation(builder: RepoBuilder):
    """Where a hunk's code only realigns two fields under their new doc comments, the change
    is its comments, and they are what it is compared by: #60 documents the same two fields
    (the content is a tar archive extracted at the destination path) in other words."""
    builder.commit("Add the copy options", {"client/copy.go": COPY})
    base = builder.head()
    theirs = COPY.replace(
        FIELDS + TAIL,
        "\t// DestinationPath is the path in the container where the content will be "
        "extracted.\n\tDestinationPath string\n"
        "\t// Content must be a TAR archive that will be extracted at DestinationPath.\n"
        "\t// The archive can be compressed with gzip, bzip2, or xz.\n\tContent io.Reader\n"
        "\t// AllowOverwriteDirWithFile controls whether an existing directory can be\n"
        "\t// replaced by a file and vice versa.\n\tAllowOverwriteDirWithFile bool\n"
        "\t// CopyUIDGID copies the UID/GID from the source files.\n\tCopyUIDGID bool\n",
    )
    builder.pr_branch(60, [("Document the copy content", {"client/copy.go": theirs})])
    builder.checkout("contributor", base)
    builder._author = "Grace"
    ours = COPY.replace(
        FIELDS,
        "\t// DestinationPath is the path inside the container where Content is extracted.\n"
        "\tDestinationPath string\n"
        "\t// Content is a tar archive stream to extract into DestinationPath.\n"
        "\tContent io.Reader\n\n",
    )
    builder.commit("Say that the content is a tar archive", {"client/copy.go": ours})
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "contributor")
    assert deciding(found) == [(60, "duplicate")]
    assert any("the same lines replaced with the same names" in r for r in found[0]["reasons"])


BAKE_LIST = """  platforms = [
    "linux/amd64",
    "linux/arm64",
    "linux/ppc64le",
    "linux/s390x",
    "windows/amd64"
  ]
"""
BAKE = (
    'target "_platforms" {\n'
    + BAKE_LIST
    + '}\n\ntarget "binary" {\n  inherits = ["_common"]\n}\n\n'
    + 'target "binary-smoketest" {\n  output = ["type=cacheonly"]\n'
    + BAKE_LIST
    + '}\n\ntarget "bin-image-cross" {\n  output = ["type=image"]\n'
    + BAKE_LIST
    + "}\n"
)
PPC = '    "linux/ppc64le",\n'
RISCV = '    "linux/ppc64le",\n    "linux/riscv64",\n'


def _add_riscv(text: str, which: set[int]) -> str:
    """`text` with riscv64 added to the platform lists numbered in `which` (0, 1, 2)."""
    parts = text.split(PPC)
    out = parts[0]
    for number, part in enumerate(parts[1:]):
        out += (RISCV if number in which else PPC) + part
    return out


def test_the_same_line_added_to_three_lists_is_done_only_where_each_list_has_it(
    builder: RepoBuilder,
):
    """This change adds `"linux/riscv64",` to three build targets: three hunks with the same
    text and the same context. #50 adds it to the first target only, #51 to the last only:
    each made one of the three, and the other two are named as not there. #52 adds it to all
    three: the same change."""
    builder.commit("Add the bake file", {"docker-bake.hcl": BAKE})
    base = builder.head()
    builder.pr_branch(50, [("Add riscv64", {"docker-bake.hcl": _add_riscv(BAKE, {0})})])
    builder.pr_branch(
        51, [("Cross-build riscv64 images", {"docker-bake.hcl": _add_riscv(BAKE, {2})})]
    )
    builder.pr_branch(
        52, [("riscv64 everywhere", {"docker-bake.hcl": _add_riscv(BAKE, {0, 1, 2})})]
    )
    builder.checkout("contributor", base)
    builder._author = "Grace"
    builder.commit(
        "Add linux/riscv64 to the cross-build targets",
        {"docker-bake.hcl": _add_riscv(BAKE, {0, 1, 2})},
    )
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "contributor")
    assert deciding(found) == [(52, "duplicate")]
    by_pr = {f["pr"]: f["reasons"] for f in found}
    assert "replayed at #50's head: 1 of 3 hunk(s) are there, so not the same change" in by_pr[50]
    assert "not in #50: docker-bake.hcl (line 22, line 34)" in by_pr[50]
    assert "not in #51: docker-bake.hcl (line 6, line 22)" in by_pr[51]


# --- the replay itself, on plain text -----------------------------------------------------

RETRIES = "def connect(settings):\n    retries = 0\n    return dial(retries)\n"
READ_RETRIES = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -2 +2 @@
-    retries = 0
+    retries = settings.max_retries or RETRY_LIMIT
"""


def test_one_name_of_this_change_is_not_this_change_written_differently():
    """The share of names is of this hunk's: a candidate that reads `settings.retries` brings
    in one of this hunk's four new names (settings, max, retry, limit); one that reads the same
    maximum with its default, written otherwise, brings in all of them."""
    one_name = RETRIES.replace("retries = 0", "retries = settings.retries")
    assert not _replayed(READ_RETRIES, RETRIES, RETRIES, one_name).complete
    same = RETRIES.replace("retries = 0", "retries = getattr(settings, 'max_retries', RETRY_LIMIT)")
    done = _replayed(READ_RETRIES, RETRIES, RETRIES, same)
    assert done.complete and done.hunks[0].how == "same-names"


HEADERS = """function send(request, headers, data) {
  prepare(request);
  forEach(headers, function setHeader(val, key) {
    if (data === undefined && key === 'content-type') {
      // Remove Content-Type if data is undefined
      delete headers[key];
    } else {
      request.setRequestHeader(key, val);
    }
  });
}
"""
KEEP_CONTENT_TYPE = """diff --git a/xhr.js b/xhr.js
--- a/xhr.js
+++ b/xhr.js
@@ -4,6 +4 @@
-    if (data === undefined && key === 'content-type') {
-      // Remove Content-Type if data is undefined
-      delete headers[key];
-    } else {
-      request.setRequestHeader(key, val);
-    }
+    request.setRequestHeader(key, val);
"""


def test_a_rewrite_that_keeps_what_this_change_deletes_elsewhere_is_not_this_change():
    """This change stops removing an empty request's Content-Type: the header loop sets every
    header. The candidate moved that removal above the loop, with its comment, and left the
    loop as this change writes it (axios #1889, "already done" by #4787): the same lines at
    the hunk's place, the behaviour this change takes out kept. Where the candidate drops it
    too, the hunk is done."""
    loop = """  forEach(headers, function setHeader(val, key) {
    request.setRequestHeader(key, val);
  });
"""
    moved = HEADERS.replace(HEADERS[HEADERS.index("  forEach") : HEADERS.index("}\n", -3)], loop)
    kept = moved.replace(
        "  prepare(request);\n",
        "  prepare(request);\n  // Remove Content-Type if data is undefined\n"
        "  data === undefined && headers.remove('content-type');\n",
    )
    assert not _replayed(KEEP_CONTENT_TYPE, HEADERS, HEADERS, kept).complete
    done = _replayed(KEEP_CONTENT_TYPE, HEADERS, HEADERS, moved)
    assert done.complete and done.hunks[0].how == "identical"


GET = """function get(url, config) {
  return request(merge(config || {}, {
    url: url
  }));
}
"""
DEFAULT_URL = """diff --git a/Axios.js b/Axios.js
--- a/Axios.js
+++ b/Axios.js
@@ -3 +3 @@
-    url: url
+    url: config ? url : this.defaults.url
"""


def test_a_parameter_both_use_is_not_the_fix_when_the_rest_differs():
    """This change falls back to the default URL; the candidate sends the config's data along
    (axios #594, "partly done" by #3282). `config`, the function's own parameter, is the one
    name both lines bring: what each adds beside it differs."""
    data = GET.replace("    url: url\n", "    url: url,\n    data: (config || {}).data\n")
    assert not _replayed(DEFAULT_URL, GET, GET, data).hunks[0].turned
    other = GET.replace("    url: url\n", "    url: config ? url : defaults.url\n")
    assert _replayed(DEFAULT_URL, GET, GET, other).hunks[0].turned


REDIRECT = """/**
 * Calls the redirect hooks.
 *
 * @returns {Object<string, any>}
 */
function dispatchBeforeRedirect(options) {
  if (options.beforeRedirects.proxy) {
    options.beforeRedirects.proxy(options);
  }
  if (options.beforeRedirects.config) {
    options.beforeRedirects.config(options);
  }
}
"""
BOTH_DETAILS = """diff --git a/http.js b/http.js
--- a/http.js
+++ b/http.js
@@ -6 +6 @@
-function dispatchBeforeRedirect(options) {
+function dispatchBeforeRedirect(options, responseDetails, requestDetails) {
@@ -11 +11 @@
-    options.beforeRedirects.config(options);
+    options.beforeRedirects.config(options, responseDetails, requestDetails);
"""


def test_the_same_lines_with_one_of_the_arguments_left_out_are_a_part_not_this_change():
    """This change passes the response's and the request's details to the redirect hook
    (axios #5729); #5778 passes the response's alone: its lines are this change's with a name
    left out, not this change written another way. The same names in another order still
    are."""
    response_only = REDIRECT.replace(
        "Redirect(options)", "Redirect(options, responseDetails)"
    ).replace("config(options)", "config(options, responseDetails)")
    replayed = _replayed(BOTH_DETAILS, REDIRECT, REDIRECT, response_only)
    assert not any(hunk.turned for hunk in replayed.hunks), replayed.hunks
    renamed = REDIRECT.replace(
        "Redirect(options)", "Redirect(options, requestDetails, responseDetails)"
    ).replace("config(options)", "config(options, requestDetails, responseDetails)")
    assert _replayed(BOTH_DETAILS, REDIRECT, REDIRECT, renamed).complete


NEW_README = """diff --git a/env/README.md b/env/README.md
new file mode 100644
--- /dev/null
+++ b/env/README.md
@@ -0,0 +1,3 @@
+# env
+
+`data.js` is written when the version is bumped: do not edit it.
"""


def test_a_short_new_file_the_candidate_created_the_same_is_done():
    """A new file's place is the file: a three-line README the candidate created with the
    same lines is there, though too short to be looked for without context anywhere else
    (axios #4041's README, created the same by the release #4107, was "still to do"). One
    that was there before the candidate, or that it wrote otherwise, is not its doing."""
    text = "# env\n\n`data.js` is written when the version is bumped: do not edit it.\n"
    done = _replayed(NEW_README, "", None, text)
    assert done.complete and done.hunks[0].how == "identical"
    assert not _replayed(NEW_README, "", text, text).complete
    assert not _replayed(NEW_README, "", None, "# env\n\nGenerated.\n").complete


CREDENTIALS = """function send(config, request) {
  var xsrf = config.xsrfCookieName !== undefined && config.xsrfCookieName;
  if (config.withCredentials) {
    request.withCredentials = true;
  }
}
"""
FALSE_CREDENTIALS = """diff --git a/xhr.js b/xhr.js
--- a/xhr.js
+++ b/xhr.js
@@ -3,2 +3,2 @@
-  if (config.withCredentials) {
-    request.withCredentials = true;
+  if (typeof config.withCredentials !== 'undefined') {
+    request.withCredentials = !!config.withCredentials;
"""


def test_testing_for_undefined_with_a_helper_is_the_same_test():
    """`typeof x !== 'undefined'` and `!utils.isUndefined(x)` test the same thing: `typeof`
    is the language's, no name this change brings in beside `undefined`, which the file
    already spells (axios #1813, done by #2582)."""
    helper = CREDENTIALS.replace(
        "  if (config.withCredentials) {\n    request.withCredentials = true;\n",
        "  if (!utils.isUndefined(config.withCredentials)) {\n"
        "    request.withCredentials = !!config.withCredentials;\n",
    )
    done = _replayed(FALSE_CREDENTIALS, CREDENTIALS, CREDENTIALS, helper)
    assert done.complete and done.hunks[0].how == "same-names"


EXPORTS = """import axios from './lib/axios.js';

const {spread, toFormData} = axios;

export default axios;
export {
  spread,
  toFormData
}
"""
EXPORT_BY_NAME = """diff --git a/index.js b/index.js
--- a/index.js
+++ b/index.js
@@ -8 +8,2 @@
-  toFormData
+  toFormData,
+  axios
"""


def test_one_name_part_the_file_already_spelled_in_another_name_is_not_this_change():
    """This change exports `axios` by name; the candidate added `AxiosHeaders` and
    `formToJSON` to the same list (axios #5104, "partly done" by #5162). The one name part
    both bring in, `axios`, is the module's own import, and the candidate spells it in another
    name: where both edits happen, not what either adds. Exporting `axios` beside a new name
    is this change."""
    headers = EXPORTS.replace("  toFormData\n}", "  toFormData,\n  AxiosHeaders,\n  formToJSON\n}")
    assert not _replayed(EXPORT_BY_NAME, EXPORTS, EXPORTS, headers).hunks[0].turned
    by_name = EXPORTS.replace("  toFormData\n}", "  toFormData,\n  formToJSON,\n  axios\n}")
    assert _replayed(EXPORT_BY_NAME, EXPORTS, EXPORTS, by_name).hunks[0].turned


CIRRUS = """freebsd_instance:
  image_family: freebsd-14-3
env:
  RUST_STABLE: stable
task:
  name: FreeBSD 64-bit
  test_script:
    - cargo test --all
"""


def test_an_image_moved_to_another_version_is_not_this_version(builder: RepoBuilder):
    """This change moves CI to the FreeBSD 15.0 image; #40 (merged) moved the same line to the
    14.4 release image. The same names around another version is a competing change, not
    this one written differently (tokio's #7963 was "already done" by the 14.4 bump). #41
    (open) moves it to 15.0 as well, spelled with the other key: that is this change."""
    builder.commit("Add CI", {".cirrus.yml": CIRRUS})
    base = builder.head()
    line = "  image_family: freebsd-14-3\n"
    older = CIRRUS.replace(line, "  image: freebsd-14-4-release-amd64-ufs\n")
    builder.pr_branch(40, [("ci: update FreeBSD image to 14.4", {".cirrus.yml": older})])
    builder.merge_pr(40, how="squash")
    same = CIRRUS.replace(line, "  image: freebsd-15-0-release-amd64-ufs\n")
    builder.pr_branch(41, [("ci: FreeBSD 15", {".cirrus.yml": same})], start=base)
    newer = CIRRUS.replace(line, "  image_family: freebsd-15-0-amd64-ufs\n")
    builder.pr_branch(42, [("ci: test on FreeBSD 15.0", {".cirrus.yml": newer})], start=base)
    index(builder)

    _, found = check_json(builder.path, "--pr", "42")

    assert deciding(found) == [(41, "duplicate")]


UCRED = """#[cfg(any(
    target_os = "linux",
    target_os = "redox",
    target_os = "android",
    target_os = "haiku"
))]
pub(crate) use self::impl_linux::get_peer_cred;

#[cfg(target_os = "aix")]
pub(crate) use self::impl_aix::get_peer_cred;

#[cfg(any(target_os = "espidf", target_os = "vita", target_os = "hurd"))]
pub(crate) use self::impl_noproc::get_peer_cred;

#[cfg(any(
    target_os = "linux",
    target_os = "redox",
    target_os = "android",
    target_os = "haiku"
))]
pub(crate) mod impl_linux {}
"""
NOPROC = '#[cfg(any(target_os = "espidf", target_os = "vita", target_os = "hurd"))]\n'


def test_a_cfg_list_reformatted_for_another_target_is_not_this_targets_entry(
    builder: RepoBuilder,
):
    """#60 (merged) split the `impl_noproc` list one target a line to add nuttx, #63 (merged)
    added fuchsia to it. #61 adds hurd to the two `impl_linux` lists: #63's
    `target_os = "hurd",` stands in the other list, between other neighbours. #62 splits the
    `impl_noproc` list to add QNX's io-sock variants: the `#[cfg(any(...))]` line it replaces
    is code, and #60 re-wrapped it for another entry. Neither is done (tokio's #7814 and #8108
    were "partly done" by the fuchsia and nuttx changes)."""
    builder.commit("Add ucred", {"src/ucred.rs": UCRED})
    base = builder.head()
    nuttx = UCRED.replace(
        NOPROC,
        "#[cfg(any(\n"
        '    target_os = "espidf",\n'
        '    target_os = "nuttx",\n'
        '    target_os = "vita",\n'
        '    target_os = "hurd"\n'
        "))]\n",
    )
    builder.pr_branch(60, [("net: support Nuttx target os", {"src/ucred.rs": nuttx})])
    builder.merge_pr(60, how="squash")
    fuchsia = nuttx.replace(
        '    target_os = "nuttx",\n    target_os = "vita",\n    target_os = "hurd"\n',
        '    target_os = "fuchsia",\n    target_os = "hurd",\n    target_os = "nuttx",\n'
        '    target_os = "vita"\n',
    )
    builder.pr_branch(63, [("net: support ucred.rs on Fuchsia", {"src/ucred.rs": fuchsia})])
    builder.merge_pr(63, how="squash")
    hurd = UCRED.replace(
        '    target_os = "redox",\n', '    target_os = "redox",\n    target_os = "hurd",\n'
    )
    builder.pr_branch(61, [("net: add support for GNU Hurd", {"src/ucred.rs": hurd})], start=base)
    qnx = UCRED.replace(
        NOPROC,
        "#[cfg(any(\n"
        '    target_os = "espidf",\n'
        '    target_os = "vita",\n'
        '    target_os = "hurd",\n'
        '    all(target_os = "nto", any(target_env = "nto71_iosock", target_env = "nto80")),\n'
        "))]\n",
    )
    builder.pr_branch(62, [("net: QNX io-sock has no peer pid", {"src/ucred.rs": qnx})], start=base)
    index(builder)

    assert deciding(check_json(builder.path, "--pr", "61")[1]) == []
    assert deciding(check_json(builder.path, "--pr", "62")[1]) == []


READY = """macro_rules! ready {
    ($e:expr) => {
        match $e {
            Poll::Ready(Ok(t)) => t,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(From::from(e))),
            Poll::Pending => return Poll::Pending,
        }
    };
}
"""


def test_lines_a_change_moves_are_not_done_by_a_change_that_deleted_them(builder: RepoBuilder):
    """#71 moves the `ready!` macro out of the `codec` crate into `core`, rewriting it there;
    #70 (merged) deleted the whole `codec` crate. The file #71 deletes is gone, but what #71
    makes of it is nowhere: no part of #71 is done (tokio's #1266 was "partly done" by the
    removal of a facade crate)."""
    builder.commit(
        "Add crates",
        {
            "codec/src/macros.rs": READY,
            "codec/src/lib.rs": "#[macro_use]\nmod macros;\npub mod framed;\n",
            "core/src/lib.rs": "pub mod io;\npub mod net;\n",
        },
    )
    base = builder.head()
    builder.pr_branch(
        70,
        [
            (
                "chore: remove the codec crate",
                {"codec/src/macros.rs": None, "codec/src/lib.rs": None},
            )
        ],
    )
    builder.merge_pr(70, how="squash")
    moved = READY.replace("Poll::", "std::task::Poll::").replace(
        "macro_rules! ready", "macro_rules! ready_ok"
    )
    builder.pr_branch(
        71,
        [
            (
                "core: move ready! from codec",
                {
                    "codec/src/macros.rs": None,
                    "core/src/macros.rs": moved,
                    "core/src/lib.rs": "#[macro_use]\nmod macros;\npub mod io;\npub mod net;\n",
                },
            )
        ],
        start=base,
    )
    index(builder)

    assert deciding(check_json(builder.path, "--pr", "71")[1]) == []


NOTIFY = """fn notify_locked(waiters: &mut WaitList, curr: usize) -> Option<Waker> {
    match get_state(curr) {
        WAITING => {
            // Get a pending waiter
            let mut waiter = waiters.pop_back().unwrap();

            // Safety: `waiters` lock is still held.
            let waiter = unsafe { waiter.as_mut() };

            assert!(waiter.notified.is_none());

            waiter.notified = Some(NotificationType::OneWaiter);
            let waker = waiter.waker.take();

            if waiters.is_empty() {
                // As this the **final** waiter in the list, the state
                // must be transitioned to `EMPTY`.
                state.store(set_state(curr, EMPTY), SeqCst);
            }

            return waker;
        }
        _ => unreachable!(),
    }
}
"""
TOLERANT = """fn notify_locked(waiters: &mut WaitList, curr: usize) -> Option<Waker> {
    match get_state(curr) {
        WAITING => {
            // Get a pending waiter if one exists
            if let Some(mut waiter) = waiters.pop_back() {
                // Safety: `waiters` lock is still held.
                let waiter = unsafe { waiter.as_mut() };

                assert!(waiter.notified.is_none());

                waiter.notified = Some(NotificationType::OneWaiter);
                let waker = waiter.waker.take();

                return waker;
            };

            return None;
        }
        _ => unreachable!(),
    }
}
"""
UNCONTENDED = NOTIFY.replace(
    """            let mut waiter = waiters.pop_back().unwrap();

            // Safety: `waiters` lock is still held.
            let waiter = unsafe { waiter.as_mut() };

            assert!(waiter.notified.is_none());

            waiter.notified = Some(NotificationType::OneWaiter);
            let waker = waiter.waker.take();
""",
    """            let waiter = waiters.pop_back().unwrap();

            // Safety: we never make mutable references to waiters.
            let waiter = unsafe { waiter.as_ref() };

            // Safety: we hold the lock, so we can access the waker.
            let waker = unsafe { waiter.waker.with_mut(|waker| (*waker).take()) };

            // This waiter is unlinked and will not be shared ever again, release it.
            waiter.notification.store_release(Notification::One);
""",
)


def test_lines_a_change_only_moves_are_not_done_by_names_around_them(builder: RepoBuilder):
    """#81 wraps the waiter's handling in `if let Some(..)` (the same lines, indented) to
    tolerate an empty list; #80 (merged) rewrote those lines to reduce contention. A block
    this change only re-indents is done where the moved block stands, not because #80's
    lines spell `waiter` and `notified` (tokio's #5305 was "partly done" by #5503)."""
    builder.commit("Add notify", {"src/notify.rs": NOTIFY})
    base = builder.head()
    builder.pr_branch(80, [("sync: reduce contention in Notify", {"src/notify.rs": UNCONTENDED})])
    builder.merge_pr(80, how="squash")
    builder.pr_branch(
        81, [("sync: tolerate an empty waiter list", {"src/notify.rs": TOLERANT})], start=base
    )
    index(builder)

    assert deciding(check_json(builder.path, "--pr", "81")[1]) == []


CARGO = """[package]
name = "tokio"

[target.'cfg(unix)'.dev-dependencies]
libc = { version = "0.2.149" }
nix = { version = "0.27.1", default-features = false, features = ["fs", "socket"] }
"""
GUARD = """impl<T: ?Sized> OwnedRwLockReadGuard<T> {
    /// Makes a new guard for a component of the locked data.
    pub fn map<F>(this: Self, f: F) -> Self {
        f(this)
    }

    /// Attempts to make a new guard for a component of the locked data.
    pub fn try_map<F>(this: Self, f: F) -> Result<Self, Self> {
        f(this)
    }
}

impl<T: ?Sized> ops::Deref for OwnedRwLockReadGuard<T> {
    type Target = T;
}
"""
TRY_MAP_END = """        f(this)
    }
}

impl<T: ?Sized> ops::Deref"""


def test_a_version_moved_further_and_a_method_without_its_attribute_are_this_change(
    builder: RepoBuilder,
):
    """#91 bumps nix to 0.28 with the `aio` feature; #90 (merged) bumped it to 0.29 with the
    same feature: the same move, made further (tokio's #6474 and #6552). #93 adds a `rwlock()`
    accessor marked `#[inline]`; #92 (merged) added it without the attribute and with other
    docs: the same method (tokio's #3930 and #6418)."""
    builder.commit("Add the crate", {"Cargo.toml": CARGO, "src/guard.rs": GUARD})
    base = builder.head()
    old = 'version = "0.27.1", default-features = false, features = ["fs", "socket"]'
    newer = 'version = "0.29.0", default-features = false, features = ["aio", "fs", "socket"]'
    builder.pr_branch(90, [("tests: update nix", {"Cargo.toml": CARGO.replace(old, newer)})])
    builder.merge_pr(90, how="squash")
    bump = 'version = "0.28.0", default-features = false, features = ["aio", "fs", "socket"]'
    builder.pr_branch(
        91, [("Bump nix to 0.28", {"Cargo.toml": CARGO.replace(old, bump)})], start=base
    )
    theirs = GUARD.replace(
        TRY_MAP_END,
        "        f(this)\n    }\n\n    /// Returns the `Arc` this guard holds.\n"
        "    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {\n        &this.lock\n    }\n"
        "}\n\nimpl<T: ?Sized> ops::Deref",
    )
    builder.pr_branch(92, [("sync: add rwlock() to owned guards", {"src/guard.rs": theirs})])
    builder.merge_pr(92, how="squash")
    ours = GUARD.replace(
        TRY_MAP_END,
        "        f(this)\n    }\n\n    /// Returns a reference to the original `Arc<RwLock>`.\n"
        "    #[inline]\n    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {\n        &this.lock\n"
        "    }\n}\n\nimpl<T: ?Sized> ops::Deref",
    )
    builder.pr_branch(
        93, [("Add OwnedRwLockReadGuard::rwlock", {"src/guard.rs": ours})], start=base
    )
    index(builder)

    assert deciding(check_json(builder.path, "--pr", "91")[1]) == [(90, "already-merged")]
    assert deciding(check_json(builder.path, "--pr", "93")[1]) == [(92, "already-merged")]


PREPARE = """<?php
class Client
{
    public function prepareBody()
    {
        $body = '';

        if (!$this->getRequest()->headers()->has('Content-Type')) {
            $totalFiles = count($this->getRequest()->file()->toArray());
        }
        return $totalFiles;
    }
}
"""


def test_a_line_written_on_the_other_side_of_a_blank_line_is_this_line(builder: RepoBuilder):
    """#102 declares `$totalFiles = 0;` (with a comment) after the blank line below
    `$body = '';`; #101 (merged) declared it just above that blank line: the same line between
    the same neighbours, blank lines and comments aside (zendframework's #754 and #747)."""
    builder.commit("Add the client", {"Client.php": PREPARE})
    base = builder.head()
    body = "        $body = '';\n"
    theirs = PREPARE.replace(body, body + "        $totalFiles = 0;\n")
    builder.pr_branch(101, [("Fix notice on totalFiles", {"Client.php": theirs})])
    builder.merge_pr(101, how="merge")
    ours = PREPARE.replace(
        body + "\n",
        body + "\n        // Declare here to stop warnings later\n        $totalFiles = 0;\n\n",
    )
    builder.pr_branch(102, [("Declare totalFiles", {"Client.php": ours})], start=base)
    index(builder)

    assert deciding(check_json(builder.path, "--pr", "102")[1]) == [(101, "already-merged")]


def test_a_file_both_move_away_is_a_part_where_the_candidate_wrote_where_it_goes(
    builder: RepoBuilder,
):
    """#75 ports the input helper's tests: it deletes `htmlbars/tests/input_test.js` and writes
    `glimmer/tests/input-test.js`. #74 (merged) made the same port with tests of its own: the old
    file's deletion is a part of #75 done there (ember's #13566 and #13194). The new file is
    not left to do as it is: main has that file, #74's, so creating it would not apply. An
    overlap that says so, no "partly done, rebase"."""
    old = "".join(f"test('input {n}', () => assert.ok(render({n})));\n" for n in range(12))
    builder.commit(
        "Add the tests", {"htmlbars/tests/input_test.js": old, "glimmer/lib.js": "x = 1\n"}
    )
    base = builder.head()
    theirs = "".join(f"this.assert.ok(this.render('input', {n}));\n" for n in range(12))
    builder.pr_branch(
        74,
        [
            (
                "port {{input}} helper tests",
                {"htmlbars/tests/input_test.js": None, "glimmer/tests/input-test.js": theirs},
            )
        ],
    )
    builder.merge_pr(74, how="squash")
    ours = "".join(f"moduleFor('input {n}', () => this.assertText('{n}'));\n" for n in range(12))
    builder.pr_branch(
        75,
        [
            (
                "[Glimmer2] port input tests",
                {"htmlbars/tests/input_test.js": None, "glimmer/tests/input-test.js": ours},
            )
        ],
        start=base,
    )
    index(builder)

    found = check_json(builder.path, "--pr", "75")[1]
    assert deciding(found) == [] and found[0]["pr"] == 74, found
    reasons = " ".join(found[0]["reasons"])
    assert "has those lines written otherwise" in reasons
    assert "glimmer/tests/input-test.js" in reasons


SERVER = """package fzf

func startHttpServer(address string, actionChannel chan []*action, getHandler func() string) error {
	listener, err := listen(address)
	if err != nil {
		return err
	}

	server := httpServer{
		apiKey:        []byte(apiKey),
		actionChannel: actionChannel,
		getHandler:    getHandler,
	}

	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			server.handle(conn)
		}
	}()
	return nil
}
"""
DECLARATION = """	server := httpServer{
		apiKey:        []byte(apiKey),
		actionChannel: actionChannel,
		getHandler:    getHandler,
	}

"""
IN_GOROUTINE = SERVER.replace(
    DECLARATION + "\tgo func() {\n",
    "\tgo func() {\n"
    + "".join("\t" + line if line else line for line in DECLARATION.splitlines(keepends=True)[:-1]),
)


def test_a_block_moved_into_the_next_line_s_block_is_done_by_the_same_move(builder: RepoBuilder):
    """This change moves a declaration into the goroutine that starts on the line right after
    it; #50 (squash-merged) made the very same patch. Read line by line, the removal is
    followed by `go func() {` and then the moved block, not by the loop that followed it in
    the base: the change's own result is the removal's context (fzf's #4736 was "partly
    done" by the identical patch of #4739, the removal "still to do")."""
    builder.commit("Add the server", {"src/server.go": SERVER})
    base = builder.head()
    builder.pr_branch(50, [("Move the server into the goroutine", {"src/server.go": IN_GOROUTINE})])
    builder.merge_pr(50, how="squash")
    builder.pr_branch(
        51, [("Avoid a heap allocation", {"src/server.go": IN_GOROUTINE})], start=base
    )
    index(builder)

    _, found = check_json(builder.path, "--pr", "51")

    assert deciding(found) == [(50, "already-merged")]
    assert "all 2 hunk(s) of the change are already there" in found[0]["reasons"][0]


BRANCHES = """<?php

class VcsRepository
{
    protected function initialize()
    {
        foreach ($tags as $tag => $identifier) {
            try {
                $this->addPackage($this->loader->load($driver->read($identifier)));
            } catch (\\Exception $e) {
                $this->io->write('Skipped tag '.$tag.', '.$e->getMessage());
                continue;
            }
        }

        foreach ($branches as $branch => $identifier) {
            try {
                $this->addPackage($this->loader->load($driver->read($identifier)));
            } catch (\\Exception $e) {
                $this->io->write('Skipped branch '.$branch.', '.$e->getMessage());
                continue;
            }
        }
    }
}
"""
SKIPPED = "                $this->io->write('Skipped branch '.$branch.', '.$e->getMessage());\n"
QUIET = (
    "                if ($verbose) {\n"
    "                    $this->io->write('Skipped branch '.$branch.', '.$e->getMessage());\n"
    "                }\n"
)
ALWAYS = (
    "                $this->branchErrorOccurred = true;\n"
    "                $this->io->writeError('<error>Skipped branch '.$branch.', '\n"
    "                    .$e->getMessage().'</error>');\n"
)
CACHE = """
    private function cachedPackage($version, $identifier, $verbose)
    {
        $cached = $this->versionCache->getVersionPackage($version, $identifier);
        if ($verbose) {
            $this->io->writeError('Found cached composer.json of '.$version);
        }

        return $cached;
    }
}
"""


def test_a_guard_put_around_a_line_is_not_the_same_guard_written_elsewhere(
    builder: RepoBuilder,
):
    """This change puts the "Skipped branch" message under `if ($verbose) {`. #60 (merged)
    rewrote that message to be printed always, as an error, and added a version cache whose
    new method has its own `if ($verbose) {` message. The guard and its brace are written
    after #60, but the line this change puts inside the guard is gone (composer's #528 was
    "already done" by a version cache). #61 (open) wraps the same line in the same guard:
    that is this change."""
    builder.commit("Add the repository", {"src/VcsRepository.php": BRANCHES})
    base = builder.head()
    cached = BRANCHES.replace(SKIPPED, ALWAYS)
    cached = cached[: cached.rindex("}")].rstrip("\n") + "\n" + CACHE
    builder.pr_branch(60, [("Cache the versions of branches", {"src/VcsRepository.php": cached})])
    builder.merge_pr(60, how="merge")
    quiet = BRANCHES.replace(SKIPPED, QUIET)
    builder.pr_branch(
        61, [("Quiet skipped branches", {"src/VcsRepository.php": quiet})], start=base
    )
    builder.pr_branch(
        62, [("Hide the branch error unless verbose", {"src/VcsRepository.php": quiet})], start=base
    )
    index(builder)

    _, found = check_json(builder.path, "--pr", "62")

    assert deciding(found) == [(61, "duplicate")]


CHECKBOX = """<?php

class FormCheckbox extends FormInput
{
    public function render(ElementInterface $element)
    {
        $attributes = $element->getAttributes();
        $rendered = '';
        if ($element->useHiddenElement()) {
            $hiddenAttributes = array(
                'name'  => $attributes['name'],
                'value' => $element->getUncheckedValue(),
            );

            $rendered = sprintf('<input type="hidden" %s>', $this->attributes($hiddenAttributes));
        }

        return $rendered . parent::render($element);
    }
}
"""
HIDDEN = """                'name'  => $attributes['name'],
                'value' => $element->getUncheckedValue(),
"""
DISABLED = "'disabled' => isset($attributes['disabled']) ? $attributes['disabled'] : false,\n"


def test_an_entry_added_at_another_place_in_the_same_array_is_the_same_change(
    builder: RepoBuilder,
):
    """#70 (open) adds `'disabled'` last to the hidden element's attributes; this change adds
    it first and re-aligns the other entries. Keys of one array stand in any order: the
    re-aligned entries are not put into another block, so where they stand says nothing
    (zf2's #7341 and #7287, both for issue #7286)."""
    builder.commit("Add the checkbox helper", {"src/FormCheckbox.php": CHECKBOX})
    base = builder.head()
    last = CHECKBOX.replace(HIDDEN, HIDDEN + "                " + DISABLED)
    builder.pr_branch(70, [("Disable the hidden element too", {"src/FormCheckbox.php": last})])
    first = CHECKBOX.replace(
        HIDDEN,
        "                " + DISABLED + "                'name'     => $attributes['name'],\n"
        "                'value'    => $element->getUncheckedValue(),\n",
    )
    builder.pr_branch(
        71,
        [("Set disabled also on the hidden element", {"src/FormCheckbox.php": first})],
        start=base,
    )
    index(builder)

    _, found = check_json(builder.path, "--pr", "71")

    assert deciding(found) == [(70, "duplicate")]


CONTROLLER = """use std::io::Write;

impl<'b> Controller<'b> {
    pub fn run(&self) -> Result<bool> {
        let mut output_type = OutputType::from_mode(self.config.paging_mode);
        let writer = output_type.handle()?;
        let mut no_errors: bool = true;
        for filename in &self.config.files {
            no_errors &= self.print_file(writer, filename);
        }
        Ok(no_errors)
    }
}
"""
HANDLE_LINE = "        let writer = output_type.handle()?;\n"


def test_a_keyword_in_common_is_not_the_same_replacement(builder: RepoBuilder):
    """This change locks stdout before writing (sharkdp/bat #321); #40 (merged) replaced the
    same line to write to a caller's buffer (#2618). Both spell `mut`, `match` and `Write`
    around `output_type.handle()?`, and `mut` is Rust's keyword, no name either brings in:
    the lock is not there, so #40 did not do this change."""
    builder.commit("Add the controller", {"src/controller.rs": CONTROLLER})
    base = builder.head()
    buffered = CONTROLLER.replace(
        HANDLE_LINE,
        "        let mut writer = match output_buffer {\n"
        "            Some(buf) => OutputHandle::FmtWrite(buf),\n"
        "            None => OutputHandle::IoWrite(output_type.handle()?),\n"
        "        };\n",
    )
    builder.pr_branch(40, [("Write to a buffer", {"src/controller.rs": buffered})])
    builder.merge_pr(40, how="merge")
    builder.checkout("contributor", base)
    builder._author = "Grace"
    builder.commit(
        "Lock stdout before running",
        {
            "src/controller.rs": CONTROLLER.replace(
                HANDLE_LINE,
                "        let mut lock;\n"
                "        let writer: &mut Write = match output_type {\n"
                "            OutputType::Stdout(ref mut stdout) => {\n"
                "                lock = stdout.lock();\n"
                "                &mut lock\n"
                "            }\n"
                "            _ => output_type.handle()?,\n"
                "        };\n",
            )
        },
    )
    builder.checkout("main")
    index(builder)

    _, found = check_json(builder.path, "contributor")

    assert deciding(found) == []
    landed = next(f for f in found if f["pr"] == 40)
    assert any("0 of 1 hunk(s) are there" in r for r in landed["reasons"]), landed["reasons"]
