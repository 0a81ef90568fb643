package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// Every test that builds a stack shares one jsii runtime (one node
// process), started on first use and closed here.
func TestMain(m *testing.M) {
	if os.Getenv("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION") == "" {
		os.Setenv("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
	}
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

// fixtureRoot is the provisioner's golden test input: its servers/ folders
// are the build contexts, and its golden servers.generated.json is the
// list the CDK app reads, so the two stay in step.
const (
	fixtureRoot    = "../pkg/provision/testdata/golden/mixed/in"
	fixtureServers = "../pkg/provision/testdata/golden/mixed/want/servers.generated.json"
)

type synthResult struct {
	g        *Deployment
	tmpl     assertions.Template
	doc      map[string]any // the template as JSON
	buildDir string
}

func synth(t *testing.T, cfg Config, servers []Server) synthResult {
	t.Helper()
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.BuildDir == "" {
		cfg.BuildDir = t.TempDir()
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	g, err := NewGatewayStack(app, "ToolRag-"+cfg.Stage, &StackProps{
		StackProps: awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String("123456789012"), Region: jsii.String("us-east-1")}},
		Config:     cfg,
		Servers:    servers,
	})
	if err != nil {
		t.Fatal(err)
	}
	tmpl := assertions.Template_FromStack(g.Stack, nil)
	b, err := json.Marshal(tmpl.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return synthResult{g: g, tmpl: tmpl, doc: doc, buildDir: cfg.BuildDir}
}

// resources returns the template's resources of one type by logical id.
func (r synthResult) resources(typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, v := range r.doc["Resources"].(map[string]any) {
		res := v.(map[string]any)
		if res["Type"] == typ {
			props, _ := res["Properties"].(map[string]any)
			out[id] = props
		}
	}
	return out
}

// function returns the properties of the Lambda function whose logical id
// starts with prefix (GatewayFunction, SyncFunction, HealthFunction).
func (r synthResult) function(t *testing.T, prefix string) map[string]any {
	t.Helper()
	for id, p := range r.resources("AWS::Lambda::Function") {
		if strings.HasPrefix(id, prefix) {
			return p
		}
	}
	t.Fatalf("no function %s*", prefix)
	return nil
}

func envOf(fn map[string]any) map[string]any {
	e, _ := fn["Environment"].(map[string]any)
	v, _ := e["Variables"].(map[string]any)
	return v
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

type awsSdkCall struct {
	Action     string          `json:"action"`
	Service    string          `json:"service"`
	Parameters json.RawMessage `json:"parameters"`
}

// sdkCall decodes an AwsCustomResource Create/Update/Delete property, a
// JSON string built with Fn::Join around tokens (which become "<token>").
func sdkCall(t *testing.T, v any) awsSdkCall {
	t.Helper()
	var b strings.Builder
	var flat func(v any)
	flat = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
		case map[string]any:
			if j, ok := x["Fn::Join"].([]any); ok {
				for _, part := range j[1].([]any) {
					flat(part)
				}
				return
			}
			b.WriteString("<token>")
		}
	}
	flat(v)
	var c awsSdkCall
	if err := json.Unmarshal([]byte(b.String()), &c); err != nil {
		t.Fatalf("custom resource call %q: %v", b.String(), err)
	}
	return c
}

func loadFixtureServers(t *testing.T) []Server {
	t.Helper()
	s, err := LoadServers(fixtureServers)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 4 {
		t.Fatalf("fixture has %d servers, want 4", len(s))
	}
	return s
}

// contract env vars every function gets.
var commonEnv = []string{
	"TOOL_RAG_TOOLS_TABLE", "TOOL_RAG_KEYS_TABLE", "TOOL_RAG_REGISTRY_TABLE", "TOOL_RAG_SESSIONS_TABLE",
	"TOOL_RAG_CALLSEQ_TABLE", "TOOL_RAG_VAULT_TABLE", "TOOL_RAG_CALL_SEQUENCES", "TOOL_RAG_INDEX_BUCKET", "TOOL_RAG_INDEX_PREFIX", "TOOL_RAG_INDEX_REFRESH", "TOOL_RAG_EMBEDDER",
	"TOOL_RAG_RERANKER", "MCP_GATEWAY_MCP_PATH", "TOOL_RAG_SECRETS_PREFIX", "TOOL_RAG_SECRETS_STORE",
}

// contractEnv is every env var the functions may receive (the contract in
// docs/deploy.md).
var contractEnv = map[string]bool{
	"TOOL_RAG_TOOLS_TABLE": true, "TOOL_RAG_KEYS_TABLE": true, "TOOL_RAG_REGISTRY_TABLE": true,
	"TOOL_RAG_SESSIONS_TABLE": true, "TOOL_RAG_INDEX_BUCKET": true, "TOOL_RAG_INDEX_PREFIX": true,
	"TOOL_RAG_SYNC_FUNCTION": true, "TOOL_RAG_INDEX_REFRESH": true, "TOOL_RAG_EMBEDDER": true,
	"TOOL_RAG_BEDROCK_MODEL_ID": true, "TOOL_RAG_BEDROCK_DIM": true, "TOOL_RAG_EMBED_URL": true,
	"TOOL_RAG_RERANKER": true, "TOOL_RAG_RERANKER_BEDROCK_MODEL": true, "TOOL_RAG_RERANKER_URL": true,
	"MCP_GATEWAY_MCP_PATH": true, "TOOL_RAG_SECRETS_PREFIX": true, "TOOL_RAG_SECRETS_STORE": true,
	"MCP_GATEWAY_UPSTREAM_TIMEOUT": true, "MCP_GATEWAY_MAX_RESULT_BYTES": true,
	"TOOL_RAG_CALLSEQ_TABLE": true, "TOOL_RAG_CALL_SEQUENCES": true,
	"TOOL_RAG_VAULT_TABLE": true, "TOOL_RAG_VAULT_KMS_KEY": true,
}

// TestDefaultStack synthesizes config.example.json with no servers.
func TestDefaultStack(t *testing.T) {
	cfg, err := LoadConfig("config.example.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServersFile = "" // the example names servers.generated.json, which a developer may have
	r := synth(t, cfg, nil)

	for typ, n := range map[string]int{
		"AWS::Lambda::Function":          3,
		"AWS::DynamoDB::Table":           6, // tools, keys, registry, sessions, callseq, vault
		"AWS::KMS::Key":                  1, // the vault's
		"AWS::S3::Bucket":                1,
		"AWS::S3::BucketPolicy":          1,
		"AWS::Events::Rule":              2,
		"AWS::ApiGatewayV2::Api":         1,
		"AWS::ApiGatewayV2::Route":       14,
		"AWS::ApiGatewayV2::Stage":       1,
		"AWS::Logs::LogGroup":            4, // three functions, the API's access log
		"AWS::ECS::Service":              0,
		"AWS::EC2::VPC":                  0,
		"Custom::AWS":                    0,
		"AWS::ServiceDiscovery::Service": 0,
	} {
		r.tmpl.ResourceCountIs(jsii.String(typ), jsii.Number(float64(n)))
	}

	// Functions: runtime, architecture, handler, env, log retention.
	for _, name := range []string{"Gateway", "Sync", "Health"} {
		fn := r.function(t, name+"Function")
		if fn["Runtime"] != "provided.al2023" || js(fn["Architectures"]) != `["arm64"]` || fn["Handler"] != "bootstrap" {
			t.Errorf("%s: runtime %v arch %v handler %v", name, fn["Runtime"], fn["Architectures"], fn["Handler"])
		}
		env := envOf(fn)
		for _, k := range commonEnv {
			if _, ok := env[k]; !ok {
				t.Errorf("%s: env %s missing", name, k)
			}
		}
		for k := range env {
			if !contractEnv[k] {
				t.Errorf("%s: env %s is not in the contract", name, k)
			}
		}
		_, hasSync := env["TOOL_RAG_SYNC_FUNCTION"]
		if hasSync != (name == "Gateway") {
			t.Errorf("%s: TOOL_RAG_SYNC_FUNCTION present=%v", name, hasSync)
		}
		if env["TOOL_RAG_EMBEDDER"] != "builtin" || env["TOOL_RAG_RERANKER"] != "off" || env["TOOL_RAG_INDEX_PREFIX"] != "index/" || env["MCP_GATEWAY_MCP_PATH"] != "/mcp" {
			t.Errorf("%s: env %v", name, env)
		}
		if _, ok := fn["VpcConfig"]; ok {
			t.Errorf("%s is in a VPC although no server runs on Fargate", name)
		}
		if lc, _ := fn["LoggingConfig"].(map[string]any); lc == nil || lc["LogGroup"] == nil || lc["LogFormat"] != "JSON" {
			t.Errorf("%s: LoggingConfig %v, want its log group and the JSON format", name, fn["LoggingConfig"])
		}
	}
	checkFunctionSizes(t, r, map[string][2]int{"Gateway": {1769, 29}, "Sync": {2240, 900}, "Health": {256, 60}})
	r.tmpl.AllResourcesProperties(jsii.String("AWS::Logs::LogGroup"), &map[string]any{"RetentionInDays": 30})
	if js(envOf(r.function(t, "GatewayFunction"))["TOOL_RAG_SYNC_FUNCTION"]) != js(map[string]any{"Ref": firstID(r, "AWS::Lambda::Function", "SyncFunction")}) {
		t.Errorf("gateway TOOL_RAG_SYNC_FUNCTION does not name the sync function: %v", envOf(r.function(t, "GatewayFunction"))["TOOL_RAG_SYNC_FUNCTION"])
	}

	// HTTP API routes.
	var routes []string
	for _, p := range r.resources("AWS::ApiGatewayV2::Route") {
		routes = append(routes, p["RouteKey"].(string))
	}
	sort.Strings(routes)
	if got, want := strings.Join(routes, ","), "ANY /tool-rag/{proxy+},DELETE /mcp,GET /.well-known/oauth-protected-resource,GET /.well-known/oauth-protected-resource/mcp,GET /connect-callback,GET /connect-client.json,GET /connect/{token},GET /console,GET /console/{proxy+},GET /health,GET /mcp,POST /connect/{token},POST /mcp,POST /register"; got != want {
		t.Errorf("routes = %s, want %s", got, want)
	}
	r.tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Integration"), &map[string]any{
		"IntegrationType": "AWS_PROXY", "PayloadFormatVersion": "2.0",
	})
	r.tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), &map[string]any{
		"StageName": "$default", "AutoDeploy": true,
		"DefaultRouteSettings": map[string]any{"ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100},
	})

	checkTables(t, r, false)
	checkBucket(t, r)

	// Schedules target the right functions.
	rules := map[string]string{}
	for _, p := range r.resources("AWS::Events::Rule") {
		targets := p["Targets"].([]any)
		arn := js(targets[0].(map[string]any)["Arn"])
		rules[p["ScheduleExpression"].(string)] = arn
	}
	if !strings.Contains(rules["rate(15 minutes)"], "SyncFunction") || !strings.Contains(rules["rate(1 minute)"], "HealthFunction") {
		t.Errorf("schedules = %v", rules)
	}

	for _, o := range []string{"McpUrl", "ApiUrl", "ToolsTableName", "KeysTableName", "RegistryTableName", "SessionsTableName", "CallSeqTableName", "IndexBucketName"} {
		r.tmpl.HasOutput(jsii.String(o), &map[string]any{})
	}
	if !strings.Contains(js(r.doc["Outputs"].(map[string]any)["McpUrl"]), `"/mcp"]`) {
		t.Errorf("McpUrl does not end in /mcp: %s", js(r.doc["Outputs"].(map[string]any)["McpUrl"]))
	}

	checkIAM(t, r, false)
	checkGatewayInvokesOnlySync(t, r)
}

