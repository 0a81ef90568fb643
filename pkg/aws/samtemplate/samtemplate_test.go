package samtemplate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/toolrag/mcp-gateway/pkg/session"
)

const root = "../../.."

// contractEnv is the environment contract of the three functions
// (docs/deploy.md); TOOL_RAG_RERANKER_URL is the url reranker's endpoint.
var contractEnv = map[string]bool{
	"OTEL_TRACES_EXPORTER": true, "OTEL_EXPORTER_OTLP_ENDPOINT": true,
	"TOOL_RAG_TOOLS_TABLE": true, "TOOL_RAG_KEYS_TABLE": true, "TOOL_RAG_REGISTRY_TABLE": true,
	"TOOL_RAG_SESSIONS_TABLE": true, "TOOL_RAG_INDEX_BUCKET": true, "TOOL_RAG_INDEX_PREFIX": true,
	"TOOL_RAG_SYNC_FUNCTION": true, "TOOL_RAG_INDEX_REFRESH": true, "TOOL_RAG_EMBEDDER": true,
	"TOOL_RAG_BEDROCK_MODEL_ID": true, "TOOL_RAG_BEDROCK_DIM": true, "TOOL_RAG_EMBED_URL": true,
	"TOOL_RAG_RERANKER": true, "TOOL_RAG_RERANKER_BEDROCK_MODEL": true, "TOOL_RAG_RERANKER_URL": true,
	"MCP_GATEWAY_MCP_PATH": true, "TOOL_RAG_SECRETS_PREFIX": true, "TOOL_RAG_SECRETS_STORE": true,
	"MCP_GATEWAY_UPSTREAM_TIMEOUT": true, "MCP_GATEWAY_MAX_RESULT_BYTES": true,
	"TOOLRAG_OAUTH_ISSUER": true, "TOOLRAG_OAUTH_JWKS_URL": true, "TOOLRAG_OAUTH_AUDIENCE": true,
	"TOOLRAG_OAUTH_SCOPES": true, "TOOLRAG_OAUTH_SCOPE_PREFIX": true, "TOOLRAG_OAUTH_GRANTS": true,
	"TOOL_RAG_CALLSEQ_TABLE": true, "TOOL_RAG_CALL_SEQUENCES": true,
	"TOOL_RAG_VAULT_TABLE": true, "TOOL_RAG_VAULT_KMS_KEY": true,
	"TOOL_RAG_GATEWAY_FUNCTION": true, "TOOL_RAG_FUNCTION_URL": true,
}

var wantFunctions = []string{"gateway", "health", "sync"}

