// Package secrets resolves the ${VAR} references in upstream server
// configs: from the process environment first, then from one of two AWS
// stores, where VAR is the entry <prefix>VAR:
//
//   - AWS Systems Manager Parameter Store (Config.Store "ssm", the
//     default): the parameter <prefix>VAR (String or SecureString, read
//     with decryption). A Resolver reads every parameter directly under
//     the prefix with one paginated GetParametersByPath call the first time
//     a name is not in the environment, and caches them for a TTL: a cold
//     start costs one round trip (per 10 parameters) for all secrets, not
//     one per header.
//   - AWS Secrets Manager (Config.Store "secretsmanager"): the secret named
//     <prefix>VAR, read with one GetSecretValue call per name on its first
//     use and cached per name for the TTL. Its SecretString is the value,
//     as is: a JSON SecretString (such as {"token":"..."}) is used whole,
//     not picked apart. A secret that holds SecretBinary is an error.
//     GetSecretValue is the only call, so an IAM grant of
//     secretsmanager:GetSecretValue on secret:<prefix>* is all it needs
//     (ListSecrets and BatchGetSecretValue cannot be scoped to a prefix).
//
// After the TTL the next lookup reads again; if that fails, the last values
// read keep being served, the failure is logged, and the store is not
// called again for MaxRetryDelay. Values are never logged, only names.
package secrets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// SSMAPI is the part of the SSM client a Resolver uses (*ssm.Client
// implements it).
type SSMAPI interface {
	GetParametersByPath(ctx context.Context, in *ssm.GetParametersByPathInput, optFns ...func(*ssm.Options)) (*ssm.GetParametersByPathOutput, error)
}

// SecretsManagerAPI is the part of the Secrets Manager client a Resolver
// uses (*secretsmanager.Client implements it).
type SecretsManagerAPI interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// The stores a Resolver reads (Config.Store).
const (
	StoreSSM            = "ssm"
	StoreSecretsManager = "secretsmanager"
)

// Config configures a Resolver.
type Config struct {
	// Prefix is what ${VAR} is prefixed with to name its entry in the
	// store, such as /toolrag/prod/. For SSM it is a parameter path: it
	// starts and ends with "/", and GetParametersByPath is called with it
	// exactly, so an IAM grant on parameter<Prefix>* covers it. For
	// Secrets Manager it ends with "/" (the leading "/" is optional), and
	// ${VAR} is the secret named <Prefix>VAR.
	Prefix string
	// Store is StoreSSM ("" means it too) or StoreSecretsManager.
	Store string
	// Client calls SSM (required when Store is StoreSSM).
	Client SSMAPI
	// SecretsManager calls Secrets Manager (required when Store is
	// StoreSecretsManager).
	SecretsManager SecretsManagerAPI
	// TTL is how long the values read are used before they are read
	// again (default DefaultTTL).
	TTL time.Duration
	// Logger receives load and refresh failures, and the names (never the
	// values) of the parameters or secrets read; nil means slog.Default().
	Logger *slog.Logger

	// LookupEnv reads the process environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Now is the clock of the TTL; nil means time.Now.
	Now func() time.Time
}

const (
	// DefaultTTL is how long values are cached when Config.TTL is 0.
	DefaultTTL = 5 * time.Minute
	// MaxRetryDelay bounds how long a failed read is remembered: lookups
	// in between answer with the failure (first read) or the last good
	// values (refresh) without calling the store again.
	MaxRetryDelay = 30 * time.Second
	// maxPages bounds one read (10 parameters a page).
	maxPages = 1000
)

var (
	nameRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	prefixRE = regexp.MustCompile(`^/([A-Za-z0-9_.\-]+/)*$`)
	// Secrets Manager names: letters, digits and /_+=.@-.
	smPrefixRE = regexp.MustCompile(`^(/|/?([A-Za-z0-9_+=.@\-]+/)+)$`)
)

// ValidName reports whether name can be a ${VAR} secret name:
// [A-Za-z_][A-Za-z0-9_]*.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// Resolver looks up secrets by name. It is safe for concurrent use.
type Resolver struct {
	prefix    string
	store     string
	client    SSMAPI
	sm        SecretsManagerAPI
	ttl       time.Duration
	retry     time.Duration
	log       *slog.Logger
	lookupEnv func(string) (string, bool)
	getenv    func(string) string // lookupEnv's values, for EnvAllowed
	now       func() time.Time

	mu       sync.Mutex
	values   map[string]string // VAR → value, from the last good read
	loaded   bool              // values holds a good read
	loadedAt time.Time
	nextTry  time.Time // no SSM call before this, after a failed read
	lastErr  error     // the failed first read, answered until nextTry

	secrets map[string]*secretEntry // Secrets Manager: VAR → its cache
}