// checkFunctionSizes compares each function's MemorySize and Timeout with
// want (logical id prefix → {MiB, seconds}).
func checkFunctionSizes(t *testing.T, r synthResult, want map[string][2]int) {
	t.Helper()
	for name, w := range want {
		fn := r.function(t, name+"Function")
		if js(fn["MemorySize"]) != fmt.Sprint(w[0]) || js(fn["Timeout"]) != fmt.Sprint(w[1]) {
			t.Errorf("%s: MemorySize %v Timeout %v, want %d MiB %d s", name, fn["MemorySize"], fn["Timeout"], w[0], w[1])
		}
	}
}

// TestFunctionSizes synthesizes a config that sizes two functions: each
// value reaches its own function and no other (health stays at its
// defaults, sync keeps its memory, the gateway its timeout).
func TestFunctionSizes(t *testing.T) {
	cfg := Config{Functions: FunctionsConfig{
		Gateway: FunctionSize{MemoryMiB: 2048},
		Sync:    FunctionSize{TimeoutSeconds: 600},
	}}
	r := synth(t, cfg, nil)
	checkFunctionSizes(t, r, map[string][2]int{"Gateway": {2048, 29}, "Sync": {2240, 600}, "Health": {256, 60}})
}

func firstID(r synthResult, typ, prefix string) string {
	for id := range r.resources(typ) {
		if strings.HasPrefix(id, prefix) {
			return id
		}
	}
	return ""
}

