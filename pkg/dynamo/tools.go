package dynamo

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/store/plan"
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

// ---------------------------------------------------------------- encoding

type toolMeta struct {
	srv      catalog.Server
	version  int64
	digest   string
	count    int
	applying string
	deleting bool
}

func encodeMeta(m toolMeta) item {
	it := item{
		attrPK:        avS(serverPK(m.srv.ID)),
		attrSK:        avS(metaSK),
		"server_id":   avS(m.srv.ID),
		"title":       avS(m.srv.Title),
		"description": avS(m.srv.Description),
		"status":      avS(m.srv.Status),
		"last_error":  avS(m.srv.LastError),
		"synced_at":   avS(formatTime(m.srv.SyncedAt)),
		"version":     avN(m.version),
		"digest":      avS(m.digest),
		"tool_count":  avN(int64(m.count)),
	}
	if m.applying != "" {
		it["applying"] = avS(m.applying)
	}
	if m.deleting {
		it["deleting"] = avBool(true)
	}
	return it
}

func decodeMeta(it item) toolMeta {
	return toolMeta{
		srv: catalog.Server{
			ID:          getS(it, "server_id"),
			Title:       getS(it, "title"),
			Description: getS(it, "description"),
			Status:      getS(it, "status"),
			LastError:   getS(it, "last_error"),
			SyncedAt:    parseTime(getS(it, "synced_at")),
		},
		version:  getN(it, "version"),
		digest:   getS(it, "digest"),
		count:    int(getN(it, "tool_count")),
		applying: getS(it, "applying"),
		deleting: getBool(it, "deleting"),
	}
}

func encodeTool(t catalog.Tool, sk string) item {
	it := item{
		attrPK:             avS(serverPK(t.Server)),
		attrSK:             avS(sk),
		"tool_id":          avS(t.ID),
		"server_id":        avS(t.Server),
		"name":             avS(t.Name),
		"title":            avS(t.Title),
		"description":      avS(t.Description),
		"tool_type":        avS(t.ToolType),
		"permission_scope": avS(t.PermissionScope),
		"content_hash":     avS(t.ContentHash),
		"updated_at":       avS(formatTime(t.UpdatedAt)),
	}
	if len(t.InputSchema) > 0 {
		it["input_schema"] = avS(string(t.InputSchema))
	}
	if len(t.Annotations) > 0 {
		it["annotations"] = avS(string(t.Annotations))
	}
	if len(t.Tags) > 0 {
		l := make([]types.AttributeValue, len(t.Tags))
		for i, tag := range t.Tags {
			l[i] = avS(tag)
		}
		it["tags"] = &types.AttributeValueMemberL{Value: l}
	}
	return it
}

func decodeTool(it item) (catalog.Tool, error) {
	t := catalog.Tool{
		ID:              getS(it, "tool_id"),
		Server:          getS(it, "server_id"),
		Name:            getS(it, "name"),
		Title:           getS(it, "title"),
		Description:     getS(it, "description"),
		ToolType:        getS(it, "tool_type"),
		PermissionScope: getS(it, "permission_scope"),
		ContentHash:     getS(it, "content_hash"),
		UpdatedAt:       parseTime(getS(it, "updated_at")),
	}
	if v := getS(it, "input_schema"); v != "" {
		t.InputSchema = json.RawMessage(v)
	}
	if v := getS(it, "annotations"); v != "" {
		t.Annotations = json.RawMessage(v)
	}
	if l, ok := it["tags"].(*types.AttributeValueMemberL); ok {
		for _, e := range l.Value {
			if sv, ok := e.(*types.AttributeValueMemberS); ok {
				t.Tags = append(t.Tags, sv.Value)
			}
		}
	}
	if t.ID == "" || t.Name == "" || t.Server == "" || t.ID != catalog.ToolID(t.Server, t.Name) {
		return t, fmt.Errorf("tools table item %s/%s is not a valid tool record", getS(it, attrPK), getS(it, attrSK))
	}
	return t, nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseTime(v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}
	}
	return t
}

