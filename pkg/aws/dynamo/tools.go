package dynamo

import (
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// ErrConflict is returned when a write kept losing to concurrent writers of
// the same server and gave up.
var ErrConflict = errors.New("concurrent update")

// ErrInconsistent is returned by reads when a server's items never matched
// its meta record (count and digest) across several attempts: something
// other than the gateway edited the tools table. A successful
// ReplaceServerTools or DeleteServer of that server repairs it.
var ErrInconsistent = errors.New("tools table items do not match the server's meta record")

// Sort keys of the tools table.
const (
	metaSK      = "meta"
	toolPrefix  = "tool#"
	stagePrefix = "stage#"
	pkPrefix    = "server#"
)

const (
	maxWriteAttempts = 8
	maxReadAttempts  = 6
	staleStageAge    = time.Hour // stage items of abandoned writes are removed after this
)

// ToolStore is the DynamoDB catalog.Store. Its all-or-nothing scheme is
// described in docs/dynamodb.md: every change of a server's tool items is
// tied to a compare-and-set of the server's meta item, which records the
// count and digest of the server's visible tools; readers verify their read
// against that digest and re-read when a write interleaved. Changes too big
// for one transaction are staged first and published by one meta update.
type ToolStore struct {
	// Metrics, when set, counts conflicts and unprocessed batch items.
	Metrics *Metrics
	// ScanSegments is how many segments ListTools and ListServers scan in
	// parallel (default DefaultScanSegments; 1 scans sequentially).
	ScanSegments int

	client *dynamodb.Client
	table  string
	now    func() time.Time

	// Test hooks.
	pageSize     int32                       // Limit of each Query/Scan page; 0 = DynamoDB's 1 MB pages
	beforeCommit func(serverID string)       // before a transaction or flip is sent
	afterFlip    func(serverID string) error // after a staged change is published
}

var _ catalog.Store = (*ToolStore)(nil)

// DefaultScanSegments is ToolStore.ScanSegments by default: a whole-table
// read of 100k tools is a few hundred 1 MB pages, which a sequential Scan
// reads one round trip at a time.
const DefaultScanSegments = 4

// NewToolStore returns a catalog store on the tools table.
func NewToolStore(client *dynamodb.Client, table string) *ToolStore {
	return &ToolStore{client: client, table: table, ScanSegments: DefaultScanSegments, now: func() time.Time { return time.Now().UTC() }}
}

// Close implements catalog.Store; the client needs no closing.
func (s *ToolStore) Close() error { return nil }

func serverPK(id string) string { return pkPrefix + id }

func metaKey(id string) item {
	return item{attrPK: avS(serverPK(id)), attrSK: avS(metaSK)}
}
