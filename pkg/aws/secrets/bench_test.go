package secrets

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/aws/secrets/smtest"
	"github.com/toolrag/mcp-gateway/pkg/aws/secrets/ssmtest"
)

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
			fake := ssmtest.New(b, params)
			noEnv := func(string) (string, bool) { return "", false }
			b.ReportAllocs()
			for b.Loop() {
				r, err := New(Config{Prefix: prefix, Client: fake.Client, Logger: slog.New(slog.DiscardHandler), LookupEnv: noEnv})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.Value(context.Background(), "VAR_000"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCachedLookup is every later lookup within the TTL.
func BenchmarkCachedLookup(b *testing.B) {
	fake := ssmtest.New(b, map[string]string{prefix + "TOKEN": "v"})
	r, err := New(Config{Prefix: prefix, Client: fake.Client, Logger: slog.New(slog.DiscardHandler), LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Value(ctx, "TOKEN"); err != nil {
			b.Fatal(err)
		}
	}
	if n := len(fake.Requests()); n != 1 {
		b.Fatalf("%d SSM calls, want 1", n)
	}
}

// BenchmarkSecretsManagerRead is a cold lookup with Store secretsmanager:
// one GetSecretValue to the fake Secrets Manager on loopback through the
// real SDK client (each further name costs one more).
func BenchmarkSecretsManagerRead(b *testing.B) {
	fake := smtest.New(b, map[string]string{prefix + "TOKEN": "value"})
	noEnv := func(string) (string, bool) { return "", false }
	b.ReportAllocs()
	for b.Loop() {
		r, err := New(Config{Prefix: prefix, Store: StoreSecretsManager, SecretsManager: fake.Client, Logger: slog.New(slog.DiscardHandler), LookupEnv: noEnv})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Value(context.Background(), "TOKEN"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSecretsManagerCachedLookup is every later lookup of a name
// within the TTL.
func BenchmarkSecretsManagerCachedLookup(b *testing.B) {
	fake := smtest.New(b, map[string]string{prefix + "TOKEN": "v"})
	r, err := New(Config{Prefix: prefix, Store: StoreSecretsManager, SecretsManager: fake.Client, Logger: slog.New(slog.DiscardHandler), LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Value(ctx, "TOKEN"); err != nil {
			b.Fatal(err)
		}
	}
	if n := len(fake.Requests()); n != 1 {
		b.Fatalf("%d Secrets Manager calls, want 1", n)
	}
}
