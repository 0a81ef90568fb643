// Package config loads the gateway's configuration: environment variables,
// the upstream registry (registry.yaml merged over registry.generated.yaml)
// and the API keys file (keys.yaml). Every error names the file, the entry
// and what is wrong.
package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// Env is the process configuration read from environment variables.
type Env struct {
	ConfigDir     string // MCP_GATEWAY_CONFIG_DIR, default ./config
	RegistryPath  string // MCP_GATEWAY_REGISTRY, default <config>/registry.yaml
	GeneratedPath string // MCP_GATEWAY_REGISTRY_GENERATED, default <config>/registry.generated.yaml
	KeysPath      string // MCP_GATEWAY_KEYS, default <config>/keys.yaml
	MCPPath       string // MCP_GATEWAY_MCP_PATH, default /mcp
	Host          string // MCP_GATEWAY_HOST, default 127.0.0.1 (loopback only)
	Port          int    // MCP_GATEWAY_PORT, default 8765
	PublicURL     string // MCP_GATEWAY_PUBLIC_URL: the gateway's public base URL (scheme://host[:port]), when it is not Host:Port

	MaxParallel        int           // TOOL_RAG_MAX_PARALLEL, default 8
	WithoutAuth        bool          // TOOL_RAG_WITHOUT_AUTH, default false
	DBPath             string        // TOOL_RAG_DB, default tool_registry.db
	IndexDir           string        // TOOL_RAG_INDEX_DIR, default tool_index (next to the DB)
	StartupReindex     string        // TOOL_RAG_STARTUP_REINDEX: full | incremental | off
	ResyncInterval     time.Duration // TOOL_RAG_RESYNC_INTERVAL (seconds), 0 = off
	HealthInterval     time.Duration // TOOL_RAG_HEALTHCHECK_INTERVAL (seconds), default 30, 0 = off
	HealthTimeout      time.Duration // TOOL_RAG_HEALTHCHECK_TIMEOUT (seconds), default 5
	ShortlistDescChars int           // TOOL_RAG_SHORTLIST_DESC_CHARS, default 300, 0 = full

	CallTimeout    time.Duration // MCP_GATEWAY_UPSTREAM_TIMEOUT (seconds), default 60
	ConnectTimeout time.Duration // MCP_GATEWAY_UPSTREAM_CONNECT_TIMEOUT (seconds), default 20
	IdleTimeout    time.Duration // MCP_GATEWAY_STDIO_IDLE_TIMEOUT (seconds), default 300
	StdioPoolSize  int           // MCP_GATEWAY_STDIO_POOL_SIZE, default 2
	MaxResultBytes int64         // MCP_GATEWAY_MAX_RESULT_BYTES, default 8 MiB: larger results are stored and linked
	// Large results (pkg/gateway bigresult.go): MaxSpillBytes
	// (MCP_GATEWAY_MAX_SPILL_BYTES, default 128 MiB; 0 = results over
	// MaxResultBytes are refused) is the largest result taken from an
	// upstream and stored; ResultTTL (MCP_GATEWAY_RESULT_TTL, default
	// 3600 s) how long it stays readable; ResultURLTTL
	// (MCP_GATEWAY_RESULT_URL_TTL, default 900 s) how long a signed
	// download URL is valid; ResultPreviewBytes
	// (MCP_GATEWAY_RESULT_PREVIEW_BYTES, default 2048) the text kept
	// inline; ResultsDir (MCP_GATEWAY_RESULTS_DIR, default next to the DB)
	// where the local runtime stores them.
	MaxSpillBytes      int64
	ResultTTL          time.Duration
	ResultURLTTL       time.Duration
	ResultPreviewBytes int
	ResultsDir         string
	MaxBodyBytes       int64         // MCP_GATEWAY_MAX_BODY_BYTES, default 4 MiB
	SessionTTL         time.Duration // MCP_GATEWAY_SESSION_TTL (seconds), default 86400
	InputTTL           time.Duration // MCP_GATEWAY_INPUT_TTL (seconds), default 600: how long a 2026-07-28 client has to answer input_required
	SyncParallel       int           // TOOL_RAG_SYNC_PARALLEL, default 16
	SyncTimeout        time.Duration // TOOL_RAG_SYNC_TIMEOUT (seconds per server), default 30
	MaxTools           int           // TOOL_RAG_MAX_TOOLS_PER_SERVER, default 2000
	MaxToolPages       int           // TOOL_RAG_MAX_TOOL_PAGES (tools/list pages per server), default 100

	AuthFailureRate   float64       // MCP_GATEWAY_AUTH_FAILURE_RATE (failed authentications per second and client address, after the burst), default 0.5
	AuthFailureBurst  int           // MCP_GATEWAY_AUTH_FAILURE_BURST, default 30; 0 turns the limit off
	TrustForwardedFor bool          // MCP_GATEWAY_TRUST_FORWARDED_FOR: count failures under the last X-Forwarded-For entry, default false
	ConfigPoll        time.Duration // MCP_GATEWAY_CONFIG_POLL (seconds): how often keys.yaml and registry.yaml are checked for changes, default 2, 0 = only on SIGHUP
	ConsolePath       string        // TOOL_RAG_CONSOLE_PATH, default /console; "off" (or "") turns the console off
	CallSequences     bool          // TOOL_RAG_CALL_SEQUENCES: count "called after, in the same session" tool pairs for related (pkg/callseq), default false
	// CallSeqMinPrincipals (TOOL_RAG_CALLSEQ_MIN_PRINCIPALS, default 3):
	// distinct keys that must make a pair on one day before it counts;
	// CallSeqPrincipalDayCap (TOOL_RAG_CALLSEQ_PRINCIPAL_DAY_CAP, default
	// 1, 0 = none): the most one key adds to a pair per day.
	CallSeqMinPrincipals   int
	CallSeqPrincipalDayCap int
}

