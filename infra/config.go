package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Config is the deploy configuration. It is read from a JSON file
// (config.json when present, else config.example.json, or the file named by
// the CDK context key "config") and a few CDK context keys may override it:
// -c stage=prod, -c embedder=bedrock, -c serversFile=path,
// -c gatewayMemory=2048.
type Config struct {
	// Stage names the deployment (dev, prod, ...). Stage "prod" turns on
	// deletion protection for tables and retains tables and bucket on stack
	// deletion.
	Stage string `json:"stage"`
	// Account and Region pin the stack's environment. Empty means the CLI's
	// current account and region (CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION).
	Account string `json:"account,omitempty"`
	Region  string `json:"region,omitempty"`

	Embedder EmbedderConfig `json:"embedder"`
	Reranker RerankerConfig `json:"reranker"`

	// SyncSchedule and HealthSchedule are EventBridge schedule expressions,
	// e.g. "rate(15 minutes)" or "cron(0 3 * * ? *)". "off" disables a rule.
	SyncSchedule   string `json:"syncSchedule"`
	HealthSchedule string `json:"healthSchedule"`

	IndexPrefix         string `json:"indexPrefix"`         // S3 key prefix of the index (default "index/")
	IndexRefreshSeconds int    `json:"indexRefreshSeconds"` // how often the gateway re-reads the index pointer
	IndexRetentionDays  int    `json:"indexRetentionDays"`  // noncurrent and superseded index objects expire after this
	LogRetentionDays    int    `json:"logRetentionDays"`    // CloudWatch Logs retention of every function and service
	McpPath             string `json:"mcpPath"`             // MCP route (default /mcp)
	// CallSequences turns on the opt-in call-sequence counts
	// (TOOL_RAG_CALL_SEQUENCES) that feed find_tools' related tools. The
	// table is created either way; it stays empty while this is off.
	CallSequences bool `json:"callSequences,omitempty"`

	// Throttle is the front door's stage rate limit (requests per second,
	// steady and burst; default 50 and 100) and, on the HTTP API, the
	// limits of single routes (Routes, "METHOD /path" → limits; by
	// default the routes that need no credential get 10 and 20). API
	// Gateway's throttling is per stage and route, not per client: the
	// WAF front door's rate-based rule is the per-client limit.
	Throttle ThrottleConfig `json:"throttle"`

	// FrontDoor is what the internet reaches: "http" (default, an HTTP
	// API) or "rest-waf" (a REST API with an AWS WAF web ACL: a
	// rate-based rule per client IP and the AWS managed common rule
	// set). Waf tunes the latter.
	FrontDoor string    `json:"frontDoor"`
	Waf       WafConfig `json:"waf"`

	// ExpectedTools is the catalog size the functions' memory defaults are
	// derived from (default 100000; docs/deploy.md, Sizing).
	ExpectedTools int `json:"expectedTools"`

	Domain *DomainConfig `json:"domain,omitempty"`
	Vpc    VpcConfig     `json:"vpc"`

	// SecretsStore is where upstream secrets live: "ssm" (SecureString
	// parameters, default) or "secretsmanager". SecretsPrefix is the name
	// prefix: a ${VAR} reference in a manifest is read from <prefix>VAR.
	SecretsStore  string `json:"secretsStore"`
	SecretsPrefix string `json:"secretsPrefix"`

	// ServersFile is the server list written by `toolrag provision`
	// (default servers.generated.json next to this app). A missing file
	// means no upstream servers are deployed.
	ServersFile string `json:"serversFile"`
	// RepoRoot is the repository root the paths in ServersFile are relative
	// to (default "..").
	RepoRoot string `json:"repoRoot"`
	// DistDir holds the built functions: <name>.zip or <name>/bootstrap
	// (default "../dist").
	DistDir string `json:"distDir"`

	// Functions sizes the three Lambda functions (memory and timeout).
	Functions FunctionsConfig `json:"functions"`

	Fargate FargateConfig `json:"fargate"`

	// OAuth, when set, makes the gateway accept OAuth access tokens beside
	// its API keys, optionally from a Cognito user pool this stack creates.
	OAuth *OAuthConfig `json:"oauth,omitempty"`

	// BuildDir is where the image build folders of stdio servers are
	// staged; empty means a temporary folder removed after synth.
	BuildDir string `json:"buildDir,omitempty"`

	// Tracing configures OpenTelemetry traces (docs/observability.md).
	Tracing TracingConfig `json:"tracing"`

	// Streamed, when set, adds the streamed front door (docs/deploy.md,
	// Front doors): the gateway's code on a second function sized by
	// functions.gatewayStream (900 s by default) behind a Function URL
	// in RESPONSE_STREAM mode. -c streamed=true turns it on.
	Streamed *StreamedConfig `json:"streamed,omitempty"`
}

