#!/usr/bin/env bash
# first-hour.sh: replays a new user's first hour from a fresh clone of this
# repository's committed HEAD, and checks each step:
#
#   1. make run, until the ready banner (which must name the console URL);
#   2. the README's "Try it" tool call (curl: initialize, then tools/call);
#   3. the TypeScript SDK snippet of docs/clients.md (find_tools → run_tool);
#   4. the add-server playbook (docs/add-server.md) with the npm package
#      @modelcontextprotocol/server-memory as a stdio server: provision
#      without --allow-setup leaves it out of the registry, --allow-setup
#      installs it, the running gateway picks it up without a restart, a key
#      is granted, and find_tools → run_tool calls it;
#   5. make synth after provision (the CloudFormation synth of infra/);
#   6. Ctrl-C stops the gateway cleanly.
#
# The snippets are read from README.md and docs/clients.md, so the script
# fails when the documents stop working. Needs Go, git, curl, Node.js ≥ 20
# with npm (steps 3 to 5) and the npm registry. The clone uses this
# machine's Go build cache (a warm build: FIRST_HOUR_COLD=1 builds with an
# empty cache, to time a cold first build) and links ./.tools when it exists
# (the TypeScript SDK and the CDK CLI; without it they are installed).
#
#   make first-hour            # or: bash scripts/first-hour.sh
#   FIRST_HOUR_KEEP=1          # keep the clone and logs (printed at the end)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/first-hour.XXXXXX")
repo=$work/repo
port=${FIRST_HOUR_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo 18765)}
base=http://127.0.0.1:$port
start_all=$SECONDS
step_no=0 failed=0 pgid=
steps=6

log() { printf 'first-hour: %s\n' "$*"; }
cleanup() {
  if [ -n "$pgid" ] && kill -0 -- "-$pgid" 2>/dev/null; then kill -TERM -- "-$pgid" 2>/dev/null; sleep 1; kill -KILL -- "-$pgid" 2>/dev/null; fi
  if [ "${FIRST_HOUR_KEEP:-0}" = 1 ] || [ $failed -gt 0 ]; then log "clone and logs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
step() { step_no=$((step_no + 1)); step_start=$SECONDS; log "[$step_no/$steps] $*"; }
ok() { log "      ok ($((SECONDS - step_start)) s)${1:+: $1}"; }
fail() { failed=$((failed + 1)); log "      FAILED ($((SECONDS - step_start)) s): $*"; }
# fenced BLOCK FILE LANG MARKER: prints the first ```LANG block of FILE that contains MARKER.
fenced() {
  awk -v lang="$2" -v marker="$3" '
    $0 == "```" lang { inb = 1; buf = ""; next }
    inb && $0 == "```" { inb = 0; if (index(buf, marker)) { printf "%s", buf; exit } next }
    inb { buf = buf $0 "\n" }' "$1"
}

log "clone of $root (HEAD $(git -C "$root" rev-parse --short HEAD)) in $repo; gateway on port $port"
git clone -q "$root" "$repo" || { log "git clone failed"; exit 1; }
[ -d "$root/.tools" ] && ln -s "$root/.tools" "$repo/.tools"
cd "$repo" || exit 1
export MCP_GATEWAY_PORT=$port TOOL_RAG_HEALTHCHECK_INTERVAL=2 MCP_GATEWAY_CONFIG_POLL=1
[ "${FIRST_HOUR_COLD:-0}" = 1 ] && export GOCACHE=$work/gocache

# 1. make run until ready.
step "make run, until the gateway is ready"
setsid make run > "$work/run.log" 2>&1 < /dev/null &
pgid=$!
ready=0
for _ in $(seq 1 3600); do
  if grep -q "toolrag gateway ready" "$work/run.log" && grep -q "stop: Ctrl-C" "$work/run.log"; then ready=1; break; fi
  kill -0 "$pgid" 2>/dev/null || break
  sleep 1
done
if [ $ready = 1 ] && grep -q "console:      $base/console/" "$work/run.log"; then
  ok "$(grep -o 'built in [0-9m]*[0-9]*s' "$work/run.log" | head -1 || true); banner names $base/console/"
else
  fail "no ready banner with the console URL; the log ends with:"; tail -20 "$work/run.log"; exit 1
fi

# 2. README's Try it: one MCP tool call with curl.
step "the README's Try-it tool call"
tryit=$(fenced README.md sh '"method":"tools/call"')
if [ -z "$tryit" ]; then
  fail "README.md has no sh block with a tools/call"
else
  out=$(bash -c "${tryit//8765/$port}" 2>&1)
  note=
  if ! printf '%s' "$out" | grep -q '"text":"olleh"' && curl -s "$base/health" | grep -q '"loading"'; then
    # Right after the banner the first sync may still run (the example's
    # echo server starts with `go run`, compiling it first): a tool call
    # by name then finds no tool. Noted; the call is checked once loaded.
    note="called at once, before the first sync ended, it answered: $(printf '%s' "$out" | grep -oE '"text":"([^"\\]|\\.)*"' | head -1)"
    for _ in $(seq 1 300); do curl -s "$base/health" | grep -q '"loading"' || break; sleep 1; done
    log "      note: $note; the first sync ended $((SECONDS - step_start)) s later"
    out=$(bash -c "${tryit//8765/$port}" 2>&1)
  fi
  if printf '%s' "$out" | grep -q '"text":"olleh"'; then ok "echo__reverse answered olleh"; else fail "the answer lacks olleh: $out"; fi
fi

# 3. docs/clients.md TypeScript SDK snippet with an API key.
step "the TypeScript SDK snippet of docs/clients.md"
mkdir -p "$work/sdk"
fenced docs/clients.md js 'StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {' > "$work/sdk/sdk-api-key.mjs"
if [ ! -s "$work/sdk/sdk-api-key.mjs" ]; then
  fail "docs/clients.md has no API-key SDK snippet"
else
  if [ -d .tools/npm/node_modules/@modelcontextprotocol/sdk ]; then
    ln -s "$repo/.tools/npm/node_modules" "$work/sdk/node_modules"
  else
    (cd "$work/sdk" && npm init -y > /dev/null && npm i --no-audit --no-fund --loglevel=error @modelcontextprotocol/sdk > /dev/null)
  fi
  out=$(cd "$work/sdk" && MCP_URL=$base/mcp TOOLRAG_KEY=dev-key-full-access timeout 60 node sdk-api-key.mjs 2>&1)
  if printf '%s' "$out" | grep -q '^found: echo__reverse' && printf '%s' "$out" | grep -q '^result: olleh'; then
    ok "found echo__reverse, ran it: olleh"
  else
    fail "output: $out"
  fi
fi

# MCP tool call over curl (initialize, then tools/call), as in the README.
mcp_call() { # key, tools/call params JSON
  local sid
  sid=$(curl -s -D - -o /dev/null "$base/mcp" -H "Authorization: Bearer $1" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"first-hour","version":"1"}}}' |
    tr -d '\r' | awk 'tolower($1)=="mcp-session-id:" {print $2}')
  curl -s "$base/mcp" -H "Authorization: Bearer $1" -H "Mcp-Session-Id: $sid" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":$2}"
}