// FromEnv reads Env through getenv (os.Getenv in production).
func FromEnv(getenv func(string) string) (Env, error) {
	p := parser{getenv: getenv}
	e := Env{
		ConfigDir:              p.str("MCP_GATEWAY_CONFIG_DIR", "./config"),
		MCPPath:                p.str("MCP_GATEWAY_MCP_PATH", "/mcp"),
		Host:                   p.str("MCP_GATEWAY_HOST", "127.0.0.1"),
		Port:                   p.int("MCP_GATEWAY_PORT", 8765, 1, 65535),
		PublicURL:              strings.TrimSuffix(strings.TrimSpace(p.getenv("MCP_GATEWAY_PUBLIC_URL")), "/"),
		MaxParallel:            p.int("TOOL_RAG_MAX_PARALLEL", 8, 1, 1024),
		WithoutAuth:            p.bool("TOOL_RAG_WITHOUT_AUTH", false),
		DBPath:                 p.str("TOOL_RAG_DB", "tool_registry.db"),
		StartupReindex:         p.enum("TOOL_RAG_STARTUP_REINDEX", "full", "full", "incremental", "off"),
		ResyncInterval:         p.seconds("TOOL_RAG_RESYNC_INTERVAL", 0),
		HealthInterval:         p.seconds("TOOL_RAG_HEALTHCHECK_INTERVAL", 30),
		HealthTimeout:          p.seconds("TOOL_RAG_HEALTHCHECK_TIMEOUT", 5),
		ShortlistDescChars:     p.int("TOOL_RAG_SHORTLIST_DESC_CHARS", 300, 0, 1<<20),
		CallTimeout:            p.seconds("MCP_GATEWAY_UPSTREAM_TIMEOUT", 60),
		ConnectTimeout:         p.seconds("MCP_GATEWAY_UPSTREAM_CONNECT_TIMEOUT", 20),
		IdleTimeout:            p.seconds("MCP_GATEWAY_STDIO_IDLE_TIMEOUT", 300),
		StdioPoolSize:          p.int("MCP_GATEWAY_STDIO_POOL_SIZE", 2, 1, 64),
		MaxResultBytes:         int64(p.int("MCP_GATEWAY_MAX_RESULT_BYTES", 8<<20, 1024, 1<<30)),
		MaxBodyBytes:           int64(p.int("MCP_GATEWAY_MAX_BODY_BYTES", 4<<20, 1024, 1<<30)),
		MaxSpillBytes:          int64(p.int("MCP_GATEWAY_MAX_SPILL_BYTES", 128<<20, 0, 4<<30)),
		ResultTTL:              p.seconds("MCP_GATEWAY_RESULT_TTL", 3600),
		ResultURLTTL:           p.seconds("MCP_GATEWAY_RESULT_URL_TTL", 900),
		ResultPreviewBytes:     p.int("MCP_GATEWAY_RESULT_PREVIEW_BYTES", 2048, 0, 1<<20),
		SessionTTL:             p.seconds("MCP_GATEWAY_SESSION_TTL", 86400),
		InputTTL:               p.seconds("MCP_GATEWAY_INPUT_TTL", 600),
		SyncParallel:           p.int("TOOL_RAG_SYNC_PARALLEL", 16, 1, 1024),
		SyncTimeout:            p.seconds("TOOL_RAG_SYNC_TIMEOUT", 30),
		AuthFailureRate:        p.float("MCP_GATEWAY_AUTH_FAILURE_RATE", 0.5),
		AuthFailureBurst:       p.int("MCP_GATEWAY_AUTH_FAILURE_BURST", 30, 0, 1<<30),
		TrustForwardedFor:      p.bool("MCP_GATEWAY_TRUST_FORWARDED_FOR", false),
		ConfigPoll:             p.seconds("MCP_GATEWAY_CONFIG_POLL", 2),
		MaxTools:               p.int("TOOL_RAG_MAX_TOOLS_PER_SERVER", 2000, 1, 1<<20),
		MaxToolPages:           p.int("TOOL_RAG_MAX_TOOL_PAGES", 100, 1, 1<<20),
		ConsolePath:            p.str("TOOL_RAG_CONSOLE_PATH", "/console"),
		CallSequences:          p.bool("TOOL_RAG_CALL_SEQUENCES", false),
		CallSeqMinPrincipals:   p.int("TOOL_RAG_CALLSEQ_MIN_PRINCIPALS", 3, 1, 1000),
		CallSeqPrincipalDayCap: p.int("TOOL_RAG_CALLSEQ_PRINCIPAL_DAY_CAP", 1, 0, 1<<20),
	}
	e.RegistryPath = p.path("MCP_GATEWAY_REGISTRY", filepath.Join(e.ConfigDir, "registry.yaml"))
	e.GeneratedPath = p.path("MCP_GATEWAY_REGISTRY_GENERATED", filepath.Join(e.ConfigDir, "registry.generated.yaml"))
	e.KeysPath = p.path("MCP_GATEWAY_KEYS", filepath.Join(e.ConfigDir, "keys.yaml"))
	e.IndexDir = p.str("TOOL_RAG_INDEX_DIR", strings.TrimSuffix(e.DBPath, filepath.Ext(e.DBPath))+"_index")
	e.ResultsDir = p.str("MCP_GATEWAY_RESULTS_DIR", strings.TrimSuffix(e.DBPath, filepath.Ext(e.DBPath))+"_results")
	if e.ResultTTL <= 0 || e.ResultURLTTL <= 0 {
		p.errs = append(p.errs, "MCP_GATEWAY_RESULT_TTL and MCP_GATEWAY_RESULT_URL_TTL must be positive")
	}
	if u, err := url.Parse(e.PublicURL); e.PublicURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/")) {
		p.errs = append(p.errs, fmt.Sprintf("MCP_GATEWAY_PUBLIC_URL=%q must be the gateway's base URL, scheme://host[:port] (e.g. https://gateway.example.com)", e.PublicURL))
	}
	if !strings.HasPrefix(e.MCPPath, "/") {
		p.errs = append(p.errs, fmt.Sprintf("MCP_GATEWAY_MCP_PATH=%q must start with /", e.MCPPath))
	}
	if e.ConsolePath == "off" {
		e.ConsolePath = ""
	} else if !strings.HasPrefix(e.ConsolePath, "/") || strings.HasSuffix(e.ConsolePath, "/") || strings.HasPrefix(e.ConsolePath, "/tool-rag") || e.ConsolePath == e.MCPPath {
		p.errs = append(p.errs, fmt.Sprintf("TOOL_RAG_CONSOLE_PATH=%q must be a path like /console (starting with /, not ending with /, not under /tool-rag nor the MCP path), or off", e.ConsolePath))
	}
	if len(p.errs) > 0 {
		return Env{}, fmt.Errorf("invalid environment: %s", strings.Join(p.errs, "; "))
	}
	return e, nil
}

