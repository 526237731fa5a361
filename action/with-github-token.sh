#!/usr/bin/env bash
# Run a command with $GITHUB_TOKEN as the Authorization header git sends to $GITHUB_SERVER_URL,
# through the command's environment only (GIT_CONFIG_COUNT, git 2.31 or newer): nothing goes
# into .git/config or onto a command line, so the token ends with the command, and neither a
# later step nor an upload of the workspace can read it (the checkout keeps no credentials).
#
# The empty value first empties the header list, which drops a header that a checkout with
# `persist-credentials: true` left in .git/config: git would send both, and GitHub answers a
# request with two Authorization headers with 400.
set -euo pipefail
if [ -n "${GITHUB_TOKEN:-}" ]; then
  key="http.${GITHUB_SERVER_URL:-https://github.com}/.extraheader"
  basic="$(printf 'x-access-token:%s' "$GITHUB_TOKEN" | base64 | tr -d '\n')"
  if [ "${GITHUB_ACTIONS:-}" = "true" ]; then
    echo "::add-mask::$basic"  # the runner masks the token, not this encoding of it
  fi
  n="${GIT_CONFIG_COUNT:-0}"
  export "GIT_CONFIG_KEY_$n=$key" "GIT_CONFIG_VALUE_$n="
  export "GIT_CONFIG_KEY_$((n + 1))=$key" "GIT_CONFIG_VALUE_$((n + 1))=AUTHORIZATION: basic $basic"
  export GIT_CONFIG_COUNT=$((n + 2))
fi
exec "$@"