func load(t *testing.T) *Template {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestParseIntrinsics(t *testing.T) {
	cases := []struct {
		yaml string
		want any
	}{
		{"a: !Ref X", map[string]any{"Ref": "X"}},
		{"a: !GetAtt T.Arn", map[string]any{"Fn::GetAtt": []any{"T", "Arn"}}},
		{"a: !Sub '${A}/x'", map[string]any{"Fn::Sub": "${A}/x"}},
		{"a: !If [C, 1, !Ref AWS::NoValue]", map[string]any{"Fn::If": []any{"C", 1, map[string]any{"Ref": "AWS::NoValue"}}}},
		{"a: !Equals [!Ref S, prod]", map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "S"}, "prod"}}},
		{"a: !Condition C", map[string]any{"Condition": "C"}},
		{"a: [true, 2, 1.5, ~, x]", []any{true, 2, 1.5, nil, "x"}},
	}
	for _, c := range cases {
		var n map[string]any
		tmpl := "Resources: {R: {Type: T, Properties: {P: 1}}}\nOutputs:\n  " + strings.ReplaceAll(c.yaml, "\n", "\n  ")
		got, err := Parse([]byte(tmpl))
		if err != nil {
			t.Fatalf("%s: %v", c.yaml, err)
		}
		n = got.Outputs
		if !reflect.DeepEqual(n["a"], c.want) {
			t.Errorf("%s → %s, want %s", c.yaml, js(n["a"]), js(c.want))
		}
	}
	for _, bad := range []string{"Resources: {R: {Properties: {}}}", "Outputs: {a: !Bogus x}", "Outputs: {a: !GetAtt NoDot}", "- list", "Resources: {R: {Type: T}, R: {Type: U}}"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func TestFunctions(t *testing.T) {
	tmpl := load(t)
	fns := tmpl.Functions()
	var names []string
	for _, f := range fns {
		names = append(names, f.Name())
		if f.CodeURI != "dist/"+f.Name()+"/" {
			t.Errorf("%s: CodeUri %q, want dist/<name>/", f.LogicalID, f.CodeURI)
		}
		if f.Handler != "bootstrap" || f.Runtime != "provided.al2023" || strings.Join(f.Architectures, ",") != "arm64" {
			t.Errorf("%s: handler %q runtime %q arch %v", f.LogicalID, f.Handler, f.Runtime, f.Architectures)
		}
		for k := range f.Env {
			if !contractEnv[k] {
				t.Errorf("%s: env %s is not in the contract", f.LogicalID, k)
			}
		}
		for _, k := range []string{"TOOL_RAG_TOOLS_TABLE", "TOOL_RAG_KEYS_TABLE", "TOOL_RAG_REGISTRY_TABLE", "TOOL_RAG_SESSIONS_TABLE", "TOOL_RAG_INDEX_BUCKET", "TOOL_RAG_INDEX_PREFIX", "TOOL_RAG_EMBEDDER", "TOOL_RAG_SECRETS_PREFIX", "TOOL_RAG_SECRETS_STORE"} {
			if f.Env[k] == nil {
				t.Errorf("%s: env %s missing", f.LogicalID, k)
			}
		}
		if f.LogFormat != "JSON" {
			t.Errorf("%s: LoggingConfig.LogFormat %q, want JSON (the functions then log JSON lines)", f.LogicalID, f.LogFormat)
		}
		if _, ok := f.Env["TOOL_RAG_SYNC_FUNCTION"]; ok != (f.Name() == "gateway") {
			t.Errorf("%s: TOOL_RAG_SYNC_FUNCTION present=%v", f.LogicalID, ok)
		}
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, wantFunctions) {
		t.Fatalf("functions %v, want %v", names, wantFunctions)
	}
}

// TestFunctionSources checks that each function's source folder exists.
// Until functions/ is written at all, the check is skipped.
func TestFunctionSources(t *testing.T) {
	if _, err := os.Stat(filepath.Join(root, "functions")); err != nil {
		t.Skip("functions/ does not exist yet")
	}
	for _, name := range wantFunctions {
		if _, err := os.Stat(filepath.Join(root, "functions", name)); err != nil {
			t.Errorf("template.yaml deploys %q but functions/%s is missing", name, name)
		}
	}
}

func TestRoutesAndSchedules(t *testing.T) {
	tmpl := load(t)
	byName := map[string]Function{}
	for _, f := range tmpl.Functions() {
		byName[f.Name()] = f
	}
	var routes []string
	for _, e := range byName["gateway"].Events {
		if e.Type == "HttpApi" {
			routes = append(routes, e.Properties["Method"].(string)+" "+e.Properties["Path"].(string))
		}
	}
	sort.Strings(routes)
	if got := strings.Join(routes, ","); got != "ANY /tool-rag/{proxy+},DELETE /mcp,GET /.well-known/oauth-protected-resource,GET /.well-known/oauth-protected-resource/mcp,GET /connect-callback,GET /connect-client.json,GET /connect/{token},GET /console,GET /console/{proxy+},GET /health,GET /mcp,POST /connect/{token},POST /mcp,POST /register" {
		t.Errorf("routes %s", got)
	}
	for _, name := range []string{"sync", "health"} {
		found := false
		for _, e := range byName[name].Events {
			found = found || (e.Type == "Schedule" && e.Properties["Schedule"] != nil)
		}
		if !found {
			t.Errorf("%s has no Schedule event", name)
		}
	}
}

// TestTables finds each table through the env var that names it and
// checks it against the key contract.
func TestTables(t *testing.T) {
	tmpl := load(t)
	var gw Function
	for _, f := range tmpl.Functions() {
		if f.Name() == "gateway" {
			gw = f
		}
	}
	cases := []struct {
		env, keys, gsi, ttl string
	}{
		{"TOOL_RAG_TOOLS_TABLE", "pk:HASH:S,sk:RANGE:S", "", ""},
		{"TOOL_RAG_KEYS_TABLE", "secret_hash:HASH:S", "byId=key_id:HASH:S", ""},
		{"TOOL_RAG_REGISTRY_TABLE", "server_id:HASH:S", "", ""},
		{"TOOL_RAG_SESSIONS_TABLE", "session_id:HASH:S", "", "expires_at"},
		{"TOOL_RAG_CALLSEQ_TABLE", "from_tool:HASH:S,to_tool:RANGE:S", "", ""},
		{"TOOL_RAG_VAULT_TABLE", "principal:HASH:S,server:RANGE:S", "", "expires_at"},
	}
	for _, c := range cases {
		ref, _ := gw.Env[c.env].(map[string]any)
		id, _ := ref["Ref"].(string)
		r, ok := tmpl.Resources[id]
		if !ok || r.Type != "AWS::DynamoDB::Table" {
			t.Errorf("%s does not reference a table (%v)", c.env, gw.Env[c.env])
			continue
		}
		p := r.Properties
		types := map[string]string{}
		for _, a := range p["AttributeDefinitions"].([]any) {
			m := a.(map[string]any)
			types[m["AttributeName"].(string)] = m["AttributeType"].(string)
		}
		schema := func(ks any) string {
			var parts []string
			for _, k := range ks.([]any) {
				m := k.(map[string]any)
				n := m["AttributeName"].(string)
				parts = append(parts, n+":"+m["KeyType"].(string)+":"+types[n])
			}
			return strings.Join(parts, ",")
		}
		if got := schema(p["KeySchema"]); got != c.keys {
			t.Errorf("%s: keys %s, want %s", id, got, c.keys)
		}
		gsi := ""
		if g, ok := p["GlobalSecondaryIndexes"].([]any); ok {
			m := g[0].(map[string]any)
			gsi = m["IndexName"].(string) + "=" + schema(m["KeySchema"])
		}
		if gsi != c.gsi {
			t.Errorf("%s: GSI %q, want %q", id, gsi, c.gsi)
		}
		ttl := ""
		if m, ok := p["TimeToLiveSpecification"].(map[string]any); ok && m["Enabled"] == true {
			ttl = m["AttributeName"].(string)
		}
		if ttl != c.ttl {
			t.Errorf("%s: TTL %q, want %q", id, ttl, c.ttl)
		}
		if p["BillingMode"] != "PAY_PER_REQUEST" || js(p["PointInTimeRecoverySpecification"]) != `{"PointInTimeRecoveryEnabled":true}` {
			t.Errorf("%s: billing %v PITR %v", id, p["BillingMode"], p["PointInTimeRecoverySpecification"])
		}
		if js(p["DeletionProtectionEnabled"]) != `{"Fn::If":["IsProd",true,false]}` {
			t.Errorf("%s: deletion protection %s", id, js(p["DeletionProtectionEnabled"]))
		}
	}
}

// TestSecretsStore checks the SecretsStore switch: the parameter (ssm or
// secretsmanager, default ssm) reaches every function as
// TOOL_RAG_SECRETS_STORE, and each function may read only that store under
// SecretsPrefix: secretsmanager:GetSecretValue on secret:<prefix>* when it
// is secretsmanager, SSM's read actions on parameter<prefix>* otherwise.
func TestSecretsStore(t *testing.T) {
	tmpl := load(t)
	p, _ := tmpl.Parameters["SecretsStore"].(map[string]any)
	if p["Default"] != "ssm" || js(p["AllowedValues"]) != `["ssm","secretsmanager"]` {
		t.Errorf("SecretsStore parameter %s", js(p))
	}
	raw, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "SecretsInSecretsManager: !Equals [!Ref SecretsStore, secretsmanager]") {
		t.Error("no condition SecretsInSecretsManager: !Equals [!Ref SecretsStore, secretsmanager]")
	}
	const (
		smGrant  = `{"Statement":[{"Action":"secretsmanager:GetSecretValue","Effect":"Allow","Resource":{"Fn::Sub":"arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:${SecretsPrefix}*"}}]}`
		ssmGrant = `{"Statement":[{"Action":["ssm:GetParameter","ssm:GetParameters","ssm:GetParametersByPath"],"Effect":"Allow","Resource":{"Fn::Sub":"arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter${SecretsPrefix}*"}}]}`
	)
	want := js(map[string]any{"Fn::If": []any{"SecretsInSecretsManager", json.RawMessage(smGrant), json.RawMessage(ssmGrant)}})
	for _, f := range tmpl.Functions() {
		if js(f.Env["TOOL_RAG_SECRETS_STORE"]) != `{"Ref":"SecretsStore"}` {
			t.Errorf("%s: TOOL_RAG_SECRETS_STORE = %s, want !Ref SecretsStore", f.LogicalID, js(f.Env["TOOL_RAG_SECRETS_STORE"]))
		}
		pols, _ := tmpl.Resources[f.LogicalID].Properties["Policies"].([]any)
		found := 0
		for _, pol := range pols {
			j := js(pol)
			if j == want {
				found++
				continue
			}
			if strings.Contains(j, "ssm:") || strings.Contains(j, "secretsmanager:") {
				t.Errorf("%s: a secrets grant outside the SecretsStore switch: %s", f.LogicalID, j)
			}
		}
		if found != 1 {
			t.Errorf("%s: %d policies %s, want 1", f.LogicalID, found, want)
		}
	}
}