type parser struct {
	getenv func(string) string
	errs   []string
}

func (p *parser) str(name, def string) string {
	if v := strings.TrimSpace(p.getenv(name)); v != "" {
		return v
	}
	return def
}

// path reads a path that is used as given (absolute when set), not joined
// with the config directory.
func (p *parser) path(name, def string) string {
	v := strings.TrimSpace(p.getenv(name))
	if v == "" {
		return def
	}
	if !filepath.IsAbs(v) {
		p.errs = append(p.errs, fmt.Sprintf("%s=%q must be an absolute path", name, v))
	}
	return v
}

func (p *parser) int(name string, def, min, max int) int {
	v := strings.TrimSpace(p.getenv(name))
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		p.errs = append(p.errs, fmt.Sprintf("%s=%q must be an integer from %d to %d", name, v, min, max))
		return def
	}
	return n
}

func (p *parser) seconds(name string, def float64) time.Duration {
	v := strings.TrimSpace(p.getenv(name))
	if v == "" {
		return time.Duration(def * float64(time.Second))
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		p.errs = append(p.errs, fmt.Sprintf("%s=%q must be a non-negative number of seconds", name, v))
		return time.Duration(def * float64(time.Second))
	}
	return time.Duration(f * float64(time.Second))
}

func (p *parser) float(name string, def float64) float64 {
	v := strings.TrimSpace(p.getenv(name))
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		p.errs = append(p.errs, fmt.Sprintf("%s=%q must be a positive number", name, v))
		return def
	}
	return f
}

