package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// schemaCache compiles each tool's input schema once (keyed by content
// hash) and validates call arguments before they reach the upstream.
type schemaCache struct {
	mu sync.Mutex
	m  map[schemaKey]compiledSchema
}

type schemaKey struct{ hash, id string }

// compiledSchema is a tool's compiled input schema (nil: not checkable) and
// its quick form (nil: none).
type compiledSchema struct {
	full  *jsonschema.Schema
	quick *quickSchema
}

func (c *schemaCache) validate(t catalog.Tool, args map[string]any) error {
	cs := c.compiled(t)
	s := cs.full
	if s == nil {
		return nil
	}
	if cs.quick != nil && cs.quick.valid(args) {
		return nil // the full validator would accept them too (quickSchema)
	}
	// Arguments decoded from JSON (every call that came over the wire) are
	// validated as they are; anything else is round-tripped through JSON
	// first so that it has the types the validator expects.
	var v any = args
	if !jsonNative(args, 0) {
		b, err := json.Marshal(args)
		if err != nil {
			return fmt.Errorf("arguments are not JSON: %w", err)
		}
		if v, err = jsonschema.UnmarshalJSON(bytes.NewReader(b)); err != nil {
			return fmt.Errorf("arguments are not JSON: %w", err)
		}
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("%s", flattenValidation(err))
	}
	return nil
}

// jsonNative reports whether v holds only what encoding/json decodes into
// an any: maps with string keys, slices of any, strings, float64, bool and
// nil (json.Number too), nested at most 128 levels (deeper input is
// round-tripped, and fails there as before).
func jsonNative(v any, depth int) bool {
	if depth > 128 {
		return false
	}
	switch x := v.(type) {
	case nil, string, bool, json.Number:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case map[string]any:
		for _, e := range x {
			if !jsonNative(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !jsonNative(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

func (c *schemaCache) compiled(t catalog.Tool) compiledSchema {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[schemaKey]compiledSchema{}
	}
	key := schemaKey{t.ContentHash, t.ID}
	if cs, ok := c.m[key]; ok {
		return cs
	}
	var s *jsonschema.Schema
	var quick *quickSchema
	if len(t.InputSchema) > 0 {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.InputSchema))
		if err == nil {
			comp := jsonschema.NewCompiler()
			// Upstream schemas often name a $schema we should not fetch;
			// compile offline and skip tools whose schema does not compile.
			comp.UseLoader(offlineLoader{})
			if m, ok := doc.(map[string]any); ok {
				delete(m, "$schema")
				delete(m, "$id")
			}
			if err := comp.AddResource("tool.json", doc); err == nil {
				s, _ = comp.Compile("tool.json")
			}
			if s != nil {
				quick = compileQuick(doc)
			}
		}
	}
	if len(c.m) > 50000 {
		c.m = map[schemaKey]compiledSchema{}
	}
	c.m[key] = compiledSchema{s, quick}
	return c.m[key]
}

var printer = message.NewPrinter(language.English)

type offlineLoader struct{}

func (offlineLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %s, which is not fetched", url)
}

// flattenValidation turns the validator's error tree into one line per
// leaf, e.g. "at /count: got string, want integer".
func flattenValidation(err error) string {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err.Error()
	}
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			lines = append(lines, fmt.Sprintf("at %s: %s", loc, ruleMessage(e.ErrorKind)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(lines) > 5 {
		lines = append(lines[:5], fmt.Sprintf("and %d more", len(lines)-5))
	}
	return strings.Join(lines, "; ")
}

// ruleMessage says which rule of the schema an argument broke, never the
// argument's value: the message goes back to the caller and into the audit
// log, and a value may be a secret (a token that fails its pattern). The
// schema's own constraints (pattern, bounds, allowed values) are public.
func ruleMessage(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Pattern:
		return fmt.Sprintf("does not match the pattern %q", k.Want)
	case *kind.Format:
		return fmt.Sprintf("is not a valid %s", k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("is shorter than minLength %d", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("is longer than maxLength %d", k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("has fewer items than minItems %d", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("has more items than maxItems %d", k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("has fewer properties than minProperties %d", k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("has more properties than maxProperties %d", k.Want)
	case *kind.Minimum:
		return fmt.Sprintf("is less than minimum %s", k.Want.RatString())
	case *kind.Maximum:
		return fmt.Sprintf("is greater than maximum %s", k.Want.RatString())
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("is not greater than exclusiveMinimum %s", k.Want.RatString())
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("is not less than exclusiveMaximum %s", k.Want.RatString())
	case *kind.MultipleOf:
		return fmt.Sprintf("is not a multiple of %s", k.Want.RatString())
	case *kind.Type, *kind.Enum, *kind.Const, *kind.Required, *kind.AdditionalProperties,
		*kind.UniqueItems, *kind.FalseSchema, *kind.DependentRequired, *kind.Dependency,
		*kind.MinContains, *kind.MaxContains, *kind.AdditionalItems, *kind.Not:
		return k.LocalizedString(printer) // these name types, property names, indices or the schema's values only
	}
	if path := k.KeywordPath(); len(path) > 0 {
		return fmt.Sprintf("fails the %s rule", strings.Join(path, "/"))
	}
	return "does not match the schema"
}
