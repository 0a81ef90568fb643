// Package awsrt runs the gateway on AWS: Lambda functions behind API
// Gateway (HTTP API v2 or REST v1) or a Function URL, DynamoDB for the
// catalog, keys, registry and sessions, and S3 for the published vector
// index. It mirrors pkg/local, which runs the same parts in one process.
//
// Three functions share this package: the gateway (NewGatewayFunction + Start), the
// sync function (NewSyncer: registry → upstreams → tools table → index in
// S3) and the health function (NewProber: probe every upstream, record the
// result in the registry table). functions/*/main.go only wire them to
// lambda.Start.
package awsrt

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/internal/redact"
	"github.com/toolrag/mcp-gateway/pkg/aws/awsclient"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/metrics"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/kmsseal"
	"github.com/toolrag/mcp-gateway/pkg/aws/secrets"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/oauth"
	"github.com/toolrag/mcp-gateway/pkg/rerank"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
	"github.com/toolrag/mcp-gateway/pkg/upconnect"
)

// Config configures the AWS runtime. ConfigFromEnv fills it from the
// environment contract of the deployment (template.yaml, infra/); tests
// set the clients directly.
type Config struct {
	// Env holds the process settings shared with the local runtime
	// (MCP_GATEWAY_MCP_PATH, upstream timeouts, body limits, session TTL,
	// sync parallelism, ...).
	Env config.Env

	Tables dynamo.Tables // TOOL_RAG_{TOOLS,KEYS,REGISTRY,SESSIONS}_TABLE
	Bucket string        // TOOL_RAG_INDEX_BUCKET (required)
	Prefix string        // TOOL_RAG_INDEX_PREFIX, default "index/"
	// ResultsBucket and ResultsPrefix (TOOL_RAG_RESULTS_BUCKET, default
	// Bucket; TOOL_RAG_RESULTS_PREFIX, default "results/") are where
	// results over MCP_GATEWAY_MAX_RESULT_BYTES are stored (the stacks
	// expire the prefix with a lifecycle rule).
	ResultsBucket, ResultsPrefix string

	// SyncFunction is the sync function's name or ARN; POST
	// /tool-rag/reindex invokes it asynchronously (TOOL_RAG_SYNC_FUNCTION).
	SyncFunction string
	// ReindexInPlace makes POST /tool-rag/reindex rebuild and publish the
	// index inside the gateway instead (TOOL_RAG_REINDEX_INPLACE=1; the
	// gateway's role then needs s3:PutObject on the index prefix).
	ReindexInPlace bool

	// IndexRefresh is how often a warm gateway checks S3 for a newer index
	// (one conditional GET of the pointer), lazily on the next request
	// (TOOL_RAG_INDEX_REFRESH seconds, default 30).
	IndexRefresh time.Duration
	// KeyCacheTTL bounds how long a key lookup is cached: a revoked key
	// stops working within it (TOOL_RAG_KEY_CACHE_TTL seconds, default 30).
	KeyCacheTTL time.Duration
	// HealthCacheTTL is how long the registry's health column is cached
	// (TOOL_RAG_HEALTH_CACHE_TTL seconds, default 30).
	HealthCacheTTL time.Duration
	// CatalogMaxAge re-reads the catalog even when no new index was
	// published (TOOL_RAG_CATALOG_REFRESH seconds, default 300).
	CatalogMaxAge time.Duration
	// UpstreamListTimeout bounds listing one upstream's prompts and
	// resources when the MCP surface is (re)built
	// (TOOL_RAG_UPSTREAM_LIST_TIMEOUT seconds, default 5).
	UpstreamListTimeout time.Duration
	// InitWait bounds how long NewGatewayFunction waits for its first load of the
	// index, the catalog, the keyword index and the MCP surface. When it
	// runs out, NewGatewayFunction returns a gateway that finishes loading in the
	// background: requests wait for it (up to their own deadline) and
	// GET /health answers 503 "loading" until then. Zero waits for the
	// load however long it takes (TOOL_RAG_INIT_WAIT seconds; default 8
	// when AWS_LAMBDA_INITIALIZATION_TYPE is on-demand, whose init phase
	// Lambda stops and repeats after 10 s, otherwise 0).
	InitWait time.Duration
	// HealthParallel bounds concurrent probes of the health function
	// (TOOL_RAG_HEALTH_PARALLEL, default 16).
	HealthParallel int

	// SecretsPrefix is the name prefix (like /toolrag/prod/) that ${VAR}
	// in registry headers is read from, as the SSM parameter or Secrets
	// Manager secret <SecretsPrefix>VAR, when VAR is not in the
	// environment (TOOL_RAG_SECRETS_PREFIX; "" = the environment only).
	SecretsPrefix string
	// SecretsStore is where SecretsPrefix points: "ssm" (Parameter Store,
	// the default) or "secretsmanager" (TOOL_RAG_SECRETS_STORE). Another
	// value does not stop the function: it is logged, and headers that
	// need a variable missing from the environment report it.
	SecretsStore string
	// SecretsTTL is how long the values read under SecretsPrefix are used
	// before they are read again (TOOL_RAG_SECRETS_TTL seconds, default
	// 300).
	SecretsTTL time.Duration

	// OAuth, when set, makes the gateway accept access tokens of one
	// authorization server beside the API keys (TOOLRAG_OAUTH_*).
	OAuth *oauth.Config

	Embed  embed.Config  // TOOL_RAG_EMBEDDER etc.
	Rerank rerank.Config // TOOL_RAG_RERANKER etc.

	// Endpoint overrides ("" = the AWS endpoint of the region).
	DynamoDBEndpoint string // TOOL_RAG_DYNAMODB_ENDPOINT, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL
	S3Endpoint       string // TOOL_RAG_S3_ENDPOINT, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL
	LambdaEndpoint   string // TOOL_RAG_LAMBDA_ENDPOINT, AWS_ENDPOINT_URL_LAMBDA, AWS_ENDPOINT_URL
	SSMEndpoint      string // TOOL_RAG_SSM_ENDPOINT, AWS_ENDPOINT_URL_SSM, AWS_ENDPOINT_URL
	// TOOL_RAG_SECRETSMANAGER_ENDPOINT, AWS_ENDPOINT_URL_SECRETS_MANAGER, AWS_ENDPOINT_URL
	SecretsManagerEndpoint string
	KMSEndpoint            string // TOOL_RAG_KMS_ENDPOINT, AWS_ENDPOINT_URL_KMS, AWS_ENDPOINT_URL

	// VaultKMSKey is the KMS key (id, ARN or alias) that seals the token
	// vault's per-principal upstream grants in the vault table
	// (TOOL_RAG_VAULT_KMS_KEY; the stacks set it). Unset, a call to a
	// server whose auth is per principal fails with an error saying so.
	VaultKMSKey string
	// ConnectLinkTTL bounds a connect link's life
	// (TOOL_RAG_CONNECT_LINK_TTL seconds, default 600).
	ConnectLinkTTL time.Duration
	// KMS, when set, is used instead of a client built from KMSEndpoint.
	KMS kmsseal.KMS

	// Clients, when set, are used instead of clients built from the
	// endpoints.
	DynamoDB *dynamodb.Client
	S3       *s3.Client
	Lambda   *lambda.Client
	SSM      secrets.SSMAPI // used when SecretsPrefix is set and SecretsStore is ssm
	// SecretsManager is used when SecretsPrefix is set and SecretsStore is
	// secretsmanager.
	SecretsManager secrets.SecretsManagerAPI
	// Embedder, when set, is used instead of one built from Embed.
	Embedder embed.Embedder

	Logger *slog.Logger
	// Now is the clock of the refresh checks; nil means time.Now.
	Now func() time.Time

	// MetricsNamespace is the CloudWatch namespace of the EMF metrics the
	// functions write to stdout ("off": none; TOOL_RAG_METRICS_NAMESPACE,
	// default ToolRAG). MetricsInterval is the gateway's interval between
	// them (TOOL_RAG_METRICS_INTERVAL seconds, default 60).
	MetricsNamespace string
	MetricsInterval  time.Duration
	// RateLimit is where keys' rate limits are enforced: "instance" (each
	// instance's memory, the default) or "exact" (also across instances,
	// counted in DynamoDB; see auth.Exact) (TOOL_RAG_RATE_LIMIT).
	// RateLimitWindow is the exact limit's window
	// (TOOL_RAG_RATE_LIMIT_WINDOW seconds, default 60).
	RateLimit       string
	RateLimitWindow time.Duration

	// StateKey seals the requestState of the gateway's input_required
	// answers to 2026-07-28 clients, so that any instance accepts the
	// client's retry (the secret TOOL_RAG_STATE_KEY, read like the
	// registry's ${VAR} secrets; nil: each instance its own random key).
	StateKey []byte
	// SelfFunction is the gateway function's own name, which runs the
	// gateway's own MCP tasks in asynchronous invocations of itself
	// (TOOL_RAG_GATEWAY_FUNCTION, else AWS_LAMBDA_FUNCTION_NAME, which
	// Lambda sets).
	SelfFunction string

	// Getenv reads the settings pkg/app derives itself (the planner's
	// TOOL_RAG_PLANNER_*); ConfigFromEnv sets it (nil: os.Getenv).
	Getenv func(string) string

	// metricsOut receives the EMF lines (nil: stdout); tests set it.
	metricsOut io.Writer

	// secretsTimeouts bound the SSM and Secrets Manager clients built
	// here (zero: awsclient.SecretsTimeouts); tests
	// shorten them.
	secretsTimeouts awsclient.Timeouts

	// frontTimeout is API Gateway's timeout (0: lambdahttp.FrontTimeout);
	// tests shorten it.
	frontTimeout time.Duration

	// loadRetry is the first pause between background retries of the
	// first load (0: one second); tests shorten it.
	loadRetry time.Duration

	// secret resolves ${VAR} in registry headers (nil: os.Getenv); set
	// by secretSource.
	secret config.SecretFunc
}

