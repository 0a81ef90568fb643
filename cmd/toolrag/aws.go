package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolrag/mcp-gateway/internal/subcommand"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// AWS administration: API keys and the upstream registry in DynamoDB, and
// the tables themselves. Tables come from TOOL_RAG_*_TABLE; the endpoint
// from TOOL_RAG_DYNAMODB_ENDPOINT or AWS_ENDPOINT_URL (LocalStack, DynamoDB
// Local), otherwise the region's AWS endpoint.

func init() {
	registerAWS("keys", "manage API keys in DynamoDB: keys create | list | revoke",
		"toolrag keys create --id ID --server S[:prefix,...] [--server ...] [--admin] | keys list | keys revoke --id ID",
		map[string]subcommand.Command{
			"create": {Usage: "toolrag keys create --id ID --server S[:prefix,...] [--server ...] [--admin] [--rate R --burst B] [--expires-at T]", About: keysCreateAbout, Flags: keysCreate},
			"list":   {Usage: "toolrag keys list", About: keysListAbout, Flags: keysList},
			"revoke": {Usage: "toolrag keys revoke --id ID", About: keysRevokeAbout, Flags: keysRevoke},
		})
	registerAWS("registry", "publish the upstream registry to DynamoDB: registry push",
		"toolrag registry push [--allow-stdio] [--expand-env] [--dry-run]",
		map[string]subcommand.Command{
			"push": {Usage: "toolrag registry push [--allow-stdio] [--expand-env] [--dry-run]", About: registryPushAbout, Flags: registryPush},
		})
	registerAWS("dynamo", "DynamoDB setup: dynamo create-tables",
		"toolrag dynamo create-tables | dynamo seed-events [--server ID ...]",
		map[string]subcommand.Command{
			"create-tables": {Usage: "toolrag dynamo create-tables", About: createTablesAbout, Flags: createTables},
			"seed-events":   {Usage: "toolrag dynamo seed-events [--server ID ...]", About: seedEventsAbout, Flags: seedEvents},
		})
}

// registerAWS registers a command made of subcommands (keys create, keys
// list, ...) under usage; a subcommand's -h ends with awsEnvHelp, and its
// errors go through awsHint.
func registerAWS(name, summary, usage string, subs map[string]subcommand.Command) {
	commands.Add(name, subcommand.Command{Summary: summary, Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) > 0 && isHelp(args[0]) {
			fmt.Fprintf(stderr, "usage: %s\n\n%s\n", usage, awsEnvHelp)
			return flag.ErrHelp
		}
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return fmt.Errorf("missing subcommand; usage: %s", usage)
		}
		sub, ok := subs[args[0]]
		if !ok {
			return fmt.Errorf("unknown subcommand %q; usage: %s", args[0], usage)
		}
		run := subcommand.WithFlags(name+" "+args[0], sub.Usage, strings.TrimSpace(sub.About)+"\n\n"+awsEnvHelp, sub.Flags)
		return awsHint(run(ctx, args[1:], stdout, stderr))
	}})
}

func dynamoClient(ctx context.Context) (*dynamodb.Client, dynamo.Tables, error) {
	c, err := dynamo.NewClient(ctx, "", nil)
	return c, dynamo.TablesFromEnv(os.Getenv), err
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// withTableHint adds the fix for the most common first-run error.
func withTableHint(err error) error {
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return fmt.Errorf("%w (create the tables with `toolrag dynamo create-tables`, or check TOOL_RAG_*_TABLE and AWS_REGION)", err)
	}
	return err
}

const keysCreateAbout = `Creates an API key in the keys table (TOOL_RAG_KEYS_TABLE) and prints its secret once, on stdout;
only its SHA-256 hash is stored. Every granted server must be in the registry table
(TOOL_RAG_REGISTRY_TABLE, written by ` + "`toolrag registry push`" + `).

Example:
  toolrag keys create --id ci-agent --server echo --server github:get,list`