// PublicBaseURL is the base URL clients reach the gateway at
// (MCP_GATEWAY_PUBLIC_URL), for the documents that name it (the OAuth
// protected-resource metadata); "" when not configured, and the request's
// Host is used (a foreign Host on a loopback listener is refused before).
func (e Env) PublicBaseURL() string { return e.PublicURL }

// AuthFailureLimit is the per-client-address limit on failed
// authentications (zero when MCP_GATEWAY_AUTH_FAILURE_BURST is 0).
func (e Env) AuthFailureLimit() policy.RateLimit {
	if e.AuthFailureBurst <= 0 {
		return policy.RateLimit{}
	}
	return policy.RateLimit{Rate: e.AuthFailureRate, Burst: e.AuthFailureBurst}
}

func (p *parser) bool(name string, def bool) bool {
	switch strings.ToLower(strings.TrimSpace(p.getenv(name))) {
	case "":
		return def
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	default:
		p.errs = append(p.errs, fmt.Sprintf("%s=%q must be 1/0, true/false, yes/no or on/off", name, p.getenv(name)))
		return def
	}
}

func (p *parser) enum(name, def string, allowed ...string) string {
	v := strings.ToLower(strings.TrimSpace(p.getenv(name)))
	if v == "" {
		return def
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	p.errs = append(p.errs, fmt.Sprintf("%s=%q must be one of %s", name, v, strings.Join(allowed, ", ")))
	return def
}
