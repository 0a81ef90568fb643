package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Cancel records (gateway.Cancels) live in the sessions table under the
// key "cancel#<key>", which no session id can take, with expires_at (the
// table's TTL): a notifications/cancelled that reached another instance
// than the one running the call it names.

const cancelKeyPrefix = "cancel#"

// PutCancel implements gateway.Cancels.
func (s *SessionStore) PutCancel(ctx context.Context, key string, expires time.Time) error {
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table),
		Item: item{attrSessionID: avS(cancelKeyPrefix + key), attrExpiresAt: avN(expires.Unix())}}); err != nil {
		return fmt.Errorf("record cancel: %w", err)
	}
	return nil
}

// Cancelled implements gateway.Cancels (a strongly consistent read).
func (s *SessionStore) Cancelled(ctx context.Context, key string) (bool, error) {
	it, err := s.get(ctx, cancelKeyPrefix+key)
	return it != nil, err
}
