package indexpub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// ErrStale is wrapped by Publish when the published index is newer (by
// BuiltAt) than the one being published, which is then left unpublished.
var ErrStale = errors.New("indexpub: a newer index is already published")

// PointerKey is the name of the pointer object under a prefix.
const PointerKey = "current.json"

// Pointer is the content of <prefix>current.json: which index is current.
// Index and Meta are keys relative to the prefix.
type Pointer struct {
	Index  string `json:"index"`
	Meta   string `json:"meta"`
	SHA256 string `json:"sha256"` // hex SHA-256 of the index bytes
	// MetaSHA256 is the hex SHA-256 of the meta without its BuiltAt: with
	// SHA256 it is the pointer's content, and a publish of the same
	// content changes nothing (empty in pointers written before it).
	MetaSHA256 string    `json:"meta_sha256,omitempty"`
	BuiltAt    time.Time `json:"built_at"`
	ModelID    string    `json:"model_id"`
	Dim        int       `json:"dim"`
	Count      int       `json:"count"`
}

// sameContent reports whether p and q name the same index and meta (their
// BuiltAt aside).
func (p Pointer) sameContent(q Pointer) bool {
	return p.SHA256 == q.SHA256 && (p.MetaSHA256 == q.MetaSHA256 && p.MetaSHA256 != "" || p.BuiltAt.Equal(q.BuiltAt))
}

// newerThan reports whether p must not be replaced by q: p was built later,
// or at the same instant with a larger hash (a deterministic tie-break).
func (p Pointer) newerThan(q Pointer) bool {
	if !p.BuiltAt.Equal(q.BuiltAt) {
		return p.BuiltAt.After(q.BuiltAt)
	}
	return p.SHA256 > q.SHA256
}

// ReadPointer returns the pointer published under prefix in b (an error
// wrapping ErrNotExist when nothing is published), without loading the
// index it names.
func ReadPointer(ctx context.Context, b Bucket, prefix string) (Pointer, error) {
	body, _, err := b.Get(ctx, prefix+PointerKey, "")
	if err != nil {
		return Pointer{}, err
	}
	return parsePointer(body, prefix+PointerKey)
}

func parsePointer(body []byte, where string) (Pointer, error) {
	var p Pointer
	if err := json.Unmarshal(body, &p); err != nil {
		return Pointer{}, fmt.Errorf("%w: pointer %s is not valid JSON: %v", vindex.ErrCorrupt, where, err)
	}
	if p.Index == "" || p.Meta == "" || p.SHA256 == "" {
		return Pointer{}, fmt.Errorf("%w: pointer %s lacks index, meta or sha256", vindex.ErrCorrupt, where)
	}
	return p, nil
}

// Publisher publishes indexes under a prefix of a Bucket. Its exported
// fields tune it; the zero values select the defaults. A Publisher is safe
// for concurrent use, and any number of publishers (in any number of
// processes) may share a prefix.
type Publisher struct {
	b      Bucket
	prefix string

	// MaxAttempts bounds how many times Publish re-reads the pointer after
	// losing a conditional write to another publisher (default 10).
	MaxAttempts int
	// PruneGrace protects recent blobs from Prune: blobs written less than
	// this long ago are kept, because a publisher may be about to point at
	// them or a reader may be fetching them (default 10 minutes).
	PruneGrace time.Duration
	// Now is the clock for defaults (BuiltAt, PruneGrace); nil means
	// time.Now.
	Now func() time.Time
	// BeforeSwitch, when set, is called once per Publish with the pointer
	// about to become current: after its blobs are stored and the current
	// pointer was found older, before the conditional write that switches
	// it. It writes what readers must find as soon as they see the new
	// pointer. An error stops the publish; the current index stays.
	BeforeSwitch func(ctx context.Context, next Pointer) error
}

// NewPublisher returns a publisher writing under prefix in b. prefix is
// prepended to every key as is, so it normally ends in "/" (or is empty).
func NewPublisher(b Bucket, prefix string) *Publisher {
	return &Publisher{b: b, prefix: prefix}
}

