package catalog

import (
	"bytes"
	"encoding/json"
)

// MCP Apps (the io.modelcontextprotocol/ui extension): a tool's
// _meta.ui.visibility says who may call it. "model" (the agent) and "app"
// (the tool's own UI) by default; ["app"] alone marks a tool only its app
// calls, which the gateway keeps out of what the model sees.

// AppOnly reports whether t is an app-only tool: its upstream's
// _meta.ui.visibility lists "app" and not "model".
func AppOnly(t Tool) bool {
	if !bytes.Contains(t.Extra, []byte(`"visibility"`)) {
		return false
	}
	var x struct {
		Meta struct {
			UI struct {
				Visibility []string `json:"visibility"`
			} `json:"ui"`
		} `json:"_meta"`
	}
	if json.Unmarshal(t.Extra, &x) != nil {
		return false
	}
	return appOnly(x.Meta.UI.Visibility)
}

func appOnly(visibility []string) bool {
	app := false
	for _, v := range visibility {
		switch v {
		case "model":
			return false
		case "app":
			app = true
		}
	}
	return app
}