func checkTables(t *testing.T, r synthResult, prod bool) {
	t.Helper()
	want := map[string]string{ // logical id prefix -> key schema
		"ToolsTable":    `[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]`,
		"KeysTable":     `[{"AttributeName":"secret_hash","KeyType":"HASH"}]`,
		"RegistryTable": `[{"AttributeName":"server_id","KeyType":"HASH"}]`,
		"SessionsTable": `[{"AttributeName":"session_id","KeyType":"HASH"}]`,
		"CallseqTable":  `[{"AttributeName":"from_tool","KeyType":"HASH"},{"AttributeName":"to_tool","KeyType":"RANGE"}]`,
		"VaultTable":    `[{"AttributeName":"principal","KeyType":"HASH"},{"AttributeName":"server","KeyType":"RANGE"}]`,
	}
	tables := r.resources("AWS::DynamoDB::Table")
	for prefix, ks := range want {
		p := tables[firstID(r, "AWS::DynamoDB::Table", prefix)]
		if p == nil {
			t.Errorf("table %s missing", prefix)
			continue
		}
		if js(p["KeySchema"]) != ks {
			t.Errorf("%s key schema %s, want %s", prefix, js(p["KeySchema"]), ks)
		}
		if p["BillingMode"] != "PAY_PER_REQUEST" {
			t.Errorf("%s billing %v", prefix, p["BillingMode"])
		}
		if js(p["PointInTimeRecoverySpecification"]) != `{"PointInTimeRecoveryEnabled":true}` {
			t.Errorf("%s PITR %v", prefix, p["PointInTimeRecoverySpecification"])
		}
		if dp, _ := p["DeletionProtectionEnabled"].(bool); dp != prod {
			t.Errorf("%s deletion protection = %v, want %v", prefix, dp, prod)
		}
		ttl := js(p["TimeToLiveSpecification"])
		if (prefix == "SessionsTable" || prefix == "VaultTable") != (ttl == `{"AttributeName":"expires_at","Enabled":true}`) {
			t.Errorf("%s TTL = %s", prefix, ttl)
		}
	}
	keys := tables[firstID(r, "AWS::DynamoDB::Table", "KeysTable")]
	if js(keys["GlobalSecondaryIndexes"]) != `[{"IndexName":"byId","KeySchema":[{"AttributeName":"key_id","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]` {
		t.Errorf("keys GSI = %s", js(keys["GlobalSecondaryIndexes"]))
	}
}

