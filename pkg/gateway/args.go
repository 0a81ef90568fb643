package gateway

// Reading meta-tool arguments and shaping results.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

func isMethodNotFound(err error) bool {
	if errors.Is(err, mcp.ErrMethodNotFound) {
		return true
	}
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "method not found") || strings.Contains(s, "not supported") || strings.Contains(s, "does not support")
}

func structured(v any) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return mcp.NewToolResultErrorf("internal error encoding the result: %v", err)
	}
	return mcp.NewToolResultStructured(v, string(b))
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(mcp.TextContent); ok {
			parts = append(parts, t.Text)
		} else if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		return "the tool reported an error"
	}
	return strings.Join(parts, "\n")
}

func schemaOrEmpty(s json.RawMessage) json.RawMessage {
	if len(s) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return s
}

func truncate(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n])) + "…"
}

func round4(f float64) float64 { return float64(int64(f*10000+0.5*sign(f))) / 10000 }

func sign(f float64) float64 {
	if f < 0 {
		return -1
	}
	return 1
}

func stringArg(args map[string]any, name string, required bool) (string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("%s is required", name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string", name)
	}
	if required && strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%s must not be empty", name)
	}
	return s, nil
}

func intArg(args map[string]any, name string, def, min, max int) (int, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return def, nil
	}
	f, ok := v.(float64)
	if !ok || f != float64(int64(f)) {
		return 0, fmt.Errorf("%s must be an integer", name)
	}
	if int(f) < min || int(f) > max {
		return 0, fmt.Errorf("%s must be between %d and %d", name, min, max)
	}
	return int(f), nil
}

func boolArg(args map[string]any, name string, def bool) (bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s must be true or false", name)
	}
	return b, nil
}

func objectArg(args map[string]any, name string) (map[string]any, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an object", name)
	}
	return m, nil
}