func (p *Publisher) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// blobKeys returns the keys (relative to the prefix) of the index and meta
// blobs of the index with the given hash.
func blobKeys(sha string) (index, meta string) {
	return "indexes/" + sha + ".faiss", "indexes/" + sha + ".json"
}

// Publish uploads ix and meta and makes them current. meta must map every
// vector id of ix to a tool id (vindex.Meta.Check) and name the embedding
// model; Publish fills in Dim, Count, IndexSHA256 and, when zero, BuiltAt.
//
// The blobs go to content-addressed keys first; then the pointer is switched
// with a conditional write. When another publisher switched it meanwhile,
// Publish re-reads it and retries, up to MaxAttempts times. It never
// replaces a newer build (by BuiltAt): it returns the current pointer and an
// error wrapping ErrStale instead.
//
// Publishing what is already current (the same index bytes and the same
// meta but for BuiltAt) writes nothing, not even the pointer: it returns
// the current pointer, whose BuiltAt is the first build of that content,
// after one read of the pointer (and, on a bucket that implements Header,
// a check that its blobs are stored: a missing blob, or an index blob of
// the wrong size, is uploaded again). An index blob already stored is not
// uploaded again.
func (p *Publisher) Publish(ctx context.Context, ix *vindex.Index, meta vindex.Meta) (Pointer, error) {
	prep, err := p.prepare(ctx, ix, meta)
	if err != nil {
		return Pointer{}, err
	}
	switch cur, err := ReadPointer(ctx, p.b, p.prefix); {
	case err == nil && cur.sameContent(prep.ptr):
		// The blobs it names are repaired when they are missing or
		// have the wrong size (a damaged upload), without a pointer write.
		if !p.stored(ctx, prep) {
			if err := p.store(ctx, prep); err != nil {
				return Pointer{}, err
			}
		}
		return cur, nil
	case err != nil && !errors.Is(err, ErrNotExist) && !errors.Is(err, vindex.ErrCorrupt):
		return Pointer{}, fmt.Errorf("indexpub: reading the pointer: %w", err)
	}
	if err := p.store(ctx, prep); err != nil {
		return Pointer{}, err
	}
	return p.switchPointer(ctx, prep.ptr)
}

// prepared is an index and meta ready to upload.
type prepared struct {
	ptr      Pointer
	size     int64                  // bytes of the index blob
	upload   func(key string) error // uploads the index blob
	metaBody []byte
}

// stored reports whether the bucket holds the index blob of prep (with its
// size) and a meta blob for it; true when the bucket cannot tell (it does
// not implement Header).
func (p *Publisher) stored(ctx context.Context, prep prepared) bool {
	h, ok := p.b.(Header)
	if !ok {
		return true
	}
	info, err := h.Head(ctx, p.prefix+prep.ptr.Index)
	if err != nil || info.Size != prep.size {
		return false
	}
	_, err = h.Head(ctx, p.prefix+prep.ptr.Meta)
	return err == nil
}

// store writes the index blob, unless it is already stored, and the meta
// blob.
func (p *Publisher) store(ctx context.Context, prep prepared) error {
	// Content-addressed, so unconditional writes are safe (and repair a
	// blob of the wrong size).
	key := p.prefix + prep.ptr.Index
	stored := false
	if h, ok := p.b.(Header); ok {
		info, err := h.Head(ctx, key)
		stored = err == nil && info.Size == prep.size
	}
	if !stored {
		if err := prep.upload(key); err != nil {
			return fmt.Errorf("indexpub: uploading the index: %w", err)
		}
	}
	if _, err := p.b.Put(ctx, p.prefix+prep.ptr.Meta, prep.metaBody, Cond{}); err != nil {
		return fmt.Errorf("indexpub: uploading the index meta: %w", err)
	}
	return nil
}

