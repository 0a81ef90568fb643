package kmsseal_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/awsclient"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/kmsseal"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// countingKMS counts the KMS round trips.
type countingKMS struct {
	*kms.Client
	gen, dec int
}

func (c *countingKMS) GenerateDataKey(ctx context.Context, in *kms.GenerateDataKeyInput, o ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error) {
	c.gen++
	return c.Client.GenerateDataKey(ctx, in, o...)
}

func (c *countingKMS) Decrypt(ctx context.Context, in *kms.DecryptInput, o ...func(*kms.Options)) (*kms.DecryptOutput, error) {
	c.dec++
	return c.Client.Decrypt(ctx, in, o...)
}

// newKey creates a KMS key in local-kms and returns the client and key id.
func newKey(tb testing.TB) (*kms.Client, string) {
	tb.Helper()
	ctx := context.Background()
	c, err := awsclient.KMS(ctx, testenv.KMS(tb))
	if err != nil {
		tb.Fatal(err)
	}
	out, err := c.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String(tb.Name())})
	if err != nil {
		tb.Fatal(err)
	}
	return c, aws.ToString(out.KeyMetadata.Arn)
}

// newVaultRows is a fresh vault table in DynamoDB Local, deleted when the
// test ends, with its client.
func newVaultRows(tb testing.TB) (*dynamodb.Client, string, *dynamo.VaultRows) {
	tb.Helper()
	ctx := context.Background()
	ddb, err := dynamo.NewClient(ctx, testenv.DynamoDB(tb), nil)
	if err != nil {
		tb.Fatal(err)
	}
	table := testenv.UniqueName(tb, "vault-")
	if err := dynamo.CreateTables(ctx, ddb, dynamo.Tables{Vault: table}); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ddb.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	})
	return ddb, table, dynamo.NewVaultRows(ddb, table)
}

// The AWS token vault against local-kms and DynamoDB Local: a grant
// round-trips, the raw row holds no token bytes, a row copied to another
// principal or server does not open (KMS refuses the encryption context),
// the cache serves a warm read without DynamoDB or KMS, expiry and delete
// end the grant, and nonces are single use.
func TestVaultKMSDynamoDB(t *testing.T) {
	ctx := context.Background()
	kc, keyID := newKey(t)
	ck := &countingKMS{Client: kc}
	ddb, table, rows := newVaultRows(t)
	sealer := kmsseal.New(ck, keyID)
	v := vault.New(rows, sealer, time.Minute)

	alice := vault.Key{Principal: "key:alice", Server: "github"}
	const secret = "ghp_SECRET-token-of-alice-1234567890"
	if err := v.Put(ctx, alice, vault.Grant{Kind: vault.KindSecret, Secret: secret, KeyID: "alice"}); err != nil {
		t.Fatal(err)
	}
	if ck.gen != 1 {
		t.Fatalf("GenerateDataKey calls = %d, want 1", ck.gen)
	}
	// Warm: from memory, no KMS.
	g, err := v.Get(ctx, alice)
	if err != nil || g.Secret != secret || ck.dec != 0 {
		t.Fatalf("warm get: %v %v decrypts=%d", g, err, ck.dec)
	}
	// Cold (another instance): DynamoDB + KMS Decrypt.
	cold := vault.New(rows, sealer, time.Minute)
	g, err = cold.Get(ctx, alice)
	if err != nil || g.Secret != secret || g.KeyID != "alice" || ck.dec != 1 {
		t.Fatalf("cold get: %v %v decrypts=%d", g, err, ck.dec)
	}

	// The raw row: no token bytes, in clear only what revocation needs.
	raw, err := rows.GetRow(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw.Sealed, []byte(secret)) || bytes.Contains(raw.Sealed, []byte("ghp_")) || raw.SealKey != kmsseal.Format || raw.KeyID != "alice" {
		t.Fatalf("raw row: seal key %q key id %q, %d sealed bytes (token visible: %v)", raw.SealKey, raw.KeyID, len(raw.Sealed), bytes.Contains(raw.Sealed, []byte(secret)))
	}
	out, err := ddb.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		for name, av := range it {
			if bytes.Contains(avBytes(av), []byte(secret)) {
				t.Fatalf("attribute %s holds the token", name)
			}
		}
	}

	// The row copied to bob (or to another server) does not open: KMS
	// refuses the encryption context.
	for _, other := range []vault.Key{{Principal: "key:bob", Server: "github"}, {Principal: "key:alice", Server: "linear"}} {
		cp := raw
		cp.Principal, cp.Server = other.Principal, other.Server
		if err := rows.PutRow(ctx, cp); err != nil {
			t.Fatal(err)
		}
		if g, err := vault.New(rows, sealer, time.Minute).Get(ctx, other); err == nil {
			t.Fatalf("alice's row copied to %v opened: %v", other, g)
		}
		if _, err := sealer.Open(ctx, raw.Sealed, raw.SealKey, []byte("toolrag-vault-v1\x00"+other.Principal+"\x00"+other.Server)); err == nil || !bytes.Contains([]byte(err.Error()), []byte("KMS Decrypt")) {
			t.Fatalf("KMS opened alice's data key under %v's context: %v", other, err)
		}
	}

	// A grant that expires without a refresh token: TTL attribute, and
	// not found once past it.
	exp := vault.Key{Principal: "key:carol", Server: "github"}
	if err := v.Put(ctx, exp, vault.Grant{Kind: vault.KindOAuth, AccessToken: "at", Expiry: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	rows.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, err := rows.GetRow(ctx, exp); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("expired row: %v", err)
	}
	rows.Now = nil

	// List and delete by key (what `toolrag keys revoke` does).
	list, err := v.List(ctx, "")
	if err != nil || len(list) != 4 {
		t.Fatalf("list: %v %+v", err, list)
	}
	if n, err := rows.DeleteKey(ctx, "alice"); err != nil || n != 3 {
		t.Fatalf("delete key: %d %v", n, err)
	}
	if _, err := cold.Get(ctx, vault.Key{Principal: "key:bob", Server: "github"}); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}

	// Nonces: single use across instances, until they expire.
	until := time.Now().Add(time.Minute)
	if ok, err := rows.Claim(ctx, "n1", until); !ok || err != nil {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	if ok, err := dynamo.NewVaultRows(ddb, table).Claim(ctx, "n1", until); ok || err != nil {
		t.Fatalf("replayed claim: %v %v", ok, err)
	}
	rows.Now = func() time.Time { return until.Add(time.Second) }
	if ok, err := rows.Claim(ctx, "n1", until.Add(time.Hour)); !ok || err != nil {
		t.Fatalf("claim of an expired nonce record: %v %v", ok, err)
	}
	rows.Now = nil
	if list, _ := v.List(ctx, ""); len(list) != 1 {
		t.Fatalf("nonce records listed as grants: %+v", list)
	}
}

// avBytes is an attribute's value as bytes (strings, numbers, binaries).
func avBytes(av types.AttributeValue) []byte {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return []byte(v.Value)
	case *types.AttributeValueMemberN:
		return []byte(v.Value)
	case *types.AttributeValueMemberB:
		return v.Value
	}
	return nil
}