// digest identifies a set of visible tools: their ids, content hashes and
// update times.
func digest(tools map[string]catalog.Tool) string {
	ids := make([]string, 0, len(tools))
	for id := range tools {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	h := sha256.New()
	for _, id := range ids {
		t := tools[id]
		fmt.Fprintf(h, "%s\x00%s\x00%s\n", id, t.ContentHash, formatTime(t.UpdatedAt))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:32]
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// nextVersion returns a version greater than m's. Versions follow the clock
// (microseconds) so a server deleted and re-created never repeats one.
func (s *ToolStore) nextVersion(m *toolMeta) int64 {
	v := s.now().UnixMicro()
	if m != nil && m.version >= v {
		v = m.version + 1
	}
	return v
}

// ---------------------------------------------------------------- reading

type stageEntry struct {
	tool    catalog.Tool
	removed bool
	key     item
}

// snapshot is one read of a server's partition.
type snapshot struct {
	id       string
	meta     *toolMeta
	tools    map[string]catalog.Tool          // tool# items by tool id
	stage    map[string]map[string]stageEntry // stage id → tool id → entry
	stagedAt map[string]int64                 // stage id → oldest staged_at (unix seconds)
}

func newSnapshot(id string) *snapshot {
	return &snapshot{id: id, tools: map[string]catalog.Tool{}, stage: map[string]map[string]stageEntry{}, stagedAt: map[string]int64{}}
}

func (sn *snapshot) add(it item) error {
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
func (sn *snapshot) visible() (map[string]catalog.Tool, bool) {
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

func (s *ToolStore) readPartition(ctx context.Context, id string) (*snapshot, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: item{":pk": avS(serverPK(id))},
		ConsistentRead:            aws.Bool(true),
	}
	if s.pageSize > 0 {
		in.Limit = aws.Int32(s.pageSize)
	}
	items, err := queryAll(ctx, s.client, in)
	if err != nil {
		return nil, fmt.Errorf("read server %q from the tools table: %w", id, err)
	}
	sn := newSnapshot(id)
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
func (s *ToolStore) readVerified(ctx context.Context, id string) (*snapshot, map[string]catalog.Tool, error) {
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
	in := &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)}
	if s.pageSize > 0 {
		in.Limit = aws.Int32(s.pageSize)
	}
	items, err := scanSegments(ctx, s.client, in, s.ScanSegments)
	if err != nil {
		return nil, fmt.Errorf("list tools: %w", err)
	}
	snaps := map[string]*snapshot{}
	for _, it := range items {
		id, ok := strings.CutPrefix(getS(it, attrPK), pkPrefix)
		if !ok {
			continue
		}
		sn := snaps[id]
		if sn == nil {
			sn = newSnapshot(id)
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
	}
	if s.pageSize > 0 {
		in.Limit = aws.Int32(s.pageSize)
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

// ---------------------------------------------------------------- writing

var errRetry = errors.New("retry")

// retryWrites runs op until it stops asking for a retry.
func (s *ToolStore) retryWrites(ctx context.Context, what string, op func() error) error {
	for attempt := 0; attempt < maxWriteAttempts; attempt++ {
		err := op()
		if !errors.Is(err, errRetry) {
			return err
		}
		s.Metrics.add(s.Metrics.conflicts())
		if err := backoff(ctx, attempt); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return fmt.Errorf("%s: %w: other writers changed the server %d times in a row", what, ErrConflict, maxWriteAttempts)
}

func (s *ToolStore) metaCondition(m *toolMeta) (string, item) {
	if m == nil {
		return "attribute_not_exists(pk)", nil
	}
	return "version = :v AND attribute_not_exists(applying) AND attribute_not_exists(deleting)", item{":v": avN(m.version)}
}

// ReplaceServerTools implements catalog.Store.
func (s *ToolStore) ReplaceServerTools(ctx context.Context, srv catalog.Server, tools []catalog.Tool) (changed, deleted []string, err error) {
	srv, next, err := plan.Prepare(srv, tools, s.now())
	if err != nil {
		return nil, nil, err
	}
	for _, t := range next {
		if size := itemSize(encodeTool(t, toolPrefix+t.Name)); size > maxItemSize-1024 {
			return nil, nil, fmt.Errorf("tool %q is %d KB, over DynamoDB's 400 KB item limit (its input schema is too large)", t.ID, size>>10)
		}
	}
	err = s.retryWrites(ctx, fmt.Sprintf("replace tools of server %q", srv.ID), func() error {
		var err error
		changed, deleted, err = s.replaceOnce(ctx, srv, next)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return changed, deleted, nil
}

func (s *ToolStore) replaceOnce(ctx context.Context, srv catalog.Server, next []catalog.Tool) (changed, deleted []string, err error) {
	sn, vis, err := s.readVerified(ctx, srv.ID)
	inconsistent := errors.Is(err, ErrInconsistent)
	if err != nil && !inconsistent {
		return nil, nil, err
	}
	m := sn.meta
	if m != nil && m.deleting {
		if err := s.finishDelete(ctx, srv.ID, m.version); err != nil {
			return nil, nil, err
		}
		return nil, nil, errRetry
	}
	if m != nil && m.applying != "" {
		if inconsistent {
			return nil, nil, fmt.Errorf("server %q has an incomplete staged change %s: %w; delete the server (it is re-created by the next sync)", srv.ID, m.applying, ErrInconsistent)
		}
		if err := s.rollForward(ctx, sn, vis); err != nil {
			return nil, nil, err
		}
		return nil, nil, errRetry
	}
	s.cleanupAbandoned(ctx, sn)

	// Diff against the physical items; after an inconsistent read every
	// tool is rewritten, which repairs the server.
	current := map[string]plan.Current{}
	for id, t := range sn.tools {
		c := plan.Current{ContentHash: t.ContentHash, Stale: m != nil && m.srv.Status != catalog.StatusActive}
		if inconsistent {
			c.ContentHash = ""
		}
		current[id] = c
	}
	d := plan.Diff(current, next)
	target := make(map[string]catalog.Tool, len(next))
	for _, t := range d.Write {
		target[t.ID] = t
	}
	for _, ids := range [][]string{d.Keep, d.Reactivate} {
		for _, id := range ids {
			target[id] = sn.tools[id]
		}
	}
	newMeta := toolMeta{srv: srv, version: s.nextVersion(m), digest: digest(target), count: len(target)}
	if m != nil {
		for _, id := range d.Delete {
			if _, ok := vis[id]; ok {
				deleted = append(deleted, id)
			}
		}
	}
	changed = d.Changed

	var writes []types.TransactWriteItem
	size := 0
	for _, t := range d.Write {
		it := encodeTool(t, toolPrefix+t.Name)
		size += itemSize(it)
		writes = append(writes, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: it}})
	}
	for _, id := range d.Delete {
		writes = append(writes, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table),
			Key: item{attrPK: avS(serverPK(srv.ID)), attrSK: avS(toolPrefix + sn.tools[id].Name)}}})
		size += 100
	}
	cond, vals := s.metaCondition(m)
	if len(writes)+1 <= maxTransact && size < txSizeBudget {
		metaPut := &types.Put{TableName: aws.String(s.table), Item: encodeMeta(newMeta), ConditionExpression: aws.String(cond)}
		if vals != nil {
			metaPut.ExpressionAttributeValues = vals
		}
		writes = append(writes, types.TransactWriteItem{Put: metaPut})
		if s.beforeCommit != nil {
			s.beforeCommit(srv.ID)
		}
		_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			TransactItems:      writes,
			ClientRequestToken: aws.String(randomID() + randomID()),
		})
		if err != nil {
			if conflict, _ := txOutcome(err); conflict {
				return nil, nil, errRetry
			}
			return nil, nil, fmt.Errorf("write tools of server %q: %w", srv.ID, err)
		}
		return changed, deleted, nil
	}

	// Too big for one transaction: stage, publish, apply.
	stageID := randomID()
	stagedAt := s.now().Unix()
	var reqs []types.WriteRequest
	var stageKeys []item
	for _, t := range d.Write {
		it := encodeTool(t, stagePrefix+stageID+"#"+t.Name)
		it["staged_at"] = avN(stagedAt)
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		stageKeys = append(stageKeys, item{attrPK: it[attrPK], attrSK: it[attrSK]})
	}
	for _, id := range d.Delete {
		it := item{attrPK: avS(serverPK(srv.ID)), attrSK: avS(stagePrefix + stageID + "#" + sn.tools[id].Name),
			"removed": avBool(true), "staged_at": avN(stagedAt)}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		stageKeys = append(stageKeys, item{attrPK: it[attrPK], attrSK: it[attrSK]})
	}
	if err := batchWrite(ctx, s.client, s.table, reqs, s.Metrics.unprocessed()); err != nil {
		return nil, nil, fmt.Errorf("stage tools of server %q: %w", srv.ID, err)
	}
	newMeta.applying = stageID
	if s.beforeCommit != nil {
		s.beforeCommit(srv.ID)
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: encodeMeta(newMeta), ConditionExpression: aws.String(cond)}
	if vals != nil {
		in.ExpressionAttributeValues = vals
	}
	if _, err := s.client.PutItem(ctx, in); err != nil {
		_ = s.deleteKeys(ctx, stageKeys)
		if isConditionFailed(err) {
			return nil, nil, errRetry
		}
		return nil, nil, fmt.Errorf("publish tools of server %q: %w", srv.ID, err)
	}
	// From here on readers see the new tools; the rest only moves them
	// into place, and any instance can finish it.
	if s.afterFlip != nil {
		if err := s.afterFlip(srv.ID); err != nil {
			return nil, nil, err
		}
	}
	var deletes []string
	for _, id := range d.Delete {
		deletes = append(deletes, sn.tools[id].Name)
	}
	if err := s.apply(ctx, srv.ID, stageID, d.Write, deletes, stageKeys); err != nil {
		return nil, nil, err
	}
	return changed, deleted, nil
}

// rollForward finishes a staged change another writer published but did
// not apply. vis is the verified visible set (the change's target).
func (s *ToolStore) rollForward(ctx context.Context, sn *snapshot, vis map[string]catalog.Tool) error {
	var puts []catalog.Tool
	var deletes []string
	for id, t := range vis {
		cur, ok := sn.tools[id]
		if !ok || cur.ContentHash != t.ContentHash || !cur.UpdatedAt.Equal(t.UpdatedAt) {
			puts = append(puts, t)
		}
	}
	for id, t := range sn.tools {
		if _, ok := vis[id]; !ok {
			deletes = append(deletes, t.Name)
		}
	}
	var stageKeys []item
	for _, e := range sn.stage[sn.meta.applying] {
		stageKeys = append(stageKeys, e.key)
	}
	return s.apply(ctx, sn.id, sn.meta.applying, puts, deletes, stageKeys)
}

// apply moves a published stage into place: transactions of at most 99
// tool writes, each guarded by "the stage is still being applied", then
// clears the stage mark and deletes the stage items. It is idempotent and
// safe to run from several instances at once.
func (s *ToolStore) apply(ctx context.Context, serverID, stageID string, puts []catalog.Tool, deletes []string, stageKeys []item) error {
	guard := types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(s.table),
		Key:                       metaKey(serverID),
		ConditionExpression:       aws.String("applying = :x"),
		ExpressionAttributeValues: item{":x": avS(stageID)},
	}}
	var chunk []types.TransactWriteItem
	size := 0
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		actions := append(chunk, guard)
		chunk, size = nil, 0
		for attempt := 0; ; attempt++ {
			_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
				TransactItems:      actions,
				ClientRequestToken: aws.String(randomID() + randomID()),
			})
			if err == nil {
				return nil
			}
			conflict, reasons := txOutcome(err)
			if !conflict {
				return fmt.Errorf("apply staged tools of server %q: %w", serverID, err)
			}
			if len(reasons) == len(actions) && reasons[len(reasons)-1] == "ConditionalCheckFailed" {
				return errStageDone // another instance finished (or the server is being deleted)
			}
			s.Metrics.add(s.Metrics.conflicts())
			if attempt+1 >= maxWriteAttempts {
				return fmt.Errorf("apply staged tools of server %q: %w", serverID, ErrConflict)
			}
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
		}
	}
	add := func(w types.TransactWriteItem, n int) error {
		if len(chunk)+1 >= maxTransact || size+n >= txSizeBudget {
			if err := flush(); err != nil {
				return err
			}
		}
		chunk = append(chunk, w)
		size += n
		return nil
	}
	err := func() error {
		for _, t := range puts {
			it := encodeTool(t, toolPrefix+t.Name)
			if err := add(types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: it}}, itemSize(it)); err != nil {
				return err
			}
		}
		for _, name := range deletes {
			if err := add(types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table),
				Key: item{attrPK: avS(serverPK(serverID)), attrSK: avS(toolPrefix + name)}}}, 100); err != nil {
				return err
			}
		}
		return flush()
	}()
	if errors.Is(err, errStageDone) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       metaKey(serverID),
		UpdateExpression:          aws.String("REMOVE applying"),
		ConditionExpression:       aws.String("applying = :x"),
		ExpressionAttributeValues: item{":x": avS(stageID)},
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("finish staged tools of server %q: %w", serverID, err)
	}
	if err := s.deleteKeys(ctx, stageKeys); err != nil {
		return fmt.Errorf("clean up staged tools of server %q: %w", serverID, err)
	}
	return nil
}