// StreamedConfig tunes the streamed front door.
type StreamedConfig struct {
	// OAuthAudience is the streamed URL's OAuth resource identifier (its
	// McpStreamUrl output, or a domain in front of it), required in its
	// tokens' aud. Empty: oauth.audience, as on the API (set this when
	// oauth.audience is a URL: clients check that the resource metadata
	// names the URL they called).
	OAuthAudience string `json:"oauthAudience,omitempty"`
}

// TracingConfig configures the functions' traces. Lambda active tracing
// (X-Ray) is always on: API Gateway and Lambda segments cost nothing to
// keep and a 503 can be followed into the function.
type TracingConfig struct {
	// CollectorLayerArn, when set, adds this AWS Distro for OpenTelemetry
	// (ADOT) collector layer to the three functions and turns on their
	// OTLP export to it (OTEL_TRACES_EXPORTER=otlp, localhost:4318); the
	// layer's default configuration forwards the spans to X-Ray. Use the
	// arm64 layer of the stack's region, e.g.
	// arn:aws:lambda:us-east-1:901920570463:layer:aws-otel-collector-arm64-ver-0-117-0:1.
	CollectorLayerArn string `json:"collectorLayerArn,omitempty"`
	// CollectorConfig, when set with the layer, is the collector
	// configuration the layer reads (OPENTELEMETRY_COLLECTOR_CONFIG_URI),
	// e.g. /var/task/collector.yaml or an s3:// URI: how to send the
	// spans to Tempo or Honeycomb instead of X-Ray.
	CollectorConfig string `json:"collectorConfig,omitempty"`
	// SampleRatio is the share of requests traced (OTEL_TRACES_SAMPLER
	// parentbased_traceidratio); 0 means the default, every request whose
	// caller did not decide otherwise.
	SampleRatio float64 `json:"sampleRatio,omitempty"`
}

// EmbedderConfig selects how tool and query text is embedded.
type EmbedderConfig struct {
	Kind    string `json:"kind"`              // builtin | bedrock | url
	ModelID string `json:"modelId,omitempty"` // bedrock: model id, inference profile id or ARN
	Dims    int    `json:"dims,omitempty"`    // bedrock: output dimension
	URL     string `json:"url,omitempty"`     // url: OpenAI-shaped embeddings endpoint
}

// RerankerConfig selects the optional second ranking stage.
type RerankerConfig struct {
	Kind    string `json:"kind"`              // off | bedrock | url
	ModelID string `json:"modelId,omitempty"` // bedrock: e.g. amazon.rerank-v1:0
	URL     string `json:"url,omitempty"`
}

// ThrottleConfig limits requests at API Gateway.
type ThrottleConfig struct {
	RateLimit  float64 `json:"rateLimit"`
	BurstLimit float64 `json:"burstLimit"`
	// Routes are per-route limits of the HTTP API ("POST /register" →
	// {rateLimit, burstLimit}); nil means defaultRouteThrottles.
	Routes map[string]RouteThrottle `json:"routes,omitempty"`
}

// RouteThrottle is one route's limit.
type RouteThrottle struct {
	RateLimit  float64 `json:"rateLimit"`
	BurstLimit float64 `json:"burstLimit"`
}

