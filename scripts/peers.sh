#!/usr/bin/env bash
# Installs what `make bench-peers` compares the gateway with into
# .tools/peers (gitignored; not part of `make test`): supergateway, mcp-proxy
# and the server-everything they all front. Idempotent: checks its stamp.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=".tools/peers"
pkgs=(supergateway@4.0.0 mcp-proxy@6.7.19 @modelcontextprotocol/server-everything@2026.8.31)
stamp="$dir/.stamp-$(printf '%s\n' "${pkgs[@]}" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  mkdir -p "$dir"
  echo "peers: npm install ${pkgs[*]} into $dir"
  (cd "$dir" && { [ -f package.json ] || echo '{"private":true}' > package.json; } && npm install --no-audit --no-fund --loglevel=error "${pkgs[@]}" >/dev/null)
  rm -f "$dir"/.stamp-*
  touch "$stamp"
fi
