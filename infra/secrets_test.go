package main

import (
	"sort"
	"strings"
	"testing"
)

// Each function is told which store holds the upstream secrets
// (TOOL_RAG_SECRETS_STORE, TOOL_RAG_SECRETS_PREFIX) and may read that store
// under the prefix only: SSM's read actions on parameter/<prefix>*, or
// secretsmanager:GetSecretValue (nothing else: ListSecrets and
// BatchGetSecretValue cannot be scoped to a prefix) on secret:<prefix>*.
func TestSecretsStoreGrants(t *testing.T) {
	tests := []struct {
		store       string
		prefix      string
		wantActions []string
		wantRes     string // a substring of the statement's resource
		otherStore  string // no action of this service may be granted
	}{
		{"ssm", "/toolrag/ssmstage/", []string{"ssm:GetParameter", "ssm:GetParameters", "ssm:GetParametersByPath"},
			":ssm:us-east-1:123456789012:parameter/toolrag/ssmstage/*", "secretsmanager:"},
		{"secretsmanager", "/toolrag/smstage/", []string{"secretsmanager:GetSecretValue"},
			":secretsmanager:us-east-1:123456789012:secret:/toolrag/smstage/*", "ssm:"},
	}
	for _, tc := range tests {
		t.Run(tc.store, func(t *testing.T) {
			r := synth(t, Config{Stage: "dev", SecretsStore: tc.store, SecretsPrefix: tc.prefix}, nil)
			for _, name := range []string{"Gateway", "Sync", "Health"} {
				env := envOf(r.function(t, name+"Function"))
				if env["TOOL_RAG_SECRETS_STORE"] != tc.store || env["TOOL_RAG_SECRETS_PREFIX"] != tc.prefix {
					t.Errorf("%s: TOOL_RAG_SECRETS_STORE %v, TOOL_RAG_SECRETS_PREFIX %v; want %s, %s",
						name, env["TOOL_RAG_SECRETS_STORE"], env["TOOL_RAG_SECRETS_PREFIX"], tc.store, tc.prefix)
				}
				var found []string
				for _, st := range statements(r) {
					if !strings.HasPrefix(st["_owner"].(string), name+"Function") {
						continue
					}
					var acts []string
					for _, a := range asList(st["Action"]) {
						as, _ := a.(string)
						if strings.HasPrefix(as, tc.otherStore) {
							t.Errorf("%s may %s although secrets are in %s", name, as, tc.store)
						}
						if strings.HasPrefix(as, tc.store+":") {
							acts = append(acts, as)
						}
					}
					if len(acts) == 0 {
						continue
					}
					sort.Strings(acts)
					if strings.Join(acts, ",") != strings.Join(tc.wantActions, ",") {
						t.Errorf("%s: %s actions %v, want %v", name, tc.store, acts, tc.wantActions)
					}
					res := asList(st["Resource"])
					if len(res) != 1 || !strings.Contains(js(res[0]), tc.wantRes) {
						t.Errorf("%s: %s granted on %s, want only %s", name, tc.store, js(res), tc.wantRes)
					}
					found = append(found, acts...)
				}
				if len(found) == 0 {
					t.Errorf("%s has no %s grant", name, tc.store)
				}
			}
			checkIAM(t, r, false)
		})
	}
}
