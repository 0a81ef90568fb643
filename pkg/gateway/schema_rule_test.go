package gateway

import (
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// TestValidationNamesRuleNotValue (issue #11, finding 4): the message of a
// rejected argument (returned to the caller and written to the audit log)
// names the JSON path and the rule it broke, never the value: a token
// that fails its pattern must not be quoted back.
func TestValidationNamesRuleNotValue(t *testing.T) {
	tool := catalog.Tool{ID: "vault__put", ContentHash: "h1", InputSchema: []byte(`{
		"type": "object",
		"properties": {
			"token":  {"type": "string", "pattern": "^tok_[a-z]+$"},
			"email":  {"type": "string", "format": "email"},
			"pin":    {"type": "integer", "minimum": 100000, "maximum": 999999},
			"note":   {"type": "string", "maxLength": 4},
			"level":  {"enum": ["low", "high"]},
			"nested": {"type": "object", "properties": {"key": {"type": "string", "minLength": 40}}}
		}
	}`)}
	var c schemaCache
	tests := []struct {
		args       map[string]any
		value      string
		path, rule string
	}{
		{map[string]any{"token": "Sk-LIVE-4f9a8b7c6d5e"}, "Sk-LIVE-4f9a8b7c6d5e", "/token", `does not match the pattern "^tok_[a-z]+$"`},
		{map[string]any{"pin": 4711}, "4711", "/pin", "is less than minimum 100000"},
		{map[string]any{"pin": 1234567}, "1234567", "/pin", "is greater than maximum 999999"},
		{map[string]any{"note": "private-diary-entry"}, "private-diary-entry", "/note", "is longer than maxLength 4"},
		{map[string]any{"level": "top-secret-level"}, "top-secret-level", "/level", "value must be one of"},
		{map[string]any{"nested": map[string]any{"key": "AKIA-short-key"}}, "AKIA-short-key", "/nested/key", "is shorter than minLength 40"},
	}
	for _, tt := range tests {
		err := c.validate(tool, tt.args)
		if err == nil {
			t.Errorf("%v: accepted", tt.args)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, tt.value) {
			t.Errorf("the message quotes the value %q: %s", tt.value, msg)
		}
		if !strings.Contains(msg, "at "+tt.path+": ") || !strings.Contains(msg, tt.rule) {
			t.Errorf("message %q; want the path %s and the rule %q", msg, tt.path, tt.rule)
		}
	}
}
