// Command rawserver is a stdio MCP server for the fidelity tests that
// lists exactly the JSON it is given, with no MCP library in between:
//
//	rawserver -lists FILE
//
// FILE is a JSON object with any of the members "tools", "prompts",
// "resources" and "resourceTemplates", each an array written as it is in
// the answers to tools/list, prompts/list, resources/list and
// resources/templates/list (one page); the server declares the
// capabilities of the members present. The member "answers" maps methods
// (tools/call, prompts/get, resources/read) to the result each request of
// that method gets, as it is; without one a tools/call answers the tool's
// name and arguments as text, resources/read the URI as text.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	file := ""
	for i := 1; i < len(os.Args)-1; i++ {
		if os.Args[i] == "-lists" {
			file = os.Args[i+1]
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rawserver: -lists FILE:", err)
		os.Exit(2)
	}
	var lists map[string]json.RawMessage
	if err := json.Unmarshal(b, &lists); err != nil {
		fmt.Fprintln(os.Stderr, "rawserver:", file, err)
		os.Exit(2)
	}
	caps := map[string]any{}
	if lists["tools"] != nil {
		caps["tools"] = map[string]any{}
	}
	if lists["prompts"] != nil {
		caps["prompts"] = map[string]any{}
	}
	if lists["resources"] != nil || lists["resourceTemplates"] != nil {
		caps["resources"] = map[string]any{}
		for _, m := range []string{"resources", "resourceTemplates"} {
			if lists[m] == nil {
				lists[m] = json.RawMessage(`[]`)
			}
		}
	}
	page := func(member string) any { return map[string]json.RawMessage{member: lists[member]} }
	var answers map[string]json.RawMessage
	if err := json.Unmarshal(lists["answers"], &answers); lists["answers"] != nil && err != nil {
		fmt.Fprintln(os.Stderr, "rawserver: answers:", err)
		os.Exit(2)
	}

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string          `json:"protocolVersion"`
				Name            string          `json:"name"`
				Arguments       json.RawMessage `json:"arguments"`
				URI             string          `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification
		}
		var result any
		switch req.Method {
		case "tools/call", "prompts/get", "resources/read":
			if a, ok := answers[req.Method]; ok {
				result = a
				break
			}
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": req.Params.Name + " " + string(req.Params.Arguments)}}}
			if req.Method == "resources/read" {
				result = map[string]any{"contents": []any{map[string]any{"uri": req.Params.URI, "mimeType": "text/plain", "text": req.Params.URI}}}
			}
		case "initialize":
			result = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": caps,
				"serverInfo": map[string]any{"name": "rawserver", "version": "0.1.0"}}
		case "ping":
			result = map[string]any{}
		case "tools/list":
			result = page("tools")
		case "prompts/list":
			result = page("prompts")
		case "resources/list":
			result = page("resources")
		case "resources/templates/list":
			result = page("resourceTemplates")
		default:
			_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found: " + req.Method}})
			continue
		}
		_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}
}
