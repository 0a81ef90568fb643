// Package catalog defines the tool catalog the gateway keeps about its
// upstreams: one record per tool and one per server, the classification of
// tools by type and permission scope, and the Store contract that the local
// (SQLite) and AWS (DynamoDB) implementations satisfy.
package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Separator joins a server id and an upstream tool or prompt name into the
// merged name exposed by the gateway ("server__tool").
const Separator = "__"

// Tool status values.
const (
	StatusActive = "active" // listed by its server at the last successful sync
	StatusStale  = "stale"  // its server was unreachable at the last sync; kept, not deleted
)

// ErrNotFound is returned by stores for a missing tool or server.
var ErrNotFound = errors.New("not found")

var serverIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// ValidServerID reports whether id can be used as a server id: it must
// match ^[A-Za-z0-9._-]+$, must not contain "__" and must not start or end
// with "_". Together these make a tool id "server__name" split back into
// exactly one (server, name): with "evil" and "evil_" both allowed,
// "evil___add" could be evil's "_add" or evil_'s "add".
func ValidServerID(id string) error {
	if id == "" {
		return errors.New("server id is empty")
	}
	if !serverIDPattern.MatchString(id) {
		return errors.New("server id " + strconvQuote(id) + " must match ^[A-Za-z0-9._-]+$")
	}
	if strings.Contains(id, Separator) {
		return errors.New("server id " + strconvQuote(id) + " must not contain \"__\"")
	}
	if strings.HasPrefix(id, "_") || strings.HasSuffix(id, "_") {
		return errors.New("server id " + strconvQuote(id) + " must not start or end with \"_\" (the tool id server__name would not split back unambiguously)")
	}
	return nil
}

// StoredServerID accepts the ids a store may hold from before the rule on
// "_" at the ends: such a server can be deleted (the sync purges it), never
// written.
func StoredServerID(id string) error {
	if err := ValidServerID(id); err == nil || (serverIDPattern.MatchString(id) && !strings.Contains(id, Separator)) {
		return nil
	}
	return ValidServerID(id)
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// ToolID returns the merged id of a tool: "server__name".
func ToolID(server, name string) string { return server + Separator + name }

// SplitToolID splits a merged id at the first "__". Server ids never contain
// "__", so the split is unambiguous; the tool name may contain it.
func SplitToolID(id string) (server, name string, ok bool) {
	i := strings.Index(id, Separator)
	if i <= 0 || i+len(Separator) >= len(id) {
		return "", "", false
	}
	return id[:i], id[i+len(Separator):], true
}

// Tool is one catalog record: one upstream tool, never chunked.
type Tool struct {
	ID          string          `json:"tool_id"`
	Server      string          `json:"server_name"`
	Name        string          `json:"tool_name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Extra holds, as the upstream sent them, every field of its tool not
	// held above: outputSchema, icons, _meta, execution and any field a
	// later protocol version adds (a JSON object, or empty). The gateway
	// serves them unchanged.
	Extra           json.RawMessage `json:"extra,omitempty"`
	ToolType        string          `json:"tool_type"`
	PermissionScope string          `json:"permission_scope"`
	Tags            []string        `json:"tags,omitempty"`
	Status          string          `json:"status"`
	ContentHash     string          `json:"content_hash"`
	UpdatedAt       time.Time       `json:"updated_at"`
}

// Server is what the catalog knows about one upstream server.
type Server struct {
	ID          string    `json:"id"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description,omitempty"` // from serverInfo / instructions
	Status      string    `json:"status"`                // active or stale
	LastError   string    `json:"last_error,omitempty"`
	SyncedAt    time.Time `json:"synced_at"`
	// Extra holds what the server said about itself at initialize, as it
	// sent it: {"serverInfo": {name, version, title, description, icons,
	// websiteUrl, ...}, "instructions": "..."} (a JSON object, or empty).
	Extra json.RawMessage `json:"extra,omitempty"`
}

// Store persists the catalog. Implementations: pkg/catalog/sqlite (SQLite) and
// pkg/aws/dynamo (DynamoDB). Every implementation must pass storetest.Run.
type Store interface {
	// ReplaceServerTools makes tools the complete, active tool list of the
	// server, atomically: new and changed tools (by ContentHash) are written,
	// tools of that server not in the list are deleted, unchanged tools are
	// left alone (their status returns to active). It returns the ids of the
	// tools it wrote or whose status changed and the ids it deleted.
	ReplaceServerTools(ctx context.Context, srv Server, tools []Tool) (changed, deleted []string, err error)
	// MarkServerStale keeps every tool of the server but marks it stale and
	// records the error; it never deletes anything.
	MarkServerStale(ctx context.Context, serverID, reason string) error
	// DeleteServer removes a server and all its tools.
	DeleteServer(ctx context.Context, serverID string) error
	GetTool(ctx context.Context, id string) (Tool, error) // ErrNotFound when missing
	ListTools(ctx context.Context) ([]Tool, error)        // sorted by ID
	ListServers(ctx context.Context) ([]Server, error)    // sorted by ID
	Close() error
}

// Finalize fills the derived fields of t (ID, ToolType, PermissionScope,
// ContentHash, Status when empty) from its other fields.
func Finalize(t *Tool) {
	if t.ID == "" {
		t.ID = ToolID(t.Server, t.Name)
	}
	if t.ToolType == "" || t.PermissionScope == "" {
		typ, scope := Classify(t.Name, t.Description, t.Annotations)
		if t.ToolType == "" {
			t.ToolType = typ
		}
		if t.PermissionScope == "" {
			t.PermissionScope = scope
		}
	}
	if t.Status == "" {
		t.Status = StatusActive
	}
	t.ContentHash = ContentHash(*t)
}

// ContentHash is a stable hash of everything that affects how a tool is
// indexed and called. Status and timestamps are excluded.
func ContentHash(t Tool) string {
	h := sha256.New()
	write := func(s string) { h.Write([]byte(s)); h.Write([]byte{0}) }
	write(t.ID)
	write(t.Title)
	write(t.Description)
	write(string(compactJSON(t.InputSchema)))
	write(string(compactJSON(t.Annotations)))
	tags := append([]string(nil), t.Tags...)
	sort.Strings(tags)
	write(strings.Join(tags, ","))
	if len(t.Extra) > 0 { // records without Extra keep the hash they had
		write(string(compactJSON(t.Extra)))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:32]
}

func compactJSON(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	b, _ := json.Marshal(v) // map keys are sorted by encoding/json
	return b
}

// FormatTime is the text a store keeps a time as: RFC 3339 in UTC with
// nanoseconds, "" for the zero time.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// ParseTime reads FormatTime's text back; "" or text that is not such a
// time is the zero time.
func ParseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
