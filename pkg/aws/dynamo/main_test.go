package dynamo

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// One DynamoDB Local for the whole test binary (see internal/testenv).
func TestMain(m *testing.M) { testenv.Main(m) }

var (
	clientOnce   sync.Once
	sharedClient *dynamodb.Client
	clientErr    error
	testMetrics  = &Metrics{}
)

func testClient(t testing.TB) *dynamodb.Client {
	t.Helper()
	ep := testenv.DynamoDB(t)
	clientOnce.Do(func() {
		sharedClient, clientErr = NewClient(context.Background(), ep, testMetrics)
	})
	if clientErr != nil {
		t.Fatal(clientErr)
	}
	return sharedClient
}

// testTables creates the requested tables under unique names and deletes
// them when the test ends. which is any of "tools", "keys", "registry",
// "sessions", "callseq".
func testTables(t testing.TB, which ...string) (*dynamodb.Client, Tables) {
	t.Helper()
	c := testClient(t)
	prefix := testenv.UniqueName(t, "t-")
	var tb Tables
	for _, w := range which {
		switch w {
		case "tools":
			tb.Tools = prefix + "-tools"
		case "keys":
			tb.Keys = prefix + "-keys"
		case "registry":
			tb.Registry = prefix + "-registry"
		case "sessions":
			tb.Sessions = prefix + "-sessions"
		case "callseq":
			tb.CallSeq = prefix + "-callseq"
		default:
			t.Fatalf("unknown table kind %q", w)
		}
	}
	if err := CreateTables(context.Background(), c, tb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, name := range []string{tb.Tools, tb.Keys, tb.Registry, tb.Sessions, tb.CallSeq} {
			if name != "" {
				_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
			}
		}
	})
	return c, tb
}

// rawItems returns every item of a table.
func rawItems(t testing.TB, c *dynamodb.Client, table string) []item {
	t.Helper()
	items, err := scanAll(context.Background(), c, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return items
}
