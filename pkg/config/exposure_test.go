package config

import (
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// The example keys' hashes are those of config/keys.example.yaml.
func TestExampleSecretHashesMatchTheFile(t *testing.T) {
	keys, err := LoadKeys("../../config/keys.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("no keys in the example file")
	}
	for _, k := range keys {
		if !exampleSecretHashes[k.SecretHash] {
			t.Errorf("example key %q is not in exampleSecretHashes", k.ID)
		}
	}
	if len(exampleSecretHashes) != len(keys) {
		t.Errorf("exampleSecretHashes has %d entries, the file %d keys", len(exampleSecretHashes), len(keys))
	}
}

func TestCheckExposure(t *testing.T) {
	example, err := LoadKeys("../../config/keys.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	own, err := ParseKeys("keys.yaml", []byte("keys:\n  - id: mine\n    secret: \"a-long-private-secret-0f9e8d\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, host := range []string{"127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"} {
		if err := CheckExposure(host, example, now); err != nil {
			t.Errorf("loopback %s with the example keys: %v", host, err)
		}
	}
	for _, host := range []string{"0.0.0.0", "", "::", "192.168.1.10"} {
		err := CheckExposure(host, example, now)
		if err == nil || !strings.Contains(err.Error(), "keys.example.yaml") || !strings.Contains(err.Error(), "MCP_GATEWAY_HOST") {
			t.Errorf("%q with the example keys: %v", host, err)
		}
		if err := CheckExposure(host, own, now); err != nil {
			t.Errorf("%q with private keys: %v", host, err)
		}
	}
	disabled := append([]policy.Key(nil), example...)
	for i := range disabled {
		disabled[i].Disabled = true
	}
	if err := CheckExposure("0.0.0.0", disabled, now); err != nil {
		t.Errorf("disabled example keys: %v", err)
	}
}
