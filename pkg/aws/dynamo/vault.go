package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolrag/mcp-gateway/pkg/vault"
)

// VaultRows keeps the token vault's sealed rows (pkg/vault) in the vault
// table: partition key principal, sort key server; kind, key_id (the API
// key id, in clear for revocation), seal_key, sealed (the KMS envelope,
// pkg/aws/kmsseal), updated_at (ms) and, for a grant that ends, expires_at
// (epoch seconds, the table's TTL attribute; reads check it too, since
// DynamoDB deletes expired items only within a day or two).
//
// The same table records the used nonces of connect links and OAuth
// states (principal "#used", sort key the nonce, expiring with the link),
// so a link is single use across every gateway instance.
type VaultRows struct {
	// Now is the clock; tests replace it. Defaults to time.Now.
	Now func() time.Time

	client *dynamodb.Client
	table  string
}

var _ vault.Rows = (*VaultRows)(nil)

// Attributes of the vault table.
const (
	attrVaultPrincipal = "principal"
	attrVaultServer    = "server"
	// usedPrincipal is the partition of used link and state nonces (no
	// principal starts with '#').
	usedPrincipal = "#used"
)

// NewVaultRows returns the rows of the vault table.
func NewVaultRows(client *dynamodb.Client, table string) *VaultRows {
	return &VaultRows{client: client, table: table}
}

func (v *VaultRows) now() time.Time {
	if v.Now == nil {
		return time.Now()
	}
	return v.Now()
}

func vaultKey(principal, server string) item {
	return item{attrVaultPrincipal: avS(principal), attrVaultServer: avS(server)}
}

// GetRow implements vault.Rows (consistent read; an expired row is not
// found).
func (v *VaultRows) GetRow(ctx context.Context, k vault.Key) (vault.Row, error) {
	if strings.HasPrefix(k.Principal, "#") {
		return vault.Row{}, vault.ErrNotFound
	}
	out, err := v.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(v.table), Key: vaultKey(k.Principal, k.Server), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return vault.Row{}, fmt.Errorf("read %s: %w", v.table, err)
	}
	if out.Item == nil {
		return vault.Row{}, vault.ErrNotFound
	}
	r := rowOf(out.Item)
	if !r.Expiry.IsZero() && !v.now().Before(r.Expiry) {
		return vault.Row{}, vault.ErrNotFound
	}
	return r, nil
}

func rowOf(it item) vault.Row {
	r := vault.Row{
		Principal: getS(it, attrVaultPrincipal), Server: getS(it, attrVaultServer),
		KeyID: getS(it, attrKeyID), Kind: getS(it, "kind"), SealKey: getS(it, "seal_key"),
	}
	if b, ok := it["sealed"].(*types.AttributeValueMemberB); ok {
		r.Sealed = b.Value
	}
	if exp := getN(it, attrExpiresAt); exp > 0 {
		r.Expiry = time.Unix(exp, 0).UTC()
	}
	if upd := getN(it, "updated_at"); upd > 0 {
		r.Updated = time.UnixMilli(upd).UTC()
	}
	return r
}

// PutRow implements vault.Rows.
func (v *VaultRows) PutRow(ctx context.Context, r vault.Row) error {
	if strings.HasPrefix(r.Principal, "#") {
		return errors.New("a principal cannot start with '#'")
	}
	it := vaultKey(r.Principal, r.Server)
	it["kind"] = avS(r.Kind)
	it["seal_key"] = avS(r.SealKey)
	it["sealed"] = &types.AttributeValueMemberB{Value: r.Sealed}
	it["updated_at"] = avN(r.Updated.UnixMilli())
	if r.KeyID != "" {
		it[attrKeyID] = avS(r.KeyID)
	}
	if !r.Expiry.IsZero() {
		// Round up: the row lives at least as long as its grant.
		it[attrExpiresAt] = avN((r.Expiry.UnixMilli() + 999) / 1000)
	}
	if _, err := v.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(v.table), Item: it}); err != nil {
		return fmt.Errorf("write %s: %w", v.table, err)
	}
	return nil
}

// DeleteRow implements vault.Rows.
func (v *VaultRows) DeleteRow(ctx context.Context, k vault.Key) error {
	_, err := v.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(v.table), Key: vaultKey(k.Principal, k.Server)})
	if err != nil {
		return fmt.Errorf("delete from %s: %w", v.table, err)
	}
	return nil
}

// ListRows implements vault.Rows: a principal's rows by a query, every
// principal's by a scan (admin listings and revocations only), sorted by
// principal and server, without expired rows and nonce records.
func (v *VaultRows) ListRows(ctx context.Context, principal string) ([]vault.Row, error) {
	var items []item
	if principal != "" {
		p := dynamodb.NewQueryPaginator(v.client, &dynamodb.QueryInput{
			TableName: aws.String(v.table), ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("principal = :p"),
			ExpressionAttributeValues: item{":p": avS(principal)},
		})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", v.table, err)
			}
			items = append(items, page.Items...)
		}
	} else {
		var err error
		items, err = scanAll(ctx, v.client, &dynamodb.ScanInput{TableName: aws.String(v.table), ConsistentRead: aws.Bool(true),
			FilterExpression: aws.String("principal <> :used"), ExpressionAttributeValues: item{":used": avS(usedPrincipal)}})
		if err != nil {
			return nil, err
		}
	}
	now := v.now()
	out := make([]vault.Row, 0, len(items))
	for _, it := range items {
		r := rowOf(it)
		if r.Principal == usedPrincipal || (!r.Expiry.IsZero() && !now.Before(r.Expiry)) {
			continue
		}
		out = append(out, r)
	}
	sortRows(out)
	return out, nil
}

func sortRows(rows []vault.Row) {
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && (rows[j].Principal < rows[j-1].Principal ||
			rows[j].Principal == rows[j-1].Principal && rows[j].Server < rows[j-1].Server); j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
}

// DeleteKey removes every row stored by API key (or OAuth subject) id
// keyID and returns how many (`toolrag keys revoke` ends a key's upstream
// connections with it). A deployment without the vault table has none.
func (v *VaultRows) DeleteKey(ctx context.Context, keyID string) (int, error) {
	items, err := scanAll(ctx, v.client, &dynamodb.ScanInput{TableName: aws.String(v.table), ConsistentRead: aws.Bool(true),
		FilterExpression: aws.String("key_id = :k"), ExpressionAttributeValues: item{":k": avS(keyID)}})
	var notFound *types.ResourceNotFoundException
	if errors.As(err, &notFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, it := range items {
		if err := v.DeleteRow(ctx, vault.Key{Principal: getS(it, attrVaultPrincipal), Server: getS(it, attrVaultServer)}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Claim records a connect link's or OAuth state's nonce as used until
// until (upconnect.Nonces): a conditional write, so of two instances
// claiming the same nonce one wins; false when it was already used.
func (v *VaultRows) Claim(ctx context.Context, nonce string, until time.Time) (bool, error) {
	now := v.now().Unix()
	_, err := v.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(v.table),
		Item: item{attrVaultPrincipal: avS(usedPrincipal), attrVaultServer: avS(nonce),
			attrExpiresAt: avN(max(until.Unix(), now+1))},
		// An expired leftover that TTL has not removed yet is no use.
		ConditionExpression:       aws.String("attribute_not_exists(principal) OR expires_at <= :now"),
		ExpressionAttributeValues: item{":now": avN(now)},
	})
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("record a used link in %s: %w", v.table, err)
	}
	return true, nil
}
