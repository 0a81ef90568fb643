package resultstore

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DownloadPath is where Dir serves its signed URLs:
// GET DownloadPath<id>?exp=<unix seconds>&sig=<HMAC>.
const DownloadPath = "/tool-rag/results/"

// Dir is a Store in a local directory: <id>.json holds the record,
// <id>.bin the body. Expired results are removed by the next Put (at most
// once a minute) and are never served. Its signed URLs are gateway URLs
// under DownloadPath, signed with an HMAC-SHA256 over the id, the owner
// and the expiry with a key that lives in the process only.
type Dir struct {
	path    string
	baseURL string
	key     []byte
	now     func() time.Time

	mu    sync.Mutex
	swept time.Time
}

type baseURLKey struct{}

// WithBaseURL returns ctx with the base URL (scheme://host[:port]) a
// request reached the gateway at: Dir signs URLs under it when it has no
// configured base URL.
func WithBaseURL(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, baseURLKey{}, strings.TrimRight(base, "/"))
}

// NewDir opens (creating it) the directory path. baseURL is the gateway's
// public base URL (scheme://host[:port]) for signed URLs; empty: the
// base URL of the request (WithBaseURL).
func NewDir(path, baseURL string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("create the results directory %s: %w", path, err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &Dir{path: path, baseURL: strings.TrimRight(baseURL, "/"), key: key, now: time.Now}, nil
}

func (d *Dir) file(id, ext string) string { return filepath.Join(d.path, id+ext) }

// Put implements Store.
func (d *Dir) Put(_ context.Context, rec Record, body []byte) error {
	if !ValidID(rec.ID) {
		return fmt.Errorf("store result: invalid id %q", rec.ID)
	}
	d.sweep()
	meta, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := writeFile(d.file(rec.ID, ".bin"), body); err != nil {
		return fmt.Errorf("store result: %w", err)
	}
	// The record last: a result without one is not served.
	if err := writeFile(d.file(rec.ID, ".json"), meta); err != nil {
		_ = os.Remove(d.file(rec.ID, ".bin"))
		return fmt.Errorf("store result: %w", err)
	}
	return nil
}

func writeFile(name string, data []byte) error {
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// Get implements Store.
func (d *Dir) Get(_ context.Context, id string) (Record, []byte, error) {
	rec, err := d.record(id)
	if err != nil {
		return Record{}, nil, err
	}
	body, err := os.ReadFile(d.file(id, ".bin"))
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, nil, ErrNotFound
	}
	if err != nil {
		return Record{}, nil, fmt.Errorf("read result: %w", err)
	}
	return rec, body, nil
}

func (d *Dir) record(id string) (Record, error) {
	if !ValidID(id) {
		return Record{}, ErrNotFound
	}
	raw, err := os.ReadFile(d.file(id, ".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, fmt.Errorf("read result: %w", err)
	}
	var rec Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return Record{}, fmt.Errorf("read result: %w", err)
	}
	if !d.now().Before(rec.Expires) {
		return Record{}, ErrNotFound
	}
	return rec, nil
}

// sweep removes expired results, at most once a minute.
func (d *Dir) sweep() {
	d.mu.Lock()
	now := d.now()
	if now.Sub(d.swept) < time.Minute {
		d.mu.Unlock()
		return
	}
	d.swept = now
	d.mu.Unlock()
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return
	}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !ValidID(id) {
			continue
		}
		if _, err := d.record(id); errors.Is(err, ErrNotFound) {
			_ = os.Remove(d.file(id, ".json"))
			_ = os.Remove(d.file(id, ".bin"))
		}
	}
}

func (d *Dir) sig(id, owner string, exp int64) string {
	m := hmac.New(sha256.New, d.key)
	fmt.Fprintf(m, "%s\n%s\n%d", id, owner, exp)
	return hex.EncodeToString(m.Sum(nil))
}

// Sign implements Store: a gateway URL under DownloadPath, bound to the
// record's owner, valid for ttl (and never past the result's expiry).
func (d *Dir) Sign(ctx context.Context, rec Record, ttl time.Duration) (Download, bool, error) {
	base := d.baseURL
	if base == "" {
		base, _ = ctx.Value(baseURLKey{}).(string)
	}
	if base == "" {
		return Download{}, false, nil
	}
	exp := d.now().Add(ttl)
	if exp.After(rec.Expires) {
		exp = rec.Expires
	}
	e := exp.Unix()
	return Download{
		URL:     base + DownloadPath + rec.ID + "?exp=" + strconv.FormatInt(e, 10) + "&sig=" + d.sig(rec.ID, rec.Owner, e),
		Expires: time.Unix(e, 0).UTC(),
	}, true, nil
}

// ServeHTTP serves a signed URL: the body of the result when the signature
// matches the result's owner and has not expired; 404 for anything else
// (an unknown, expired or foreign result looks the same as a bad
// signature), 410 for an expired signature.
func (d *Dir) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, DownloadPath)
	exp, err := strconv.ParseInt(r.URL.Query().Get("exp"), 10, 64)
	sig := r.URL.Query().Get("sig")
	if err != nil || sig == "" || !ValidID(id) {
		http.Error(w, "result not found", http.StatusNotFound)
		return
	}
	rec, err := d.record(id)
	if err != nil || !hmac.Equal([]byte(sig), []byte(d.sig(id, rec.Owner, exp))) {
		http.Error(w, "result not found", http.StatusNotFound)
		return
	}
	if d.now().Unix() >= exp {
		http.Error(w, "this download link has expired; read the result again through resources/read for a new one", http.StatusGone)
		return
	}
	f, err := os.Open(d.file(id, ".bin"))
	if err != nil {
		http.Error(w, "result not found", http.StatusNotFound)
		return
	}
	defer f.Close()
	if rec.MIMEType != "" {
		w.Header().Set("Content-Type", rec.MIMEType)
	}
	w.Header().Set("Cache-Control", "private, no-store")
	http.ServeContent(w, r, "", time.Time{}, f)
}
