package main

import (
	"strings"
	"testing"
)

// TestTasks checks what the gateway's own tasks need on AWS: the gateway
// (and only it) may invoke itself, through a policy the function does not
// depend on (CloudFormation refuses the cycle); it reads and writes task
// results under tasks/, which a lifecycle rule removes; with Secrets
// Manager the shared input_required state key is created under the
// secrets prefix, where the gateway reads its secrets.
func TestTasks(t *testing.T) {
	for _, store := range []string{"ssm", "secretsmanager"} {
		t.Run(store, func(t *testing.T) {
			cfg, err := LoadConfig("config.example.json")
			if err != nil {
				t.Fatal(err)
			}
			cfg.ServersFile = ""
			cfg.SecretsStore = store
			r := synth(t, cfg, nil)
			gw := firstID(r, "AWS::Lambda::Function", "GatewayFunction")
			invokes := 0
			for _, st := range statements(r) {
				j := js(st)
				if !strings.Contains(j, "lambda:InvokeFunction") || !strings.Contains(js(st["Resource"]), gw) {
					continue
				}
				invokes++
				if owner := st["_owner"].(string); !strings.HasPrefix(owner, "GatewaySelfInvoke") {
					t.Errorf("the gateway's self-invoke grant is in %s, want its own policy", owner)
				}
			}
			if invokes != 1 {
				t.Errorf("%d grants to invoke the gateway function, want 1 (its own tasks)", invokes)
			}
			pol := r.resources("AWS::IAM::Policy")[firstID(r, "AWS::IAM::Policy", "GatewaySelfInvoke")]
			if roles := js(pol["Roles"]); !strings.Contains(roles, "GatewayFunctionServiceRole") {
				t.Errorf("self-invoke policy attached to %s", roles)
			}
			if deps := js(r.doc["Resources"].(map[string]any)[gw].(map[string]any)["DependsOn"]); strings.Contains(deps, "GatewaySelfInvoke") {
				t.Errorf("the gateway function depends on its self-invoke policy (a cycle): %s", deps)
			}
			results := false
			for _, st := range statements(r) {
				if strings.HasPrefix(st["_owner"].(string), "GatewayFunctionServiceRole") && strings.Contains(js(st["Resource"]), "/tasks/*") &&
					strings.Contains(js(st["Action"]), "s3:PutObject") {
					results = true
				}
			}
			if !results {
				t.Error("the gateway may not write task results under tasks/")
			}
			stored := false
			for _, st := range statements(r) {
				j := js(st["Resource"])
				if strings.Contains(j, "/results/*") && strings.Contains(js(st["Action"]), "s3:PutObject") {
					stored = strings.HasPrefix(st["_owner"].(string), "GatewayFunctionServiceRole")
					if !stored {
						t.Errorf("%s may write stored results", st["_owner"])
					}
				}
			}
			if !stored {
				t.Error("the gateway may not store results over the inline limit under results/")
			}
			bucket := r.resources("AWS::S3::Bucket")[firstID(r, "AWS::S3::Bucket", "IndexBucket")]
			if rules := js(bucket["LifecycleConfiguration"]); !strings.Contains(rules, `"Prefix":"tasks/"`) || !strings.Contains(rules, `"Prefix":"results/"`) {
				t.Errorf("no lifecycle rule for task results: %s", rules)
			}
			key := firstID(r, "AWS::SecretsManager::Secret", "StateKey")
			if (key != "") != (store == "secretsmanager") {
				t.Fatalf("store %s: state key secret %q", store, key)
			}
			if key != "" {
				sec := r.resources("AWS::SecretsManager::Secret")[key]
				if name := js(sec["Name"]); name != js(cfg.SecretsPrefix+"TOOL_RAG_STATE_KEY") && !strings.HasSuffix(name, `TOOL_RAG_STATE_KEY"`) {
					t.Errorf("state key secret named %s, want it under the secrets prefix", name)
				}
			}
		})
	}
}
