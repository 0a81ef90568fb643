package catalog

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tool types.
const (
	TypeQuery     = "query"     // reads or searches data
	TypeAction    = "action"    // changes state: create, update, send
	TypeTransform = "transform" // computes from its input without external effects
)

// Permission scopes.
const (
	ScopeRead        = "read"
	ScopeWrite       = "write"
	ScopeDestructive = "destructive"
)

var (
	readVerbs = set("get", "list", "search", "find", "fetch", "read", "query", "lookup", "look", "show",
		"describe", "retrieve", "check", "view", "browse", "count", "download", "inspect", "explain", "stat",
		"info", "status", "load", "scan", "watch", "monitor", "recommend", "suggest", "lookup", "resolve")
	writeVerbs = set("create", "add", "update", "set", "put", "post", "send", "write", "edit", "modify",
		"insert", "upload", "save", "move", "rename", "copy", "start", "run", "execute", "exec", "trigger",
		"invoke", "submit", "book", "publish", "schedule", "assign", "apply", "install", "enable", "disable",
		"open", "close", "merge", "push", "commit", "reply", "comment", "register", "approve", "cancel",
		"stop", "restart", "deploy", "launch", "generate", "make", "build", "append", "replace", "patch", "mark")
	destructiveVerbs = set("delete", "remove", "drop", "destroy", "purge", "truncate", "kill", "terminate",
		"erase", "wipe", "uninstall", "revoke", "reset", "clear", "unlink", "rm", "del")
	transformVerbs = set("convert", "format", "parse", "calculate", "compute", "translate", "encode",
		"decode", "validate", "transform", "summarize", "analyze", "analyse", "extract", "compare",
		"hash", "render", "echo", "add_numbers", "sum", "evaluate")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

type annotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint"`
	DestructiveHint *bool `json:"destructiveHint"`
}

// Classify derives a tool's type and permission scope. MCP annotations win
// (readOnlyHint, destructiveHint); otherwise the leading verb of the name
// decides, and a tool whose name gives no verb is a read-only query.
func Classify(name, description string, rawAnnotations json.RawMessage) (toolType, scope string) {
	var ann annotations
	if len(rawAnnotations) > 0 {
		_ = json.Unmarshal(rawAnnotations, &ann)
	}
	verb := ""
	for _, w := range SplitName(name) {
		if readVerbs[w] || writeVerbs[w] || destructiveVerbs[w] || transformVerbs[w] {
			verb = w
			break
		}
	}
	switch {
	case destructiveVerbs[verb]:
		toolType, scope = TypeAction, ScopeDestructive
	case writeVerbs[verb]:
		toolType, scope = TypeAction, ScopeWrite
	case transformVerbs[verb]:
		toolType, scope = TypeTransform, ScopeRead
	default:
		toolType, scope = TypeQuery, ScopeRead
	}
	if ann.ReadOnlyHint != nil && *ann.ReadOnlyHint {
		scope = ScopeRead
		if toolType == TypeAction {
			toolType = TypeQuery
		}
	} else if ann.DestructiveHint != nil && *ann.DestructiveHint && (ann.ReadOnlyHint == nil || !*ann.ReadOnlyHint) {
		toolType, scope = TypeAction, ScopeDestructive
	} else if ann.ReadOnlyHint != nil && !*ann.ReadOnlyHint && scope == ScopeRead && toolType == TypeQuery && verb == "" {
		toolType, scope = TypeAction, ScopeWrite
	}
	return toolType, scope
}

// SplitName splits an identifier into lower-case words at snake_case,
// kebab-case, dots, spaces and camelCase boundaries:
// "getHTTPResponse_v2" → [get http response v2].
func SplitName(name string) []string {
	// A word is a run of letters and digits of name, so it is cut from
	// name by byte offsets (no rune slices: this runs on every word of a
	// catalog at cold start) and copied once, lower-cased.
	var words []string
	start := -1 // byte offset of the current word, -1: none
	flush := func(end int) {
		if start >= 0 {
			w := strings.ToLower(name[start:end])
			if len(w) == end-start && w == name[start:end] {
				w = strings.Clone(w) // ToLower returned name's bytes
			}
			words = append(words, w)
			start = -1
		}
	}
	prev := rune(-1)
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush(i)
		case unicode.IsUpper(r):
			// Boundary before an upper-case letter that follows a lower-case
			// letter or digit, or that starts a word after an acronym
			// ("HTTPResponse" → HTTP, Response).
			if start >= 0 {
				next, _ := utf8.DecodeRuneInString(name[i+size:])
				nextLower := i+size < len(name) && unicode.IsLower(next)
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					flush(i)
				}
			}
			if start < 0 {
				start = i
			}
		default:
			if start < 0 {
				start = i
			}
		}
		prev = r
		i += size
	}
	flush(len(name))
	return words
}
