package secrets

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/aws/secrets/smtest"
	"github.com/toolrag/mcp-gateway/pkg/aws/secrets/ssmtest"
)

// benchConfig is cfg (its store and client) with no logs and an empty
// environment, so that every lookup goes to the store.
func benchConfig(cfg Config) Config {
	cfg.Prefix = prefix
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.LookupEnv = func(string) (string, bool) { return "", false }
	return cfg
}

// benchRead times a cold start: a new Resolver over cfg and its first
// lookup of name.
func benchRead(b *testing.B, cfg Config, name string) {
	b.ReportAllocs()
	for b.Loop() {
		r, err := New(benchConfig(cfg))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Value(context.Background(), name); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCachedLookup times the lookups of name after the first, within the
// TTL: the store (whose calls so far calls counts) is called once.
func benchCachedLookup(b *testing.B, cfg Config, name string, calls func() int) {
	r, err := New(benchConfig(cfg))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Value(ctx, name); err != nil {
			b.Fatal(err)
		}
	}
	if n := calls(); n != 1 {
		b.Fatalf("%d calls to the store, want 1", n)
	}
}

// BenchmarkRead is a cold start's cost: the first lookup reads every
// parameter under the prefix (10 a page) from the fake SSM on loopback
// through the real SDK client.
func BenchmarkRead(b *testing.B) {
	for _, n := range []int{10, 50} {
		b.Run(fmt.Sprintf("params=%d", n), func(b *testing.B) {
			params := map[string]string{}
			for i := range n {
				params[fmt.Sprintf("%sVAR_%03d", prefix, i)] = "value"
			}
			benchRead(b, Config{Client: ssmtest.New(b, params).Client}, "VAR_000")
		})
	}
}

// BenchmarkCachedLookup is every later lookup within the TTL.
func BenchmarkCachedLookup(b *testing.B) {
	fake := ssmtest.New(b, map[string]string{prefix + "TOKEN": "v"})
	benchCachedLookup(b, Config{Client: fake.Client}, "TOKEN", func() int { return len(fake.Requests()) })
}

// BenchmarkSecretsManagerRead is a cold lookup with Store secretsmanager:
// one GetSecretValue to the fake Secrets Manager on loopback through the
// real SDK client (each further name costs one more).
func BenchmarkSecretsManagerRead(b *testing.B) {
	fake := smtest.New(b, map[string]string{prefix + "TOKEN": "value"})
	benchRead(b, Config{Store: StoreSecretsManager, SecretsManager: fake.Client}, "TOKEN")
}

// BenchmarkSecretsManagerCachedLookup is every later lookup of a name
// within the TTL.
func BenchmarkSecretsManagerCachedLookup(b *testing.B) {
	fake := smtest.New(b, map[string]string{prefix + "TOKEN": "v"})
	benchCachedLookup(b, Config{Store: StoreSecretsManager, SecretsManager: fake.Client}, "TOKEN", func() int { return len(fake.Requests()) })
}