// defaultRouteThrottles limits the routes that answer without a
// credential (discovery, registration, the console's static files, the
// health check) well below the stage limit, so that a flood of them
// cannot use up the stage's budget for authenticated MCP traffic.
func defaultRouteThrottles(mcpPath string) map[string]RouteThrottle {
	low := RouteThrottle{RateLimit: 10, BurstLimit: 20}
	return map[string]RouteThrottle{
		"POST /register": low,
		"GET /.well-known/oauth-protected-resource":           low,
		"GET /.well-known/oauth-protected-resource" + mcpPath: low,
		"GET /console":             low,
		"GET /console/{proxy+}":    low,
		"GET /health":              low,
		"GET /connect/{token}":     low,
		"POST /connect/{token}":    low,
		"GET /connect-callback":    low,
		"GET /connect-client.json": low,
	}
}

// WafConfig tunes the "rest-waf" front door.
type WafConfig struct {
	// RateLimit is the rate-based rule's limit: requests per client IP in
	// any 5-minute window before the IP is blocked (default 1500, i.e.
	// 5 per second sustained; AWS WAF's minimum is 10).
	RateLimit int `json:"rateLimit"`
}

// DomainConfig maps the API to a custom domain with an ACM certificate in
// the stack's region.
type DomainConfig struct {
	Name           string `json:"name"`
	CertificateArn string `json:"certificateArn"`
}

// VpcConfig is used only when at least one server runs on Fargate.
type VpcConfig struct {
	// ExistingVpcId imports a VPC (needs credentials at synth: the CDK looks
	// it up). Empty creates a VPC.
	ExistingVpcId string `json:"existingVpcId,omitempty"`
	MaxAzs        int    `json:"maxAzs"`
	// Egress is "nat" (private subnets with NAT gateways: functions and
	// containers reach the internet, needed for remote upstreams) or
	// "endpoints" (isolated subnets and interface endpoints for the AWS
	// services used; no internet access at all).
	Egress string `json:"egress"`
	// NatGateways is the number of NAT gateways with egress "nat":
	// 1 (default, cheapest: every zone's traffic goes through one zone, so
	// that zone's outage cuts the others' egress) up to MaxAzs (one per
	// zone, for production: a zone's outage affects only that zone).
	NatGateways int `json:"natGateways"`
	// Namespace is the Cloud Map private DNS namespace of the servers
	// (default toolrag-<stage>.internal).
	Namespace string `json:"namespace,omitempty"`
}

// FunctionsConfig sizes each Lambda function. The gateway holds the whole
// index, catalog and keyword index in memory, so its memory grows with the
// catalog (docs/deploy.md, "Sizing").
type FunctionsConfig struct {
	Gateway FunctionSize `json:"gateway"` // default 1769 MiB (one vCPU; above the peak at ExpectedTools with margin), 29 s, reserved concurrency 100
	Sync    FunctionSize `json:"sync"`    // default from ExpectedTools (2240 MiB at 100k tools: measured peak 1,835 MB plus 25 %), 900 s
	Health  FunctionSize `json:"health"`  // default 256 MiB, 60 s
	// GatewayStream is the streamed front door's function (with
	// Streamed): default the gateway's memory, 900 s, reserved
	// concurrency 20 (each open stream holds an instance).
	GatewayStream FunctionSize `json:"gatewayStream"`
}

// FunctionSize is one function's memory and timeout. Zero means the
// default.
type FunctionSize struct {
	MemoryMiB      int `json:"memoryMiB"`
	TimeoutSeconds int `json:"timeoutSeconds"`
	// ReservedConcurrency (gateway only) caps the function's concurrent
	// instances, so that a flood of requests cannot take the account's
	// whole Lambda concurrency or scale the bill without bound (default
	// 100; -1 for no reservation, e.g. in an account whose concurrency
	// limit is still the new-account 10).
	ReservedConcurrency int `json:"reservedConcurrency,omitempty"`
}

// Size returns the size of the function called name (gateway, sync,
// health or gatewayStream); the zero FunctionSize for any other name.
func (f FunctionsConfig) Size(name string) FunctionSize {
	switch name {
	case "gateway":
		return f.Gateway
	case "sync":
		return f.Sync
	case "health":
		return f.Health
	case "gatewayStream":
		return f.GatewayStream
	}
	return FunctionSize{}
}

// Lambda's limits, and API Gateway HTTP API's integration timeout.
const (
	minFunctionMemoryMiB   = 128
	maxFunctionMemoryMiB   = 10240
	maxFunctionTimeout     = 900
	httpAPIIntegrationSecs = 30
)