func checkBucket(t *testing.T, r synthResult) {
	t.Helper()
	r.tmpl.HasResourceProperties(jsii.String("AWS::S3::Bucket"), &map[string]any{
		"VersioningConfiguration": map[string]any{"Status": "Enabled"},
		"BucketEncryption": map[string]any{"ServerSideEncryptionConfiguration": []any{
			map[string]any{"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"}},
		}},
		"PublicAccessBlockConfiguration": map[string]any{
			"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true,
		},
	})
	var policy map[string]any
	for _, p := range r.resources("AWS::S3::BucketPolicy") {
		policy = p
	}
	pd := js(policy["PolicyDocument"])
	if !strings.Contains(pd, `"Effect":"Deny"`) || !strings.Contains(pd, `{"Bool":{"aws:SecureTransport":"false"}}`) {
		t.Errorf("bucket policy does not deny plain HTTP: %s", pd)
	}
	var bucket map[string]any
	for _, p := range r.resources("AWS::S3::Bucket") {
		bucket = p
	}
	rules := js(bucket["LifecycleConfiguration"])
	for _, w := range []string{
		`"NoncurrentVersionExpiration":{"NoncurrentDays":30}`,
		`"Prefix":"index/indexes/"`,
		`"TagFilters":[{"Key":"superseded","Value":"true"}]`,
		`"ExpirationInDays":30`,
	} {
		if !strings.Contains(rules, w) {
			t.Errorf("lifecycle %s lacks %s", rules, w)
		}
	}
}

