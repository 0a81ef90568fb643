package awsrt

import (
	"context"
	"errors"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket/s3test"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// The timed bucket adds up the bytes of reads with a body (a publish, not
// a 304 or a missing pointer) and the time of every read.
func TestTimedBucket(t *testing.T) {
	ctx := context.Background()
	srv := s3test.New(t, testBucket)
	raw := s3bucket.New(srv.Client, testBucket)
	wb := &timedBucket{Bucket: raw}
	l := indexpub.NewLoader(wb, "index/")
	if _, _, _, err := l.Refresh(ctx); !errors.Is(err, indexpub.ErrNotExist) || wb.getBytes.Load() != 0 || wb.getNanos.Load() == 0 {
		t.Fatalf("nothing published: %v, %d bytes in %dns", err, wb.getBytes.Load(), wb.getNanos.Load())
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
		changed bool
	}{
		{"first load", false, true},
		{"unchanged pointer (304)", false, false},
		{"new publish", true, true},
		{"unchanged again", false, false},
	}
	for i, tc := range tests {
		if tc.publish {
			publish(float32(i) / 10)
		}
		before := wb.getBytes.Load()
		_, _, changed, err := l.Refresh(ctx)
		if read := wb.getBytes.Load() - before; err != nil || changed != tc.changed || (read > 0) != tc.changed {
			t.Fatalf("%s: changed %v err %v, %d bytes read; want changed %v", tc.name, changed, err, read, tc.changed)
		}
	}
}
