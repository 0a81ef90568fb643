// Package planner asks an OpenAI-compatible chat model for a multi-step
// plan over a shortlist of discovered tools. The plan is advice for the
// client: the planner never calls a tool, and it keeps only steps whose
// tool is among the candidates it was given.
package planner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/internal/duration"
	"github.com/toolrag/mcp-gateway/internal/redact"
	"github.com/toolrag/mcp-gateway/pkg/jsonhttp"
)

// Config configures the planner.
type Config struct {
	// Enabled is true when TOOL_RAG_PLANNER=llm.
	Enabled bool
	// URL is the full chat-completions endpoint, e.g.
	// http://127.0.0.1:11434/v1/chat/completions.
	URL string
	// Model is sent as "model", e.g. qwen2.5:14b-instruct.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <APIKey>".
	APIKey string
	// Temperature is the sampling temperature (ConfigFromEnv default 0.1).
	Temperature float64
	// Timeout bounds the whole call (default 60s).
	Timeout time.Duration
	// HTTPClient defaults to a plain client (Timeout applies per call).
	HTTPClient *http.Client
}

// DefaultTemperature is the sampling temperature when none is configured.
const DefaultTemperature = 0.1

// MaxSteps caps the steps kept from one reply.
const MaxSteps = 32

// ConfigFromEnv reads the planner settings through getenv (os.Getenv in
// production). An invalid value gives an error naming the variable.
//
//	TOOL_RAG_PLANNER              off (default) | llm
//	TOOL_RAG_PLANNER_URL          chat-completions endpoint (required with llm)
//	TOOL_RAG_PLANNER_MODEL        model name (required with llm)
//	TOOL_RAG_PLANNER_API_KEY      bearer token (optional)
//	TOOL_RAG_PLANNER_TEMPERATURE  default 0.1, 0..2
//	TOOL_RAG_PLANNER_TIMEOUT      "60s" or seconds (default 60s)
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	cfg := Config{
		URL:         get("TOOL_RAG_PLANNER_URL"),
		Model:       get("TOOL_RAG_PLANNER_MODEL"),
		APIKey:      get("TOOL_RAG_PLANNER_API_KEY"),
		Temperature: DefaultTemperature,
		Timeout:     60 * time.Second,
	}
	switch m := strings.ToLower(get("TOOL_RAG_PLANNER")); m {
	case "", "off", "0", "false":
	case "llm":
		cfg.Enabled = true
	default:
		return Config{}, fmt.Errorf("TOOL_RAG_PLANNER=%q is not one of off, llm", m)
	}
	if s := get("TOOL_RAG_PLANNER_TEMPERATURE"); s != "" {
		t, err := strconv.ParseFloat(s, 64)
		if err != nil || t < 0 || t > 2 {
			return Config{}, fmt.Errorf("TOOL_RAG_PLANNER_TEMPERATURE=%q is not a number between 0 and 2", s)
		}
		cfg.Temperature = t
	}
	if s := get("TOOL_RAG_PLANNER_TIMEOUT"); s != "" {
		d, err := duration.Parse(s)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("TOOL_RAG_PLANNER_TIMEOUT=%q is not a positive duration such as 60s or a number of seconds", s)
		}
		cfg.Timeout = d
	}
	if cfg.Enabled {
		if cfg.URL == "" {
			return Config{}, errors.New("TOOL_RAG_PLANNER_URL is required when TOOL_RAG_PLANNER=llm (e.g. http://127.0.0.1:11434/v1/chat/completions)")
		}
		if cfg.Model == "" {
			return Config{}, errors.New("TOOL_RAG_PLANNER_MODEL is required when TOOL_RAG_PLANNER=llm")
		}
	}
	return cfg, nil
}

// Candidate is one discovered tool the plan may use.
type Candidate struct {
	CallName    string
	Description string
	InputSchema json.RawMessage
	ToolType    string
}

// Step is one tool call of a plan.
type Step struct {
	ID       string `json:"id"`
	CallName string `json:"call_name"`
	// ArgumentsHint is the model's suggestion for the arguments (usually a
	// JSON object); the client fills in the concrete values.
	ArgumentsHint json.RawMessage `json:"arguments_hint,omitempty"`
	// DependsOn lists the ids of steps whose results this step needs.
	DependsOn []string `json:"depends_on"`
	// Group numbers the waves of execution from 1: the steps of one group
	// depend only on steps of lower groups and can run together (run_tools).
	Group    int    `json:"group"`
	ToolType string `json:"tool_type,omitempty"`
}

// Plan is the planner's advice.
type Plan struct {
	Steps []Step `json:"steps"`
	Notes string `json:"notes,omitempty"`
	// Missing names capabilities the candidates do not cover, including
	// tools the model proposed that are not among the candidates.
	Missing []string `json:"missing"`
}

// Planner calls the chat model. It is safe for concurrent use.
type Planner struct {
	cfg    Config
	client *jsonhttp.Client
}