// FargateConfig sizes the containers that run upstream servers.
type FargateConfig struct {
	Cpu       int `json:"cpu"`       // CPU units (256 = 0.25 vCPU)
	MemoryMiB int `json:"memoryMiB"` // memory
	// DesiredCount is the tasks per server (default 2, spread over the
	// zones: one task or zone can fail without the server going away);
	// MaxCount the most that target-tracking autoscaling adds (default 4)
	// to keep CPU near CpuTarget percent (default 60).
	DesiredCount int    `json:"desiredCount"`
	MaxCount     int    `json:"maxCount"`
	CpuTarget    int    `json:"cpuTarget"`
	Architecture string `json:"architecture"` // arm64 | x86_64
	// User is the uid:gid the containers run as (default "10001:10001",
	// not root); the root filesystem is read-only, with a writable
	// scratch volume at /tmp (HOME), and every Linux capability dropped.
	User string `json:"user"`
	// StdioBaseImage is the default base image for stdio servers (a manifest
	// can set its own base_image).
	StdioBaseImage string `json:"stdioBaseImage"`
	// BridgeBinary is the linux `toolrag` binary (for Architecture) copied
	// into stdio images; BridgePort is where `toolrag bridge` serves MCP.
	BridgeBinary string `json:"bridgeBinary"`
	BridgePort   int    `json:"bridgePort"`
	// BridgeArgs are the arguments after the binary; {port}, {path} and
	// {id} are replaced. The server command follows them.
	BridgeArgs []string `json:"bridgeArgs"`
}

// Defaults fills every empty field.
func (c *Config) Defaults() {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	defInt := func(n *int, v int) {
		if *n == 0 {
			*n = v
		}
	}
	def(&c.Stage, "dev")
	def(&c.Embedder.Kind, "builtin")
	def(&c.Reranker.Kind, "off")
	if c.Embedder.Kind == "bedrock" {
		def(&c.Embedder.ModelID, "amazon.titan-embed-text-v2:0")
		defInt(&c.Embedder.Dims, 512)
	}
	if c.Reranker.Kind == "bedrock" {
		def(&c.Reranker.ModelID, "amazon.rerank-v1:0")
	}
	def(&c.SyncSchedule, "rate(15 minutes)")
	def(&c.HealthSchedule, "rate(1 minute)")
	def(&c.IndexPrefix, "index/")
	defInt(&c.IndexRefreshSeconds, 30)
	defInt(&c.IndexRetentionDays, 30)
	defInt(&c.LogRetentionDays, 30)
	def(&c.McpPath, "/mcp")
	defInt(&c.Vpc.MaxAzs, 2)
	def(&c.Vpc.Egress, "nat")
	def(&c.Vpc.Namespace, "toolrag-"+strings.ToLower(c.Stage)+".internal")
	def(&c.SecretsStore, "ssm")
	def(&c.SecretsPrefix, "/toolrag/"+c.Stage+"/")
	def(&c.ServersFile, "servers.generated.json")
	def(&c.RepoRoot, "..")
	def(&c.DistDir, filepath.Join(c.RepoRoot, "dist"))
	defInt(&c.ExpectedTools, DefaultExpectedTools)
	gw, sy := MemoryFor(c.ExpectedTools)
	defInt(&c.Functions.Gateway.MemoryMiB, gw)
	defInt(&c.Functions.Gateway.TimeoutSeconds, 29)
	defInt(&c.Functions.Gateway.ReservedConcurrency, DefaultGatewayReservedConcurrency)
	defInt(&c.Functions.Sync.MemoryMiB, sy)
	defInt(&c.Functions.Sync.TimeoutSeconds, 900)
	defInt(&c.Functions.Health.MemoryMiB, 256)
	defInt(&c.Functions.Health.TimeoutSeconds, 60)
	defInt(&c.Functions.GatewayStream.MemoryMiB, c.Functions.Gateway.MemoryMiB)
	defInt(&c.Functions.GatewayStream.TimeoutSeconds, maxFunctionTimeout)
	defInt(&c.Functions.GatewayStream.ReservedConcurrency, DefaultStreamReservedConcurrency)
	defInt(&c.Fargate.Cpu, 256)
	defInt(&c.Fargate.MemoryMiB, 512)
	defInt(&c.Fargate.DesiredCount, 2)
	defInt(&c.Fargate.MaxCount, max(4, c.Fargate.DesiredCount))
	defInt(&c.Fargate.CpuTarget, 60)
	def(&c.Fargate.User, "10001:10001")
	def(&c.FrontDoor, "http")
	defInt(&c.Waf.RateLimit, 1500)
	defInt(&c.Vpc.NatGateways, 1)
	if c.Throttle.RateLimit == 0 && c.Throttle.BurstLimit == 0 {
		c.Throttle.RateLimit, c.Throttle.BurstLimit = 50, 100
	}
	if c.Throttle.Routes == nil {
		c.Throttle.Routes = defaultRouteThrottles(c.McpPath)
	}
	def(&c.Fargate.Architecture, "arm64")
	def(&c.Fargate.StdioBaseImage, "public.ecr.aws/docker/library/node:22-bookworm-slim")
	def(&c.Fargate.BridgeBinary, filepath.Join(c.RepoRoot, "dist", "bridge", "toolrag"))
	defInt(&c.Fargate.BridgePort, 8080)
	if len(c.Fargate.BridgeArgs) == 0 {
		c.Fargate.BridgeArgs = []string{"bridge", "--listen", "0.0.0.0:{port}", "--path", "{path}", "--name", "{id}", "--require-token", "--"}
	}
}

