package indexpub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// lockName is the lock file that serialises Puts across processes.
const lockName = ".indexpub.lock"

// DirBucket is a Bucket (and Lister) over a local directory, one file per
// key. A Put writes a temporary file in the target folder, fsyncs it and
// renames it over the key (atomic on POSIX file systems), then fsyncs the
// folder. The ETag is the hex SHA-256 of the content. Puts are serialised
// by an in-process mutex and, across processes, by flock(2) on
// <dir>/.indexpub.lock, so two gateways sharing a folder cannot interleave a
// conditional check and a rename.
//
// Keys are slash-separated relative paths without backslashes; no element
// may be empty, "." or "..", or start with a dot (dot names are the bucket's own temporary and
// lock files).
type DirBucket struct {
	dir string
	mu  sync.Mutex
}

// NewDirBucket returns a bucket storing objects under dir, which is created
// on the first Put.
func NewDirBucket(dir string) *DirBucket { return &DirBucket{dir: dir} }

// Dir returns the bucket's directory.
func (b *DirBucket) Dir() string { return b.dir }

// ETag returns the ETag DirBucket gives body: its hex SHA-256.
func ETag(body []byte) string { return sha256Hex(body) }

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (b *DirBucket) path(key string) (string, error) {
	if key == "" || !fs.ValidPath(key) || key == "." || strings.ContainsRune(key, '\\') {
		return "", fmt.Errorf("indexpub: invalid key %q: want a relative slash-separated path", key)
	}
	for _, el := range strings.Split(key, "/") {
		if strings.HasPrefix(el, ".") {
			return "", fmt.Errorf("indexpub: invalid key %q: path elements must not start with a dot", key)
		}
	}
	return filepath.Join(b.dir, filepath.FromSlash(key)), nil
}

// Get implements Bucket.
func (b *DirBucket) Get(ctx context.Context, key, ifNoneMatch string) ([]byte, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	p, err := b.path(key)
	if err != nil {
		return nil, "", err
	}
	body, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%w: %s", ErrNotExist, p)
	}
	if err != nil {
		return nil, "", fmt.Errorf("indexpub: reading %s: %w", p, err)
	}
	etag := ETag(body)
	if ifNoneMatch != "" && ifNoneMatch == etag {
		return nil, etag, fmt.Errorf("%w: %s", ErrNotModified, p)
	}
	return body, etag, nil
}

// Put implements Bucket.
func (b *DirBucket) Put(ctx context.Context, key string, body []byte, cond Cond) (string, error) {
	return b.PutReader(ctx, key, bytes.NewReader(body), int64(len(body)), cond)
}

// PutReader implements ReaderPutter.
func (b *DirBucket) PutReader(ctx context.Context, key string, body io.ReadSeeker, size int64, cond Cond) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	p, err := b.path(key)
	if err != nil {
		return "", err
	}
	parent := filepath.Dir(p)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("indexpub: creating %s: %w", parent, err)
	}
	tmp, etag, err := writeTemp(parent, body, size)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp) // no-op once renamed

	b.mu.Lock()
	defer b.mu.Unlock()
	unlock, err := lockDir(filepath.Join(b.dir, lockName))
	if err != nil {
		return "", err
	}
	defer unlock()

	if cond.IfMatch != "" || cond.IfNoneMatch {
		cur, err := os.ReadFile(p)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("indexpub: reading %s: %w", p, err)
		}
		switch {
		case cond.IfNoneMatch && exists:
			return "", fmt.Errorf("%w: %s already exists", ErrPrecondition, p)
		case cond.IfMatch != "" && !exists:
			return "", fmt.Errorf("%w: %s no longer exists", ErrPrecondition, p)
		case cond.IfMatch != "" && ETag(cur) != cond.IfMatch:
			return "", fmt.Errorf("%w: %s changed since it was read", ErrPrecondition, p)
		}
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", fmt.Errorf("indexpub: replacing %s: %w", p, err)
	}
	if err := syncDir(parent); err != nil {
		return "", err
	}
	return etag, nil
}

// writeTemp copies size bytes of body into a new temporary file in dir and
// returns its name and the content's ETag.
func writeTemp(dir string, body io.Reader, size int64) (name, etag string, err error) {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", "", fmt.Errorf("indexpub: creating a temporary file in %s: %w", dir, err)
	}
	h := sha256.New()
	var n int64
	n, err = io.Copy(io.MultiWriter(f, h), io.LimitReader(body, size))
	if err == nil && n != size {
		err = fmt.Errorf("the body has %d bytes, %d expected", n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", "", fmt.Errorf("indexpub: writing %s: %w", f.Name(), err)
	}
	return f.Name(), hex.EncodeToString(h.Sum(nil)), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("indexpub: opening %s to sync it: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("indexpub: syncing %s: %w", dir, err)
	}
	return nil
}

// List implements Lister. Keys are returned in lexical order; the bucket's
// own dot files are skipped.
func (b *DirBucket) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	var out []ObjectInfo
	err := filepath.WalkDir(b.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == b.dir {
				return fs.SkipAll
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != b.dir {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(b.dir, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return err
		}
		out = append(out, ObjectInfo{Key: key, Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("indexpub: listing %s: %w", path.Join(b.dir, prefix), err)
	}
	return out, nil
}

// Delete implements Lister.
func (b *DirBucket) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := b.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("indexpub: deleting %s: %w", p, err)
	}
	return nil
}

// Head implements Header. The ETag costs a read of the file; files over
// 16 MiB get none.
func (b *DirBucket) Head(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, err
	}
	p, err := b.path(key)
	if err != nil {
		return ObjectInfo{}, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return ObjectInfo{}, fmt.Errorf("%w: %s", ErrNotExist, p)
	}
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("indexpub: reading %s: %w", p, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("indexpub: reading %s: %w", p, err)
	}
	out := ObjectInfo{Key: key, Size: info.Size(), ModTime: info.ModTime()}
	if info.Size() <= headHashMax {
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return ObjectInfo{}, fmt.Errorf("indexpub: reading %s: %w", p, err)
		}
		out.ETag = hex.EncodeToString(h.Sum(nil))
	}
	return out, nil
}

// headHashMax is the largest file whose ETag Head computes (it reads the
// file); larger ones (index blobs) get none.
const headHashMax = 16 << 20

// ETagOf implements Header: the ETag is the content's SHA-256.
func (b *DirBucket) ETagOf(body []byte) string { return ETag(body) }
