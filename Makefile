# MCP gateway with Tool-RAG. `make run` starts the local gateway; `make test`
# installs what the tests need and runs the whole suite.
SHELL := /bin/bash
GO ?= go
TOOLS := $(CURDIR)/.tools
CDK := $(TOOLS)/npm/node_modules/.bin/cdk
CDK_ENV := CDK_DISABLE_CLI_TELEMETRY=true CDK_DISABLE_VERSION_CHECK=1 JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
LAMBDAS := gateway sync health
LAMBDA_ARCH ?= arm64
FUZZTIME ?= 60s

.PHONY: first-hour run test tidy test-go test-browser test-infra synth deps build build-lambdas build-bridge deploy eval eval-dev loadtest bench-index bench-aws bench-peers model distilled fuzz bench vet config localstack-up localstack-down provision clean

## run: build, then start the gateway on 127.0.0.1:8765 with config/ (examples copied on first run)
run: config
	@GO=$(GO) bash scripts/gobuild.sh bin/toolrag ./cmd/toolrag
	@TOOLRAG_FOREGROUND=1 TOOLRAG_READY_BANNER=1 bin/toolrag serve

config:
	@test -f config/registry.yaml || cp config/registry.example.yaml config/registry.yaml
	@test -f config/keys.yaml || cp config/keys.example.yaml config/keys.yaml

## test: install test dependencies, then run every test (go mod tidy -diff, Go packages, infra, cdk synth)
test: deps vet tidy test-go test-browser test-infra synth

deps:
	@bash scripts/deps.sh

vet:
	$(GO) vet ./...

# tidy: go.mod and go.sum say exactly what the code imports (the structural
# checks, lab/ kept out of the shipped binaries and package docs, are the
# tests of internal/guard, run by test-go)
tidy:
	$(GO) mod tidy -diff
	cd internal/browsertest && $(GO) mod tidy -diff
	cd infra && $(GO) mod tidy -diff

# test-browser: the console in headless Chromium; its own module keeps
# chromedp out of the gateway's go.mod
test-browser:
	cd internal/browsertest && $(GO) vet ./... && TOOLRAG_REQUIRE_EXTERNAL=1 TOOLRAG_TOOLS_DIR=$(TOOLS) $(GO) test -count=1 -timeout 10m ./...

# The suite's per-package lines are numbered ([n/total], elapsed time).
test-go:
	@set -o pipefail; total=$$($(GO) list ./... | wc -l); echo "test-go: $$total packages"; \
	TOOLRAG_REQUIRE_EXTERNAL=1 TOOLRAG_TOOLS_DIR=$(TOOLS) $(GO) test -count=1 -timeout 25m ./... 2>&1 | bash scripts/testprogress.sh $$total

test-infra:
	@set -o pipefail; cd infra && total=$$($(GO) list ./... | wc -l) && \
	TOOLRAG_REQUIRE_EXTERNAL=1 TOOLRAG_TOOLS_DIR=$(TOOLS) PATH=$(TOOLS)/npm/node_modules/.bin:$$PATH $(CDK_ENV) $(GO) test -count=1 -timeout 15m ./... 2>&1 | bash ../scripts/testprogress.sh $$total

## synth: synthesize the CloudFormation template offline (infra/cdk.out)
synth: $(CDK)
	cd infra && $(CDK_ENV) $(CDK) synth --no-notices -q > /dev/null && echo "synth: infra/cdk.out"

# The CDK CLI (the version scripts/deps.sh installs), for synth and deploy
# on a fresh clone without the rest of the test tools.
$(CDK):
	@echo "installing the AWS CDK CLI into .tools/npm (once)"
	@mkdir -p $(TOOLS)/npm
	@test -f $(TOOLS)/npm/package.json || echo '{"name":"toolrag-test-tools","private":true}' > $(TOOLS)/npm/package.json
	cd $(TOOLS)/npm && npm install --no-audit --no-fund --loglevel=error $$(grep -o 'aws-cdk@[0-9.]*' $(CURDIR)/scripts/deps.sh)

## first-hour: replay a new user's first hour from a fresh clone of HEAD (make run, the README's tool call, the TypeScript SDK snippet, adding npm server-memory, make synth, Ctrl-C), each step checked; a few minutes with a warm Go cache (scripts/first-hour.sh)
first-hour:
	@bash scripts/first-hour.sh

## build: the toolrag CLI into bin/
build:
	$(GO) build -o bin/toolrag ./cmd/toolrag

## build-lambdas: bootstrap binaries for provided.al2023 (LAMBDA_ARCH=arm64|amd64) zipped into dist/
build-lambdas:
	@for f in $(LAMBDAS); do \
	  mkdir -p dist/$$f && \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$(LAMBDA_ARCH) $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' -o dist/$$f/bootstrap ./functions/$$f && \
	  (cd dist/$$f && rm -f ../$$f.zip && $(GO) run $(CURDIR)/scripts/zipbootstrap.go ../$$f.zip bootstrap) && \
	  echo "dist/$$f.zip" ; \
	done

