package provision

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkParseManifest(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "golden", "mixed", "in", "servers", "local-echo", ManifestName))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseManifest("m.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRun100 provisions 100 servers (34 stdio, 33 docker, 33 remote)
// without setup steps: load, validate, render and write the three files.
func BenchmarkRun100(b *testing.B) {
	root := b.TempDir()
	for i := range 100 {
		id := fmt.Sprintf("srv%03d", i)
		dir := filepath.Join(root, "servers", id)
		os.MkdirAll(dir, 0o755)
		var m string
		switch i % 3 {
		case 0:
			m = fmt.Sprintf("id: %s\nkind: stdio\ncommand: [node, index.js]\nenv: {A: b}\n", id)
		case 1:
			m = fmt.Sprintf("id: %s\nkind: docker\nport: %d\nenv: {K: \"${K}\"}\n", id, 9000+i)
			os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644)
		default:
			m = fmt.Sprintf("id: %s\nkind: remote\nurl: https://%s.example.com/mcp\n", id, id)
		}
		os.WriteFile(filepath.Join(dir, ManifestName), []byte(m), 0o644)
	}
	for b.Loop() {
		if err := Run(context.Background(), Options{Root: root, SkipSetup: true}); err != nil {
			b.Fatal(err)
		}
	}
}
