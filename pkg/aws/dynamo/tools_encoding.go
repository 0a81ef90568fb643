package dynamo

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// The tools table's item encoding: meta records, tool items, times.

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
		"synced_at":   avS(catalog.FormatTime(m.srv.SyncedAt)),
		"version":     avN(m.version),
		"digest":      avS(m.digest),
		"tool_count":  avN(int64(m.count)),
	}
	if len(m.srv.Extra) > 0 {
		it["extra"] = avS(string(m.srv.Extra))
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
	m := toolMeta{
		srv: catalog.Server{
			ID:          getS(it, "server_id"),
			Title:       getS(it, "title"),
			Description: getS(it, "description"),
			Status:      getS(it, "status"),
			LastError:   getS(it, "last_error"),
			SyncedAt:    catalog.ParseTime(getS(it, "synced_at")),
		},
		version:  getN(it, "version"),
		digest:   getS(it, "digest"),
		count:    int(getN(it, "tool_count")),
		applying: getS(it, "applying"),
		deleting: getBool(it, "deleting"),
	}
	if v := getS(it, "extra"); v != "" {
		m.srv.Extra = json.RawMessage(v)
	}
	return m
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
		"updated_at":       avS(catalog.FormatTime(t.UpdatedAt)),
	}
	if len(t.InputSchema) > 0 {
		it["input_schema"] = avS(string(t.InputSchema))
	}
	if len(t.Annotations) > 0 {
		it["annotations"] = avS(string(t.Annotations))
	}
	// An attribute the previous release does not know: it reads the item
	// as before, without it.
	if len(t.Extra) > 0 {
		it["extra"] = avS(string(t.Extra))
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
		UpdatedAt:       catalog.ParseTime(getS(it, "updated_at")),
	}
	if v := getS(it, "input_schema"); v != "" {
		t.InputSchema = json.RawMessage(v)
	}
	if v := getS(it, "annotations"); v != "" {
		t.Annotations = json.RawMessage(v)
	}
	if v := getS(it, "extra"); v != "" {
		t.Extra = json.RawMessage(v)
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
		fmt.Fprintf(h, "%s\x00%s\x00%s\n", id, t.ContentHash, catalog.FormatTime(t.UpdatedAt))
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