// prepare hashes the index and encodes the meta, and returns the pointer
// that would make them current.
func (p *Publisher) prepare(ctx context.Context, ix *vindex.Index, meta vindex.Meta) (prepared, error) {
	if ix == nil {
		return prepared{}, errors.New("indexpub: no index to publish")
	}
	if meta.ModelID == "" {
		return prepared{}, errors.New("indexpub: meta.ModelID is empty; set it to the embedder's ModelID() so a model change is detected")
	}
	meta.Dim, meta.Count = ix.Dim(), ix.Len()
	if err := meta.Check(ix); err != nil {
		return prepared{}, fmt.Errorf("indexpub: meta does not describe the index: %w", err)
	}
	if meta.BuiltAt.IsZero() {
		meta.BuiltAt = p.now()
	}
	meta.BuiltAt = meta.BuiltAt.UTC()

	// The index is hashed and uploaded straight from its memory when the
	// bucket can read an upload from a reader; otherwise it is encoded
	// into one buffer of its exact size.
	var (
		sum    string
		upload func(key string) error
	)
	if rp, ok := p.b.(ReaderPutter); ok {
		if r, ok := ix.EncodedReader(); ok {
			h := sha256.New()
			if _, err := io.Copy(h, r); err != nil {
				return prepared{}, fmt.Errorf("indexpub: hashing the index: %w", err)
			}
			sum = hex.EncodeToString(h.Sum(nil))
			upload = func(key string) error {
				if _, err := r.Seek(0, io.SeekStart); err != nil {
					return err
				}
				_, err := rp.PutReader(ctx, key, r, r.Size(), Cond{})
				return err
			}
		}
	}
	if upload == nil {
		var buf bytes.Buffer
		buf.Grow(int(ix.EncodedSize())) // one allocation, not a doubling series
		if _, err := ix.WriteTo(&buf); err != nil {
			return prepared{}, fmt.Errorf("indexpub: encoding the index: %w", err)
		}
		sum = sha256Hex(buf.Bytes())
		upload = func(key string) error {
			_, err := p.b.Put(ctx, key, buf.Bytes(), Cond{})
			return err
		}
	}
	meta.IndexSHA256 = sum
	// The meta's content is hashed without its build time, so that a
	// rebuild of the same catalog is recognised as the same content.
	builtAt := meta.BuiltAt
	meta.BuiltAt = time.Time{}
	timeless, err := json.Marshal(meta)
	if err != nil {
		return prepared{}, fmt.Errorf("indexpub: encoding the meta: %w", err)
	}
	meta.BuiltAt = builtAt
	metaBody, err := json.Marshal(meta)
	if err != nil {
		return prepared{}, fmt.Errorf("indexpub: encoding the meta: %w", err)
	}
	indexKey, metaKey := blobKeys(meta.IndexSHA256)
	return prepared{
		ptr: Pointer{
			Index: indexKey, Meta: metaKey, SHA256: meta.IndexSHA256, MetaSHA256: sha256Hex(timeless),
			BuiltAt: meta.BuiltAt, ModelID: meta.ModelID, Dim: meta.Dim, Count: meta.Count,
		},
		size: ix.EncodedSize(), upload: upload, metaBody: metaBody,
	}, nil
}

