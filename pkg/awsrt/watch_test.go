package awsrt

import (
	"context"
	"errors"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/s3bucket"
	"github.com/toolrag/mcp-gateway/pkg/s3bucket/s3test"
	"github.com/toolrag/mcp-gateway/pkg/vindex"
)

// The generation counts pointer reads with a body: a publish, not a 304
// or a missing pointer.
func TestWatchedBucketGeneration(t *testing.T) {
	ctx := context.Background()
	srv := s3test.New(t, testBucket)
	raw := s3bucket.New(srv.Client, testBucket)
	wb := newWatchedBucket(raw, "index/")
	l := indexpub.NewLoader(wb, "index/")
	if _, _, _, err := l.Refresh(ctx); !errors.Is(err, indexpub.ErrNotExist) || wb.generation() != 0 {
		t.Fatalf("nothing published: %v, generation %d", err, wb.generation())
	}
	publish := func(v float32) {
		ix := vindex.New(2)
		meta := vindex.Meta{ModelID: "m"}
		k, _ := meta.Assign("s__t")
		_ = ix.Upsert(k, []float32{v, 1 - v})
		if _, err := indexpub.NewPublisher(raw, "index/").Publish(ctx, ix, meta); err != nil {
			t.Fatal(err)
		}
	}
	publish(1)
	tests := []struct {
		name    string
		publish bool
		gen     int64
		changed bool
	}{
		{"first load", false, 1, true},
		{"unchanged pointer (304)", false, 1, false},
		{"new publish", true, 2, true},
		{"unchanged again", false, 2, false},
	}
	for i, tc := range tests {
		if tc.publish {
			publish(float32(i) / 10)
		}
		_, _, changed, err := l.Refresh(ctx)
		if err != nil || changed != tc.changed || wb.generation() != tc.gen {
			t.Fatalf("%s: changed %v err %v generation %d, want %v and %d", tc.name, changed, err, wb.generation(), tc.changed, tc.gen)
		}
	}
	if wb.getBytes.Load() == 0 || wb.getNanos.Load() == 0 {
		t.Fatal("reads not accounted")
	}
}