// New returns a planner for cfg (cfg.Enabled is not consulted).
func New(cfg Config) (*Planner, error) {
	if !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return nil, fmt.Errorf("planner: endpoint %q must be a full http:// or https:// URL (TOOL_RAG_PLANNER_URL)", cfg.URL)
	}
	if cfg.Model == "" {
		return nil, errors.New("planner: no model configured (TOOL_RAG_PLANNER_MODEL)")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	// No retries: a chat completion is long, and Timeout bounds the whole
	// call; the agent can ask for the plan again.
	return &Planner{cfg: cfg, client: jsonhttp.New(jsonhttp.Config{Name: "planner", URL: cfg.URL, APIKey: cfg.APIKey,
		Timeout: cfg.Timeout, MaxResponseBytes: 8 << 20, HTTPClient: cfg.HTTPClient})}, nil
}

const systemPrompt = `You plan tool calls for an AI agent. You receive a task and a list of available tools (call_name, description, tool_type, input_schema). Reply with one JSON object and nothing else:
{"steps": [{"id": "s1", "call_name": "<exactly one call_name from the list>", "arguments_hint": {<argument name>: <value or a short description of where it comes from>}, "depends_on": ["<ids of steps whose output this step needs>"], "group": 1, "tool_type": "<tool_type of the tool>"}], "notes": "<short advice for the agent>", "missing": ["<capabilities the task needs that no listed tool provides>"]}
Rules: use only call_names from the list, spelled exactly; never invent tools (put what is missing in "missing"). Keep the plan minimal. Steps with no dependency between them share a group so they can run in parallel; a step's group is higher than the groups of the steps it depends on. Refer to another step's output in arguments_hint as "<from s1>". You only plan: nothing is executed.`

// Plan asks the model for a plan for query over candidates. Steps naming a
// tool outside candidates are dropped (their names go to Missing) together
// with dependencies on them; groups are made consistent with dependencies.
func (p *Planner) Plan(ctx context.Context, query string, candidates []Candidate) (Plan, error) {
	if strings.TrimSpace(query) == "" {
		return Plan{}, errors.New("planner: the query is empty")
	}
	if len(candidates) == 0 {
		return Plan{}, errors.New("planner: no candidate tools to plan with")
	}
	user, err := userMessage(query, candidates)
	if err != nil {
		return Plan{}, err
	}
	content, err := p.complete(ctx, user)
	if err != nil {
		return Plan{}, err
	}
	raw, err := parseReply(content)
	if err != nil {
		return Plan{}, fmt.Errorf("planner: model %s: %w", p.cfg.Model, err)
	}
	return finish(raw, candidates)
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model          string        `json:"model"`
	Messages       []chatMessage `json:"messages"`
	Temperature    float64       `json:"temperature"`
	ResponseFormat struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// maxDescription and maxSchema bound what one candidate adds to the prompt.
const (
	maxDescription = 600
	maxSchema      = 2000
)

func userMessage(query string, candidates []Candidate) (string, error) {
	type tool struct {
		CallName    string          `json:"call_name"`
		Description string          `json:"description"`
		ToolType    string          `json:"tool_type,omitempty"`
		InputSchema json.RawMessage `json:"input_schema,omitempty"`
	}
	tools := make([]tool, 0, len(candidates))
	for _, c := range candidates {
		tools = append(tools, tool{
			CallName:    c.CallName,
			Description: truncate(c.Description, maxDescription),
			ToolType:    c.ToolType,
			InputSchema: compactSchema(c.InputSchema),
		})
	}
	b, err := json.Marshal(struct {
		Task  string `json:"task"`
		Tools []tool `json:"tools"`
	}{query, tools})
	if err != nil {
		return "", fmt.Errorf("planner: encoding the candidates: %w", err)
	}
	return string(b), nil
}

// compactSchema keeps a schema as it is when small, else only its
// property names, types and required list.
func compactSchema(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil // not JSON: leave it out rather than fail the plan
	}
	if buf.Len() <= maxSchema {
		return buf.Bytes()
	}
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	props := map[string]any{}
	for name, p := range s.Properties {
		props[name] = map[string]any{"type": p.Type}
	}
	out, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": s.Required})
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func (p *Planner) complete(ctx context.Context, user string) (string, error) {
	req := chatRequest{
		Model:       p.cfg.Model,
		Messages:    []chatMessage{{"system", systemPrompt}, {"user", user}},
		Temperature: p.cfg.Temperature,
	}
	req.ResponseFormat.Type = "json_object"
	body, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("planner: encoding the request: %w", err)
	}
	raw, err := p.client.Post(ctx, body)
	if err != nil {
		return "", err
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return "", fmt.Errorf("planner: %s answered with malformed JSON (%v): %s", p.cfg.URL, err, redact.Snippet(raw, p.cfg.APIKey))
	}
	if len(cr.Choices) == 0 {
		return "", fmt.Errorf("planner: %s answered without choices: %s", p.cfg.URL, redact.Snippet(raw, p.cfg.APIKey))
	}
	content := messageText(cr.Choices[0].Message.Content)
	if strings.TrimSpace(content) == "" {
		return "", fmt.Errorf("planner: model %s returned an empty reply (finish_reason %q)", p.cfg.Model, cr.Choices[0].FinishReason)
	}
	if cr.Choices[0].FinishReason == "length" {
		return "", fmt.Errorf("planner: model %s was cut off before finishing the plan (finish_reason \"length\")", p.cfg.Model)
	}
	return content, nil
}

// messageText reads message.content as a string or as an array of
// {"type":"text","text":...} parts.
func messageText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}
