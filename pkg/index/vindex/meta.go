package vindex

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"
)

// ToolKey returns the index id of a tool: the 64-bit FNV-1a hash of the tool
// id with the sign bit cleared, so it is stable across processes and
// releases and never negative (never NoID).
//
// Two tool ids can hash to the same key (about 1 chance in 70 million for 500k
// tools). Meta keeps the key → tool id mapping and Meta.Assign returns an
// error wrapping ErrCollision for the second tool, which the indexer reports
// and leaves out of the index rather than silently serving the wrong tool.
func ToolKey(toolID string) int64 {
	h := fnv.New64a()
	h.Write([]byte(toolID))
	return int64(h.Sum64() &^ (1 << 63))
}

// ErrCollision is wrapped by Meta.Assign when two tool ids hash to the same
// key.
var ErrCollision = errors.New("vindex: tool key collision")

// Meta describes a built index: the embedding model, the id → tool mapping
// and a content hash per tool (for incremental rebuilds). It is stored as
// JSON next to the index.
type Meta struct {
	ModelID     string            `json:"model_id"`
	Dim         int               `json:"dim"`
	Count       int               `json:"count"`
	BuiltAt     time.Time         `json:"built_at"`
	IDs         map[string]string `json:"ids"`    // decimal int64 → tool id
	Hashes      map[string]string `json:"hashes"` // tool id → content hash
	IndexSHA256 string            `json:"index_sha256"`
}

// Assign records toolID in the mapping and returns its key (ToolKey). It
// fails, wrapping ErrCollision, when the key already belongs to another tool
// id; assigning the same tool id twice is fine.
func (m *Meta) Assign(toolID string) (int64, error) {
	key := ToolKey(toolID)
	k := strconv.FormatInt(key, 10)
	if prev, ok := m.IDs[k]; ok && prev != toolID {
		return 0, fmt.Errorf("%w: tools %q and %q both hash to %d; %q is left out of the index", ErrCollision, prev, toolID, key, toolID)
	}
	if m.IDs == nil {
		m.IDs = make(map[string]string)
	}
	m.IDs[k] = toolID
	return key, nil
}

// Unassign removes toolID from the mapping and from Hashes.
func (m *Meta) Unassign(toolID string) {
	k := strconv.FormatInt(ToolKey(toolID), 10)
	if m.IDs[k] == toolID {
		delete(m.IDs, k)
	}
	delete(m.Hashes, toolID)
}

// ToolID returns the tool id stored under an index id.
func (m Meta) ToolID(id int64) (string, bool) {
	t, ok := m.IDs[strconv.FormatInt(id, 10)]
	return t, ok
}

// Check reports whether m describes ix: same dimension and count, and a tool
// id for every vector id and for nothing else.
func (m Meta) Check(ix *Index) error {
	if m.Dim != ix.Dim() {
		return fmt.Errorf("vindex: meta says dimension %d, the index has %d", m.Dim, ix.Dim())
	}
	ids := ix.IDs()
	if m.Count != len(ids) {
		return fmt.Errorf("vindex: meta says %d vectors, the index has %d", m.Count, len(ids))
	}
	if len(m.IDs) != len(ids) {
		return fmt.Errorf("vindex: meta maps %d ids, the index has %d vectors", len(m.IDs), len(ids))
	}
	for _, id := range ids {
		if _, ok := m.IDs[strconv.FormatInt(id, 10)]; !ok {
			return fmt.Errorf("vindex: index id %d has no tool id in the meta", id)
		}
	}
	return nil
}
