package dynamo

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// Reading the tools table: one server partition at a time, or all.

type stageEntry struct {
	tool    catalog.Tool
	removed bool
	key     item
}

// partitionRead is one read of a server's partition.
type partitionRead struct {
	id       string
	meta     *toolMeta
	tools    map[string]catalog.Tool          // tool# items by tool id
	stage    map[string]map[string]stageEntry // stage id → tool id → entry
	stagedAt map[string]int64                 // stage id → oldest staged_at (unix seconds)
}

func newPartitionRead(id string) *partitionRead {
	return &partitionRead{id: id, tools: map[string]catalog.Tool{}, stage: map[string]map[string]stageEntry{}, stagedAt: map[string]int64{}}
}

func (sn *partitionRead) add(it item) error {
	sk := getS(it, attrSK)
	switch {
	case sk == metaSK:
		m := decodeMeta(it)
		sn.meta = &m
	case strings.HasPrefix(sk, toolPrefix):
		t, err := decodeTool(it)
		if err != nil {
			return err
		}
		sn.tools[t.ID] = t
	case strings.HasPrefix(sk, stagePrefix):
		x, name, ok := strings.Cut(strings.TrimPrefix(sk, stagePrefix), "#")
		if !ok || name == "" {
			return nil // not ours; ignore
		}
		e := stageEntry{removed: getBool(it, "removed"), key: item{attrPK: it[attrPK], attrSK: it[attrSK]}}
		if e.removed {
			e.tool = catalog.Tool{ID: catalog.ToolID(sn.id, name), Server: sn.id, Name: name}
		} else {
			t, err := decodeTool(it)
			if err != nil {
				return err
			}
			e.tool = t
		}
		if sn.stage[x] == nil {
			sn.stage[x] = map[string]stageEntry{}
		}
		sn.stage[x][e.tool.ID] = e
		if at := getN(it, "staged_at"); sn.stagedAt[x] == 0 || at < sn.stagedAt[x] {
			sn.stagedAt[x] = at
		}
	}
	return nil
}

// visible returns the tools readers see, with the server's status, and
// whether they match the meta record. A server without meta, or being
// deleted, has no tools.
func (sn *partitionRead) visible() (map[string]catalog.Tool, bool) {
	out := map[string]catalog.Tool{}
	m := sn.meta
	if m == nil || m.deleting {
		return out, true
	}
	for id, t := range sn.tools {
		out[id] = t
	}
	if m.applying != "" {
		for id, e := range sn.stage[m.applying] {
			if e.removed {
				delete(out, id)
			} else {
				out[id] = e.tool
			}
		}
	}
	ok := len(out) == m.count && digest(out) == m.digest
	for id, t := range out {
		t.Status = m.srv.Status
		out[id] = t
	}
	return out, ok
}

func (s *ToolStore) readPartition(ctx context.Context, id string) (*partitionRead, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: item{":pk": avS(serverPK(id))},
		ConsistentRead:            aws.Bool(true),
		Limit:                     pageLimit(s.pageSize),
	}
	items, err := queryAll(ctx, s.client, in)
	if err != nil {
		return nil, fmt.Errorf("read server %q from the tools table: %w", id, err)
	}
	sn := newPartitionRead(id)
	for _, it := range items {
		if err := sn.add(it); err != nil {
			return nil, err
		}
	}
	return sn, nil
}

