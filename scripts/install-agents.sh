#!/usr/bin/env bash
# Install the coding agents redline's hook e2e tests drive, at the versions redline was tested
# with, into ${REDLINE_AGENTS_DIR:-$HOME/.cache/redline-ci/agents} (binaries end up in its
# node_modules/.bin/). Idempotent: npm skips what is already installed at these versions.
# Needs node >= 20 and npm. See docs/agents-notes.md.
set -euo pipefail

CLAUDE_CODE_VERSION="2.1.332"
CODEX_VERSION="0.171.0"
GEMINI_CLI_VERSION="0.61.0"

dir="${REDLINE_AGENTS_DIR:-$HOME/.cache/redline-ci/agents}"

if ! command -v npm >/dev/null 2>&1; then
  echo "install-agents: npm not found; install Node.js 20 or newer first" >&2
  exit 1
fi

mkdir -p "$dir"
npm install --prefix "$dir" --no-fund --no-audit --save-exact \
  "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" \
  "@openai/codex@${CODEX_VERSION}" \
  "@google/gemini-cli@${GEMINI_CLI_VERSION}"

bin="$dir/node_modules/.bin"
for agent in claude codex gemini; do
  if [ ! -x "$bin/$agent" ]; then
    echo "install-agents: $agent is missing from $bin after npm install" >&2
    exit 1
  fi
done
echo "install-agents: claude, codex and gemini are in $bin"
