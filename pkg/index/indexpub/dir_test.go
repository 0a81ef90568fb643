package indexpub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestDirBucketGetPut(t *testing.T) {
	ctx := context.Background()
	b := NewDirBucket(filepath.Join(t.TempDir(), "bucket")) // created on first Put
	if _, _, err := b.Get(ctx, "a/b.json", ""); !errors.Is(err, ErrNotExist) {
		t.Fatalf("Get of a missing key: %v, want ErrNotExist", err)
	}
	etag, err := b.Put(ctx, "a/b.json", []byte("one"), Cond{})
	if err != nil || etag != ETag([]byte("one")) {
		t.Fatalf("Put = %q, %v", etag, err)
	}
	body, got, err := b.Get(ctx, "a/b.json", "")
	if err != nil || string(body) != "one" || got != etag {
		t.Fatalf("Get = %q %q %v", body, got, err)
	}
	if _, got, err := b.Get(ctx, "a/b.json", etag); !errors.Is(err, ErrNotModified) || got != etag {
		t.Fatalf("Get with a matching If-None-Match: %q %v, want ErrNotModified", got, err)
	}
	if body, _, err := b.Get(ctx, "a/b.json", "stale"); err != nil || string(body) != "one" {
		t.Fatalf("Get with another If-None-Match: %q %v", body, err)
	}
}

func TestDirBucketConditions(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		exists  bool
		cond    func(etag string) Cond
		wantErr error
	}{
		{"unconditional over existing", true, func(string) Cond { return Cond{} }, nil},
		{"unconditional create", false, func(string) Cond { return Cond{} }, nil},
		{"create when missing", false, func(string) Cond { return Cond{IfNoneMatch: true} }, nil},
		{"create when present", true, func(string) Cond { return Cond{IfNoneMatch: true} }, ErrPrecondition},
		{"if-match current", true, func(e string) Cond { return Cond{IfMatch: e} }, nil},
		{"if-match stale", true, func(string) Cond { return Cond{IfMatch: ETag([]byte("other"))} }, ErrPrecondition},
		{"if-match missing", false, func(string) Cond { return Cond{IfMatch: ETag([]byte("old"))} }, ErrPrecondition},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewDirBucket(t.TempDir())
			var etag string
			if tc.exists {
				etag, _ = b.Put(ctx, "k", []byte("old"), Cond{})
			}
			_, err := b.Put(ctx, "k", []byte("new"), tc.cond(etag))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Put: %v, want %v", err, tc.wantErr)
			}
			body, _, gerr := b.Get(ctx, "k", "")
			switch {
			case tc.wantErr == nil && string(body) != "new":
				t.Fatalf("after a successful Put the object is %q (%v)", body, gerr)
			case tc.wantErr != nil && tc.exists && string(body) != "old":
				t.Fatalf("a failed Put changed the object to %q", body)
			case tc.wantErr != nil && !tc.exists && !errors.Is(gerr, ErrNotExist):
				t.Fatalf("a failed Put created the object: %q %v", body, gerr)
			}
			assertNoTempFiles(t, b.Dir())
		})
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestDirBucketInvalidKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := NewDirBucket(filepath.Join(dir, "b"))
	for _, key := range []string{"", ".", "/abs", "../escape", "a/../../b", "a//b", "a/", ".indexpub.lock", "x/.tmp-1", `a\..\..\b`} {
		if _, err := b.Put(ctx, key, []byte("x"), Cond{}); err == nil {
			t.Errorf("Put(%q) succeeded", key)
		}
		if _, _, err := b.Get(ctx, key, ""); err == nil {
			t.Errorf("Get(%q) succeeded", key)
		}
	}
	// Nothing may have been written outside the bucket.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "b" {
			t.Errorf("file written outside the bucket: %s", e.Name())
		}
	}
}

func TestDirBucketListDelete(t *testing.T) {
	ctx := context.Background()
	b := NewDirBucket(t.TempDir())
	if objs, err := b.List(ctx, ""); err != nil || len(objs) != 0 {
		t.Fatalf("List of an empty bucket = %v, %v", objs, err)
	}
	if objs, err := NewDirBucket(filepath.Join(b.Dir(), "missing")).List(ctx, ""); err != nil || len(objs) != 0 {
		t.Fatalf("List of a missing folder = %v, %v", objs, err)
	}
	for _, k := range []string{"p/indexes/a.faiss", "p/indexes/a.json", "p/current.json", "q/x"} {
		b.Put(ctx, k, []byte(k), Cond{})
	}
	objs, err := b.List(ctx, "p/indexes/")
	if err != nil || len(objs) != 2 || objs[0].Key != "p/indexes/a.faiss" || objs[1].Size != int64(len("p/indexes/a.json")) {
		t.Fatalf("List = %+v, %v", objs, err)
	}
	all, _ := b.List(ctx, "")
	if len(all) != 4 { // the lock file is not an object
		t.Fatalf("List all = %+v", all)
	}
	if err := b.Delete(ctx, "p/indexes/a.faiss"); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "p/indexes/a.faiss"); err != nil {
		t.Fatalf("deleting a missing object: %v", err)
	}
	if _, _, err := b.Get(ctx, "p/indexes/a.faiss", ""); !errors.Is(err, ErrNotExist) {
		t.Fatalf("Get after Delete: %v", err)
	}
}

func TestDirBucketCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := NewDirBucket(t.TempDir())
	if _, err := b.Put(ctx, "k", []byte("x"), Cond{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put: %v", err)
	}
	if _, _, err := b.Get(ctx, "k", ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get: %v", err)
	}
}

// increment adds one to the counter stored under key with a read-modify-write
// loop on If-Match, the pattern Publisher uses for the pointer.
func increment(ctx context.Context, b Bucket, key string) error {
	for {
		body, etag, err := b.Get(ctx, key, "")
		cond := Cond{IfMatch: etag}
		n := 0
		switch {
		case errors.Is(err, ErrNotExist):
			cond = Cond{IfNoneMatch: true}
		case err != nil:
			return err
		default:
			n, err = strconv.Atoi(string(body))
			if err != nil {
				return err
			}
		}
		_, err = b.Put(ctx, key, []byte(strconv.Itoa(n+1)), cond)
		if errors.Is(err, ErrPrecondition) {
			continue
		}
		return err
	}
}

const helperEnv = "INDEXPUB_TEST_HELPER_DIR"

// TestDirBucketHelperProcess is run as a child process by
// TestDirBucketAcrossProcesses.
func TestDirBucketHelperProcess(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("helper process for TestDirBucketAcrossProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv("INDEXPUB_TEST_HELPER_N"))
	b := NewDirBucket(dir)
	for range n {
		if err := increment(context.Background(), b, "counter"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDirBucketAcrossProcesses: conditional puts from two processes and
// from goroutines of this one never lose an update.
func TestDirBucketAcrossProcesses(t *testing.T) {
	const perWorker = 60
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestDirBucketHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), helperEnv+"="+dir, fmt.Sprintf("INDEXPUB_TEST_HELPER_N=%d", perWorker))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("helper process: %v\n%s", err, out)
			}
		}()
	}
	b := NewDirBucket(dir)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perWorker {
				if err := increment(context.Background(), b, "counter"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	body, _, err := b.Get(context.Background(), "counter", "")
	if err != nil || string(body) != strconv.Itoa(4*perWorker) {
		t.Fatalf("counter = %q (%v), want %d", body, err, 4*perWorker)
	}
	assertNoTempFiles(t, dir)
}
