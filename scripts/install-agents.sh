#!/bin/sh
# Install the agents' CLIs the hook gateway is tested with (docs/agents.md) into
# $REDLINE_AGENTS_DIR (default ~/.cache/redline-ci/agents); the e2e tests run them from
# node_modules/.bin there. Pinned versions: change them together with docs/agents.md.
set -eu
dir="${REDLINE_AGENTS_DIR:-$HOME/.cache/redline-ci/agents}"
mkdir -p "$dir"
npm install --no-audit --no-fund --prefix "$dir" \
    @anthropic-ai/claude-code@2.1.332 \
    @openai/codex@0.171.0 \
    @google/gemini-cli@0.61.0
for agent in claude codex gemini; do
    "$dir/node_modules/.bin/$agent" --version
done