// statements returns every IAM statement in the template (policies and
// inline role policies), with the resource that holds it.
func statements(r synthResult) []map[string]any {
	var out []map[string]any
	add := func(owner string, doc any) {
		d, _ := doc.(map[string]any)
		sts, _ := d["Statement"].([]any)
		for _, s := range sts {
			st := s.(map[string]any)
			st["_owner"] = owner
			out = append(out, st)
		}
	}
	for id, p := range r.resources("AWS::IAM::Policy") {
		add(id, p["PolicyDocument"])
	}
	for id, p := range r.resources("AWS::IAM::Role") {
		pols, _ := p["Policies"].([]any)
		for _, pol := range pols {
			add(id, pol.(map[string]any)["PolicyDocument"])
		}
	}
	for id, p := range r.resources("AWS::IAM::ManagedPolicy") {
		add(id, p["PolicyDocument"])
	}
	return out
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

// resourceStarOK lists actions that have no resource type, so IAM accepts
// them only on "*".
var resourceStarOK = map[string]bool{
	"ecr:GetAuthorizationToken": true,
	"bedrock:Rerank":            true,
	"xray:PutTraceSegments":     true, // active tracing
	"xray:PutTelemetryRecords":  true,
}

// iamProblems returns every least-privilege violation in the statements:
// a wildcard in an action, "*" as the resource of an action that has a
// resource type, and any Bedrock action when Bedrock is off.
func iamProblems(sts []map[string]any, bedrock bool) []string {
	var probs []string
	for _, st := range sts {
		if st["Effect"] != "Allow" {
			continue
		}
		acts := asList(st["Action"])
		res := asList(st["Resource"])
		starRes := false
		for _, r := range res {
			if r == "*" {
				starRes = true
			}
		}
		for _, a := range acts {
			as, _ := a.(string)
			if strings.Contains(as, "*") {
				probs = append(probs, fmt.Sprintf("%v: wildcard action %q", st["_owner"], as))
			}
			if starRes && !resourceStarOK[as] {
				probs = append(probs, fmt.Sprintf("%v: action %q on resource *", st["_owner"], as))
			}
			if !bedrock && strings.HasPrefix(as, "bedrock:") {
				probs = append(probs, fmt.Sprintf("%v: %s granted while Bedrock is off", st["_owner"], as))
			}
		}
		if st["NotAction"] != nil || st["NotResource"] != nil {
			probs = append(probs, fmt.Sprintf("%v: NotAction/NotResource", st["_owner"]))
		}
	}
	return probs
}

func checkIAM(t *testing.T, r synthResult, bedrock bool) {
	t.Helper()
	sts := statements(r)
	if len(sts) < 5 {
		t.Fatalf("found only %d IAM statements; the walker is not seeing the policies", len(sts))
	}
	for _, p := range iamProblems(sts, bedrock) {
		t.Error(p)
	}
}

func TestIAMWalkerCatchesViolations(t *testing.T) {
	cases := []struct {
		name    string
		st      map[string]any
		bedrock bool
		want    string
	}{
		{"star action", map[string]any{"Effect": "Allow", "Action": "*", "Resource": "arn:x"}, false, `wildcard action "*"`},
		{"service star", map[string]any{"Effect": "Allow", "Action": []any{"s3:GetObject", "dynamodb:*"}, "Resource": "arn:x"}, false, `wildcard action "dynamodb:*"`},
		{"star resource", map[string]any{"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*"}, false, `"dynamodb:GetItem" on resource *`},
		{"bedrock off", map[string]any{"Effect": "Allow", "Action": "bedrock:InvokeModel", "Resource": "arn:aws:bedrock:x"}, false, "granted while Bedrock is off"},
		{"bedrock on", map[string]any{"Effect": "Allow", "Action": "bedrock:InvokeModel", "Resource": "arn:aws:bedrock:x"}, true, ""},
		{"rerank on star", map[string]any{"Effect": "Allow", "Action": "bedrock:Rerank", "Resource": "*"}, true, ""},
		{"deny star", map[string]any{"Effect": "Deny", "Action": "*", "Resource": "*"}, false, ""},
	}
	for _, c := range cases {
		c.st["_owner"] = "P"
		got := strings.Join(iamProblems([]map[string]any{c.st}, c.bedrock), "; ")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: problems %q, want %q", c.name, got, c.want)
		}
	}
}