// New checks cfg and returns a Resolver. It does not call the store.
func New(cfg Config) (*Resolver, error) {
	switch cfg.Store {
	case "", StoreSSM:
		cfg.Store = StoreSSM
		if !prefixRE.MatchString(cfg.Prefix) {
			return nil, fmt.Errorf("secrets prefix %q is not an SSM parameter path like /toolrag/prod/ (it must start and end with \"/\"; letters, digits and _.- between)", cfg.Prefix)
		}
		if cfg.Client == nil {
			return nil, errors.New("secrets: no SSM client")
		}
	case StoreSecretsManager:
		if !smPrefixRE.MatchString(cfg.Prefix) {
			return nil, fmt.Errorf("secrets prefix %q is not a Secrets Manager name prefix like /toolrag/prod/ (it must end with \"/\"; letters, digits and _+=.@- between)", cfg.Prefix)
		}
		if cfg.SecretsManager == nil {
			return nil, errors.New("secrets: no Secrets Manager client")
		}
	default:
		return nil, fmt.Errorf("secrets store %q is not %s or %s", cfg.Store, StoreSSM, StoreSecretsManager)
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LookupEnv == nil {
		cfg.LookupEnv = os.LookupEnv
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Resolver{
		prefix: cfg.Prefix, store: cfg.Store, client: cfg.Client, sm: cfg.SecretsManager,
		ttl: cfg.TTL, retry: min(cfg.TTL, MaxRetryDelay),
		log: cfg.Logger, lookupEnv: cfg.LookupEnv, getenv: getenvOf(cfg.LookupEnv), now: cfg.Now,
		secrets: map[string]*secretEntry{},
	}, nil
}

// ParameterName returns the SSM parameter or Secrets Manager secret that
// holds name.
func (r *Resolver) ParameterName(name string) string { return r.prefix + name }

// Lookup returns the value of name: the environment variable when
// EnvAllowed lets it be read and it is set and not empty, else the store's
// <prefix>name. ok is false when neither exists. err is set when name is
// not a valid secret name, is Reserved, or the store could not be read (and
// was never read before).
func (r *Resolver) Lookup(ctx context.Context, name string) (value string, ok bool, err error) {
	if !ValidName(name) {
		return "", false, fmt.Errorf("%q is not a valid secret name: use letters, digits and _, not starting with a digit", name)
	}
	if err := Reserved(name); err != nil {
		return "", false, err
	}
	if EnvAllowed(name, r.getenv) {
		if v, ok := r.lookupEnv(name); ok && v != "" {
			return v, true, nil
		}
	}
	if r.store == StoreSecretsManager {
		return r.secret(ctx, name)
	}
	vals, err := r.parameters(ctx)
	if err != nil {
		return "", false, err
	}
	v, ok := vals[name]
	return v, ok, nil
}

// NotFoundError is Value's error for a name that is neither in the
// environment nor in the store.
type NotFoundError struct {
	Name      string // the ${VAR} name
	Parameter string // the SSM parameter or Secrets Manager secret looked for
	Store     string // StoreSSM ("" too) or StoreSecretsManager
	// EnvAllowed is whether the environment was looked at (EnvAllowed).
	EnvAllowed bool
}

func (e *NotFoundError) Error() string {
	if !e.EnvAllowed {
		if e.Store == StoreSecretsManager {
			return fmt.Sprintf("the Secrets Manager secret %s does not exist (the environment variable %s is not read: only %s* and names listed in %s are)", e.Parameter, e.Name, UpstreamPrefix, AllowEnvSetting)
		}
		return fmt.Sprintf("the SSM parameter %s is not set (the environment variable %s is not read: only %s* and names listed in %s are)", e.Parameter, e.Name, UpstreamPrefix, AllowEnvSetting)
	}
	if e.Store == StoreSecretsManager {
		return fmt.Sprintf("neither the environment variable %s nor the Secrets Manager secret %s exists", e.Name, e.Parameter)
	}
	return fmt.Sprintf("neither the environment variable %s nor the SSM parameter %s is set", e.Name, e.Parameter)
}

// Value is Lookup with a missing secret as a *NotFoundError.
func (r *Resolver) Value(ctx context.Context, name string) (string, error) {
	v, ok, err := r.Lookup(ctx, name)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", &NotFoundError{Name: name, Parameter: r.ParameterName(name), Store: r.store, EnvAllowed: EnvAllowed(name, r.getenv)}
	}
	return v, nil
}

// parameters returns the cached parameters, reading them when there are
// none yet or they are older than the TTL.
func (r *Resolver) parameters(ctx context.Context) (map[string]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if r.loaded && now.Sub(r.loadedAt) < r.ttl {
		return r.values, nil
	}
	if now.Before(r.nextTry) {
		if r.loaded {
			return r.values, nil // stale, but the refresh failed a moment ago
		}
		return nil, r.lastErr
	}
	vals, err := r.read(ctx)
	if err != nil {
		// A caller that gave up does not make the others wait.
		if ctx.Err() == nil {
			r.nextTry = now.Add(r.retry)
		}
		if r.loaded {
			r.log.Warn("could not refresh secrets from SSM; using the values read before",
				"prefix", r.prefix, "read_at", r.loadedAt, "error", err)
			return r.values, nil
		}
		r.lastErr = err
		return nil, err
	}
	r.values, r.loaded, r.loadedAt, r.lastErr = vals, true, now, nil
	return vals, nil
}

// read fetches every parameter directly under the prefix.
func (r *Resolver) read(ctx context.Context) (map[string]string, error) {
	in := &ssm.GetParametersByPathInput{
		Path: aws.String(r.prefix), Recursive: aws.Bool(false), WithDecryption: aws.Bool(true),
	}
	p := ssm.NewGetParametersByPathPaginator(r.client, in, func(o *ssm.GetParametersByPathPaginatorOptions) {
		o.StopOnDuplicateToken = true
	})
	vals := map[string]string{}
	var ignored []string
	for pages := 0; p.HasMorePages(); pages++ {
		if pages == maxPages {
			return nil, fmt.Errorf("reading SSM parameters under %s: more than %d pages", r.prefix, maxPages)
		}
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading SSM parameters under %s: %w", r.prefix, err)
		}
		for _, prm := range out.Parameters {
			full := aws.ToString(prm.Name)
			name, ok := strings.CutPrefix(full, r.prefix)
			if !ok || !ValidName(name) || prm.Value == nil {
				ignored = append(ignored, full)
				continue
			}
			vals[name] = *prm.Value
		}
	}
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Strings(names)
	r.log.Info("read secrets from SSM", "prefix", r.prefix, "names", names)
	if len(ignored) > 0 {
		r.log.Warn("SSM parameters whose names cannot be a ${VAR} ([A-Za-z_][A-Za-z0-9_]*) are ignored", "prefix", r.prefix, "parameters", ignored)
	}
	return vals, nil
}

