package dynamo

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolrag/mcp-gateway/pkg/session"
)

// SessionStore is a session.Store on the sessions table. Items carry
// expires_at (epoch seconds), which is the table's TTL attribute; DynamoDB
// deletes expired items within a day or two, so every read and write also
// checks expires_at itself.
type SessionStore struct {
	// Now is the clock; tests replace it. Defaults to time.Now.
	Now func() time.Time

	client *dynamodb.Client
	table  string
}

var _ session.Store = (*SessionStore)(nil)

// attrPrincipal holds the principal that created a session.
const attrPrincipal = "principal"

// NewSessionStore returns a session store on the sessions table.
func NewSessionStore(client *dynamodb.Client, table string) *SessionStore {
	return &SessionStore{Now: time.Now, client: client, table: table}
}

func (s *SessionStore) now() int64 {
	if s.Now == nil {
		return time.Now().Unix()
	}
	return s.Now().Unix()
}

func ttlSeconds(ttl time.Duration) int64 {
	sec := int64((ttl + time.Second - 1) / time.Second)
	return max(sec, 1)
}

// Create implements session.Store.
func (s *SessionStore) Create(ctx context.Context, id, principal string, ttl time.Duration) error {
	if err := session.CheckCreate(id, ttl); err != nil {
		return err
	}
	now := s.now()
	ttlS := ttlSeconds(ttl)
	it := item{
		attrSessionID: avS(id),
		attrExpiresAt: avN(now + ttlS),
		"ttl_seconds": avN(ttlS),
		"created_at":  avN(now),
	}
	if principal != "" {
		it[attrPrincipal] = avS(principal)
	}
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table),
		Item:      it,
		// A live session is never overwritten; an expired leftover is.
		ConditionExpression:       aws.String("attribute_not_exists(session_id) OR expires_at <= :now"),
		ExpressionAttributeValues: item{":now": avN(now)},
	})
	if isConditionFailed(err) {
		return fmt.Errorf("session %s already exists", session.Ref(id))
	}
	if err != nil {
		return fmt.Errorf("create session %s: %w", session.Ref(id), err)
	}
	return nil
}

func (s *SessionStore) get(ctx context.Context, id string) (item, error) {
	if id == "" {
		return nil, nil
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table),
		Key: item{attrSessionID: avS(id)}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", session.Ref(id), err)
	}
	if out.Item == nil || getN(out.Item, attrExpiresAt) <= s.now() {
		return nil, nil
	}
	return out.Item, nil
}

// Exists implements session.Store.
func (s *SessionStore) Exists(ctx context.Context, id string) (bool, error) {
	it, err := s.get(ctx, id)
	return it != nil, err
}

// Owner implements session.Store: the principal recorded by Create (an
// item written before sessions had owners has none, and matches only the
// empty principal).
func (s *SessionStore) Owner(ctx context.Context, id string) (string, bool, error) {
	it, err := s.get(ctx, id)
	if err != nil || it == nil {
		return "", false, err
	}
	return getS(it, attrPrincipal), true, nil
}

// Delete implements session.Store.
func (s *SessionStore) Delete(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: item{attrSessionID: avS(id)}})
	if err != nil {
		return fmt.Errorf("delete session %s: %w", session.Ref(id), err)
	}
	return nil
}

// AddTools implements session.Store with one conditional UpdateItem: ADD to
// a string set is atomic, so concurrent calls lose nothing.
func (s *SessionStore) AddTools(ctx context.Context, id string, toolIDs []string) error {
	if id == "" {
		return fmt.Errorf("session %s: %w", session.Ref(id), session.ErrNotFound)
	}
	set := map[string]bool{}
	var ids []string
	for _, t := range toolIDs {
		if t != "" && !set[t] {
			set[t] = true
			ids = append(ids, t)
		}
	}
	now := s.now()
	expr := "SET expires_at = :now + ttl_seconds"
	vals := item{":now": avN(now)}
	if len(ids) > 0 {
		expr += " ADD tools :t"
		vals[":t"] = &types.AttributeValueMemberSS{Value: ids}
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       item{attrSessionID: avS(id)},
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("attribute_exists(session_id) AND expires_at > :now"),
		ExpressionAttributeValues: vals,
	})
	if isConditionFailed(err) {
		return fmt.Errorf("session %s: %w", session.Ref(id), session.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("add tools to session %s: %w", session.Ref(id), err)
	}
	return nil
}

// Tools implements session.Store.
func (s *SessionStore) Tools(ctx context.Context, id string) ([]string, error) {
	it, err := s.get(ctx, id)
	if err != nil {
		return nil, err
	}
	out := []string{}
	if ss, ok := it["tools"].(*types.AttributeValueMemberSS); ok {
		out = append(out, ss.Value...)
	}
	sort.Strings(out)
	return out, nil
}