// Defaults.
const (
	DefaultPrefix              = "index/"
	DefaultResultsPrefix       = "results/"
	DefaultIndexRefresh        = 30 * time.Second
	DefaultKeyCacheTTL         = 30 * time.Second
	DefaultHealthCacheTTL      = 30 * time.Second
	DefaultCatalogMaxAge       = 5 * time.Minute
	DefaultUpstreamListTimeout = 5 * time.Second
	// DefaultOnDemandInitWait is InitWait for an on-demand Lambda
	// initialization, under its 10 s init limit.
	DefaultOnDemandInitWait = 8 * time.Second
)

// ConfigFromEnv reads the configuration through getenv (os.Getenv in
// production). Every invalid value is reported, naming its variable.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	env, err := config.FromEnv(getenv)
	if err != nil {
		return Config{}, err
	}
	v := config.NewVars(getenv)
	cfg := Config{
		Env:                    env,
		Getenv:                 getenv,
		Tables:                 dynamo.TablesFromEnv(getenv),
		Bucket:                 v.Str("TOOL_RAG_INDEX_BUCKET", ""),
		Prefix:                 v.Str("TOOL_RAG_INDEX_PREFIX", DefaultPrefix),
		ResultsBucket:          v.Str("TOOL_RAG_RESULTS_BUCKET", ""),
		ResultsPrefix:          v.Str("TOOL_RAG_RESULTS_PREFIX", DefaultResultsPrefix),
		SyncFunction:           v.Str("TOOL_RAG_SYNC_FUNCTION", ""),
		SelfFunction:           firstSet(getenv, "TOOL_RAG_GATEWAY_FUNCTION", "AWS_LAMBDA_FUNCTION_NAME"),
		ReindexInPlace:         v.Bool("TOOL_RAG_REINDEX_INPLACE", false),
		IndexRefresh:           v.Seconds("TOOL_RAG_INDEX_REFRESH", DefaultIndexRefresh),
		KeyCacheTTL:            v.Seconds("TOOL_RAG_KEY_CACHE_TTL", DefaultKeyCacheTTL),
		HealthCacheTTL:         v.Seconds("TOOL_RAG_HEALTH_CACHE_TTL", DefaultHealthCacheTTL),
		CatalogMaxAge:          v.Seconds("TOOL_RAG_CATALOG_REFRESH", DefaultCatalogMaxAge),
		UpstreamListTimeout:    v.Seconds("TOOL_RAG_UPSTREAM_LIST_TIMEOUT", DefaultUpstreamListTimeout),
		InitWait:               v.Seconds("TOOL_RAG_INIT_WAIT", defaultInitWait(v.Str("AWS_LAMBDA_INITIALIZATION_TYPE", ""))),
		HealthParallel:         v.Int("TOOL_RAG_HEALTH_PARALLEL", 0, 1, 1024),
		MetricsNamespace:       v.Str("TOOL_RAG_METRICS_NAMESPACE", ""),
		MetricsInterval:        v.Seconds("TOOL_RAG_METRICS_INTERVAL", metrics.DefaultEMFInterval),
		RateLimit:              strings.ToLower(v.Str("TOOL_RAG_RATE_LIMIT", "")),
		RateLimitWindow:        v.Seconds("TOOL_RAG_RATE_LIMIT_WINDOW", DefaultRateLimitWindow),
		SecretsPrefix:          v.Str("TOOL_RAG_SECRETS_PREFIX", ""),
		SecretsStore:           strings.ToLower(v.Str("TOOL_RAG_SECRETS_STORE", "")),
		SecretsTTL:             v.Seconds("TOOL_RAG_SECRETS_TTL", secrets.DefaultTTL),
		DynamoDBEndpoint:       dynamo.Endpoint(getenv),
		S3Endpoint:             firstSet(getenv, "TOOL_RAG_S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
		LambdaEndpoint:         firstSet(getenv, "TOOL_RAG_LAMBDA_ENDPOINT", "AWS_ENDPOINT_URL_LAMBDA", "AWS_ENDPOINT_URL"),
		SSMEndpoint:            firstSet(getenv, "TOOL_RAG_SSM_ENDPOINT", "AWS_ENDPOINT_URL_SSM", "AWS_ENDPOINT_URL"),
		SecretsManagerEndpoint: firstSet(getenv, "TOOL_RAG_SECRETSMANAGER_ENDPOINT", "AWS_ENDPOINT_URL_SECRETS_MANAGER", "AWS_ENDPOINT_URL"),
		KMSEndpoint:            firstSet(getenv, "TOOL_RAG_KMS_ENDPOINT", "AWS_ENDPOINT_URL_KMS", "AWS_ENDPOINT_URL"),
		VaultKMSKey:            v.Str("TOOL_RAG_VAULT_KMS_KEY", ""),
		ConnectLinkTTL:         v.Seconds("TOOL_RAG_CONNECT_LINK_TTL", upconnect.DefaultLinkTTL),
	}
	if cfg.Embed, err = embed.ConfigFromEnv(getenv); err != nil {
		v.Fail("%s", err)
	}
	// A Bedrock call (a query embedding) stops before the invocation's
	// deadline like an upstream call, not after its own 30 s.
	cfg.Embed.Bedrock.DeadlineMargin = lambdahttp.DefaultMargin
	if cfg.Rerank, err = rerank.ConfigFromEnv(getenv); err != nil {
		v.Fail("%s", err)
	}
	if cfg.OAuth, err = oauth.FromEnv(getenv); err != nil {
		v.Fail("%s", err)
	}
	for _, ep := range []struct{ name, v string }{{"S3", cfg.S3Endpoint}, {"Lambda", cfg.LambdaEndpoint}, {"DynamoDB", cfg.DynamoDBEndpoint}, {"SSM", cfg.SSMEndpoint}, {"Secrets Manager", cfg.SecretsManagerEndpoint}, {"KMS", cfg.KMSEndpoint}} {
		if u, err := url.Parse(ep.v); ep.v != "" && (err != nil || u.Scheme == "" || u.Host == "") {
			v.Fail("%s endpoint %q is not a URL like http://127.0.0.1:4566", ep.name, ep.v)
		}
	}
	if err := v.Err(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// defaultInitWait is InitWait for the Lambda initialization type: an
// on-demand init is limited to 10 s; provisioned concurrency and SnapStart
// initialize ahead of traffic (and SnapStart must finish before its
// snapshot), so they wait for the whole load.
func defaultInitWait(initType string) time.Duration {
	if initType == "on-demand" {
		return DefaultOnDemandInitWait
	}
	return 0
}

func firstSet(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// withDefaults fills zero fields and checks what every function needs.
func (c Config) withDefaults() (Config, error) {
	if c.Bucket == "" {
		return c, fmt.Errorf("TOOL_RAG_INDEX_BUCKET is not set: name the S3 bucket that holds the published index")
	}
	if c.ResultsBucket == "" {
		c.ResultsBucket = c.Bucket
	}
	if c.ResultsPrefix == "" {
		c.ResultsPrefix = DefaultResultsPrefix
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.Tables == (dynamo.Tables{}) {
		c.Tables = dynamo.TablesFromEnv(func(string) string { return "" })
	}
	if c.IndexRefresh <= 0 {
		c.IndexRefresh = DefaultIndexRefresh
	}
	if c.KeyCacheTTL <= 0 {
		c.KeyCacheTTL = DefaultKeyCacheTTL
	}
	if c.HealthCacheTTL <= 0 {
		c.HealthCacheTTL = DefaultHealthCacheTTL
	}
	if c.CatalogMaxAge <= 0 {
		c.CatalogMaxAge = DefaultCatalogMaxAge
	}
	if c.UpstreamListTimeout <= 0 {
		c.UpstreamListTimeout = DefaultUpstreamListTimeout
	}
	if c.HealthParallel <= 0 {
		c.HealthParallel = 16
	}
	if c.MetricsInterval <= 0 {
		c.MetricsInterval = metrics.DefaultEMFInterval
	}
	switch c.RateLimit {
	case "":
		c.RateLimit = RateLimitInstance
	case RateLimitInstance, RateLimitExact:
	default:
		return c, fmt.Errorf("TOOL_RAG_RATE_LIMIT=%q must be instance or exact", c.RateLimit)
	}
	if c.RateLimitWindow <= 0 {
		c.RateLimitWindow = DefaultRateLimitWindow
	}
	if c.Env.MCPPath == "" {
		env, err := config.FromEnv(func(string) string { return "" })
		if err != nil {
			return c, err
		}
		c.Env = env
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Logger = slog.New(redact.Handler(c.Logger.Handler())) // no credential or session id in any log line
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// clients returns the DynamoDB, S3 and (when needed) Lambda clients,
// building the ones cfg does not provide.
func (c *Config) clients(ctx context.Context, m *dynamo.Metrics, needLambda bool) (err error) {
	if c.DynamoDB == nil {
		if c.DynamoDB, err = dynamo.NewClient(ctx, c.DynamoDBEndpoint, m); err != nil {
			return err
		}
	}
	if c.S3 == nil {
		if c.S3, err = awsclient.S3(ctx, c.S3Endpoint); err != nil {
			return err
		}
	}
	if needLambda && c.Lambda == nil && c.SyncFunction != "" && !c.ReindexInPlace {
		c.Lambda, err = awsclient.Lambda(ctx, c.LambdaEndpoint)
	}
	return err
}

// secretSource sets how ${VAR} in registry headers is resolved: with
// SecretsPrefix unset, from the environment only (os.Getenv, as before);
// otherwise from the environment, then the store SecretsStore names (the
// SSM parameters under the prefix, or the Secrets Manager secrets
// <prefix>VAR), read with SSM or SecretsManager (or a client built like
// the others'). A store or prefix that is not valid does not stop the
// function (see secrets.Func).
func (c *Config) secretSource(ctx context.Context) (err error) {
	if c.secret != nil || c.SecretsPrefix == "" {
		return nil
	}
	rc := secrets.Config{Prefix: c.SecretsPrefix, Store: c.SecretsStore, TTL: c.SecretsTTL, Logger: c.Logger,
		Client: c.SSM, SecretsManager: c.SecretsManager}
	switch {
	case (c.SecretsStore == "" || c.SecretsStore == secrets.StoreSSM) && rc.Client == nil:
		rc.Client, err = awsclient.SSM(ctx, c.SSMEndpoint, c.secretsTimeouts)
	case c.SecretsStore == secrets.StoreSecretsManager && rc.SecretsManager == nil:
		rc.SecretsManager, err = awsclient.SecretsManager(ctx, c.SecretsManagerEndpoint, c.secretsTimeouts)
	}
	if err != nil {
		return err
	}
	c.secret = secrets.Func(rc, "TOOL_RAG_SECRETS_PREFIX", "TOOL_RAG_SECRETS_STORE")
	if rc.Store == secrets.StoreSecretsManager {
		return nil
	}
	// The hop credentials of the Fargate stdio servers (${TOOLRAG_HOP_*},
	// created by the stacks) live in Secrets Manager whatever the store
	// of the other secrets.
	hop := rc
	hop.Store, hop.Client = secrets.StoreSecretsManager, nil
	if hop.SecretsManager == nil {
		if hop.SecretsManager, err = awsclient.SecretsManager(ctx, c.SecretsManagerEndpoint, c.secretsTimeouts); err != nil {
			return err
		}
	}
	hopSecret, other := secrets.Func(hop, "TOOL_RAG_SECRETS_PREFIX", "TOOL_RAG_SECRETS_STORE"), c.secret
	c.secret = func(ctx context.Context, name string) (string, error) {
		if strings.HasPrefix(name, HopSecretPrefix) {
			return hopSecret(ctx, name)
		}
		return other(ctx, name)
	}
	return nil
}

// HopSecretPrefix starts the ${VAR} name of a Fargate stdio server's hop
// credential (the stacks name it <secrets prefix>TOOLRAG_HOP_<SERVER>, in
// Secrets Manager); such a name is always read from Secrets Manager.
const HopSecretPrefix = "TOOLRAG_HOP_"

// prepare fills the defaults and builds what the gateway and the sync
// function both need: the clients, the secret source and the embedder.
func (c Config) prepare(ctx context.Context, m *dynamo.Metrics, needLambda bool) (Config, embed.Embedder, error) {
	c, err := c.withDefaults()
	if err != nil {
		return c, nil, err
	}
	if err := c.clients(ctx, m, needLambda); err != nil {
		return c, nil, err
	}
	if err := c.secretSource(ctx); err != nil {
		return c, nil, err
	}
	emb, err := c.embedder(ctx)
	return c, emb, err
}

func (c *Config) embedder(ctx context.Context) (embed.Embedder, error) {
	if c.Embedder != nil {
		return c.Embedder, nil
	}
	e, err := embed.New(ctx, c.Embed)
	if err != nil {
		return nil, err
	}
	c.Embedder = e
	return e, nil
}

// Main is the main of each function: JSON logs on stdout, GOMEMLIMIT from
// the function's memory, the configuration from the environment, then the
// function build makes (NewGatewayFunction, NewSyncer, NewProber) in a
// traced cold start, and start runs its Lambda handler (it does not
// return). A configuration or build failure is logged, prefixed with name,
// and exits the process.
func Main[F any](name string, build func(context.Context, Config) (F, error), start func(F)) {
	slog.SetDefault(config.NewLogger(os.Getenv, os.Stdout))
	lambdahttp.LimitMemory(os.Getenv)
	cfg, err := ConfigFromEnv(os.Getenv)
	if err != nil {
		slog.Error(name+": configuration", "error", err)
		os.Exit(1)
	}
	// Tracing (OTEL_* settings): each invocation is a span (the functions
	// wrap their handlers in tracing.Invocation), the first one carries
	// the cold start.
	ctx := context.Background()
	stop := tracing.Init(ctx, "toolrag-"+name)
	coldStarted := tracing.ColdStart(name)
	fn, err := build(ctx, cfg)
	coldStarted(err)
	if err != nil {
		slog.Error(name+": cold start failed", "error", err)
		stop()
		os.Exit(1)
	}
	start(fn)
}
