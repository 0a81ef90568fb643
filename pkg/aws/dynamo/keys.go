package dynamo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// ErrKeyDisabled is returned by KeyStore.Lookup for a revoked key.
var ErrKeyDisabled = errors.New("API key is disabled")

// ErrExists is returned by KeyStore.Create when the key id or secret is
// already taken.
var ErrExists = errors.New("already exists")

// markerPrefix starts the secret_hash of the item that reserves a key id.
// Real hashes start with "sha256:", so the two never collide; markers have
// no key_id attribute, so they stay out of the byId index.
const markerPrefix = "keyid#"

// KeyStore keeps API keys in the keys table, by the SHA-256 of their
// secret. Secrets themselves are never stored.
type KeyStore struct {
	Metrics *Metrics
	// Log, when set, is told once per key whose grants changed meaning
	// (LookupKey).
	Log *slog.Logger

	warned sync.Map // key id → true once logged

	client   *dynamodb.Client
	table    string
	now      func() time.Time
	pageSize int32
}

// NewKeyStore returns a key store on the keys table.
func NewKeyStore(client *dynamodb.Client, table string) *KeyStore {
	return &KeyStore{client: client, table: table, now: func() time.Time { return time.Now().UTC() }}
}

func encodeKey(k policy.Key) (item, error) {
	servers, err := attributevalue.Marshal(k.Servers)
	if err != nil {
		return nil, fmt.Errorf("encode servers of key %q: %w", k.ID, err)
	}
	if k.Servers == nil {
		servers = &types.AttributeValueMemberM{Value: item{}}
	}
	rl, err := attributevalue.Marshal(k.RateLimit)
	if err != nil {
		return nil, fmt.Errorf("encode rate limit of key %q: %w", k.ID, err)
	}
	it := item{
		attrSecretHash: avS(k.SecretHash),
		attrKeyID:      avS(k.ID),
		"admin":        avBool(k.Admin),
		"servers":      servers,
		"rate_limit":   rl,
		"disabled":     avBool(k.Disabled),
		"created_at":   avS(catalog.FormatTime(k.CreatedAt)),
	}
	if !k.ExpiresAt.IsZero() {
		it["key_expires_at"] = avS(catalog.FormatTime(k.ExpiresAt))
	}
	return it, nil
}

func decodeKey(it item) (policy.Key, error) {
	k := policy.Key{
		ID:         getS(it, attrKeyID),
		SecretHash: getS(it, attrSecretHash),
		Admin:      getBool(it, "admin"),
		Disabled:   getBool(it, "disabled"),
		CreatedAt:  catalog.ParseTime(getS(it, "created_at")),
		ExpiresAt:  catalog.ParseTime(getS(it, "key_expires_at")),
	}
	if v, ok := it["servers"]; ok {
		if err := attributevalue.Unmarshal(v, &k.Servers); err != nil {
			return k, fmt.Errorf("key %q: bad servers attribute: %w", k.ID, err)
		}
	}
	if v, ok := it["rate_limit"]; ok {
		if err := attributevalue.Unmarshal(v, &k.RateLimit); err != nil {
			return k, fmt.Errorf("key %q: bad rate_limit attribute: %w", k.ID, err)
		}
	}
	return k, nil
}

func markerKey(id string) item { return item{attrSecretHash: avS(markerPrefix + id)} }

// Create stores a key. Its id and its secret hash must both be new: one
// transaction writes the key item and a marker item reserving the id.
// k.SecretHash must be "sha256:<64 hex>" (policy.HashSecret); a zero
// CreatedAt becomes now.
func (s *KeyStore) Create(ctx context.Context, k policy.Key) error {
	if k.ID == "" || strings.ContainsAny(k.ID, " \t\r\n") {
		return fmt.Errorf("API key id %q must be non-empty and without spaces", k.ID)
	}
	h, err := policy.ParseSecretHash(k.SecretHash)
	if err != nil {
		return fmt.Errorf("API key %q: %w (store the hash of the secret, never the secret)", k.ID, err)
	}
	k.SecretHash = h
	if k.CreatedAt.IsZero() {
		k.CreatedAt = s.now()
	}
	it, err := encodeKey(k)
	if err != nil {
		return err
	}
	marker := markerKey(k.ID)
	marker["key_secret_hash"] = avS(h)
	_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.table), Item: it, ConditionExpression: aws.String("attribute_not_exists(secret_hash)")}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: marker, ConditionExpression: aws.String("attribute_not_exists(secret_hash)")}},
	}})
	if err != nil {
		conflict, reasons := txOutcome(err)
		if conflict && len(reasons) == 2 {
			switch {
			case reasons[1] == "ConditionalCheckFailed":
				return fmt.Errorf("API key id %q: %w", k.ID, ErrExists)
			case reasons[0] == "ConditionalCheckFailed":
				return fmt.Errorf("API key %q: another key has the same secret: %w", k.ID, ErrExists)
			}
		}
		return fmt.Errorf("create API key %q: %w", k.ID, err)
	}
	return nil
}