// switchPointer makes ptr current unless a newer build is.
func (p *Publisher) switchPointer(ctx context.Context, ptr Pointer) (Pointer, error) {
	body, err := json.Marshal(ptr)
	if err != nil {
		return Pointer{}, fmt.Errorf("indexpub: encoding the pointer: %w", err)
	}
	key := p.prefix + PointerKey
	attempts := p.MaxAttempts
	if attempts <= 0 {
		attempts = 10
	}
	prepared := p.BeforeSwitch == nil
	for attempt := range attempts {
		if attempt > 0 {
			// Back off a little (1, 2, 4 ... ms, at most 50) so that a
			// crowd of publishers does not spin on the pointer.
			select {
			case <-ctx.Done():
				return Pointer{}, ctx.Err()
			case <-time.After(min(time.Millisecond<<attempt, 50*time.Millisecond)):
			}
		}
		cond := Cond{IfNoneMatch: true}
		curBody, etag, err := p.b.Get(ctx, key, "")
		switch {
		case err == nil:
			cur, err := parsePointer(curBody, key)
			if err != nil {
				return Pointer{}, fmt.Errorf("indexpub: %w; delete it to publish again", err)
			}
			if cur.sameContent(ptr) {
				return cur, nil
			}
			if cur.newerThan(ptr) {
				return cur, fmt.Errorf("%w: the current index was built at %s, this one at %s; it stays unpublished",
					ErrStale, cur.BuiltAt.Format(time.RFC3339Nano), ptr.BuiltAt.Format(time.RFC3339Nano))
			}
			cond = Cond{IfMatch: etag}
		case errors.Is(err, ErrNotExist):
		default:
			return Pointer{}, fmt.Errorf("indexpub: reading the pointer: %w", err)
		}
		if !prepared {
			if err := p.BeforeSwitch(ctx, ptr); err != nil {
				return Pointer{}, fmt.Errorf("indexpub: before switching the pointer: %w", err)
			}
			prepared = true
		}
		_, err = p.b.Put(ctx, key, body, cond)
		switch {
		case err == nil:
			return ptr, nil
		case errors.Is(err, ErrPrecondition), errors.Is(err, ErrNotExist):
			continue // another publisher got there first: look again
		default:
			return Pointer{}, fmt.Errorf("indexpub: switching the pointer: %w", err)
		}
	}
	return Pointer{}, fmt.Errorf("indexpub: the pointer %s changed under each of %d attempts to switch it; giving up", key, attempts)
}

// Prune deletes the blobs of old index versions under the prefix, keeping
// the current one, the keep most recent ones (keep counts the current one)
// and any written within PruneGrace. It returns how many versions it
// deleted. It needs a bucket that implements Lister; on S3 use lifecycle
// rules instead.
func (p *Publisher) Prune(ctx context.Context, keep int) (int, error) {
	l, ok := p.b.(Lister)
	if !ok {
		return 0, fmt.Errorf("indexpub: %T cannot list objects; expire old indexes with the store's lifecycle rules: %w", p.b, errors.ErrUnsupported)
	}
	keep = max(keep, 1)
	current := ""
	if body, _, err := p.b.Get(ctx, p.prefix+PointerKey, ""); err == nil {
		if ptr, err := parsePointer(body, PointerKey); err == nil {
			current = ptr.SHA256
		}
	} else if !errors.Is(err, ErrNotExist) {
		return 0, fmt.Errorf("indexpub: reading the pointer: %w", err)
	}
	objs, err := l.List(ctx, p.prefix+"indexes/")
	if err != nil {
		return 0, err
	}
	type version struct {
		sha    string
		newest time.Time
		keys   []string
	}
	bySHA := map[string]*version{}
	for _, o := range objs {
		rel := strings.TrimPrefix(o.Key, p.prefix+"indexes/")
		if strings.Contains(rel, "/") {
			continue
		}
		sha := strings.TrimSuffix(rel, path.Ext(rel))
		v := bySHA[sha]
		if v == nil {
			v = &version{sha: sha}
			bySHA[sha] = v
		}
		v.keys = append(v.keys, o.Key)
		if o.ModTime.After(v.newest) {
			v.newest = o.ModTime
		}
	}
	var versions []*version
	for _, v := range bySHA {
		versions = append(versions, v)
	}
	slices.SortFunc(versions, func(a, b *version) int { return b.newest.Compare(a.newest) })
	grace := p.PruneGrace
	if grace == 0 {
		grace = 10 * time.Minute
	}
	cutoff := p.now().Add(-grace)
	kept, removed := 0, 0
	if _, ok := bySHA[current]; ok {
		kept = 1
	}
	for _, v := range versions {
		if v.sha == current {
			continue
		}
		if kept < keep || v.newest.After(cutoff) {
			kept++
			continue
		}
		for _, k := range v.keys {
			if err := l.Delete(ctx, k); err != nil {
				return removed, err
			}
		}
		removed++
	}
	return removed, nil
}
