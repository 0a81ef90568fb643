package dynamo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/health"
)

// Health values.
const (
	HealthUp      = "up"
	HealthDown    = "down"
	HealthUnknown = "unknown"
)

// Health is the result of the last liveness probe of an upstream server.
type Health struct {
	Status    string    `json:"status"` // up, down or unknown
	CheckedAt time.Time `json:"checked_at,omitempty"`
	Error     string    `json:"error,omitempty"`
	LatencyMS int64     `json:"latency_ms,omitempty"`
	// DownSince is when the current run of failed checks began (zero
	// while up): the gateway's breaker answers calls to a server down
	// since then at once.
	DownSince time.Time `json:"down_since,omitzero"`
}

// RegistryStore keeps the upstream registry: one item per server with its
// configuration (a JSON document owned by the upstream package, stored as
// the string attribute config) and its health.
type RegistryStore struct {
	Metrics *Metrics

	client   *dynamodb.Client
	table    string
	pageSize int32
}

// NewRegistryStore returns a registry store on the registry table.
func NewRegistryStore(client *dynamodb.Client, table string) *RegistryStore {
	return &RegistryStore{client: client, table: table}
}

// RegistryChanges reports what ReplaceAll did (ids sorted).
type RegistryChanges struct {
	Added, Updated, Removed, Unchanged []string
}

func checkConfig(id string, cfg json.RawMessage) (string, error) {
	if err := catalog.ValidServerID(id); err != nil {
		return "", err
	}
	if len(bytes.TrimSpace(cfg)) == 0 || !json.Valid(cfg) {
		return "", fmt.Errorf("server %q: config is not valid JSON", id)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, cfg); err != nil {
		return "", fmt.Errorf("server %q: config is not valid JSON: %w", id, err)
	}
	if buf.Len() > maxItemSize-4096 {
		return "", fmt.Errorf("server %q: config is %d KB, over DynamoDB's 400 KB item limit", id, buf.Len()>>10)
	}
	return buf.String(), nil
}

// PutServer creates or replaces the config of server id; its health is
// kept.
func (s *RegistryStore) PutServer(ctx context.Context, id string, cfg json.RawMessage) error {
	c, err := checkConfig(id, cfg)
	if err != nil {
		return err
	}
	return s.putConfig(ctx, id, c)
}

func (s *RegistryStore) putConfig(ctx context.Context, id, cfg string) error {
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       item{attrServerID: avS(id)},
		UpdateExpression:          aws.String("SET config = :c"),
		ExpressionAttributeValues: item{":c": avS(cfg)},
	})
	if err != nil {
		return fmt.Errorf("registry: put server %q: %w", id, err)
	}
	return nil
}

// DeleteServer removes server id and its health. Deleting an unknown
// server is not an error.
func (s *RegistryStore) DeleteServer(ctx context.Context, id string) error {
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: item{attrServerID: avS(id)}})
	if err != nil {
		return fmt.Errorf("registry: delete server %q: %w", id, err)
	}
	return nil
}

// byServer scans the registry and returns what value makes of each
// server's item, by id; value says false to leave a server out.
func byServer[T any](ctx context.Context, s *RegistryStore, value func(id string, it item) (T, bool, error)) (map[string]T, error) {
	items, err := scanAll(ctx, s.client, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true), Limit: pageLimit(s.pageSize)})
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	out := map[string]T{}
	for _, it := range items {
		id := getS(it, attrServerID)
		v, ok, err := value(id, it)
		if err != nil {
			return nil, err
		}
		if ok {
			out[id] = v
		}
	}
	return out, nil
}

// ListServers returns every server's config by id.
func (s *RegistryStore) ListServers(ctx context.Context) (map[string]json.RawMessage, error) {
	return byServer(ctx, s, func(_ string, it item) (json.RawMessage, bool, error) {
		c := getS(it, "config")
		return json.RawMessage(c), c != "", nil
	})
}

