package dynamo

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/toolrag/mcp-gateway/pkg/callseq"
)

// Attribute names of the call-sequence table.
const (
	attrFromTool = "from_tool" // partition key
	attrToTool   = "to_tool"   // sort key
	attrSeqN     = "n"
	attrSeqDay   = "day"
)

// callSeqParallel bounds the UpdateItem calls one Add runs at once.
const callSeqParallel = 8

// CallSeqStore is a callseq.Store on the call-sequence table: one item per
// ordered tool pair (from_tool, to_tool) holding the count n and the day
// of the last count. Nothing else about a call is stored.
type CallSeqStore struct {
	Metrics *Metrics

	client *dynamodb.Client
	table  string
}

var _ callseq.Store = (*CallSeqStore)(nil)

// NewCallSeqStore returns a call-sequence store on table.
func NewCallSeqStore(client *dynamodb.Client, table string) *CallSeqStore {
	return &CallSeqStore{client: client, table: table}
}

// AddCallSequences implements callseq.Store: one UpdateItem per pair
// (ADD n, atomic, so concurrent instances lose nothing), up to 8 at once.
// The day is set only when it is later than the stored one (a condition;
// when it fails, the count is added alone). Invalid counts are refused
// before anything is written. On an error some pairs may have been added:
// the error names how many were not.
func (s *CallSeqStore) AddCallSequences(ctx context.Context, counts []callseq.Count) error {
	if err := callseq.Check(counts); err != nil {
		return err
	}
	var (
		g      errgroup.Group // a pair that fails stops no other: the error counts them
		failed atomic.Int64
	)
	g.SetLimit(callSeqParallel)
	for _, c := range counts {
		g.Go(func() error {
			err := s.add(ctx, c)
			if err != nil {
				failed.Add(1)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("add call-sequence counts to %s (%d of %d pairs not added): %w", s.table, failed.Load(), len(counts), err)
	}
	return nil
}

func (s *CallSeqStore) add(ctx context.Context, c callseq.Count) error {
	key := item{attrFromTool: avS(c.From), attrToTool: avS(c.To)}
	n := avN(c.N)
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key,
		UpdateExpression:          aws.String("ADD #n :n SET #day = :day"),
		ConditionExpression:       aws.String("attribute_not_exists(#day) OR #day <= :day"),
		ExpressionAttributeNames:  map[string]string{"#n": attrSeqN, "#day": attrSeqDay},
		ExpressionAttributeValues: item{":n": n, ":day": avN(int64(c.Day))},
	})
	if !isConditionFailed(err) {
		return err
	}
	// The stored day is later: add the count alone.
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key,
		UpdateExpression:          aws.String("ADD #n :n"),
		ExpressionAttributeNames:  map[string]string{"#n": attrSeqN},
		ExpressionAttributeValues: item{":n": n},
	})
	return err
}

// ListCallSequences implements callseq.Store with one consistent Scan.
func (s *CallSeqStore) ListCallSequences(ctx context.Context) ([]callseq.Count, error) {
	items, err := scanAll(ctx, s.client, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("list call-sequence counts: %w", err)
	}
	out := make([]callseq.Count, 0, len(items))
	for _, it := range items {
		c := callseq.Count{From: getS(it, attrFromTool), To: getS(it, attrToTool), N: getN(it, attrSeqN), Day: int32(getN(it, attrSeqDay))}
		if c.From == "" || c.To == "" || c.N <= 0 {
			continue // not a count item (edited by hand): ignored
		}
		out = append(out, c)
	}
	return out, nil
}

// DeleteCallSequences implements callseq.Store with BatchWriteItem.
func (s *CallSeqStore) DeleteCallSequences(ctx context.Context, pairs []callseq.Count) error {
	if len(pairs) == 0 {
		return nil
	}
	reqs := make([]types.WriteRequest, 0, len(pairs))
	seen := map[[2]string]bool{}
	for _, c := range pairs {
		k := [2]string{c.From, c.To}
		if seen[k] || c.From == "" || c.To == "" {
			continue // BatchWriteItem refuses the same key twice
		}
		seen[k] = true
		reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: item{attrFromTool: avS(c.From), attrToTool: avS(c.To)}}})
	}
	if err := batchWrite(ctx, s.client, s.table, reqs, s.Metrics.unprocessed()); err != nil {
		return fmt.Errorf("delete call-sequence counts: %w", err)
	}
	return nil
}