func checkGatewayInvokesOnlySync(t *testing.T, r synthResult) {
	t.Helper()
	syncID := firstID(r, "AWS::Lambda::Function", "SyncFunction")
	found := false
	for _, st := range statements(r) {
		for _, a := range asList(st["Action"]) {
			if a != "lambda:InvokeFunction" {
				continue
			}
			owner := st["_owner"].(string)
			if strings.HasPrefix(owner, "GatewaySelfInvoke") {
				// The gateway's own MCP tasks (TestTasks): itself only.
				gw := firstID(r, "AWS::Lambda::Function", "GatewayFunction")
				if res := js(st["Resource"]); !strings.Contains(res, gw) || strings.Contains(res, syncID) {
					t.Errorf("the gateway's self-invoke grant is on %s", res)
				}
				continue
			}
			// The gateway (reindex) and a stdio server's bridge (its list
			// changes) invoke the sync function; nothing else invokes.
			bridge := strings.HasPrefix(owner, "Server") && strings.Contains(owner, "TaskRole")
			if !strings.HasPrefix(owner, "GatewayFunction") && !bridge {
				t.Errorf("%s may invoke functions", owner)
			}
			for _, res := range asList(st["Resource"]) {
				if !strings.Contains(js(res), syncID) {
					t.Errorf("gateway may invoke %s, not only the sync function", js(res))
				}
			}
			found = true
		}
	}
	if !found {
		t.Error("gateway has no lambda:InvokeFunction on the sync function")
	}
}