// TestFunctionSizes checks each function's memory and timeout: the
// defaults are the CDK app's (infra/config.example.json shows them), the
// gateway and sync memory are parameters bounded by Lambda's limits, and
// the gateway's timeout fits API Gateway's 30 s integration timeout.
func TestFunctionSizes(t *testing.T) {
	tmpl := load(t)
	raw, err := os.ReadFile(filepath.Join(root, "infra", "config.example.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cdk struct {
		Functions map[string]struct {
			MemoryMiB      int `json:"memoryMiB"`
			TimeoutSeconds int `json:"timeoutSeconds"`
		} `json:"functions"`
	}
	if err := json.Unmarshal(raw, &cdk); err != nil {
		t.Fatalf("infra/config.example.json: %v", err)
	}
	byName := map[string]Function{}
	for _, f := range tmpl.Functions() {
		byName[f.Name()] = f
	}
	cases := []struct {
		name        string
		memoryParam string // "" = a fixed number
		maxTimeout  int
	}{
		{"gateway", "GatewayMemorySize", 30},
		{"sync", "SyncMemorySize", 900},
		{"health", "", 900},
	}
	for _, c := range cases {
		f, ok := byName[c.name]
		if !ok {
			t.Errorf("no %s function", c.name)
			continue
		}
		want := cdk.Functions[c.name]
		if want.MemoryMiB == 0 || want.TimeoutSeconds == 0 {
			t.Errorf("infra/config.example.json has no functions.%s size", c.name)
		}
		memory := f.MemorySize
		if c.memoryParam != "" {
			if js(f.MemorySize) != js(map[string]any{"Ref": c.memoryParam}) {
				t.Errorf("%s: MemorySize %s, want !Ref %s", f.LogicalID, js(f.MemorySize), c.memoryParam)
			}
			p, _ := tmpl.Parameters[c.memoryParam].(map[string]any)
			if p["Type"] != "Number" || p["MinValue"] != 128 || p["MaxValue"] != 10240 {
				t.Errorf("parameter %s: %s, want Type Number, MinValue 128, MaxValue 10240", c.memoryParam, js(p))
			}
			memory = p["Default"]
		}
		if memory != want.MemoryMiB {
			t.Errorf("%s: memory %v MiB by default, the CDK app's default is %d", f.LogicalID, memory, want.MemoryMiB)
		}
		timeout, _ := f.Timeout.(int)
		if timeout != want.TimeoutSeconds || timeout < 1 || timeout > c.maxTimeout {
			t.Errorf("%s: Timeout %v, want %d (at most %d)", f.LogicalID, f.Timeout, want.TimeoutSeconds, c.maxTimeout)
		}
	}
}

// TestRefs checks that every !Ref names a parameter, a resource or a
// pseudo parameter, so a misspelt parameter fails here, not at deploy.
func TestRefs(t *testing.T) {
	tmpl := load(t)
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["Ref"].(string); ok && len(x) == 1 {
				refs = append(refs, r)
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(tmpl.Globals)
	walk(tmpl.Outputs)
	for _, r := range tmpl.Resources {
		walk(r.Properties)
	}
	if len(refs) < 10 {
		t.Fatalf("found only %d !Ref in the template", len(refs))
	}
	used := map[string]bool{}
	for _, r := range refs {
		_, param := tmpl.Parameters[r]
		_, res := tmpl.Resources[r]
		if !param && !res && !strings.HasPrefix(r, "AWS::") {
			t.Errorf("!Ref %s names no parameter or resource", r)
		}
		used[r] = true
	}
	for _, p := range []string{"GatewayMemorySize", "SyncMemorySize"} {
		if !used[p] {
			t.Errorf("parameter %s is not used", p)
		}
	}
}

func TestBucket(t *testing.T) {
	tmpl := load(t)
	b := tmpl.Resources["IndexBucket"].Properties
	for _, w := range []string{`"VersioningConfiguration":{"Status":"Enabled"}`, `"SSEAlgorithm":"AES256"`, `"RestrictPublicBuckets":true`, `"NoncurrentVersionExpiration"`, `"TagFilters":[{"Key":"superseded","Value":"true"}]`} {
		if !strings.Contains(js(b), w) {
			t.Errorf("bucket lacks %s", w)
		}
	}
	pol := js(tmpl.Resources["IndexBucketPolicy"].Properties)
	if !strings.Contains(pol, `"Effect":"Deny"`) || !strings.Contains(pol, `"aws:SecureTransport":"false"`) {
		t.Errorf("bucket policy is not TLS-only: %s", pol)
	}
}

// decodeStrict decodes like the Lambda runtime would, but fails on fields
// the aws-lambda-go type does not know (a typo or a wrong event kind).
func decodeStrict(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "events", name))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("events/%s is not a %T: %v", name, v, err)
	}
}

