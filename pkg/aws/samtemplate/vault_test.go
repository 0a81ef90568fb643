package samtemplate

import (
	"strings"
	"testing"
)

// TestVault checks the token vault of per-principal upstream identity:
// a KMS key with rotation whose ARN reaches the gateway only as
// TOOL_RAG_VAULT_KMS_KEY; the gateway alone may use it, for
// kms:GenerateDataKey and kms:Decrypt only, under the gateway's
// encryption contexts; the gateway alone may read and write the vault
// table.
func TestVault(t *testing.T) {
	tmpl := load(t)
	key, ok := tmpl.Resources["VaultKey"]
	if !ok || key.Type != "AWS::KMS::Key" || key.Properties["EnableKeyRotation"] != true {
		t.Fatalf("VaultKey: %s", js(key))
	}
	const grant = `{"Statement":[{"Action":["kms:GenerateDataKey","kms:Decrypt"],"Condition":{"StringLike":{"kms:EncryptionContext:purpose":"toolrag-*"}},"Effect":"Allow","Resource":{"Fn::GetAtt":["VaultKey","Arn"]}}]}`
	const crud = `{"DynamoDBCrudPolicy":{"TableName":{"Ref":"VaultTable"}}}`
	for _, f := range tmpl.Functions() {
		gw := f.Name() == "gateway"
		if got := js(f.Env["TOOL_RAG_VAULT_KMS_KEY"]); (got == `{"Fn::GetAtt":["VaultKey","Arn"]}`) != gw {
			t.Errorf("%s: TOOL_RAG_VAULT_KMS_KEY = %s", f.LogicalID, got)
		}
		pols, _ := tmpl.Resources[f.LogicalID].Properties["Policies"].([]any)
		kms, table := 0, 0
		for _, pol := range pols {
			j := js(pol)
			switch {
			case j == grant:
				kms++
			case j == crud:
				table++
			case strings.Contains(j, "kms:") || strings.Contains(j, "VaultTable") || strings.Contains(j, "VaultKey"):
				t.Errorf("%s: another vault grant: %s", f.LogicalID, j)
			}
		}
		want := 0
		if gw {
			want = 1
		}
		if kms != want || table != want {
			t.Errorf("%s: %d KMS grants and %d vault table grants, want %d", f.LogicalID, kms, table, want)
		}
	}
}