var errStageDone = errors.New("stage already applied")

func (s *ToolStore) deleteKeys(ctx context.Context, keys []item) error {
	reqs := make([]types.WriteRequest, len(keys))
	for i, k := range keys {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	}
	return batchWrite(ctx, s.client, s.table, reqs, s.Metrics.unprocessed())
}

// cleanupAbandoned deletes stage items of writes that never published
// (their writer crashed or lost a race) once they are staleStageAge old.
func (s *ToolStore) cleanupAbandoned(ctx context.Context, sn *snapshot) {
	cutoff := s.now().Add(-staleStageAge).Unix()
	var keys []item
	for x, entries := range sn.stage {
		if sn.meta != nil && x == sn.meta.applying {
			continue
		}
		if sn.stagedAt[x] > cutoff {
			continue
		}
		for _, e := range entries {
			keys = append(keys, e.key)
		}
	}
	if len(keys) > 0 {
		_ = s.deleteKeys(ctx, keys) // best effort; retried by the next sync
	}
}

// MarkServerStale implements catalog.Store. Only the meta item changes:
// tools take their status from it. A server that never synced gets a meta
// item with no tools.
func (s *ToolStore) MarkServerStale(ctx context.Context, serverID, reason string) error {
	if err := catalog.ValidServerID(serverID); err != nil {
		return err
	}
	return s.retryWrites(ctx, fmt.Sprintf("mark server %q stale", serverID), func() error {
		out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: metaKey(serverID), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return fmt.Errorf("mark server %q stale: %w", serverID, err)
		}
		if out.Item == nil {
			m := toolMeta{srv: catalog.Server{ID: serverID, Status: catalog.StatusStale, LastError: reason},
				version: s.nextVersion(nil), digest: digest(nil)}
			_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: encodeMeta(m),
				ConditionExpression: aws.String("attribute_not_exists(pk)")})
		} else {
			m := decodeMeta(out.Item)
			if m.deleting {
				if err := s.finishDelete(ctx, serverID, m.version); err != nil {
					return err
				}
				return errRetry
			}
			_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 aws.String(s.table),
				Key:                       metaKey(serverID),
				UpdateExpression:          aws.String("SET #st = :stale, last_error = :err, version = :nv"),
				ConditionExpression:       aws.String("version = :v AND attribute_not_exists(deleting)"),
				ExpressionAttributeNames:  map[string]string{"#st": "status"},
				ExpressionAttributeValues: item{":stale": avS(catalog.StatusStale), ":err": avS(reason), ":nv": avN(s.nextVersion(&m)), ":v": avN(m.version)},
			})
		}
		if isConditionFailed(err) {
			return errRetry
		}
		if err != nil {
			return fmt.Errorf("mark server %q stale: %w", serverID, err)
		}
		return nil
	})
}

