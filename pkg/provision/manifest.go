package provision

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/aws/secrets"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"gopkg.in/yaml.v3"
)

// Server kinds.
const (
	KindRemote = "remote" // an MCP endpoint that already runs somewhere: register its URL
	KindDocker = "docker" // a source tree with a Dockerfile: build and run it as a container
	KindStdio  = "stdio"  // a source tree that runs as a local process speaking MCP on stdin/stdout
)

// Transports.
const (
	TransportStreamableHTTP = "streamable_http"
	TransportSSE            = "sse"
	TransportStdio          = "stdio"
)

// MaxManifestBytes bounds the size of one manifest file.
const MaxManifestBytes = 1 << 20

// Manifest is one servers/<id>/manifest.yaml after parsing and validation.
// Defaults are filled in: Transport, Path and Build are never empty for the
// kinds that use them.
type Manifest struct {
	ID          string
	Kind        string
	Description string

	Transport string            // remote, docker: streamable_http | sse; stdio: stdio
	URL       string            // remote
	Headers   map[string]string // remote

	Build   string   // docker: build context relative to the server folder (default ".")
	Port    int      // docker: port the server listens on inside the container
	Path    string   // docker: MCP path (default /mcp, or /sse for sse)
	EnvFile []string // docker: env files relative to the server folder

	Command   []string          // stdio: required; docker: optional override of the image CMD
	Env       map[string]string // docker, stdio
	Setup     []string          // stdio: one-time install steps, each run with sh -c in the server folder
	Cwd       string            // stdio: working directory relative to the server folder ("" = the folder)
	BaseImage string            // stdio: base image of the container built for AWS (empty = the deploy default)

	// File is the manifest's path as given to ParseManifest and Lines maps
	// each top-level field to its line, for errors found after parsing.
	File  string
	Lines map[string]int
}

// line returns the line of a top-level field, or of the closest field that
// explains a default (the kind line), or 1.
func (m *Manifest) line(fields ...string) int {
	for _, f := range fields {
		if l := m.Lines[f]; l > 0 {
			return l
		}
	}
	if l := m.Lines["kind"]; l > 0 {
		return l
	}
	return 1
}

// Error is one problem found in a manifest, located by file and line.
type Error struct {
	File string
	Line int // 0 when the problem concerns the whole file
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Errors is every problem found, in file and line order. It is the error
// type ParseManifest and Run return for invalid manifests.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	if len(es) > 1 {
		return fmt.Sprintf("%d problems in server manifests:\n  %s", len(es), strings.Join(lines, "\n  "))
	}
	return strings.Join(lines, "")
}

func (es Errors) sorted() Errors {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].File != es[j].File {
			return es[i].File < es[j].File
		}
		return es[i].Line < es[j].Line
	})
	return es
}

// fields allowed per kind; "id", "kind" and "description" are allowed for all.
var kindFields = map[string][]string{
	KindRemote: {"transport", "url", "headers"},
	KindDocker: {"build", "port", "transport", "path", "command", "env", "env_file"},
	KindStdio:  {"setup", "command", "env", "cwd", "transport", "base_image"},
}

var allFields = func() map[string]bool {
	m := map[string]bool{"id": true, "kind": true, "description": true}
	for _, fs := range kindFields {
		for _, f := range fs {
			m[f] = true
		}
	}
	return m
}()

