package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

var testSchemaTool = catalog.Tool{
	ID: "s__t", ContentHash: "h1",
	InputSchema: json.RawMessage(`{"type":"object","properties":{
		"text":{"type":"string","maxLength":5},
		"count":{"type":"integer","minimum":1},
		"tags":{"type":"array","items":{"type":"string"}},
		"opts":{"type":"object","properties":{"deep":{"type":"boolean"}},"additionalProperties":false}
	},"required":["text"],"additionalProperties":false}`),
}

// Arguments decoded from JSON are validated without a JSON round trip;
// the verdict must be the one the round trip gave, and arguments built in
// Go (other types) still go through it.
func TestSchemaValidate(t *testing.T) {
	cases := []struct {
		name    string
		args    string         // decoded with encoding/json, as mcp-go does
		goArgs  map[string]any // or built in Go
		wantErr string         // "" = valid
	}{
		{name: "valid", args: `{"text":"hi","count":3,"tags":["a"],"opts":{"deep":true}}`},
		{name: "integer as float", args: `{"text":"hi","count":3.0}`},
		{name: "not an integer", args: `{"text":"hi","count":2.5}`, wantErr: "at /count"},
		{name: "below minimum", args: `{"text":"hi","count":0}`, wantErr: "at /count"},
		{name: "too long", args: `{"text":"toolong"}`, wantErr: "at /text"},
		{name: "missing required", args: `{"count":1}`, wantErr: "text"},
		{name: "wrong nested type", args: `{"text":"a","tags":[1]}`, wantErr: "at /tags/0"},
		{name: "extra nested property", args: `{"text":"a","opts":{"x":1}}`, wantErr: "at /opts"},
		{name: "null value", args: `{"text":null}`, wantErr: "at /text"},
		{name: "go ints and string slices", goArgs: map[string]any{"text": "hi", "count": 7, "tags": []string{"a", "b"}}},
		{name: "go int below minimum", goArgs: map[string]any{"text": "hi", "count": int64(0)}, wantErr: "at /count"},
		{name: "not JSON at all", goArgs: map[string]any{"text": "hi", "opts": map[string]any{"deep": func() {}}}, wantErr: "not JSON"},
	}
	var c schemaCache
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.goArgs
			if args == nil {
				if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
					t.Fatal(err)
				}
				if !jsonNative(args, 0) {
					t.Fatalf("decoded JSON %s is not seen as JSON-native", tc.args)
				}
			}
			err := c.validate(testSchemaTool, args)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("want an error with %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestJSONNative(t *testing.T) {
	deep := any("x")
	for range 200 {
		deep = []any{deep}
	}
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{map[string]any{"a": []any{1.0, "s", true, nil, map[string]any{}}, "n": json.Number("1")}, true},
		{map[string]any{"a": 1}, false},
		{map[string]any{"a": []string{"x"}}, false},
		{map[string]any{"a": map[string]string{}}, false},
		{deep, false},
	} {
		if got := jsonNative(tc.v, 0); got != tc.want {
			t.Errorf("jsonNative(%#v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// BenchmarkSchemaValidate: the gateway's argument check of one call: a
// schema with rules only the full validator checks (minimum, maxLength),
// and server-everything's echo schema, which quickSchema accepts, checked
// by quickSchema and (path=full, as before it) by the full validator.
//
//	go test ./pkg/gateway -run '^$' -bench SchemaValidate -benchmem
func BenchmarkSchemaValidate(b *testing.B) {
	var args map[string]any
	_ = json.Unmarshal([]byte(`{"text":"hi","count":3,"tags":["a","b","c"],"opts":{"deep":true}}`), &args)
	var echoArgs map[string]any
	_ = json.Unmarshal([]byte(`{"message":"hello"}`), &echoArgs)
	echo := catalog.Tool{ID: "ev__echo", ContentHash: "h", InputSchema: json.RawMessage(quickSchemas[0].schema)}
	var c schemaCache
	for _, bc := range []struct {
		name string
		run  func() error
	}{
		{"schema=rules", func() error { return c.validate(testSchemaTool, args) }},
		{"schema=echo/path=quick", func() error { return c.validate(echo, echoArgs) }},
		{"schema=echo/path=full", func() error { return c.compiled(echo).full.Validate(any(echoArgs)) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
