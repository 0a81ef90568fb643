package provision

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// FuzzParseManifest checks that any input either parses into a manifest
// that satisfies the documented invariants or yields located Errors, and
// never panics. Seeds: testdata/fuzz/FuzzParseManifest plus the golden
// manifests.
func FuzzParseManifest(f *testing.F) {
	matches, _ := filepath.Glob(filepath.Join("testdata", "golden", "*", "in", "servers", "*", ManifestName))
	for _, p := range matches {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "servers/x/manifest.yaml"
		m, err := ParseManifest(file, data)
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v is %T, want non-empty Errors", err, err)
			}
			for _, e := range es {
				if e.File != file || e.Line < 0 || e.Msg == "" {
					t.Fatalf("badly located error %#v", e)
				}
				if !strings.HasPrefix(e.Error(), file) {
					t.Fatalf("error %q does not start with the file", e.Error())
				}
			}
			if m != nil {
				t.Fatal("both a manifest and an error")
			}
			return
		}
		if err := catalog.ValidServerID(m.ID); err != nil {
			t.Fatalf("accepted bad id: %v", err)
		}
		switch m.Kind {
		case KindRemote:
			if m.URL == "" || (m.Transport != TransportSSE && m.Transport != TransportStreamableHTTP) {
				t.Fatalf("remote accepted without url/transport: %+v", m)
			}
		case KindDocker:
			if m.Port < 1 || m.Port > 65535 || !strings.HasPrefix(m.Path, "/") || m.Build == "" {
				t.Fatalf("docker accepted with port %d path %q build %q", m.Port, m.Path, m.Build)
			}
		case KindStdio:
			if len(m.Command) == 0 || m.Command[0] == "" || m.Transport != TransportStdio {
				t.Fatalf("stdio accepted without command: %+v", m)
			}
		default:
			t.Fatalf("accepted unknown kind %q", m.Kind)
		}
		// Valid manifests render without error.
		if _, err := Render([]*Manifest{m}, false); err != nil && !strings.Contains(err.Error(), "host name") {
			t.Fatalf("Render: %v", err)
		}
	})
}