// Func returns the lookup of the Resolver cfg makes (Value). When cfg does
// not make one (a prefix or store that is not valid), the function does
// not stop: the reason, prefixed with the setting it comes from
// (prefixSetting or storeSetting), is logged, and the lookup reads the
// environment only and gives that reason for a variable missing from it,
// so that servers without secrets keep working.
func Func(cfg Config, prefixSetting, storeSetting string) func(ctx context.Context, name string) (string, error) {
	r, err := New(cfg)
	if err == nil {
		return r.Value
	}
	setting := prefixSetting
	if cfg.Store != "" && cfg.Store != StoreSSM && cfg.Store != StoreSecretsManager {
		setting = storeSetting
	}
	err = fmt.Errorf("%s: %w", setting, err)
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Error("secrets are read from the environment only; registry headers that need others fail", "error", err)
	lookupEnv := cfg.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	getenv := getenvOf(lookupEnv)
	return func(_ context.Context, name string) (string, error) {
		if e := Reserved(name); e != nil {
			return "", e
		}
		if !EnvAllowed(name, getenv) {
			return "", fmt.Errorf("%w, and %w", &NotAllowedError{Name: name}, err)
		}
		if v, ok := lookupEnv(name); ok && v != "" {
			return v, nil
		}
		return "", fmt.Errorf("environment variable %s is not set, and %w", name, err)
	}
}

// getenvOf turns a LookupEnv into a Getenv.
func getenvOf(lookupEnv func(string) (string, bool)) func(string) string {
	return func(name string) string {
		v, _ := lookupEnv(name)
		return v
	}
}