func TestServersBedrockProd(t *testing.T) {
	bridge := filepath.Join(t.TempDir(), "toolrag")
	if err := os.WriteFile(bridge, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Stage:    "prod",
		RepoRoot: fixtureRoot,
		Embedder: EmbedderConfig{Kind: "bedrock", ModelID: "amazon.titan-embed-text-v2:0", Dims: 1024},
		Reranker: RerankerConfig{Kind: "bedrock"},
		Fargate:  FargateConfig{BridgeBinary: bridge},
	}
	r := synth(t, cfg, loadFixtureServers(t))

	// One Fargate service per docker/stdio server, each with its Cloud Map name.
	r.tmpl.ResourceCountIs(jsii.String("AWS::ECS::Service"), jsii.Number(3))
	r.tmpl.ResourceCountIs(jsii.String("AWS::ECS::TaskDefinition"), jsii.Number(3))
	r.tmpl.ResourceCountIs(jsii.String("AWS::ServiceDiscovery::PrivateDnsNamespace"), jsii.Number(1))
	r.tmpl.HasResourceProperties(jsii.String("AWS::ServiceDiscovery::PrivateDnsNamespace"), &map[string]any{"Name": "toolrag-prod.internal"})
	var names []string
	for _, p := range r.resources("AWS::ServiceDiscovery::Service") {
		names = append(names, p["Name"].(string))
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "images-svc,local-echo,weather" {
		t.Errorf("Cloud Map names = %v", names)
	}
	for _, p := range r.resources("AWS::ECS::Service") {
		if p["LaunchType"] != "FARGATE" || !strings.Contains(js(p["NetworkConfiguration"]), `"AssignPublicIp":"DISABLED"`) {
			t.Errorf("service %v", js(p))
		}
	}
	for _, p := range r.resources("AWS::ECS::TaskDefinition") {
		if js(p["RuntimePlatform"]) != `{"CpuArchitecture":"ARM64","OperatingSystemFamily":"LINUX"}` {
			t.Errorf("task platform %s", js(p["RuntimePlatform"]))
		}
	}
	// URLs registered for each server.
	want := map[string]string{
		"weather":    "http://weather.toolrag-prod.internal:9000/mcp",
		"images_svc": "http://images-svc.toolrag-prod.internal:8081/sse",
		"local-echo": "http://local-echo.toolrag-prod.internal:8080/mcp",
		"hosted":     "https://mcp.example.com/sse",
	}
	for id, u := range want {
		if r.g.ServerURLs[id] != u {
			t.Errorf("URL of %s = %q, want %q", id, r.g.ServerURLs[id], u)
		}
	}
	crs := r.resources("Custom::AWS")
	if len(crs) != 4 {
		t.Fatalf("registry custom resources = %d, want 4", len(crs))
	}
	items := map[string]upstream.ServerConfig{}
	for id, p := range crs {
		create := sdkCall(t, p["Create"])
		update := sdkCall(t, p["Update"])
		del := sdkCall(t, p["Delete"])
		if create.Action != "UpdateItem" || update.Action != "UpdateItem" || del.Action != "DeleteItem" {
			t.Errorf("%s: actions %s/%s/%s", id, create.Action, update.Action, del.Action)
		}
		var params struct {
			Key    map[string]map[string]string
			Values map[string]map[string]string `json:"ExpressionAttributeValues"`
		}
		if err := json.Unmarshal(create.Parameters, &params); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		var rc upstream.ServerConfig
		if err := json.Unmarshal([]byte(params.Values[":c"]["S"]), &rc); err != nil {
			t.Fatalf("%s: config attribute: %v", id, err)
		}
		items[params.Key["server_id"]["S"]] = rc
	}
	for id, u := range want {
		if items[id].URL != u {
			t.Errorf("registry item %s = %+v, want url %s", id, items[id], u)
		}
	}
	if items["local-echo"].Transport != "streamable_http" || items["images_svc"].Transport != "sse" {
		t.Errorf("registry transports: %+v", items)
	}
	if items["hosted"].Headers["Authorization"] != "Bearer ${HOSTED_TOKEN}" {
		t.Errorf("remote headers (with their ${VAR} reference) not in the registry item: %+v", items["hosted"])
	}

	// Functions in the VPC; gateway endpoints for S3 and DynamoDB; one NAT.
	for _, name := range []string{"Gateway", "Sync", "Health"} {
		if r.function(t, name+"Function")["VpcConfig"] == nil {
			t.Errorf("%s not in the VPC", name)
		}
	}
	r.tmpl.ResourceCountIs(jsii.String("AWS::EC2::VPCEndpoint"), jsii.Number(2))
	r.tmpl.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(1))

	// Secrets from SSM by name; literal env in the task definition.
	tds := js(r.resources("AWS::ECS::TaskDefinition"))
	for _, w := range []string{`"Name":"API_KEY"`, `parameter/toolrag/prod/WEATHER_KEY`, `"Name":"UNITS","Value":"metric"`, `"Name":"TOKEN"`, `parameter/toolrag/prod/ECHO_TOKEN`} {
		if !strings.Contains(tds, w) {
			t.Errorf("task definitions lack %s", w)
		}
	}
	if n := strings.Count(tds, `"--probe","--addr","127.0.0.1:8080"`); n != 1 {
		t.Errorf("%d bridge health checks, want 1 (the stdio server)", n)
	}
	if strings.Contains(tds, "${WEATHER_KEY}") {
		t.Error("a ${VAR} reference ended up as a literal env value")
	}
	// The stdio bridge triggers the sync function for its server on a
	// list change: its name and server id in the env, invoke granted.
	if n := strings.Count(tds, `"Name":"TOOL_RAG_SYNC_FUNCTION"`); n != 1 || !strings.Contains(tds, `"Name":"TOOL_RAG_SYNC_SERVER","Value":"local-echo"`) {
		t.Errorf("%d task definitions name the sync function (want 1, the stdio server's, with TOOL_RAG_SYNC_SERVER=local-echo)", n)
	}
	invokes := 0
	for _, p := range r.resources("AWS::IAM::Policy") {
		if b := js(p); strings.Contains(b, "lambda:InvokeFunction") && strings.Contains(b, "TaskRole") {
			invokes++
		}
	}
	if invokes != 1 {
		t.Errorf("%d task role policies grant lambda:InvokeFunction, want 1 (the stdio bridge's, on the sync function)", invokes)
	}

	// Bedrock env and grants for the configured models only.
	genv := envOf(r.function(t, "GatewayFunction"))
	if genv["TOOL_RAG_BEDROCK_MODEL_ID"] != "amazon.titan-embed-text-v2:0" || genv["TOOL_RAG_BEDROCK_DIM"] != "1024" || genv["TOOL_RAG_RERANKER_BEDROCK_MODEL"] != "amazon.rerank-v1:0" {
		t.Errorf("gateway bedrock env %v", genv)
	}
	var bedrockRes []string
	for _, st := range statements(r) {
		for _, a := range asList(st["Action"]) {
			if a == "bedrock:InvokeModel" {
				bedrockRes = append(bedrockRes, st["_owner"].(string)+" "+js(st["Resource"]))
			}
		}
	}
	joined := strings.Join(bedrockRes, "\n")
	if !strings.Contains(joined, "foundation-model/amazon.titan-embed-text-v2:0") || !strings.Contains(joined, "foundation-model/amazon.rerank-v1:0") {
		t.Errorf("bedrock grants:\n%s", joined)
	}
	if strings.Contains(joined, "HealthFunction") {
		t.Errorf("health function may call Bedrock:\n%s", joined)
	}

	// Health may update registry items but not create or delete them.
	for _, st := range statements(r) {
		if !strings.HasPrefix(st["_owner"].(string), "HealthFunction") {
			continue
		}
		for _, a := range asList(st["Action"]) {
			switch a {
			case "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "s3:PutObject", "lambda:InvokeFunction":
				t.Errorf("health function may %s", a)
			}
		}
	}

	checkTables(t, r, true)
	checkIAM(t, r, true)
	checkGatewayInvokesOnlySync(t, r)

	// The stdio image: server files, setup steps in exec form, bridge entrypoint.
	df, err := os.ReadFile(filepath.Join(r.buildDir, "local-echo", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"FROM public.ecr.aws/docker/library/node:22-bookworm-slim",
		`RUN ["env","LOG_LEVEL=info","sh","-c","chmod +x bin/run.sh"]`,
		"WORKDIR /srv/server/bin",
		`ENTRYPOINT ["/usr/local/bin/toolrag","bridge","--listen","0.0.0.0:8080","--path","/mcp","--name","local-echo","--require-token","--"]`,
		"USER 10001:10001",
		`CMD ["./run.sh","--verbose"]`,
	} {
		if !strings.Contains(string(df), w) {
			t.Errorf("Dockerfile lacks %s:\n%s", w, df)
		}
	}
	if _, err := os.Stat(filepath.Join(r.buildDir, "local-echo", "server", "manifest.yaml")); err != nil {
		t.Errorf("server files not staged: %v", err)
	}
	assertions.Annotations_FromStack(r.g.Stack).HasNoError(jsii.String("*"), assertions.Match_AnyValue())
}

func TestEndpointsEgressAndMissingBridge(t *testing.T) {
	cfg := Config{
		RepoRoot: fixtureRoot,
		Vpc:      VpcConfig{Egress: "endpoints"},
		Fargate:  FargateConfig{BridgeBinary: filepath.Join(t.TempDir(), "missing")},
	}
	var stdio []Server
	for _, s := range loadFixtureServers(t) {
		if s.Kind == "stdio" {
			stdio = append(stdio, s)
		}
	}
	r := synth(t, cfg, stdio)
	r.tmpl.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(0))
	r.tmpl.ResourceCountIs(jsii.String("AWS::ECS::Service"), jsii.Number(1))
	var services []string
	for _, p := range r.resources("AWS::EC2::VPCEndpoint") {
		services = append(services, js(p["ServiceName"]))
	}
	all := strings.Join(services, " ")
	for _, w := range []string{"ecr.api", "ecr.dkr", "logs", "lambda", "ssm", "s3", "dynamodb"} {
		if !strings.Contains(all, w) {
			t.Errorf("no VPC endpoint for %s in %s", w, all)
		}
	}
	if strings.Contains(all, "bedrock") {
		t.Error("a Bedrock endpoint without Bedrock")
	}
	ann := assertions.Annotations_FromStack(r.g.Stack)
	ann.HasWarning(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("needs the toolrag bridge binary")))
	ann.HasNoError(jsii.String("*"), assertions.Match_AnyValue())
	checkIAM(t, r, false)
}