func keysCreate(fs *flag.FlagSet) subcommand.Run {
	id := fs.String("id", "", "key id (required)")
	var servers stringList
	fs.Var(&servers, "server", "grant a server: ID (all of it), or ID:prefix1,prefix2 to grant only tools with those name prefixes and no prompt or resource (repeatable; the server must be in the registry table)")
	admin := fs.Bool("admin", false, "admin key: sees the merged catalog in tools/list and may reindex")
	rate := fs.Float64("rate", 0, "rate limit in requests per second (0 = unlimited)")
	burst := fs.Int("burst", 0, "rate limit burst")
	expires := fs.String("expires-at", "", "the key stops working at this time (RFC 3339, e.g. 2027-01-31T18:00:00Z)")
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		if *id == "" {
			return errors.New("keys create: --id is required")
		}
		if len(servers) == 0 && !*admin {
			return errors.New("keys create: grant at least one --server (a key without servers can do nothing)")
		}
		k := policy.Key{ID: *id, Admin: *admin, Servers: map[string]policy.Rule{}, RateLimit: policy.RateLimit{Rate: *rate, Burst: *burst}}
		if *expires != "" {
			t, err := time.Parse(time.RFC3339, *expires)
			if err != nil {
				return fmt.Errorf("keys create: --expires-at %q is not an RFC 3339 time (e.g. 2027-01-31T18:00:00Z)", *expires)
			}
			k.ExpiresAt = t
		}
		for _, s := range servers {
			sid, rule, err := policy.ParseGrant(s)
			if err != nil {
				return err
			}
			k.Servers[sid] = rule
		}
		c, tables, err := dynamoClient(ctx)
		if err != nil {
			return err
		}
		if err := dynamo.NewRegistryStore(c, tables.Registry).CheckGrants(ctx, k); err != nil {
			return err
		}
		secret, err := dynamo.NewKeyStore(c, tables.Keys).CreateWithSecret(ctx, k)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created key %q in %s; its secret is shown once, store it now:\n", *id, tables.Keys)
		fmt.Fprintln(stdout, secret)
		return nil
	}
}

const keysListAbout = `Lists the API keys of the keys table (TOOL_RAG_KEYS_TABLE): id, admin, state (active, revoked,
expired), granted servers, the start of the secret's SHA-256 hash and when it was created.
Secrets are never stored, so they cannot be listed. It only reads.

Example:
  TOOL_RAG_DYNAMODB_ENDPOINT=http://127.0.0.1:8000 toolrag keys list`

func keysList(*flag.FlagSet) subcommand.Run {
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		c, tables, err := dynamoClient(ctx)
		if err != nil {
			return err
		}
		keys, err := dynamo.NewKeyStore(c, tables.Keys).List(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tADMIN\tSTATE\tSERVERS\tHASH\tCREATED")
		for _, k := range keys {
			state := "active"
			switch {
			case k.Disabled:
				state = "revoked"
			case k.Expired(time.Now()):
				state = "expired"
			case !k.ExpiresAt.IsZero():
				state = "active until " + k.ExpiresAt.UTC().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(tw, "%s\t%v\t%s\t%s\t%s\t%s\n", k.ID, k.Admin, state, grants(k.Servers), shortHash(k.SecretHash), k.CreatedAt.Format("2006-01-02 15:04"))
		}
		return tw.Flush()
	}
}

const keysRevokeAbout = `Marks the key revoked in the keys table (TOOL_RAG_KEYS_TABLE); gateways stop accepting it
within TOOL_RAG_KEY_CACHE_TTL (default 30 s). The entry stays, for the record. The key's
upstream connections (TOOL_RAG_VAULT_TABLE) are deleted.

Example:
  toolrag keys revoke --id ci-agent`

func keysRevoke(fs *flag.FlagSet) subcommand.Run {
	id := fs.String("id", "", "key id (required)")
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		if *id == "" {
			return errors.New("keys revoke: --id is required")
		}
		c, tables, err := dynamoClient(ctx)
		if err != nil {
			return err
		}
		if err := dynamo.NewKeyStore(c, tables.Keys).Revoke(ctx, *id); err != nil {
			return err
		}
		// The key's upstream connections end with it (the token vault).
		n, err := dynamo.NewVaultRows(c, tables.Vault).DeleteKey(ctx, *id)
		if err != nil {
			return fmt.Errorf("revoked key %q, but its upstream connections could not be removed (run it again): %w", *id, err)
		}
		fmt.Fprintf(stdout, "revoked key %q (and its %d upstream connections); gateways stop accepting it within TOOL_RAG_KEY_CACHE_TTL (default 30s)\n", *id, n)
		return nil
	}
}

func grants(servers map[string]policy.Rule) string {
	var out []string
	for id, r := range servers {
		if len(r.ToolPrefixes) > 0 {
			id += ":" + strings.Join(r.ToolPrefixes, ",")
		}
		out = append(out, id)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, " ")
}

