package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cfnLint returns the cfn-lint executable: CFN_LINT when set, otherwise
// cfn-lint on PATH. Without it the test is skipped, or fails under
// TOOLRAG_REQUIRE_EXTERNAL=1 (make test, CI).
func cfnLint(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CFN_LINT")
	if bin == "" {
		bin = "cfn-lint"
	}
	path, err := exec.LookPath(bin)
	if err == nil {
		return path
	}
	msg := "cfn-lint not found (pip install cfn-lint, or set CFN_LINT): " + err.Error()
	if os.Getenv("TOOLRAG_REQUIRE_EXTERNAL") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// runCfnLint lints the templates and fails the test on any error or
// warning (informational findings are printed only). cfn-lint's exit code
// is a bit set: 2 errors, 4 warnings, 8 informational; 1 a crash.
func runCfnLint(t *testing.T, files ...string) {
	t.Helper()
	cmd := exec.Command(cfnLint(t), append([]string{"--format", "parseable", "--"}, files...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode()&^8 == 0:
		t.Logf("cfn-lint (informational only):\n%s", out)
	default:
		t.Fatalf("cfn-lint %s: %v\n%s", strings.Join(files, " "), err, out)
	}
}

// The SAM template and the CDK stacks (the example config, and the
// configurations the other tests synthesize: servers on Fargate with
// Bedrock, VPC endpoints, OAuth with Cognito, Secrets Manager) pass
// cfn-lint with no error and no warning.
func TestCfnLint(t *testing.T) {
	bin := cfnLint(t)
	t.Logf("linting with %s", bin)
	example := func() Config {
		cfg, err := LoadConfig("config.example.json")
		if err != nil {
			t.Fatal(err)
		}
		cfg.ServersFile = ""
		return cfg
	}
	bridge := filepath.Join(t.TempDir(), "toolrag")
	if err := os.WriteFile(bridge, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	oauth := example()
	oauth.OAuth = &OAuthConfig{Cognito: &CognitoConfig{DomainPrefix: "toolrag-test"},
		Grants: json.RawMessage(`[{"match":{"scope":"toolrag/tools"},"servers":{"echo":{}}}]`)}
	waf := example()
	waf.FrontDoor = "rest-waf"
	waf.Domain = &DomainConfig{Name: "mcp.example.com", CertificateArn: "arn:aws:acm:us-east-1:123456789012:certificate/abc"}
	sm := example()
	sm.SecretsStore, sm.SecretsPrefix = "secretsmanager", "/toolrag/smstage/"
	sm.Streamed = &StreamedConfig{}
	stacks := []struct {
		name    string
		cfg     Config
		servers []Server
	}{
		{"example", example(), nil},
		{"servers-bedrock-prod", Config{Stage: "prod", RepoRoot: fixtureRoot,
			Embedder: EmbedderConfig{Kind: "bedrock", ModelID: "amazon.titan-embed-text-v2:0", Dims: 1024},
			Reranker: RerankerConfig{Kind: "bedrock"}, Fargate: FargateConfig{BridgeBinary: bridge}}, loadFixtureServers(t)},
		{"endpoints-egress", Config{RepoRoot: fixtureRoot, Vpc: VpcConfig{Egress: "endpoints"}, Fargate: FargateConfig{BridgeBinary: bridge}}, loadFixtureServers(t)},
		{"oauth-cognito", oauth, nil},
		{"secretsmanager-streamed", sm, nil},
		{"rest-waf", waf, nil},
		{"nat-per-zone-secretsmanager", Config{RepoRoot: fixtureRoot, Vpc: VpcConfig{NatGateways: 2}, SecretsStore: "secretsmanager",
			Fargate: FargateConfig{BridgeBinary: bridge}}, loadFixtureServers(t)},
	}
	dir := t.TempDir()
	files := []string{filepath.Join("..", "template.yaml")}
	for _, s := range stacks {
		r := synth(t, s.cfg, s.servers)
		b, err := json.MarshalIndent(r.doc, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, s.name+".template.json")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	runCfnLint(t, files...)
}