type rpc struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int    `json:"id"`
	Method  string `json:"method"`
	Params  struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"params"`
}

func TestEvents(t *testing.T) {
	const auth = "Bearer dev-key-full-access"
	v2 := []struct{ file, method, tool string }{
		{"http-api-initialize.json", "initialize", ""},
		{"http-api-tools-list.json", "tools/list", ""},
		{"http-api-find-tools.json", "tools/call", "find_tools"},
		{"http-api-run-tool.json", "tools/call", "run_tool"},
	}
	for _, c := range v2 {
		var ev events.APIGatewayV2HTTPRequest
		decodeStrict(t, c.file, &ev)
		if ev.RawPath != "/mcp" || ev.RequestContext.HTTP.Method != "POST" || ev.Headers["authorization"] != auth || ev.RouteKey != "POST /mcp" {
			t.Errorf("%s: path %q method %q auth %q route %q", c.file, ev.RawPath, ev.RequestContext.HTTP.Method, ev.Headers["authorization"], ev.RouteKey)
		}
		var r rpc
		if err := json.Unmarshal([]byte(ev.Body), &r); err != nil {
			t.Fatalf("%s: body: %v", c.file, err)
		}
		if r.JSONRPC != "2.0" || r.Method != c.method || r.Params.Name != c.tool {
			t.Errorf("%s: rpc %+v", c.file, r)
		}
		if c.tool == "run_tool" && r.Params.Arguments["call_name"] == nil {
			t.Errorf("%s: run_tool without call_name", c.file)
		}
		if c.tool == "find_tools" && r.Params.Arguments["query"] == nil {
			t.Errorf("%s: find_tools without query", c.file)
		}
		// A session sample carries the fixture session that
		// `toolrag dynamo seed-events` creates: a well-formed id.
		if sid, ok := ev.Headers["mcp-session-id"]; ok && !session.ValidID(sid) {
			t.Errorf("%s: mcp-session-id %q is not a session id the gateway issues (it would always get 404)", c.file, sid)
		}
	}
	var health events.APIGatewayV2HTTPRequest
	decodeStrict(t, "http-api-health.json", &health)
	if health.RawPath != "/health" || health.Headers["authorization"] != "" {
		t.Errorf("health event: path %q auth %q", health.RawPath, health.Headers["authorization"])
	}

	var rest events.APIGatewayProxyRequest
	decodeStrict(t, "rest-api-initialize.json", &rest)
	if rest.Path != "/mcp" || rest.HTTPMethod != "POST" || rest.Headers["Authorization"] != auth || !strings.Contains(rest.Body, `"initialize"`) {
		t.Errorf("rest event %+v", rest)
	}

	var url events.LambdaFunctionURLRequest
	decodeStrict(t, "function-url-initialize.json", &url)
	if url.RawPath != "/mcp" || url.RequestContext.HTTP.Method != "POST" || url.Headers["authorization"] != auth || !strings.Contains(url.Body, `"initialize"`) {
		t.Errorf("function URL event %+v", url)
	}

	for _, name := range []string{"sync", "health"} {
		var ev events.EventBridgeEvent
		decodeStrict(t, "schedule-"+name+".json", &ev)
		if ev.DetailType != "Scheduled Event" || ev.Source != "aws.events" || len(ev.Resources) != 1 || !strings.Contains(ev.Resources[0], name) {
			t.Errorf("schedule-%s: %+v", name, ev)
		}
	}
}
