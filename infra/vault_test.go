package main

import (
	"strings"
	"testing"
)

// TestVault checks the token vault of per-principal upstream identity:
// a KMS key with rotation, kept when the stack goes; its ARN reaches the
// gateway only (TOOL_RAG_VAULT_KMS_KEY); only the gateway's role may use
// it, for kms:GenerateDataKey and kms:Decrypt under the gateway's
// encryption contexts, and only the gateway may read and write the vault
// table.
func TestVault(t *testing.T) {
	cfg, err := LoadConfig("config.example.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServersFile = ""
	r := synth(t, cfg, nil)
	keyID := firstID(r, "AWS::KMS::Key", "VaultKey")
	key := r.resources("AWS::KMS::Key")[keyID]
	if key == nil || key["EnableKeyRotation"] != true {
		t.Fatalf("vault key %s: %s", keyID, js(key))
	}
	if res := r.doc["Resources"].(map[string]any)[keyID].(map[string]any); res["DeletionPolicy"] != "Retain" {
		t.Errorf("vault key deletion policy %v, want Retain (deleting it loses every grant)", res["DeletionPolicy"])
	}
	wantEnv := js(map[string]any{"Fn::GetAtt": []any{keyID, "Arn"}})
	for _, name := range []string{"Gateway", "Sync", "Health"} {
		got := js(envOf(r.function(t, name+"Function"))["TOOL_RAG_VAULT_KMS_KEY"])
		if (got == wantEnv) != (name == "Gateway") {
			t.Errorf("%s: TOOL_RAG_VAULT_KMS_KEY = %s", name, got)
		}
	}
	vaultTable := firstID(r, "AWS::DynamoDB::Table", "VaultTable")
	kmsGrants := 0
	for _, st := range statements(r) {
		owner, _ := st["_owner"].(string)
		j := js(st)
		usesKMS := strings.Contains(j, `"kms:`)
		usesTable := strings.Contains(j, vaultTable)
		if (usesKMS || usesTable) && !strings.HasPrefix(owner, "GatewayFunctionServiceRole") {
			t.Errorf("%s may use the vault: %s", owner, j)
		}
		if !usesKMS {
			continue
		}
		kmsGrants++
		if js(st["Action"]) != `["kms:GenerateDataKey","kms:Decrypt"]` || js(st["Resource"]) != wantEnv ||
			js(st["Condition"]) != `{"StringLike":{"kms:EncryptionContext:purpose":"toolrag-*"}}` {
			t.Errorf("gateway KMS grant %s", j)
		}
	}
	if kmsGrants != 1 {
		t.Errorf("%d KMS grants, want 1", kmsGrants)
	}
}