## build-bridge: the toolrag binary for the Fargate images of stdio servers
build-bridge:
	mkdir -p dist/bridge && CGO_ENABLED=0 GOOS=linux GOARCH=$(LAMBDA_ARCH) $(GO) build -trimpath -ldflags='-s -w' -o dist/bridge/toolrag ./cmd/toolrag

## deploy: deploy the CDK app to the AWS account in your environment (CDK_ARGS for extra flags)
deploy: build-lambdas build-bridge $(CDK)
	cd infra && $(CDK_ENV) $(CDK) deploy --no-notices $(CDK_ARGS)

## model: retrain the builtin embedding model: ../shared/train without the real-MCP DEV datasets, plus lab/data/mcpagent
model:
	$(GO) run ./cmd/toolrag-lab train --data ../shared/train --exclude docker_mcp_registry,taubench,tooltalk --add lab/data/mcpagent --out pkg/embed/toolmodel/model

## distilled: distil the teacher sentence encoder into a static table in .tools/distill/table (an experiment, not part of the default embedder: lab/notes/retrieval-history.md "Fifth pass"); the teacher (node) takes about 20 min on one core
DISTILL_DIR ?= $(CURDIR)/.tools/distill
distilled:
	mkdir -p $(DISTILL_DIR)
	$(GO) run ./cmd/toolrag-lab distill --data ../shared/train --texts $(DISTILL_DIR)/texts.jsonl
	cd lab/teacher && npm ci --no-audit --no-fund && node embed.js $(DISTILL_DIR)/texts.jsonl $(DISTILL_DIR)/vectors.jsonl
	$(GO) run ./cmd/toolrag-lab distill --vectors $(DISTILL_DIR)/vectors.jsonl --tokenizer pkg/embed/toolmodel/model/tokenizer.json --out $(DISTILL_DIR)/table

## provision: servers/<id>/manifest.yaml -> config/registry.generated.yaml etc.
provision:
	$(GO) run ./cmd/toolrag provision

## eval: retrieval quality on ../shared/bench (default configuration, then the ablation)
eval:
	@test -d ../shared/bench || { echo "eval: needs the benchmark sets in ../shared/bench/livemcpbench and ../shared/bench/stabletoolbench (folders with tools.jsonl and queries.jsonl) next to this repository; or run: go run ./cmd/toolrag-lab eval --dataset DIR"; exit 2; }
	$(GO) run ./cmd/toolrag-lab eval --dataset ../shared/bench/livemcpbench --dataset ../shared/bench/stabletoolbench
	$(GO) run ./cmd/toolrag-lab eval --ablation --dataset ../shared/bench/livemcpbench --dataset ../shared/bench/stabletoolbench

## eval-dev: the DEV sets built from ../shared/train (where retrieval defaults are chosen)
eval-dev:
	$(GO) test ./lab/eval -run TestDevSet -v -timeout 60m -args -eval.dev

## loadtest: a local gateway under 200 concurrent MCP clients over the ../shared/bench catalog (LOADTEST_ARGS for more flags)
loadtest:
	$(GO) run ./cmd/toolrag-lab loadtest --bench ../shared/bench $(LOADTEST_ARGS)

## bench-index: Go flat index vs Debian's python3-faiss, single-query latency
bench-index:
	TOOLRAG_BENCH=1 $(GO) test ./pkg/index/vindex -run TestFaissSpeedComparison -v

## bench-aws: Lambda cold start and warm latency (gofakes3 + DynamoDB Local)
bench-aws:
	$(GO) test -run '^$$' -bench 'ColdStart|Warm' -benchtime 5x ./pkg/awsrt/

## fuzz: run every fuzz target for FUZZTIME (default 60s)
fuzz:
	@bash scripts/fuzz.sh $(FUZZTIME)

## bench: the benchmark suite recorded in docs/benchmarks.md
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/index/vindex/ ./pkg/upstream/ ./pkg/embed/ ./pkg/retrieve/ ./pkg/gateway/

## bench-peers: bridge and serve vs supergateway, mcp-proxy and server-everything's HTTP mode (installs them into .tools/peers)
bench-peers: build
	@bash scripts/peers.sh
	$(GO) run ./cmd/toolrag-lab bench-peers --toolrag bin/toolrag --tools $(TOOLS)/peers $(BENCH_PEERS_ARGS)

localstack-up:
	docker compose -f localstack/docker-compose.yml up -d --wait

localstack-down:
	docker compose -f localstack/docker-compose.yml down

clean:
	rm -rf bin dist infra/cdk.out
