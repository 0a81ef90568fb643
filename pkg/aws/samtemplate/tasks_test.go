package samtemplate

import (
	"strings"
	"testing"
)

// TestTasks checks what the gateway's own tasks need in the SAM stack: the
// gateway alone may invoke itself (by its generated name's pattern) and
// read and write task results under tasks/, which a lifecycle rule
// removes; with Secrets Manager the shared input_required state key is
// created under the secrets prefix the functions read.
func TestTasks(t *testing.T) {
	tmpl := load(t)
	for _, f := range tmpl.Functions() {
		gw := f.Name() == "gateway"
		j := js(tmpl.Resources[f.LogicalID].Properties["Policies"])
		self := strings.Contains(j, `function:${AWS::StackName}-GatewayFunction-*`)
		results := strings.Contains(j, `${IndexBucket.Arn}/tasks/*`) && strings.Contains(j, `${IndexBucket.Arn}/results/*`)
		if self != gw || results != gw {
			t.Errorf("%s: may invoke the gateway %v, may use task results %v; want %v", f.LogicalID, self, results, gw)
		}
	}
	bucket := js(tmpl.Resources["IndexBucket"].Properties["LifecycleConfiguration"])
	if !strings.Contains(bucket, `"Prefix":"tasks/"`) || !strings.Contains(bucket, `"Prefix":"results/"`) {
		t.Errorf("no lifecycle rule for task results: %s", bucket)
	}
	key, ok := tmpl.Resources["StateKey"]
	if !ok || key.Type != "AWS::SecretsManager::Secret" || key.Condition != "SecretsInSecretsManager" {
		t.Fatalf("StateKey: %s", js(key))
	}
	if name := js(key.Properties["Name"]); !strings.Contains(name, `${SecretsPrefix}TOOL_RAG_STATE_KEY`) {
		t.Errorf("state key named %s, want it under the secrets prefix", name)
	}
}
