// Package samtemplate reads an AWS SAM / CloudFormation template written in
// YAML, including the short intrinsic-function tags (!Ref, !Sub, !GetAtt,
// !If, ...), into plain Go values, and answers the few questions the
// repository's checks ask of template.yaml: which functions it defines,
// with what code, runtime, size and environment, and which tables.
package samtemplate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Template is a parsed template. Values are map[string]any, []any, string,
// bool, int, float64 or nil; an intrinsic tag becomes its long form, e.g.
// !Ref X → map{"Ref": "X"} and !GetAtt A.B → map{"Fn::GetAtt": []any{"A", "B"}}.
type Template struct {
	Globals    map[string]any
	Parameters map[string]any
	Conditions map[string]any
	Resources  map[string]Resource
	Outputs    map[string]any
}

// Resource is one entry of Resources.
type Resource struct {
	Type       string
	Properties map[string]any
	Condition  string
}

// Parse decodes a template.
func Parse(data []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("samtemplate: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("samtemplate: empty document")
	}
	v, err := convert(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("samtemplate: the template is not a mapping")
	}
	t := &Template{Resources: map[string]Resource{}}
	t.Globals, _ = root["Globals"].(map[string]any)
	t.Parameters, _ = root["Parameters"].(map[string]any)
	t.Outputs, _ = root["Outputs"].(map[string]any)
	t.Conditions, _ = root["Conditions"].(map[string]any)
	res, _ := root["Resources"].(map[string]any)
	for id, r := range res {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("samtemplate: resource %s is not a mapping", id)
		}
		typ, _ := m["Type"].(string)
		if typ == "" {
			return nil, fmt.Errorf("samtemplate: resource %s has no Type", id)
		}
		props, _ := m["Properties"].(map[string]any)
		cond, _ := m["Condition"].(string)
		t.Resources[id] = Resource{Type: typ, Properties: props, Condition: cond}
	}
	return t, nil
}

const maxDepth = 100

func convert(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("samtemplate: line %d: nesting deeper than %d", n.Line, maxDepth)
	}
	var v any
	switch n.Kind {
	case yaml.AliasNode:
		return convert(n.Alias, depth+1)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("samtemplate: line %d: key %q repeated", n.Content[i].Line, k)
			}
			val, err := convert(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = val
		}
		v = m
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			val, err := convert(c, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, val)
		}
		v = l
	case yaml.ScalarNode:
		v = scalar(n)
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return intrinsic(n, v)
	}
	return v, nil
}

func scalar(n *yaml.Node) any {
	switch n.Tag {
	case "!!bool":
		b, _ := strconv.ParseBool(strings.ToLower(n.Value))
		return b
	case "!!int":
		if i, err := strconv.Atoi(n.Value); err == nil {
			return i
		}
	case "!!float":
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return f
		}
	case "!!null":
		return nil
	}
	return n.Value
}

func intrinsic(n *yaml.Node, v any) (any, error) {
	name := strings.TrimPrefix(n.Tag, "!")
	switch name {
	case "Ref", "Condition":
		return map[string]any{name: v}, nil
	case "GetAtt":
		if s, ok := v.(string); ok {
			res, attr, found := strings.Cut(s, ".")
			if !found {
				return nil, fmt.Errorf("samtemplate: line %d: !GetAtt %q needs Resource.Attribute", n.Line, s)
			}
			return map[string]any{"Fn::GetAtt": []any{res, attr}}, nil
		}
		return map[string]any{"Fn::GetAtt": v}, nil
	case "Base64", "Cidr", "Equals", "FindInMap", "GetAZs", "If", "ImportValue", "Join", "Not", "Or", "And", "Select", "Split", "Sub", "Transform", "Length", "ToJsonString":
		return map[string]any{"Fn::" + name: v}, nil
	}
	return nil, fmt.Errorf("samtemplate: line %d: unknown tag %s", n.Line, n.Tag)
}

// Function is an AWS::Serverless::Function with Globals applied.
type Function struct {
	LogicalID     string
	CodeURI       string
	Handler       string
	Runtime       string
	Architectures []string
	Env           map[string]any // Globals variables overlaid by the function's
	Events        map[string]Event
	// MemorySize (MiB) and Timeout (seconds) as written: an int, or an
	// intrinsic such as map{"Ref": "GatewayMemorySize"}; nil when neither
	// the function nor Globals sets it.
	MemorySize any
	Timeout    any
	// LogFormat is LoggingConfig.LogFormat ("JSON", "Text"; "" when unset).
	LogFormat string
}

// Event is one entry of a function's Events.
type Event struct {
	Type       string
	Properties map[string]any
}

// Functions returns the serverless functions the template always
// deploys, sorted by logical id; those under a Condition (the streamed
// front door's) are read with Function.
func (t *Template) Functions() []Function {
	var out []Function
	for id, r := range t.Resources {
		if r.Type == "AWS::Serverless::Function" && r.Condition == "" {
			f, _ := t.Function(id)
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LogicalID < out[j].LogicalID })
	return out
}

// Function returns the serverless function with logical id id, with the
// Globals applied; false when there is none.
func (t *Template) Function(id string) (Function, bool) {
	g, _ := t.Globals["Function"].(map[string]any)
	r, ok := t.Resources[id]
	if !ok || r.Type != "AWS::Serverless::Function" {
		return Function{}, false
	}
	get := func(k string) any {
		if v, ok := r.Properties[k]; ok {
			return v
		}
		return g[k]
	}
	f := Function{LogicalID: id, Env: map[string]any{}, Events: map[string]Event{}}
	f.CodeURI, _ = get("CodeUri").(string)
	f.Handler, _ = get("Handler").(string)
	f.Runtime, _ = get("Runtime").(string)
	f.MemorySize, f.Timeout = get("MemorySize"), get("Timeout")
	lc, _ := get("LoggingConfig").(map[string]any)
	f.LogFormat, _ = lc["LogFormat"].(string)
	if as, ok := get("Architectures").([]any); ok {
		for _, a := range as {
			s, _ := a.(string)
			f.Architectures = append(f.Architectures, s)
		}
	}
	for _, src := range []map[string]any{g, r.Properties} {
		env, _ := src["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		for k, v := range vars {
			f.Env[k] = v
		}
	}
	evs, _ := r.Properties["Events"].(map[string]any)
	for name, e := range evs {
		m, _ := e.(map[string]any)
		typ, _ := m["Type"].(string)
		props, _ := m["Properties"].(map[string]any)
		f.Events[name] = Event{Type: typ, Properties: props}
	}
	return f, true
}

// Name returns the function's short name from its CodeUri: "dist/gateway/"
// → "gateway".
func (f Function) Name() string {
	s := strings.TrimSuffix(f.CodeURI, "/")
	return s[strings.LastIndex(s, "/")+1:]
}
