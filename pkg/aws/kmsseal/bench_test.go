package kmsseal_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/aws/kmsseal"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

// BenchmarkUpstreamIdentityVaultAWS is the vault's part of a call to a
// per-principal server on the Lambda path, against DynamoDB Local and
// local-kms on 127.0.0.1: "first" is a principal's first call on an
// instance (a consistent GetItem and a KMS Decrypt of the data key, then
// AES-GCM), "warm" every later call within the cache TTL (memory only).
func BenchmarkUpstreamIdentityVaultAWS(b *testing.B) {
	ctx := context.Background()
	kc, keyID := newKey(b)
	_, _, rows := newVaultRows(b)
	sealer := kmsseal.New(kc, keyID)
	k := vault.Key{Principal: "key:alice", Server: "github"}
	if err := vault.New(rows, sealer, time.Minute).Put(ctx, k, vault.Grant{Kind: vault.KindOAuth, AccessToken: "at-0123456789", RefreshToken: "rt"}); err != nil {
		b.Fatal(err)
	}
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			if _, err := vault.New(rows, sealer, time.Minute).Get(ctx, k); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		v := vault.New(rows, sealer, time.Minute)
		if _, err := v.Get(ctx, k); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.Get(ctx, k); err != nil {
				b.Fatal(err)
			}
		}
	})
}