func shortHash(h string) string {
	if len(h) > len("sha256:")+12 {
		return h[:len("sha256:")+12] + "…"
	}
	return h
}

const registryPushAbout = `Publishes the local registry (config/registry.yaml merged over config/registry.generated.yaml,
or MCP_GATEWAY_REGISTRY / MCP_GATEWAY_REGISTRY_GENERATED) to the registry table
(TOOL_RAG_REGISTRY_TABLE): adds, updates and removes entries so that the table holds exactly the
local servers, and prints what changed. The sync function then pulls their tool lists.

Example:
  toolrag registry push --dry-run`

func registryPush(fs *flag.FlagSet) subcommand.Run {
	allowStdio := fs.Bool("allow-stdio", false, "accept stdio servers (only if the function image contains their commands)")
	expand := fs.Bool("expand-env", false, "replace ${VAR} in headers with values from this shell (stores them in the table); by default the functions expand them from their own environment")
	dryRun := fs.Bool("dry-run", false, "validate and print the entries without writing")
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		env, err := config.FromEnv(os.Getenv)
		if err != nil {
			return err
		}
		getenv := config.KeepVars // the functions expand ${VAR} from their own environment
		if *expand {
			getenv = os.Getenv
		}
		servers, err := config.LoadRegistry(env.RegistryPath, env.GeneratedPath, getenv)
		if err != nil {
			return err
		}
		docs, err := config.RegistryDocs(servers, *allowStdio)
		if err != nil {
			return err
		}
		if *dryRun {
			ids := make([]string, 0, len(docs))
			for id := range docs {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				fmt.Fprintf(stdout, "%s\t%s\n", id, docs[id])
			}
			return nil
		}
		c, tables, err := dynamoClient(ctx)
		if err != nil {
			return err
		}
		ch, err := dynamo.NewRegistryStore(c, tables.Registry).ReplaceAll(ctx, docs)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "registry %s: %d added %v, %d updated %v, %d removed %v, %d unchanged\n", tables.Registry,
			len(ch.Added), ch.Added, len(ch.Updated), ch.Updated, len(ch.Removed), ch.Removed, len(ch.Unchanged))
		if len(ch.Added)+len(ch.Updated)+len(ch.Removed) > 0 {
			fmt.Fprintln(stdout, "run the sync function (or POST /tool-rag/reindex with an admin key) to pull the new tool lists")
		}
		return nil
	}
}

const createTablesAbout = `Creates the gateway's DynamoDB tables (tools, keys, registry, sessions, call sequences; layouts
in docs/dynamodb.md) where they do not exist yet, and waits until they are active. For DynamoDB
Local and LocalStack, and first runs; the CDK and SAM templates create the production tables.

Example, with DynamoDB Local on port 8000:
  java -jar DynamoDBLocal.jar -inMemory -port 8000 &
  TOOL_RAG_DYNAMODB_ENDPOINT=http://127.0.0.1:8000 toolrag dynamo create-tables`

func createTables(*flag.FlagSet) subcommand.Run {
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		c, tables, err := dynamoClient(ctx)
		if err != nil {
			return err
		}
		if err := dynamo.CreateTables(ctx, c, tables); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "tables ready: %s, %s, %s, %s\n", tables.Tools, tables.Keys, tables.Registry, tables.Sessions)
		return nil
	}
}

const seedEventsAbout = `Puts the example key and the fixture session of events/ into the keys and sessions tables, for
` + "`sam local invoke`" + ` against a development deployment.

Example:
  TOOL_RAG_DYNAMODB_ENDPOINT=http://127.0.0.1:8000 toolrag dynamo seed-events --server echo`

// seedEvents puts the example key and the fixture session of events/ in
// the tables, for `sam local invoke` against a development deployment.
func seedEvents(fs *flag.FlagSet) subcommand.Run {
	var servers stringList
	fs.Var(&servers, "server", "a server the example key may use (repeatable; default: every server in the registry)")
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		c, tables, err := dynamoClient(ctx)
		if err != nil {
			return err
		}
		did, err := dynamo.SeedEventFixtures(ctx, dynamo.NewKeyStore(c, tables.Keys), dynamo.NewRegistryStore(c, tables.Registry),
			dynamo.NewSessionStore(c, tables.Sessions), servers)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, did)
		return nil
	}
}