# 4. The add-server playbook with npm server-memory (stdio).
step "docs/add-server.md with @modelcontextprotocol/server-memory"
mem_version=$(grep -o '@modelcontextprotocol/server-memory@[0-9.]*' scripts/deps.sh | head -1)
mkdir -p servers/memory
cat > servers/memory/package.json <<JSON
{"name": "memory-server", "private": true, "dependencies": {"@modelcontextprotocol/server-memory": "${mem_version##*@}"}}
JSON
cat > servers/memory/manifest.yaml <<'YAML'
id: memory
kind: stdio
setup:
  - "npm install --no-audit --no-fund --loglevel=error"
command: ["node", "node_modules/@modelcontextprotocol/server-memory/dist/index.js"]
env:
  MEMORY_FILE_PATH: "memory.jsonl"
YAML
s4=1
out=$(bin/toolrag provision --host 2>&1)
if ! printf '%s' "$out" | grep -q 'memory: left out of config/registry.generated.yaml' || grep -q '^  memory:' config/registry.generated.yaml; then
  fail "provision without --allow-setup wrote memory to the registry: $out"; s4=0
fi
if ! out=$(bin/toolrag provision --allow-setup --host 2>&1) || ! grep -q '^  memory:' config/registry.generated.yaml; then
  fail "provision --allow-setup: $out"; s4=0
fi
# Grant it to the agent key (the playbook's step 6); the gateway reloads
# keys.yaml and the registry without a restart.
awk '{ print } /^  - id: dev-full$/ { f = 1 } f && /^    servers:$/ { print "      memory: {}"; f = 0 }' config/keys.yaml > config/keys.yaml.new && mv config/keys.yaml.new config/keys.yaml
found=
for _ in $(seq 1 90); do
  found=$(curl -s -X POST "$base/tool-rag/retrieve" -H 'Authorization: Bearer dev-key-full-access' -H 'Content-Type: application/json' \
    -d '{"query": "create entities in the knowledge graph", "top_k": 5}' | grep -o '"tool_id":"memory__create_entities"' || true)
  [ -n "$found" ] && break
  sleep 2
done
if [ -z "$found" ]; then
  fail "memory__create_entities never appeared in /tool-rag/retrieve (the gateway log ends with:)"; tail -15 "$work/run.log"; s4=0
else
  out=$(mcp_call dev-key-full-access '{"name":"run_tool","arguments":{"call_name":"memory__create_entities","arguments":{"entities":[{"name":"first-hour","entityType":"test","observations":["replayed"]}]}}}')
  if printf '%s' "$out" | grep -q 'first-hour' && ! printf '%s' "$out" | grep -q '"isError":true'; then
    [ $s4 = 1 ] && ok "left out before setup, picked up after it without a restart, called through run_tool"
  else
    fail "run_tool memory__create_entities: $out"
  fi
fi

# 5. make synth after provision.
step "make synth after provision"
if out=$(make synth 2>&1); then
  ok "$(printf '%s' "$out" | tail -1)"
else
  fail "make synth: $(printf '%s' "$out" | grep -i -m5 -E 'error|needs' )"
  log "      (known until the AWS issue's fix lands: a stdio server in infra/servers.generated.json needs the arm64 bridge binary, make build-bridge)"
fi

# 6. Ctrl-C.
step "Ctrl-C stops the gateway"
kill -INT -- "-$pgid" 2>/dev/null
for _ in $(seq 1 20); do kill -0 "$pgid" 2>/dev/null || break; sleep 0.5; done
if ! kill -0 "$pgid" 2>/dev/null && grep -q "gateway stopped cleanly" "$work/run.log"; then ok; pgid=; else fail "still running or no clean stop"; fi

log "done in $((SECONDS - start_all)) s: $((steps - failed)) of $steps steps passed"
[ $failed = 0 ]