// DeleteServer implements catalog.Store: the meta item is marked deleting
// (readers stop seeing the server at once), the items are deleted, then
// the meta item. Deleting an unknown server is not an error.
func (s *ToolStore) DeleteServer(ctx context.Context, serverID string) error {
	if catalog.StoredServerID(serverID) != nil {
		return nil // no such server can exist
	}
	return s.retryWrites(ctx, fmt.Sprintf("delete server %q", serverID), func() error {
		out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: metaKey(serverID), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return fmt.Errorf("delete server %q: %w", serverID, err)
		}
		if out.Item == nil {
			return nil
		}
		m := decodeMeta(out.Item)
		if !m.deleting {
			nv := s.nextVersion(&m)
			_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 aws.String(s.table),
				Key:                       metaKey(serverID),
				UpdateExpression:          aws.String("SET deleting = :t, version = :nv REMOVE applying"),
				ConditionExpression:       aws.String("version = :v"),
				ExpressionAttributeValues: item{":t": avBool(true), ":nv": avN(nv), ":v": avN(m.version)},
			})
			if isConditionFailed(err) {
				return errRetry
			}
			if err != nil {
				return fmt.Errorf("delete server %q: %w", serverID, err)
			}
			m.version = nv
		}
		return s.finishDelete(ctx, serverID, m.version)
	})
}