// Lookup returns the key whose secret hashes to secretHash (consistent
// read). A disabled key is returned together with ErrKeyDisabled; an
// unknown hash gives an error wrapping catalog.ErrNotFound.
func (s *KeyStore) Lookup(ctx context.Context, secretHash string) (policy.Key, error) {
	h, err := policy.ParseSecretHash(secretHash)
	if err != nil {
		return policy.Key{}, fmt.Errorf("look up API key: %w", err)
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table),
		Key: item{attrSecretHash: avS(h)}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return policy.Key{}, fmt.Errorf("look up API key: %w", err)
	}
	if out.Item == nil {
		return policy.Key{}, fmt.Errorf("API key: %w", catalog.ErrNotFound)
	}
	k, err := decodeKey(out.Item)
	if err != nil {
		return policy.Key{}, err
	}
	if k.Disabled {
		return k, fmt.Errorf("API key %q: %w", k.ID, ErrKeyDisabled)
	}
	return k, nil
}

// hashOf returns the secret hash of key id via its marker item.
func (s *KeyStore) hashOf(ctx context.Context, id string) (string, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: markerKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("API key %q: %w", id, err)
	}
	h := getS(out.Item, "key_secret_hash")
	if out.Item == nil || h == "" {
		return "", fmt.Errorf("API key %q: %w", id, catalog.ErrNotFound)
	}
	return h, nil
}

// Get returns the key with id, disabled or not.
func (s *KeyStore) Get(ctx context.Context, id string) (policy.Key, error) {
	h, err := s.hashOf(ctx, id)
	if err != nil {
		return policy.Key{}, err
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: item{attrSecretHash: avS(h)}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return policy.Key{}, fmt.Errorf("API key %q: %w", id, err)
	}
	if out.Item == nil {
		return policy.Key{}, fmt.Errorf("API key %q: %w", id, catalog.ErrNotFound)
	}
	return decodeKey(out.Item)
}

// List returns every key (paginated Scan), sorted by id.
func (s *KeyStore) List(ctx context.Context) ([]policy.Key, error) {
	items, err := scanAll(ctx, s.client, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true), Limit: pageLimit(s.pageSize)})
	if err != nil {
		return nil, fmt.Errorf("list API keys: %w", err)
	}
	var out []policy.Key
	for _, it := range items {
		if strings.HasPrefix(getS(it, attrSecretHash), markerPrefix) {
			continue
		}
		k, err := decodeKey(it)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Revoke disables the key with id; Lookup then returns ErrKeyDisabled.
func (s *KeyStore) Revoke(ctx context.Context, id string) error {
	h, err := s.hashOf(ctx, id)
	if err != nil {
		return err
	}
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       item{attrSecretHash: avS(h)},
		UpdateExpression:          aws.String("SET disabled = :t"),
		ConditionExpression:       aws.String("key_id = :id"),
		ExpressionAttributeValues: item{":t": avBool(true), ":id": avS(id)},
	})
	if isConditionFailed(err) {
		return fmt.Errorf("API key %q: %w", id, catalog.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("revoke API key %q: %w", id, err)
	}
	return nil
}

// Delete removes the key with id and frees its id and secret.
func (s *KeyStore) Delete(ctx context.Context, id string) error {
	h, err := s.hashOf(ctx, id)
	if err != nil {
		return err
	}
	_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String(s.table), Key: item{attrSecretHash: avS(h)}}},
		{Delete: &types.Delete{TableName: aws.String(s.table), Key: markerKey(id),
			ConditionExpression:       aws.String("key_secret_hash = :h"),
			ExpressionAttributeValues: item{":h": avS(h)}}},
	}})
	if err != nil {
		if conflict, _ := txOutcome(err); conflict {
			return fmt.Errorf("delete API key %q: it changed meanwhile: %w", id, ErrConflict)
		}
		return fmt.Errorf("delete API key %q: %w", id, err)
	}
	return nil
}
