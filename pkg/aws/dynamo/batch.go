package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/toolrag/mcp-gateway/internal/pause"
)

// DynamoDB limits.
const (
	maxBatchWrite   = 25                      // items per BatchWriteItem
	maxTransact     = 100                     // actions per TransactWriteItems
	maxTransactSize = 4 << 20                 // bytes per TransactWriteItems
	maxItemSize     = 400 << 10               // bytes per item
	txSizeBudget    = maxTransactSize * 7 / 8 // leave room for our size estimate's error
)

type item = map[string]types.AttributeValue

// backoff sleeps before retry attempt n (0-based) with full jitter, capped.
func backoff(ctx context.Context, n int) error {
	d := 20 * time.Millisecond << min(n, 6)
	if d > time.Second {
		d = time.Second
	}
	return pause.For(ctx, time.Duration(rand.Int64N(int64(d))+1))
}

// batchWrite writes requests in batches of 25, re-sending UnprocessedItems
// with backoff until all are done or ctx ends.
func batchWrite(ctx context.Context, c *dynamodb.Client, table string, reqs []types.WriteRequest, unprocessed *atomic.Int64) error {
	for len(reqs) > 0 {
		n := min(len(reqs), maxBatchWrite)
		pending := map[string][]types.WriteRequest{table: reqs[:n]}
		reqs = reqs[n:]
		for attempt := 0; len(pending[table]) > 0; attempt++ {
			out, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return fmt.Errorf("batch write to %s: %w", table, err)
			}
			pending = out.UnprocessedItems
			if len(pending[table]) == 0 {
				break
			}
			if unprocessed != nil {
				unprocessed.Add(1)
			}
			if err := backoff(ctx, attempt); err != nil {
				return fmt.Errorf("batch write to %s: %d items unprocessed: %w", table, len(pending[table]), err)
			}
		}
	}
	return nil
}

// pager is the Query or Scan paginator of the SDK.
type pager[O any] interface {
	HasMorePages() bool
	NextPage(ctx context.Context, optFns ...func(*dynamodb.Options)) (O, error)
}

// allPages reads p to the last page and returns the items of every page;
// items picks them out of one page and what names the request in errors.
func allPages[O any](ctx context.Context, p pager[O], items func(O) []item, what string) ([]item, error) {
	var out []item
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, items(page)...)
	}
	return out, nil
}

// queryAll runs a Query to the last page.
func queryAll(ctx context.Context, c *dynamodb.Client, in *dynamodb.QueryInput) ([]item, error) {
	return allPages(ctx, dynamodb.NewQueryPaginator(c, in),
		func(o *dynamodb.QueryOutput) []item { return o.Items }, "query "+aws.ToString(in.TableName))
}

// pageLimit is the Limit of each Query or Scan page: n items, or DynamoDB's
// 1 MB pages (nil) for n <= 0.
func pageLimit(n int32) *int32 {
	if n <= 0 {
		return nil
	}
	return aws.Int32(n)
}

// scanSegments scans the table of in as n segments at once (a parallel
// scan: each segment is a disjoint set of partition keys, so all items of
// one partition key come from the same segment) and returns the items of
// segment 0, then 1, ... n < 2 is scanAll.
func scanSegments(ctx context.Context, c *dynamodb.Client, in *dynamodb.ScanInput, n int) ([]item, error) {
	if n < 2 {
		return scanAll(ctx, c, in)
	}
	parts := make([][]item, n)
	errs := make([]error, n)
	g, gctx := errgroup.WithContext(ctx) // a failed segment loses the result: it stops the others
	for i := range n {
		seg := *in
		seg.Segment, seg.TotalSegments = aws.Int32(int32(i)), aws.Int32(int32(n))
		g.Go(func() error {
			parts[i], errs[i] = scanAll(gctx, c, &seg)
			return errs[i]
		})
	}
	g.Wait() // the error returned is chosen below, in segment order
	total := 0
	for i, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
		total += len(parts[i])
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]item, 0, total)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// scanAll runs a Scan to the last page.
func scanAll(ctx context.Context, c *dynamodb.Client, in *dynamodb.ScanInput) ([]item, error) {
	return allPages(ctx, dynamodb.NewScanPaginator(c, in),
		func(o *dynamodb.ScanOutput) []item { return o.Items }, "scan "+aws.ToString(in.TableName))
}

// txOutcome classifies a TransactWriteItems error: conflict means a
// condition failed or another transaction touched the same items, so the
// caller should re-read and retry; reasons holds the per-action codes.
func txOutcome(err error) (conflict bool, reasons []string) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return true, nil
		}
		var tc *types.TransactionConflictException
		return errors.As(err, &tc), nil
	}
	for _, r := range tce.CancellationReasons {
		code := aws.ToString(r.Code)
		reasons = append(reasons, code)
		if code == "ConditionalCheckFailed" || code == "TransactionConflict" {
			conflict = true
		}
	}
	if len(tce.CancellationReasons) == 0 {
		conflict = true
	}
	return conflict, reasons
}

func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// itemSize estimates the stored size of an item: attribute names plus
// values, as DynamoDB counts them (close enough to stay under the limits).
func itemSize(it item) int {
	n := 0
	for k, v := range it {
		n += len(k) + avSize(v)
	}
	return n
}

func avSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)/2 + 1
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + avSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + avSize(e)
		}
		return n
	}
	return 8
}

func avS(v string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: v} }

func avN(v int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func avBool(v bool) *types.AttributeValueMemberBOOL { return &types.AttributeValueMemberBOOL{Value: v} }

// getS returns a string attribute ("" when absent or not a string).
func getS(it item, k string) string {
	if v, ok := it[k].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// getN returns a number attribute as int64 (0 when absent or malformed).
func getN(it item, k string) int64 {
	if v, ok := it[k].(*types.AttributeValueMemberN); ok {
		i, err := strconv.ParseInt(v.Value, 10, 64)
		if err == nil {
			return i
		}
		f, err := strconv.ParseFloat(v.Value, 64)
		if err == nil {
			return int64(f)
		}
	}
	return 0
}

// getBool returns a boolean attribute (false when absent).
func getBool(it item, k string) bool {
	if v, ok := it[k].(*types.AttributeValueMemberBOOL); ok {
		return v.Value
	}
	return false
}