// finishDelete deletes every item of a server whose meta item is marked
// deleting at version. Each batch of deletes is guarded by that mark, so
// a slow instance cannot delete items of a re-created server.
func (s *ToolStore) finishDelete(ctx context.Context, serverID string, version int64) error {
	sn, err := s.readPartition(ctx, serverID)
	if err != nil {
		return err
	}
	guard := types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(s.table),
		Key:                       metaKey(serverID),
		ConditionExpression:       aws.String("deleting = :t AND version = :v"),
		ExpressionAttributeValues: item{":t": avBool(true), ":v": avN(version)},
	}}
	var keys []item
	for _, t := range sn.tools {
		keys = append(keys, item{attrPK: avS(serverPK(serverID)), attrSK: avS(toolPrefix + t.Name)})
	}
	var stageKeys []item
	for _, entries := range sn.stage {
		for _, e := range entries {
			stageKeys = append(stageKeys, e.key)
		}
	}
	for len(keys) > 0 {
		k := min(len(keys), maxTransact-1)
		actions := make([]types.TransactWriteItem, 0, k+1)
		for _, key := range keys[:k] {
			actions = append(actions, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: key}})
		}
		actions = append(actions, guard)
		_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions,
			ClientRequestToken: aws.String(randomID() + randomID())})
		if err != nil {
			if conflict, _ := txOutcome(err); conflict {
				return errRetry
			}
			return fmt.Errorf("delete tools of server %q: %w", serverID, err)
		}
		keys = keys[k:]
	}
	if err := s.deleteKeys(ctx, stageKeys); err != nil {
		return fmt.Errorf("delete staged tools of server %q: %w", serverID, err)
	}
	_, err = s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.table),
		Key:                       metaKey(serverID),
		ConditionExpression:       aws.String("deleting = :t AND version = :v"),
		ExpressionAttributeValues: item{":t": avBool(true), ":v": avN(version)},
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("delete server %q: %w", serverID, err)
	}
	return nil
}
