package gateway

import (
	"encoding/json"
	"math"
	"unicode/utf8"
)

// quickSchema accepts the arguments of a call without the full JSON Schema
// validator when the tool's schema uses only the keywords most tool schemas
// use (type, properties, required, additionalProperties, items, string
// enums and lengths, item counts, annotations). It only ever says "valid":
// arguments it does not accept, and every schema with another keyword, go
// to the full validator, which gives the verdict and the error messages.
// So a call it accepts is one the full validator accepts (TestQuickSchema
// checks this on a table of schemas and values).
type quickSchema struct {
	types              uint8 // typeObject|...; 0 = any type
	props              map[string]*quickSchema
	required           []string
	noExtra            bool         // additionalProperties: false
	items              *quickSchema // nil: any items
	enum               []any        // strings, booleans, nil
	minLength          int          // -1: none
	maxLength          int          // -1: none
	minItems, maxItems int          // -1: none
}

const (
	typeObject uint8 = 1 << iota
	typeArray
	typeString
	typeNumber
	typeInteger
	typeBoolean
	typeNull
)

var typeNames = map[string]uint8{"object": typeObject, "array": typeArray, "string": typeString,
	"number": typeNumber, "integer": typeInteger, "boolean": typeBoolean, "null": typeNull}

// quickAnnotations are keywords that constrain nothing.
var quickAnnotations = map[string]bool{"title": true, "description": true, "default": true, "examples": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true, "$schema": true, "$id": true}

// compileQuick returns the quick form of a schema document (as
// jsonschema.UnmarshalJSON decodes it: numbers are json.Number), or nil when
// the schema uses anything it does not handle.
func compileQuick(doc any) *quickSchema {
	switch d := doc.(type) {
	case bool:
		if d {
			return &quickSchema{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}
		}
		return nil
	case map[string]any:
		q := &quickSchema{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}
		for k, v := range d {
			ok := true
			switch k {
			case "type":
				q.types, ok = quickTypes(v)
			case "properties":
				ps, isMap := v.(map[string]any)
				if !isMap {
					return nil
				}
				q.props = make(map[string]*quickSchema, len(ps))
				for name, p := range ps {
					if q.props[name] = compileQuick(p); q.props[name] == nil {
						return nil
					}
				}
			case "required":
				rs, isList := v.([]any)
				if !isList {
					return nil
				}
				for _, r := range rs {
					s, isString := r.(string)
					if !isString {
						return nil
					}
					q.required = append(q.required, s)
				}
			case "additionalProperties":
				b, isBool := v.(bool)
				ok = isBool
				q.noExtra = isBool && !b
			case "items":
				q.items = compileQuick(v)
				ok = q.items != nil
			case "enum":
				es, isList := v.([]any)
				if !isList || len(es) == 0 {
					return nil
				}
				for _, e := range es {
					switch e.(type) {
					case string, bool, nil:
					default:
						return nil // numbers compare as exact rationals there
					}
				}
				q.enum = es
			case "minLength":
				q.minLength, ok = quickCount(v)
			case "maxLength":
				q.maxLength, ok = quickCount(v)
			case "minItems":
				q.minItems, ok = quickCount(v)
			case "maxItems":
				q.maxItems, ok = quickCount(v)
			default:
				ok = quickAnnotations[k]
			}
			if !ok {
				return nil
			}
		}
		return q
	}
	return nil
}

func quickTypes(v any) (uint8, bool) {
	var names []any
	switch t := v.(type) {
	case string:
		names = []any{t}
	case []any:
		names = t
	default:
		return 0, false
	}
	var mask uint8
	for _, n := range names {
		s, _ := n.(string)
		bit, known := typeNames[s]
		if !known {
			return 0, false
		}
		mask |= bit
	}
	return mask, mask != 0
}

func quickCount(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	if err != nil || i < 0 || i > math.MaxInt32 {
		return 0, false
	}
	return int(i), true
}

// valid reports whether v (decoded by encoding/json into an any) surely
// satisfies the schema; false means "ask the full validator".
func (q *quickSchema) valid(v any) bool {
	var kind uint8
	switch x := v.(type) {
	case map[string]any:
		kind = typeObject
	case []any:
		kind = typeArray
	case string:
		kind = typeString
	case bool:
		kind = typeBoolean
	case nil:
		kind = typeNull
	case float64:
		kind = typeNumber
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			kind |= typeInteger
		}
	default:
		return false // json.Number and anything else: the full validator
	}
	if q.types != 0 && q.types&kind == 0 { // an integer's kind has typeNumber too
		return false
	}
	if q.enum != nil {
		found := false
		for _, e := range q.enum {
			if e == v {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range q.required {
			if _, ok := x[r]; !ok {
				return false
			}
		}
		for k, e := range x {
			if p, ok := q.props[k]; ok {
				if !p.valid(e) {
					return false
				}
			} else if q.noExtra {
				return false
			}
		}
	case []any:
		if (q.minItems >= 0 && len(x) < q.minItems) || (q.maxItems >= 0 && len(x) > q.maxItems) {
			return false
		}
		if q.items != nil {
			for _, e := range x {
				if !q.items.valid(e) {
					return false
				}
			}
		}
	case string:
		if q.minLength >= 0 || q.maxLength >= 0 {
			n := utf8.RuneCountInString(x)
			if (q.minLength >= 0 && n < q.minLength) || (q.maxLength >= 0 && n > q.maxLength) {
				return false
			}
		}
	}
	return true
}