var (
	routeKeyPattern = regexp.MustCompile(`^(GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS|ANY) /\S*$`)
	userPattern     = regexp.MustCompile(`^[0-9]+(:[0-9]+)?$`)
	stagePattern    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,19}$`)
	schedulePattern = regexp.MustCompile(`^(rate\(.+\)|cron\(.+\)|off)$`)
)

// Validate reports the first configuration problem, worded for the person
// editing the file.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.OAuth != nil {
		c.OAuth.defaults()
		errs = append(errs, c.OAuth.validate()...)
	}
	if c.Tracing.CollectorLayerArn != "" && !strings.HasPrefix(c.Tracing.CollectorLayerArn, "arn:aws") {
		bad("tracing.collectorLayerArn %q is not a layer version ARN (arn:aws:lambda:<region>:<account>:layer:<name>:<version>)", c.Tracing.CollectorLayerArn)
	}
	if c.Tracing.CollectorConfig != "" && c.Tracing.CollectorLayerArn == "" {
		bad("tracing.collectorConfig is set but tracing.collectorLayerArn is not: the configuration is for the collector layer")
	}
	if c.Tracing.SampleRatio < 0 || c.Tracing.SampleRatio > 1 {
		bad("tracing.sampleRatio %v must be between 0 and 1", c.Tracing.SampleRatio)
	}
	if !stagePattern.MatchString(c.Stage) {
		bad("stage %q must be 1-20 letters, digits or dashes, starting with a letter", c.Stage)
	}
	switch c.Embedder.Kind {
	case "builtin":
	case "bedrock":
		if c.Embedder.Dims <= 0 {
			bad("embedder.dims must be positive for bedrock")
		}
	case "url":
		if c.Embedder.URL == "" {
			bad("embedder.url is required when embedder.kind is url")
		}
	default:
		bad("embedder.kind %q must be builtin, bedrock or url", c.Embedder.Kind)
	}
	switch c.Reranker.Kind {
	case "off", "bedrock":
	case "url":
		if c.Reranker.URL == "" {
			bad("reranker.url is required when reranker.kind is url")
		}
	default:
		bad("reranker.kind %q must be off, bedrock or url", c.Reranker.Kind)
	}
	for name, s := range map[string]string{"syncSchedule": c.SyncSchedule, "healthSchedule": c.HealthSchedule} {
		if !schedulePattern.MatchString(s) {
			bad("%s %q must be rate(...), cron(...) or off", name, s)
		}
	}
	if !strings.HasSuffix(c.IndexPrefix, "/") || strings.HasPrefix(c.IndexPrefix, "/") {
		bad("indexPrefix %q must end with / and not start with /", c.IndexPrefix)
	}
	if !strings.HasPrefix(c.McpPath, "/") {
		bad("mcpPath %q must start with /", c.McpPath)
	}
	if c.Vpc.Egress != "nat" && c.Vpc.Egress != "endpoints" {
		bad("vpc.egress %q must be nat or endpoints", c.Vpc.Egress)
	}
	if c.SecretsStore != "ssm" && c.SecretsStore != "secretsmanager" {
		bad("secretsStore %q must be ssm or secretsmanager", c.SecretsStore)
	}
	for _, name := range c.functionNames() {
		f := c.Functions.Size(name)
		if f.MemoryMiB < minFunctionMemoryMiB || f.MemoryMiB > maxFunctionMemoryMiB {
			bad("functions.%s.memoryMiB %d must be between %d and %d (Lambda's limits)", name, f.MemoryMiB, minFunctionMemoryMiB, maxFunctionMemoryMiB)
		}
		if f.TimeoutSeconds < 1 || f.TimeoutSeconds > maxFunctionTimeout {
			bad("functions.%s.timeoutSeconds %d must be between 1 and %d (Lambda's limit)", name, f.TimeoutSeconds, maxFunctionTimeout)
		} else if name == "gateway" && f.TimeoutSeconds > httpAPIIntegrationSecs {
			bad("functions.gateway.timeoutSeconds %d must be at most %d: API Gateway's HTTP API stops waiting for its integration after %d s, so the client would get an error while the function is still running", f.TimeoutSeconds, httpAPIIntegrationSecs, httpAPIIntegrationSecs)
		}
	}
	if c.Functions.Sync.ReservedConcurrency != 0 || c.Functions.Health.ReservedConcurrency != 0 {
		bad("functions.sync.reservedConcurrency and functions.health.reservedConcurrency cannot be set (sync always runs one at a time)")
	}
	for _, name := range []string{"gateway", "gatewayStream"} {
		if rc := c.Functions.Size(name).ReservedConcurrency; rc < -1 || rc == 0 || rc > 1000 {
			bad("functions.%s.reservedConcurrency %d must be between 1 and 1000, or -1 for no reservation", name, rc)
		}
	}
	if c.ExpectedTools < 1 {
		bad("expectedTools %d must be positive", c.ExpectedTools)
	}
	if c.FrontDoor != "http" && c.FrontDoor != "rest-waf" {
		bad("frontDoor %q must be http or rest-waf", c.FrontDoor)
	}
	if c.Waf.RateLimit < 10 || c.Waf.RateLimit > 2_000_000_000 {
		bad("waf.rateLimit %d must be between 10 and 2000000000 (requests per IP per 5 minutes, AWS WAF's range)", c.Waf.RateLimit)
	}
	if c.Throttle.RateLimit < 0 || c.Throttle.BurstLimit < 0 {
		bad("throttle.rateLimit and throttle.burstLimit must not be negative")
	}
	for route, l := range c.Throttle.Routes {
		if !routeKeyPattern.MatchString(route) {
			bad("throttle.routes key %q must be METHOD /path, such as \"POST /register\"", route)
		}
		if l.RateLimit <= 0 || l.BurstLimit <= 0 {
			bad("throttle.routes[%q] needs a positive rateLimit and burstLimit", route)
		}
	}
	if c.Vpc.NatGateways < 1 || c.Vpc.NatGateways > c.Vpc.MaxAzs {
		bad("vpc.natGateways %d must be between 1 and vpc.maxAzs (%d): one per zone is the production choice", c.Vpc.NatGateways, c.Vpc.MaxAzs)
	}
	if c.Fargate.DesiredCount < 1 || c.Fargate.MaxCount < c.Fargate.DesiredCount {
		bad("fargate.desiredCount %d must be at least 1 and fargate.maxCount %d at least desiredCount", c.Fargate.DesiredCount, c.Fargate.MaxCount)
	}
	if c.Fargate.CpuTarget < 10 || c.Fargate.CpuTarget > 90 {
		bad("fargate.cpuTarget %d must be between 10 and 90 (percent)", c.Fargate.CpuTarget)
	}
	if !userPattern.MatchString(c.Fargate.User) || strings.HasPrefix(c.Fargate.User, "0:") || c.Fargate.User == "0" {
		bad("fargate.user %q must be a non-root numeric uid:gid such as 10001:10001", c.Fargate.User)
	}
	if c.Fargate.Architecture != "arm64" && c.Fargate.Architecture != "x86_64" {
		bad("fargate.architecture %q must be arm64 or x86_64", c.Fargate.Architecture)
	}
	if c.Domain != nil && (c.Domain.Name == "" || !strings.HasPrefix(c.Domain.CertificateArn, "arn:")) {
		bad("domain needs name and certificateArn (an ACM certificate ARN in the stack's region)")
	}
	if len(errs) > 0 {
		return fmt.Errorf("infra config: %w", errors.Join(errs...))
	}
	return nil
}

// LoadConfig reads a config file (JSON) and applies defaults. Relative paths
// inside it are relative to the folder the CDK app runs in (infra/).
func LoadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("infra config: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("infra config %s: %w", path, err)
	}
	return c, nil
}

// applyContext overrides config fields from CDK context values (strings as
// given with -c key=value).
func (c *Config) applyContext(get func(key string) (string, bool)) error {
	if v, ok := get("stage"); ok {
		c.Stage = v
	}
	if v, ok := get("embedder"); ok {
		c.Embedder.Kind = v
	}
	if v, ok := get("reranker"); ok {
		c.Reranker.Kind = v
	}
	if v, ok := get("serversFile"); ok {
		c.ServersFile = v
	}
	if v, ok := get("distDir"); ok {
		c.DistDir = v
	}
	if v, ok := get("frontDoor"); ok {
		c.FrontDoor = v
	}
	if v, ok := get("streamed"); ok {
		on, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("context streamed %q must be true or false", v)
		}
		if !on {
			c.Streamed = nil
		} else if c.Streamed == nil {
			c.Streamed = &StreamedConfig{}
		}
	}
	if v, ok := get("bedrockModelId"); ok {
		c.Embedder.ModelID = v
	}
	for _, o := range []struct {
		key string
		dst *int
	}{
		{"bedrockDims", &c.Embedder.Dims},
		{"gatewayMemory", &c.Functions.Gateway.MemoryMiB},
		{"syncMemory", &c.Functions.Sync.MemoryMiB},
		{"gatewayReservedConcurrency", &c.Functions.Gateway.ReservedConcurrency},
		{"expectedTools", &c.ExpectedTools},
	} {
		v, ok := get(o.key)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("context %s %q is not a number", o.key, v)
		}
		*o.dst = n
	}
	return nil
}

// DefaultExpectedTools is the catalog size the memory defaults fit.
const DefaultExpectedTools = 100_000

// DefaultGatewayReservedConcurrency caps the gateway's instances.
const DefaultGatewayReservedConcurrency = 100

// DefaultStreamReservedConcurrency caps the streamed front door's
// instances: its long calls cannot take the API's.
const DefaultStreamReservedConcurrency = 20

// Measured peaks (docs/deploy.md, Sizing; builtin embedder, 1,536
// dimensions, 8-bit index): the gateway's peak RSS while it loads a newly
// published index beside the one in use, and the sync function's during a
// full build and publish, per tool on top of a fixed base.
const (
	gatewayBaseMB    = 60
	gatewayPerToolKB = 7.1 // 769 MB at 100k tools
	syncBaseMB       = 60
	syncPerToolKB    = 17.8 // 1,835 MB at 100k tools
	sizingMargin     = 1.25
	// oneVCPUMiB is where Lambda gives a function a full vCPU, which the
	// gateway's CPU-bound cold start needs.
	oneVCPUMiB = 1769
)

// MemoryFor returns the gateway's and the sync function's memory defaults
// (MiB) for a catalog of tools: the measured peak with 25 % margin,
// rounded up to 64 MiB, and at least 1769 (gateway) or 1024 (sync).
func MemoryFor(tools int) (gatewayMiB, syncMiB int) {
	size := func(baseMB, perToolKB float64, floor int) int {
		mb := (baseMB + perToolKB*float64(tools)/1000) * sizingMargin
		mib := int(mb*1e6/(1<<20)+63) / 64 * 64
		return min(max(mib, floor), maxFunctionMemoryMiB)
	}
	return size(gatewayBaseMB, gatewayPerToolKB, oneVCPUMiB), size(syncBaseMB, syncPerToolKB, 1024)
}
