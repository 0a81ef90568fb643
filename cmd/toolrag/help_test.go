package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/config"
)

// TestCommandHelpDescribes: the -h of the commands a new user meets first
// says what the command does, what it reads and writes, and gives an
// example, not only a list of flags.
func TestCommandHelpDescribes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"sync", "-h"}, []string{"upstream", "TOOL_RAG_DB", "index", "Example", "bin/toolrag sync"}},
		{[]string{"reindex", "-h"}, []string{"catalog", "TOOL_RAG_DB", "without asking any upstream", "Example"}},
		{[]string{"provision", "-h"}, []string{"manifest.yaml", "config/registry.generated.yaml", "infra/servers.generated.json", "--allow-setup", "left out", "bin/toolrag provision"}},
		{[]string{"keys", "list", "-h"}, []string{"TOOL_RAG_KEYS_TABLE", "hash", "Example", "AWS_PROFILE", "TOOL_RAG_DYNAMODB_ENDPOINT"}},
		{[]string{"keys", "create", "-h"}, []string{"secret once", "Example", "AWS_ACCESS_KEY_ID"}},
		{[]string{"keys", "revoke", "-h"}, []string{"revoked", "Example"}},
		{[]string{"keys", "-h"}, []string{"keys create", "AWS_REGION"}},
		{[]string{"registry", "push", "-h"}, []string{"TOOL_RAG_REGISTRY_TABLE", "Example", "--dry-run"}},
		{[]string{"dynamo", "create-tables", "-h"}, []string{"Creates the gateway's DynamoDB tables", "DynamoDB Local", "Example", "TOOL_RAG_DYNAMODB_ENDPOINT=http://127.0.0.1:8000"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			err := commands.Run(context.Background(), c.args, &out, &errb)
			if !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("error %v, want flag.ErrHelp (exit 0)", err)
			}
			help := errb.String()
			if !strings.HasPrefix(help, "usage: toolrag ") {
				t.Errorf("help does not start with a usage line:\n%s", help)
			}
			for _, w := range c.want {
				if !strings.Contains(help, w) {
					t.Errorf("help lacks %q:\n%s", w, help)
				}
			}
		})
	}
}

// TestAWSCommandsExplainMissingAccess: without credentials, or with nothing
// listening at the DynamoDB endpoint, an AWS command says what it reads and
// how to point it at DynamoDB Local instead of printing the SDK's chain.
func TestAWSCommandsExplainMissingAccess(t *testing.T) {
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	dir := t.TempDir()
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")

	t.Run("no credentials", func(t *testing.T) {
		t.Setenv("TOOL_RAG_DYNAMODB_ENDPOINT", "")
		err := commands.Run(context.Background(), []string{"keys", "list"}, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil {
			t.Fatal("keys list without credentials succeeded")
		}
		msg := err.Error()
		for _, w := range []string{"no AWS credentials", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "~/.aws/credentials", "AWS_REGION", "TOOL_RAG_DYNAMODB_ENDPOINT=http://127.0.0.1:8000"} {
			if !strings.Contains(msg, w) {
				t.Errorf("error lacks %q:\n%s", w, msg)
			}
		}
		for _, bad := range []string{"operation error", "get identity", "IMDS"} {
			if strings.Contains(msg, bad) {
				t.Errorf("error still shows the SDK chain (%q):\n%s", bad, msg)
			}
		}
	})

	t.Run("nothing at the endpoint", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ep := fmt.Sprintf("http://%s", ln.Addr())
		ln.Close()
		t.Setenv("TOOL_RAG_DYNAMODB_ENDPOINT", ep)
		err = commands.Run(context.Background(), []string{"dynamo", "create-tables"}, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "nothing answers at "+ep) || strings.Contains(err.Error(), "operation error") {
			t.Errorf("create-tables against a closed port: %v", err)
		}
	})
}

// TestReadyBannerConsoleURL: the banner names the console's URL and the
// example admin key to sign in with; without a console, no such line.
func TestReadyBannerConsoleURL(t *testing.T) {
	keys := filepath.Join(testenv.Root(t), "config", "keys.example.yaml")
	env := config.Env{Host: "127.0.0.1", MCPPath: "/mcp", KeysPath: keys, ConsolePath: "/console"}
	var b bytes.Buffer
	readyBanner(&b, env, 8765)
	if want := "  console:      http://127.0.0.1:8765/console/ (sign in with dev-key-admin)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("banner lacks %q:\n%s", want, b.String())
	}
	env.ConsolePath = ""
	b.Reset()
	readyBanner(&b, env, 8765)
	if strings.Contains(b.String(), "console:") {
		t.Errorf("banner names a console that is off:\n%s", b.String())
	}
}
