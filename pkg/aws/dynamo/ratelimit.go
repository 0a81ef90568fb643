package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// RateCounter is an exact per-key request limit shared by every gateway
// instance: one atomic counter per key per fixed window, kept as an item
// of the sessions table (partition key "ratelimit#<key>#<window start>",
// which no session id can take) that the table's TTL removes after the
// window. Each Take is one conditional UpdateItem: one write request unit
// per request that reaches the gateway.
type RateCounter struct {
	client *dynamodb.Client
	table  string
}

// NewRateCounter returns a counter on the sessions table.
func NewRateCounter(client *dynamodb.Client, sessionsTable string) *RateCounter {
	return &RateCounter{client: client, table: sessionsTable}
}

// Take counts one request of keyID in the window holding now and reports
// whether it is within limit; when it is not, retryAfter is the time to
// the next window. The increment and the check are one atomic write: two
// instances can never both take the last slot.
func (c *RateCounter) Take(ctx context.Context, keyID string, limit int64, window time.Duration, now time.Time) (ok bool, retryAfter time.Duration, err error) {
	if window <= 0 {
		window = time.Minute
	}
	start := now.Truncate(window)
	end := start.Add(window)
	id := "ratelimit#" + keyID + "#" + strconv.FormatInt(start.Unix(), 10)
	_, err = c.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(c.table),
		Key:                       item{attrSessionID: avS(id)},
		UpdateExpression:          aws.String("ADD hits :one SET expires_at = :exp"),
		ConditionExpression:       aws.String("attribute_not_exists(hits) OR hits < :limit"),
		ExpressionAttributeValues: item{":one": avN(1), ":limit": avN(limit), ":exp": avN(end.Add(time.Minute).Unix())},
	})
	if isConditionFailed(err) {
		return false, end.Sub(now), nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("rate limit counter of key %q: %w", keyID, err)
	}
	return true, 0, nil
}
