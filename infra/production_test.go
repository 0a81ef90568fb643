package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// fakeBridge writes a stand-in for the linux bridge binary.
func fakeBridge(t *testing.T) string {
	t.Helper()
	bridge := filepath.Join(t.TempDir(), "toolrag")
	if err := os.WriteFile(bridge, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bridge
}

// checkFargateHardening: every server's task runs with a read-only root
// filesystem, a writable /tmp volume and every capability dropped; a
// stdio server's as a non-root user with the MCP-speaking probe as health
// check and its hop credential from its own generated Secrets Manager
// secret, which its registry entry sends (by reference) and the functions
// may read; every service runs at least two tasks with CPU target
// tracking.
func checkFargateHardening(t *testing.T, r synthResult, stdioIDs ...string) {
	t.Helper()
	tds := r.resources("AWS::ECS::TaskDefinition")
	if len(tds) == 0 {
		t.Fatal("no task definitions")
	}
	stdio := 0
	for id, td := range tds {
		if js(td["Volumes"]) != `[{"Name":"tmp"}]` {
			t.Errorf("%s: volumes %s, want the tmp scratch volume", id, js(td["Volumes"]))
		}
		for _, c := range td["ContainerDefinitions"].([]any) {
			cd := c.(map[string]any)
			lp := js(cd["LinuxParameters"])
			if cd["ReadonlyRootFilesystem"] != true || !strings.Contains(lp, `"Drop":["ALL"]`) || !strings.Contains(lp, `"InitProcessEnabled":true`) {
				t.Errorf("%s: ReadonlyRootFilesystem %v LinuxParameters %s; want a read-only root and every capability dropped", id, cd["ReadonlyRootFilesystem"], lp)
			}
			if js(cd["MountPoints"]) != `[{"ContainerPath":"/tmp","ReadOnly":false,"SourceVolume":"tmp"}]` {
				t.Errorf("%s: mount points %s, want /tmp writable", id, js(cd["MountPoints"]))
			}
			hc := js(cd["HealthCheck"])
			if !strings.Contains(hc, "--probe") {
				continue // a docker server: its image's own user, no probe binary
			}
			stdio++
			if cd["User"] != "10001:10001" {
				t.Errorf("%s: User %v, want 10001:10001 (not root)", id, cd["User"])
			}
			if !strings.Contains(hc, `"--path","/mcp"`) {
				t.Errorf("%s: health check %s does not probe MCP at /mcp", id, hc)
			}
			sec := js(cd["Secrets"])
			if !strings.Contains(sec, `"Name":"TOOLRAG_BRIDGE_TOKEN"`) || !strings.Contains(sec, "HopSecret") {
				t.Errorf("%s: secrets %s lack TOOLRAG_BRIDGE_TOKEN from the server's hop secret", id, sec)
			}
			if env := js(cd["Environment"]); !strings.Contains(env, `{"Name":"HOME","Value":"/tmp"}`) {
				t.Errorf("%s: env %s, want HOME=/tmp", id, env)
			}
		}
	}
	if stdio != len(stdioIDs) {
		t.Errorf("%d stdio task definitions, want %d", stdio, len(stdioIDs))
	}
	secrets := r.resources("AWS::SecretsManager::Secret")
	for _, sid := range stdioIDs {
		found := false
		for _, p := range secrets {
			if strings.HasSuffix(js(p["Name"]), HopSecretName(sid)+`"`) {
				found = true
				if g := js(p["GenerateSecretString"]); !strings.Contains(g, `"PasswordLength":48`) || !strings.Contains(g, `"ExcludePunctuation":true`) {
					t.Errorf("hop secret of %s: %s", sid, g)
				}
			}
		}
		if !found {
			t.Errorf("no hop secret %s among %s", HopSecretName(sid), js(secrets))
		}
		if r.g.HopSecrets[sid] == nil {
			t.Errorf("no hop secret recorded for %s", sid)
		}
	}
	// The registry entries carry the credential by reference only.
	for _, p := range r.resources("Custom::AWS") {
		create := js(p["Create"])
		for _, sid := range stdioIDs {
			if strings.Contains(create, `\"server_id\":{\"S\":\"`+sid+`\"}`) && !strings.Contains(create, `Bearer ${`+HopSecretName(sid)+`}`) {
				t.Errorf("registry entry of %s lacks the hop credential header: %s", sid, create)
			}
		}
	}
	// The functions may read the hop secrets, and only with GetSecretValue
	// on those secrets (checkIAM already rejects wildcards).
	for _, fn := range []string{"GatewayFunction", "SyncFunction", "HealthFunction"} {
		ok := false
		for _, st := range statements(r) {
			if strings.HasPrefix(st["_owner"].(string), fn) && strings.Contains(js(st["Action"]), "secretsmanager:GetSecretValue") && strings.Contains(js(st["Resource"]), "HopSecret") {
				ok = true
			}
		}
		if !ok && len(stdioIDs) > 0 {
			t.Errorf("%s may not read the hop secrets", fn)
		}
	}
	for id, svc := range r.resources("AWS::ECS::Service") {
		if n, _ := svc["DesiredCount"].(float64); n < 2 {
			t.Errorf("%s: DesiredCount %v, want at least 2", id, svc["DesiredCount"])
		}
	}
	targets := r.resources("AWS::ApplicationAutoScaling::ScalableTarget")
	if len(targets) != len(r.resources("AWS::ECS::Service")) {
		t.Errorf("%d scalable targets for %d services", len(targets), len(r.resources("AWS::ECS::Service")))
	}
	for id, st := range targets {
		if js(st["MinCapacity"]) != "2" || js(st["MaxCapacity"]) != "4" || st["ScalableDimension"] != "ecs:service:DesiredCount" {
			t.Errorf("%s: %s, want 2..4 tasks", id, js(st))
		}
	}
	for id, p := range r.resources("AWS::ApplicationAutoScaling::ScalingPolicy") {
		if p["PolicyType"] != "TargetTrackingScaling" || !strings.Contains(js(p), `"TargetValue":60`) || !strings.Contains(js(p), "ECSServiceAverageCPUUtilization") {
			t.Errorf("%s: %s, want CPU target tracking at 60 %%", id, js(p))
		}
	}
}

// checkHTTPThrottling: the HTTP API's stage limits and the lower limits of
// the routes that need no credential.
func checkHTTPThrottling(t *testing.T, r synthResult) {
	t.Helper()
	for _, st := range r.resources("AWS::ApiGatewayV2::Stage") {
		if js(st["DefaultRouteSettings"]) != `{"ThrottlingBurstLimit":100,"ThrottlingRateLimit":50}` {
			t.Errorf("stage throttling %s, want 50/s burst 100", js(st["DefaultRouteSettings"]))
		}
		rs, _ := st["RouteSettings"].(map[string]any)
		for _, route := range []string{"POST /register", "GET /.well-known/oauth-protected-resource", "GET /health", "GET /console/{proxy+}",
			"GET /connect/{token}", "POST /connect/{token}", "GET /connect-callback"} {
			if js(rs[route]) != `{"ThrottlingBurstLimit":20,"ThrottlingRateLimit":10}` {
				t.Errorf("route %s throttling %s, want 10/s burst 20", route, js(rs[route]))
			}
		}
	}
}

// The production defaults with a stdio and two docker servers on Fargate
// (the fixture), one NAT per zone, and a custom reserved concurrency.
func TestProductionFargate(t *testing.T) {
	cfg := Config{RepoRoot: fixtureRoot, Fargate: FargateConfig{BridgeBinary: fakeBridge(t)},
		Vpc: VpcConfig{NatGateways: 2}, Functions: FunctionsConfig{Gateway: FunctionSize{ReservedConcurrency: 250}}}
	r := synth(t, cfg, loadFixtureServers(t))
	checkFargateHardening(t, r, "local-echo")
	r.tmpl.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(2))
	if rc := js(r.function(t, "GatewayFunction")["ReservedConcurrentExecutions"]); rc != "250" {
		t.Errorf("gateway ReservedConcurrentExecutions = %s, want 250", rc)
	}
	checkHTTPThrottling(t, r)
	checkAlarms(t, r, "GatewayFunction")
	checkDashboard(t, r)
	checkIAM(t, r, false)
	df, err := os.ReadFile(filepath.Join(r.buildDir, "local-echo", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(df), "USER 10001:10001") || !strings.Contains(string(df), `"--require-token","--"]`) {
		t.Errorf("the stdio Dockerfile runs as root or lets the bridge start without its credential:\n%s", df)
	}

	// No reservation when asked (an account with a low concurrency limit).
	cfg = Config{Functions: FunctionsConfig{Gateway: FunctionSize{ReservedConcurrency: -1}}}
	r = synth(t, cfg, nil)
	if _, ok := r.function(t, "GatewayFunction")["ReservedConcurrentExecutions"]; ok {
		t.Error("reservedConcurrency -1 still reserves concurrency")
	}
}

// The WAF front door: a REST API (no HTTP API) with stage throttling and
// an access log, a web ACL with a per-IP rate-based rule and the AWS
// managed common rule set (its body-size rule counting only), associated
// with the stage; the alarms and dashboard read the REST API's metrics.
func TestRestWafFrontDoor(t *testing.T) {
	cfg, err := LoadConfig("config.example.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServersFile, cfg.FrontDoor, cfg.Waf.RateLimit = "", "rest-waf", 600
	r := synth(t, cfg, nil)
	r.tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Api"), jsii.Number(0))
	r.tmpl.ResourceCountIs(jsii.String("AWS::ApiGateway::RestApi"), jsii.Number(1))
	r.tmpl.ResourceCountIs(jsii.String("AWS::WAFv2::WebACLAssociation"), jsii.Number(1))
	var acl map[string]any
	for _, p := range r.resources("AWS::WAFv2::WebACL") {
		acl = p
	}
	rules := js(acl["Rules"])
	for _, w := range []string{`"RateBasedStatement":{"AggregateKeyType":"IP","Limit":600}`, `"Block":{}`,
		`"Name":"AWSManagedRulesCommonRuleSet","RuleActionOverrides":[{"ActionToUse":{"Count":{}},"Name":"SizeRestrictions_BODY"}]`} {
		if !strings.Contains(rules, w) {
			t.Errorf("web ACL rules lack %s: %s", w, rules)
		}
	}
	if acl["Scope"] != "REGIONAL" {
		t.Errorf("web ACL scope %v", acl["Scope"])
	}
	for _, p := range r.resources("AWS::WAFv2::WebACLAssociation") {
		if !strings.Contains(js(p["ResourceArn"]), "/stages/") || !strings.Contains(js(p["WebACLArn"]), "WebAcl") {
			t.Errorf("association %s", js(p))
		}
	}
	for _, st := range r.resources("AWS::ApiGateway::Stage") {
		ms := js(st["MethodSettings"])
		if !strings.Contains(ms, `"ThrottlingBurstLimit":100`) || !strings.Contains(ms, `"ThrottlingRateLimit":50`) || st["AccessLogSetting"] == nil {
			t.Errorf("REST stage: method settings %s, access log %v; want 50/s burst 100 and an access log", ms, st["AccessLogSetting"])
		}
	}
	if !strings.Contains(js(r.doc["Outputs"].(map[string]any)["McpUrl"]), "RestApi") {
		t.Errorf("McpUrl does not point at the REST API: %s", js(r.doc["Outputs"].(map[string]any)["McpUrl"]))
	}
	checkAlarms(t, r, "GatewayFunction")
	checkDashboard(t, r)
	checkIAM(t, r, false)
}

// `make synth` after `toolrag provision` of servers/echo (the add-server
// playbook) on a clean checkout: no dist/ (placeholder function code) and
// no bridge binary. The CDK app synthesizes with warnings, not errors
// (the image gets a stand-in bridge that says to run make build-bridge),
// and the template has the production items.
func TestSynthAfterProvisionWithoutBuilds(t *testing.T) {
	dir := t.TempDir()
	// What `toolrag provision` writes for servers/echo (pkg/provision's
	// golden tests pin the format).
	servers, _ := json.Marshal(map[string]any{"version": 1, "servers": []Server{{
		ID: "echo", Kind: "stdio", Host: "echo", Dir: "servers/echo", Transport: "stdio", Command: []string{"go", "run", "."},
	}}})
	serversFile := filepath.Join(dir, "servers.generated.json")
	cfgFile := filepath.Join(dir, "config.json")
	cfgJSON, _ := json.Marshal(map[string]any{
		"serversFile": serversFile, "distDir": filepath.Join(dir, "dist"), "buildDir": filepath.Join(dir, "build"),
		"fargate": map[string]any{"bridgeBinary": filepath.Join(dir, "dist", "bridge", "toolrag")},
	})
	for f, b := range map[string][]byte{serversFile: servers, cfgFile: cfgJSON} {
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()), Context: &map[string]any{"config": cfgFile}})
	g, err := run(app)
	if err != nil {
		t.Fatal(err)
	}
	stack := g.Stack
	ann := assertions.Annotations_FromStack(stack)
	ann.HasNoError(jsii.String("*"), assertions.Match_AnyValue())
	ann.HasWarning(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("needs the toolrag bridge binary.*make build-bridge")))
	app.Synth(nil) // what cdk synth does; fails on an error annotation only
	tmpl := assertions.Template_FromStack(stack, nil)
	b, _ := json.Marshal(tmpl.ToJSON())
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	r := synthResult{g: g, tmpl: tmpl, doc: doc, buildDir: filepath.Join(dir, "build")}
	checkFargateHardening(t, r, "echo")
	checkAlarms(t, r, "GatewayFunction")
	checkDashboard(t, r)
	checkHTTPThrottling(t, r)
	if rc := js(r.function(t, "GatewayFunction")["ReservedConcurrentExecutions"]); rc != "100" {
		t.Errorf("gateway ReservedConcurrentExecutions = %s, want 100", rc)
	}
	stub, err := os.ReadFile(filepath.Join(dir, "build", "echo", "toolrag"))
	if err != nil || !strings.Contains(string(stub), "make build-bridge") {
		t.Errorf("the image's stand-in bridge: %q %v", stub, err)
	}
}