// readVerified reads a server until its items match its meta record. After
// maxReadAttempts it returns the last read with an error wrapping
// ErrInconsistent.
func (s *ToolStore) readVerified(ctx context.Context, id string) (*partitionRead, map[string]catalog.Tool, error) {
	for attempt := 0; ; attempt++ {
		sn, err := s.readPartition(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		vis, ok := sn.visible()
		if ok {
			return sn, vis, nil
		}
		if attempt+1 >= maxReadAttempts {
			return sn, vis, fmt.Errorf("server %q: %w (read %d times)", id, ErrInconsistent, maxReadAttempts)
		}
		s.Metrics.add(s.Metrics.rereads())
		if err := backoff(ctx, attempt); err != nil {
			return nil, nil, err
		}
	}
}

// GetTool implements catalog.Store with a transactional read of the tool
// and its server's meta item.
func (s *ToolStore) GetTool(ctx context.Context, id string) (catalog.Tool, error) {
	server, name, ok := catalog.SplitToolID(id)
	if !ok || catalog.ValidServerID(server) != nil {
		return catalog.Tool{}, fmt.Errorf("tool %q: %w", id, catalog.ErrNotFound)
	}
	pk := avS(serverPK(server))
	stage := ""
	for attempt := 0; ; attempt++ {
		gets := []types.TransactGetItem{
			{Get: &types.Get{TableName: aws.String(s.table), Key: item{attrPK: pk, attrSK: avS(metaSK)}}},
			{Get: &types.Get{TableName: aws.String(s.table), Key: item{attrPK: pk, attrSK: avS(toolPrefix + name)}}},
		}
		if stage != "" {
			gets = append(gets, types.TransactGetItem{Get: &types.Get{TableName: aws.String(s.table),
				Key: item{attrPK: pk, attrSK: avS(stagePrefix + stage + "#" + name)}}})
		}
		out, err := s.client.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: gets})
		if err != nil {
			if conflict, _ := txOutcome(err); conflict && attempt+1 < maxReadAttempts {
				if err := backoff(ctx, attempt); err != nil {
					return catalog.Tool{}, err
				}
				continue
			}
			return catalog.Tool{}, fmt.Errorf("read tool %q: %w", id, err)
		}
		if len(out.Responses) != len(gets) || out.Responses[0].Item == nil {
			return catalog.Tool{}, fmt.Errorf("tool %q: %w", id, catalog.ErrNotFound)
		}
		m := decodeMeta(out.Responses[0].Item)
		if m.deleting {
			return catalog.Tool{}, fmt.Errorf("tool %q: %w", id, catalog.ErrNotFound)
		}
		if m.applying != stage {
			// A staged change is being applied (or finished meanwhile):
			// read again including its stage item.
			if attempt+1 >= maxReadAttempts {
				return catalog.Tool{}, fmt.Errorf("tool %q: server %q kept changing while read", id, server)
			}
			stage = m.applying
			continue
		}
		it := out.Responses[1].Item
		if stage != "" && out.Responses[2].Item != nil {
			it = out.Responses[2].Item
			if getBool(it, "removed") {
				return catalog.Tool{}, fmt.Errorf("tool %q: %w", id, catalog.ErrNotFound)
			}
		}
		if it == nil {
			return catalog.Tool{}, fmt.Errorf("tool %q: %w", id, catalog.ErrNotFound)
		}
		t, err := decodeTool(it)
		if err != nil {
			return catalog.Tool{}, err
		}
		t.Status = m.srv.Status
		return t, nil
	}
}

// ListTools implements catalog.Store: one consistent (parallel) Scan of
// the table, then each server is checked against its meta record and re-read on its
// own when a write interleaved with the scan.
func (s *ToolStore) ListTools(ctx context.Context) ([]catalog.Tool, error) {
	in := &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true), Limit: pageLimit(s.pageSize)}
	items, err := scanSegments(ctx, s.client, in, s.ScanSegments)
	if err != nil {
		return nil, fmt.Errorf("list tools: %w", err)
	}
	snaps := map[string]*partitionRead{}
	for _, it := range items {
		id, ok := strings.CutPrefix(getS(it, attrPK), pkPrefix)
		if !ok {
			continue
		}
		sn := snaps[id]
		if sn == nil {
			sn = newPartitionRead(id)
			snaps[id] = sn
		}
		if err := sn.add(it); err != nil {
			return nil, err
		}
	}
	var out []catalog.Tool
	for id, sn := range snaps {
		vis, ok := sn.visible()
		if !ok {
			s.Metrics.add(s.Metrics.rereads())
			if _, vis, err = s.readVerified(ctx, id); err != nil {
				return nil, fmt.Errorf("list tools: %w", err)
			}
		}
		for _, t := range vis {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ListServers implements catalog.Store (a Scan of the meta items).
func (s *ToolStore) ListServers(ctx context.Context) ([]catalog.Server, error) {
	in := &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		ConsistentRead:            aws.Bool(true),
		FilterExpression:          aws.String("sk = :meta"),
		ExpressionAttributeValues: item{":meta": avS(metaSK)},
		Limit:                     pageLimit(s.pageSize),
	}
	items, err := scanSegments(ctx, s.client, in, s.ScanSegments)
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	var out []catalog.Server
	for _, it := range items {
		m := decodeMeta(it)
		if !m.deleting && m.srv.ID != "" {
			out = append(out, m.srv)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
