package doclinks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryLinksResolve checks every Markdown file of the repository.
func TestRepositoryLinksResolve(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d Markdown files under %s: %v", len(files), root, files)
	}
	problems, err := Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("broken link: %s", p)
	}
}

// TestDocSizes keeps the two docs that grow with every measurement short:
// each states the current design and figures, and history goes to
// lab/notes/. The limits are issue 25's.
func TestDocSizes(t *testing.T) {
	for _, tc := range []struct {
		file     string
		maxLines int
	}{
		{"docs/benchmarks.md", 300},
		{"docs/retrieval.md", 400},
	} {
		data, err := os.ReadFile(filepath.Join("../..", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n > tc.maxLines {
			t.Errorf("%s has %d lines, the limit is %d: move history to lab/notes/", tc.file, n, tc.maxLines)
		}
	}
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Observed call sequences (opt-in)", "observed-call-sequences-opt-in"},
		{"The `builtin` embedder (`pkg/embed`)", "the-builtin-embedder-pkgembed"},
		{"Sizing", "sizing"},
		{"Trust model of `servers/<id>`", "trust-model-of-serversid"},
		{"The rare EOF: unused connections closed after ReadHeaderTimeout", "the-rare-eof-unused-connections-closed-after-readheadertimeout"},
		{"Link [to docs](docs/x.md) here", "link-to-docs-here"},
		{"2026-07-28 against 2025-11-25", "2026-07-28-against-2025-11-25"},
	} {
		if got := Slug(tc.in); got != tc.want {
			t.Errorf("Slug(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCheckFindsBrokenLinks builds a small tree with good and bad links and
// checks that exactly the bad ones are reported.
func TestCheckFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", strings.Join([]string{
		"# Top",
		"[ok](docs/a.md) [ok anchor](docs/a.md#second-part) [dir](docs)",
		"[missing](docs/nope.md) [bad anchor](docs/a.md#nowhere)",
		"![img](docs/img/x.png) [web](https://example.com) [self](#top) [self bad](#gone)",
		"`[in code](docs/nope2.md)`",
		"```",
		"[in fence](docs/nope3.md)",
		"```",
		"[ref]: docs/nope4.md",
		"[up](../outside.md)",
	}, "\n"))
	write("docs/a.md", "# A\n\n## Second part\n\n<a id=\"custom\"></a>\n[back](../README.md#top) [custom](#custom)\n")
	write("docs/img/y.png", "")
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Target)
	}
	want := []string{"docs/nope.md", "docs/a.md#nowhere", "docs/img/x.png", "#gone", "docs/nope4.md", "../outside.md"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("problems = %q, want %q", got, want)
	}
}