var (
	envKeyPattern    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerKeyPattern = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// ParseManifest parses and validates one manifest. file is used in error
// messages only (give it relative to the repository root, e.g.
// "servers/echo/manifest.yaml"). Every problem is reported, each with its
// line; the error is of type Errors. ParseManifest never touches the file
// system: checks that need it (the id matches the folder, the Dockerfile
// exists) are done by Run.
func ParseManifest(file string, data []byte) (m *Manifest, err error) {
	p := &parser{file: file, m: &Manifest{File: file, Lines: map[string]int{}}}
	if len(data) > MaxManifestBytes {
		return nil, Errors{{File: file, Msg: fmt.Sprintf("manifest is %d bytes; the limit is %d", len(data), MaxManifestBytes)}}
	}
	var doc yaml.Node
	if err := safeUnmarshal(data, &doc); err != nil {
		return nil, Errors{p.yamlError(err)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, Errors{{File: file, Msg: "manifest is empty: it needs at least id and kind (see servers/MANIFEST.example.yaml)"}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, Errors{{File: file, Line: root.Line, Msg: "manifest must be a mapping of fields (id: ..., kind: ...)"}}
	}
	p.fields(root)
	p.validate()
	if len(p.errs) > 0 {
		return nil, p.errs.sorted()
	}
	return p.m, nil
}

func safeUnmarshal(data []byte, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: cannot parse: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(n); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // empty document
		}
		return err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return fmt.Errorf("yaml: line %d: a manifest holds one YAML document; remove the second one (after ---)", max(extra.Line, 1))
	} else if !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

type parser struct {
	file string
	m    *Manifest
	errs Errors
	vals map[string]*yaml.Node // top-level values by key
}

var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *parser) yamlError(err error) *Error {
	msg := err.Error()
	if te := (*yaml.TypeError)(nil); errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if mm := yamlLineRe.FindStringSubmatch(msg); mm != nil {
		l, _ := strconv.Atoi(mm[1])
		return &Error{File: p.file, Line: l, Msg: "invalid YAML: " + mm[2]}
	}
	return &Error{File: p.file, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

func (p *parser) errorf(line int, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// fields records every top-level field and decodes it by name.
func (p *parser) fields(root *yaml.Node) {
	p.vals = map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := deref(root.Content[i]), deref(root.Content[i+1])
		if k == nil || v == nil {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			p.errorf(k.Line, "field names must be plain words")
			continue
		}
		name := k.Value
		if name == "<<" {
			p.errorf(k.Line, "YAML merge keys (<<) are not supported in manifests")
			continue
		}
		if first, dup := p.m.Lines[name]; dup {
			p.errorf(k.Line, "field %q is set twice (first on line %d)", name, first)
			continue
		}
		p.m.Lines[name] = k.Line
		if !allFields[name] {
			p.errorf(k.Line, "unknown field %q%s", name, suggest(name))
			continue
		}
		p.vals[name] = v
	}
	m := p.m
	m.ID = p.str("id")
	m.Kind = p.str("kind")
	m.Description = p.str("description")
	m.Transport = p.str("transport")
	m.URL = p.str("url")
	m.Headers = p.strMap("headers", headerKeyPattern, "header names")
	m.Build = p.str("build")
	m.Port = p.port("port")
	m.Path = p.str("path")
	m.EnvFile = p.strList("env_file", true)
	m.Command = p.strList("command", false)
	m.Env = p.strMap("env", envKeyPattern, "environment variable names")
	m.Setup = p.strList("setup", true)
	m.Cwd = p.str("cwd")
	m.BaseImage = p.str("base_image")
}

func suggest(name string) string {
	best, bestD := "", 3
	for f := range allFields {
		if d := editDistance(strings.ToLower(name), f); d < bestD || (d == bestD && best != "" && f < best) {
			best, bestD = f, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func (p *parser) str(name string) string {
	v, ok := p.vals[name]
	if !ok || isNull(v) {
		return ""
	}
	if v.Kind != yaml.ScalarNode {
		p.errorf(v.Line, "%s must be a single value, not a %s", name, nodeKind(v))
		return ""
	}
	return v.Value
}

func (p *parser) port(name string) int {
	v, ok := p.vals[name]
	if !ok || isNull(v) {
		return 0
	}
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || n < 1 || n > 65535 {
		p.errorf(v.Line, "%s must be a number from 1 to 65535, got %s", name, shortValue(v))
		return 0
	}
	return n
}

// strList reads a sequence of scalars; allowScalar accepts a single value as
// a one-element list.
func (p *parser) strList(name string, allowScalar bool) []string {
	v, ok := p.vals[name]
	if !ok || isNull(v) {
		return nil
	}
	if v.Kind == yaml.ScalarNode && allowScalar {
		return []string{v.Value}
	}
	if v.Kind != yaml.SequenceNode {
		if name == "command" && v.Kind == yaml.ScalarNode {
			p.errorf(v.Line, "command must be a list, e.g. [%s]", quoteWords(v.Value))
		} else {
			p.errorf(v.Line, "%s must be a list, not a %s", name, nodeKind(v))
		}
		return nil
	}
	out := make([]string, 0, len(v.Content))
	for _, it := range v.Content {
		it = deref(it)
		if it == nil || it.Kind != yaml.ScalarNode || isNull(it) {
			p.errorf(lineOf(it, v), "each item of %s must be a single value", name)
			continue
		}
		out = append(out, it.Value)
	}
	return out
}

func (p *parser) strMap(name string, keyRe *regexp.Regexp, what string) map[string]string {
	v, ok := p.vals[name]
	if !ok || isNull(v) {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		p.errorf(v.Line, "%s must be a mapping of NAME: value, not a %s", name, nodeKind(v))
		return nil
	}
	out := map[string]string{}
	seen := map[string]int{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := deref(v.Content[i]), deref(v.Content[i+1])
		if k == nil || k.Kind != yaml.ScalarNode {
			p.errorf(lineOf(k, v), "%s: %s must be plain words", name, what)
			continue
		}
		if first, dup := seen[k.Value]; dup {
			p.errorf(k.Line, "%s: %q is set twice (first on line %d)", name, k.Value, first)
			continue
		}
		seen[k.Value] = k.Line
		if !keyRe.MatchString(k.Value) {
			p.errorf(k.Line, "%s: %q is not a valid name (%s must match %s)", name, k.Value, what, keyRe.String())
			continue
		}
		if val != nil && val.Kind != yaml.ScalarNode {
			p.errorf(val.Line, "%s: the value of %s must be a single value, not a %s", name, k.Value, nodeKind(val))
			continue
		}
		s := ""
		if !isNull(val) {
			s = val.Value
		}
		out[k.Value] = s
	}
	return out
}

func lineOf(n, parent *yaml.Node) int {
	if n != nil && n.Line > 0 {
		return n.Line
	}
	return parent.Line
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	default:
		return "value"
	}
}

func shortValue(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return "a " + nodeKind(n)
	}
	s := n.Value
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}

func quoteWords(s string) string {
	ws := strings.Fields(s)
	if len(ws) > 6 {
		ws = ws[:6]
	}
	for i, w := range ws {
		ws[i] = strconv.Quote(w)
	}
	return strings.Join(ws, ", ")
}

// validate checks the fields against the kind and fills in defaults.
func (p *parser) validate() {
	m := p.m
	if _, ok := p.vals["id"]; !ok {
		p.errorf(1, "missing field id (the server id, equal to its folder name)")
	} else if err := catalog.ValidServerID(m.ID); err != nil {
		p.errorf(m.line("id"), "bad id: %v", err)
	}
	allowed, known := kindFields[m.Kind]
	switch {
	case p.vals["kind"] == nil:
		p.errorf(1, "missing field kind (remote, docker or stdio)")
		return
	case !known:
		p.errorf(m.line("kind"), "unknown kind %q (want remote, docker or stdio)", m.Kind)
		return
	}
	ok := map[string]bool{"id": true, "kind": true, "description": true}
	for _, f := range allowed {
		ok[f] = true
	}
	for name := range p.vals {
		if !ok[name] {
			p.errorf(m.line(name), "field %q does not apply to kind %s (it takes: %s)", name, m.Kind, strings.Join(allowed, ", "))
		}
	}
	p.reservedRefs("headers", "header", m.Headers)
	p.reservedRefs("env", "env", m.Env)
	switch m.Kind {
	case KindRemote:
		p.validateTransport(TransportStreamableHTTP, TransportStreamableHTTP, TransportSSE)
		if m.URL == "" {
			p.errorf(m.line("url"), "kind remote needs url (the MCP endpoint, e.g. https://mcp.example.com/mcp)")
		} else if u, err := url.Parse(m.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.errorf(m.line("url"), "url %q must be an absolute http:// or https:// URL", m.URL)
		}
	case KindDocker:
		p.validateTransport(TransportStreamableHTTP, TransportStreamableHTTP, TransportSSE)
		if m.Port == 0 && isNull(p.vals["port"]) {
			p.errorf(m.line("port"), "kind docker needs port (the port the server listens on inside the container)")
		}
		if m.Path == "" {
			m.Path = "/mcp"
			if m.Transport == TransportSSE {
				m.Path = "/sse"
			}
		} else if !strings.HasPrefix(m.Path, "/") || strings.ContainsAny(m.Path, " ?#") {
			p.errorf(m.line("path"), "path %q must start with / and hold no spaces, ? or #", m.Path)
		}
		if m.Build == "" {
			m.Build = "."
		}
		p.relPath("build", m.Build)
		for _, f := range m.EnvFile {
			p.relPath("env_file", f)
		}
		if len(m.Command) > 0 && m.Command[0] == "" {
			p.errorf(m.line("command"), "command must not start with an empty word")
		}
		if !startsAlnum(m.ID) {
			p.errorf(m.line("id"), "a docker server id must start with a letter or digit (it names a compose service)")
		}
	case KindStdio:
		p.validateTransport(TransportStdio, TransportStdio)
		if len(m.Command) == 0 || m.Command[0] == "" {
			p.errorf(m.line("command"), "kind stdio needs command, a list like [\"python\", \"server.py\"], run in the server folder")
		}
		if m.Cwd != "" {
			p.relPath("cwd", m.Cwd)
		}
		for i, s := range m.Setup {
			if strings.TrimSpace(s) == "" {
				p.errorf(m.line("setup"), "setup step %d is empty", i+1)
			}
		}
	}
}

// reservedRefs refuses a ${VAR} naming the gateway's or the platform's own
// variables (secrets.Reserved): the registry loader would never expand it,
// and it must not reach a server's URL or container.
func (p *parser) reservedRefs(field, what string, vals map[string]string) {
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, n := range secrets.RefNames(vals[k]) {
			if err := secrets.Reserved(n); err != nil {
				p.errorf(p.m.line(field), "server %q: %s %s names ${%s}, which is never expanded: %v", p.m.ID, what, k, n, err)
			}
		}
	}
}

func startsAlnum(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *parser) validateTransport(def string, allowed ...string) {
	m := p.m
	if m.Transport == "" {
		m.Transport = def
		return
	}
	for _, a := range allowed {
		if m.Transport == a {
			return
		}
	}
	p.errorf(m.line("transport"), "unknown transport %q for kind %s (want %s)", m.Transport, m.Kind, strings.Join(allowed, " or "))
}

// relPath checks that a path stays inside the server folder.
func (p *parser) relPath(field, v string) {
	clean := path.Clean(strings.ReplaceAll(v, "\\", "/"))
	if v == "" || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.ContainsRune(v, 0) {
		p.errorf(p.m.line(field), "%s %q must be a relative path inside the server folder", field, v)
	}
}