// ReplaceAll makes servers the complete registry (`toolrag registry push`):
// every config is checked before anything is written, new and changed
// servers are written (health kept), then servers not in the map are
// deleted. It is not one transaction: a failure part-way leaves some
// servers updated, and running it again completes it.
func (s *RegistryStore) ReplaceAll(ctx context.Context, servers map[string]json.RawMessage) (RegistryChanges, error) {
	var ch RegistryChanges
	want := make(map[string]string, len(servers))
	for id, cfg := range servers {
		c, err := checkConfig(id, cfg)
		if err != nil {
			return ch, fmt.Errorf("registry push rejected, nothing written: %w", err)
		}
		want[id] = c
	}
	have, err := byServer(ctx, s, func(_ string, it item) (string, bool, error) { return getS(it, "config"), true, nil })
	if err != nil {
		return ch, err
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		old, ok := have[id]
		switch {
		case ok && old == want[id]:
			ch.Unchanged = append(ch.Unchanged, id)
			continue
		case ok && old != "":
			ch.Updated = append(ch.Updated, id)
		default:
			ch.Added = append(ch.Added, id)
		}
		if err := s.putConfig(ctx, id, want[id]); err != nil {
			return ch, err
		}
	}
	var gone []string
	for id := range have {
		if _, ok := want[id]; !ok {
			gone = append(gone, id)
		}
	}
	sort.Strings(gone)
	var reqs []types.WriteRequest
	for _, id := range gone {
		reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: item{attrServerID: avS(id)}}})
	}
	if err := batchWrite(ctx, s.client, s.table, reqs, s.Metrics.unprocessed()); err != nil {
		return ch, fmt.Errorf("registry: delete removed servers: %w", err)
	}
	ch.Removed = gone
	return ch, nil
}

// SetHealth records the result of a probe of a registered server; an
// unregistered id gives an error wrapping catalog.ErrNotFound.
func (s *RegistryStore) SetHealth(ctx context.Context, id string, h Health) error {
	switch h.Status {
	case HealthUp, HealthDown, HealthUnknown:
	default:
		return fmt.Errorf("server %q: health status %q must be up, down or unknown", id, h.Status)
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.table),
		Key:                 item{attrServerID: avS(id)},
		UpdateExpression:    aws.String("SET health_status = :s, health_checked_at = :t, health_error = :e, health_latency_ms = :l, health_down_since = :d"),
		ConditionExpression: aws.String("attribute_exists(server_id)"),
		ExpressionAttributeValues: item{":s": avS(h.Status), ":t": avS(catalog.FormatTime(h.CheckedAt)),
			":e": avS(h.Error), ":l": avN(h.LatencyMS), ":d": avS(catalog.FormatTime(h.DownSince))},
	})
	if isConditionFailed(err) {
		return fmt.Errorf("server %q is not in the registry: %w", id, catalog.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("registry: set health of %q: %w", id, err)
	}
	return nil
}

// Health returns the health of every registered server; servers never
// probed are "unknown".
func (s *RegistryStore) Health(ctx context.Context) (map[string]Health, error) {
	return byServer(ctx, s, func(_ string, it item) (Health, bool, error) {
		h := Health{Status: getS(it, "health_status"), CheckedAt: catalog.ParseTime(getS(it, "health_checked_at")),
			Error: getS(it, "health_error"), LatencyMS: getN(it, "health_latency_ms"), DownSince: catalog.ParseTime(getS(it, "health_down_since"))}
		if h.Status == "" {
			h.Status = HealthUnknown
		}
		return h, true, nil
	})
}

// RecordHealth implements health.Recorder: SetHealth with a probe result
// (a server removed meanwhile is not an error).
func (s *RegistryStore) RecordHealth(ctx context.Context, id string, st health.Status) error {
	h := Health{Status: HealthUp, CheckedAt: st.CheckedAt, Error: st.Error, LatencyMS: st.Latency.Milliseconds()}
	if !st.Up {
		h.Status, h.DownSince = HealthDown, st.DownSince
		if h.DownSince.IsZero() {
			h.DownSince = st.CheckedAt
		}
	}
	if err := s.SetHealth(ctx, id, h); err != nil && !errors.Is(err, catalog.ErrNotFound) {
		return err
	}
	return nil
}

// HealthStatus is Health as the gateway's health tracker reads it:
// servers never probed, or probed "unknown", count as up.
func (s *RegistryStore) HealthStatus(ctx context.Context) (map[string]health.Status, error) {
	h, err := s.Health(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]health.Status, len(h))
	for id, st := range h {
		hs := health.Status{Up: st.Status != HealthDown, CheckedAt: st.CheckedAt, Error: st.Error}
		if !hs.Up {
			// A record written before down_since was kept: down since
			// its check at least.
			hs.DownSince = st.DownSince
			if hs.DownSince.IsZero() {
				hs.DownSince = st.CheckedAt
			}
		}
		out[id] = hs
	}
	return out, nil
}
