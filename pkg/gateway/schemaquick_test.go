package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// quickSchemas are tool input schemas: those quickSchema handles (quick:
// true) and some it must leave to the full validator.
var quickSchemas = []struct {
	schema string
	quick  bool
}{
	{`{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`, true},
	{`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`, true},
	{`{"type":"object","properties":{"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string","minLength":1,"maxLength":3},"minItems":1,"maxItems":2},"opt":{"type":["string","null"]},"mode":{"enum":["fast","slow",null]},"flag":{"type":"boolean","default":false},"any":true,"obj":{"type":"object","properties":{"x":{"type":"string"}},"additionalProperties":false,"required":["x"]}}}`, true},
	{`{"type":"object"}`, true},
	{`{}`, true},
	{`{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}`, false},
	{`{"type":"object","properties":{"s":{"type":"string","pattern":"^a"}}}`, false},
	{`{"type":"object","properties":{"s":{"type":"string","format":"email"}}}`, false},
	{`{"type":"object","properties":{"e":{"enum":[1,2.5]}}}`, false},
	{`{"type":"object","additionalProperties":{"type":"string"}}`, false},
	{`{"type":"object","properties":{"r":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, false},
	{`{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"string"}]}}}`, false},
	{`{"type":"object","properties":{"t":{"type":"array","uniqueItems":true}}}`, false},
	{`{"type":"object","properties":{"x":false}}`, false},
	{`{"type":"object","properties":{"n":{"type":"integer","exclusiveMaximum":3}}}`, false},
}

// TestQuickSchema: for every schema and a corpus of argument values,
// quickSchema never accepts what the full validator refuses, and it does
// accept valid arguments of the schemas it handles (so that it is used).
func TestQuickSchema(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	keys := []string{"message", "a", "b", "n", "tags", "opt", "mode", "flag", "any", "obj", "x", "s", "e", "r", "t", "extra"}
	var value func(depth int) any
	value = func(depth int) any {
		scalars := []any{nil, true, false, 0.0, 1.0, -1.0, 2.5, 1e300, "", "a", "abc", "abcd", "héllo", "fast", "slow", "x@y.z", 2.0}
		switch r := rng.Intn(10); {
		case depth > 2 || r < 5:
			return scalars[rng.Intn(len(scalars))]
		case r < 7:
			out := make([]any, rng.Intn(4))
			for i := range out {
				out[i] = value(depth + 1)
			}
			return out
		default:
			out := map[string]any{}
			for range rng.Intn(5) {
				out[keys[rng.Intn(len(keys))]] = value(depth + 1)
			}
			return out
		}
	}
	for i, sc := range quickSchemas {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var c schemaCache
			tool := catalog.Tool{ID: fmt.Sprintf("s__t%d", i), ContentHash: "h", InputSchema: json.RawMessage(sc.schema)}
			cs := c.compiled(tool)
			if cs.full == nil {
				t.Fatalf("schema %s does not compile", sc.schema)
			}
			if (cs.quick != nil) != sc.quick {
				t.Fatalf("quick form of %s: %v, want %v", sc.schema, cs.quick != nil, sc.quick)
			}
			if cs.quick == nil {
				return
			}
			accepted := 0
			for range 3000 {
				v := value(0)
				if rng.Intn(2) == 0 { // objects most of the time: arguments are objects
					m := map[string]any{}
					for range rng.Intn(6) {
						m[keys[rng.Intn(len(keys))]] = value(1)
					}
					v = m
				}
				if !cs.quick.valid(v) {
					continue
				}
				accepted++
				b, _ := json.Marshal(v)
				doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				if err := cs.full.Validate(doc); err != nil {
					t.Fatalf("quickSchema accepts %s, which the full validator refuses for %s: %v", b, sc.schema, err)
				}
			}
			if accepted == 0 {
				t.Errorf("quickSchema accepted none of the values for %s", sc.schema)
			}
		})
	}
	// The gateway's own check takes the quick path for a valid call and
	// still reports the full validator's message for an invalid one.
	var c schemaCache
	tool := catalog.Tool{ID: "ev__echo", ContentHash: "h", InputSchema: json.RawMessage(quickSchemas[0].schema)}
	if err := c.validate(tool, map[string]any{"message": "hi"}); err != nil {
		t.Errorf("valid call refused: %v", err)
	}
	if err := c.validate(tool, map[string]any{"message": 5.0}); err == nil || err.Error() != "at /message: got number, want string" {
		t.Errorf("invalid call: %v", err)
	}
}
