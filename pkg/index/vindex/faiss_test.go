package vindex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// faissPython returns a Python interpreter that can import faiss and numpy:
// $TOOLRAG_FAISS_PYTHON or /usr/bin/python3 (Debian's python3-faiss only
// installs for the system interpreter).
func faissPython(t testing.TB) string {
	t.Helper()
	py := os.Getenv("TOOLRAG_FAISS_PYTHON")
	if py == "" {
		py = "/usr/bin/python3"
	}
	if out, err := exec.Command(py, "-c", "import faiss, numpy").CombinedOutput(); err != nil {
		t.Logf("%s cannot import faiss: %v\n%s", py, err, out)
		testenv.Missing(t, "python3-faiss (apt-get install python3-faiss; used through "+py+")")
	}
	return py
}

// runPython runs script with args in dir and returns its standard output.
func runPython(t testing.TB, py, dir, script string, args ...string) []byte {
	t.Helper()
	path := filepath.Join(dir, "script.py")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, append([]string{path}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python %s: %v\n%s", filepath.Base(path), err, stderr.String())
	}
	return out
}

func writeFloats(t testing.TB, path string, rows [][]float32) {
	t.Helper()
	var b []byte
	for _, r := range rows {
		b = append(b, f32bytes(r)...)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type faissResult struct {
	Type   string      `json:"type"`
	NTotal int         `json:"ntotal"`
	IDs    [][]int64   `json:"ids"`
	Scores [][]float32 `json:"scores"`
}

func (r faissResult) hits(q int) []Hit {
	var h []Hit
	for i, id := range r.IDs[q] {
		if id != NoID {
			h = append(h, Hit{id, r.Scores[q][i]})
		}
	}
	return h
}

const faissSearchScript = `
import json, sys, faiss, numpy as np
index_path, query_path, k, rewrite_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
ix = faiss.read_index(index_path)
q = np.fromfile(query_path, dtype='<f4').reshape(-1, ix.d)
ids, scores = [], []
for row in q:  # single-query searches, like the gateway
    D, I = ix.search(row.reshape(1, -1), k)
    ids.append(I[0].tolist()); scores.append(D[0].tolist())
faiss.write_index(ix, rewrite_path)
print(json.dumps({"type": type(ix).__name__, "ntotal": ix.ntotal, "ids": ids, "scores": scores}))
`

// TestFaissReadsGoIndex: an index written by WriteTo loads in faiss, returns
// the same ids in the same order with scores within 1e-5, and faiss writes
// it back byte for byte.
func TestFaissReadsGoIndex(t *testing.T) {
	py := faissPython(t)
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(42, 43))
	const dim, k = 96, 10
	ix := New(dim)
	for i := range 800 {
		if err := ix.Upsert(ToolKey(fmt.Sprintf("srv%d__tool_%d", i%9, i)), randUnit(r, dim)); err != nil {
			t.Fatal(err)
		}
	}
	ids := ix.IDs()
	ix.Delete(ids[3], ids[100], ids[799])
	ix.Upsert(ids[5], randUnit(r, dim)) // replace in place
	var queries [][]float32
	for range 25 {
		queries = append(queries, randUnit(r, dim))
	}
	// One query equal to a stored vector: its score must be ~1.
	self, _ := ix.Vector(ids[7])
	queries = append(queries, self)

	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	idxPath := filepath.Join(dir, "go.faiss")
	os.WriteFile(idxPath, buf.Bytes(), 0o644)
	writeFloats(t, filepath.Join(dir, "q.f32"), queries)
	out := runPython(t, py, dir, faissSearchScript, idxPath, filepath.Join(dir, "q.f32"), fmt.Sprint(k), filepath.Join(dir, "rewritten.faiss"))
	var res faissResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("decoding python output %q: %v", out, err)
	}
	if res.Type != "IndexIDMap" || res.NTotal != ix.Len() {
		t.Fatalf("faiss loaded a %s with %d vectors, want IndexIDMap with %d", res.Type, res.NTotal, ix.Len())
	}
	for i, q := range queries {
		sameRanking(t, ix.Search(q, k, nil), res.hits(i), 1e-5)
	}
	if last := res.hits(len(queries) - 1); last[0].ID != ids[7] || last[0].Score < 0.9999 {
		t.Fatalf("self query: faiss best hit %v, want id %d with score 1", last[0], ids[7])
	}
	rewritten, err := os.ReadFile(filepath.Join(dir, "rewritten.faiss"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rewritten, buf.Bytes()) {
		t.Fatalf("faiss re-serialised the Go index differently (%d vs %d bytes)", len(rewritten), buf.Len())
	}
}

const faissBuildScript = `
import json, faiss, numpy as np
rng = np.random.default_rng(7)
d, n, k = 64, 700, 10
x = rng.standard_normal((n, d)).astype('float32'); x /= np.linalg.norm(x, axis=1, keepdims=True)
ids = rng.integers(0, 2**63 - 1, size=n, dtype=np.int64)
q = rng.standard_normal((20, d)).astype('float32'); q /= np.linalg.norm(q, axis=1, keepdims=True)
q.tofile('q.f32')
out = {}
def record(name, ix):
    faiss.write_index(ix, name + '.faiss')
    I, D = [], []
    for row in q:
        Dq, Iq = ix.search(row.reshape(1, -1), k)
        I.append(Iq[0].tolist()); D.append(Dq[0].tolist())
    out[name] = {"type": type(ix).__name__, "ntotal": ix.ntotal, "ids": I, "scores": D}
m = faiss.IndexIDMap(faiss.IndexFlatIP(d)); m.add_with_ids(x, ids)
m.remove_ids(ids[10:20].copy())
record('idmap', m)
m2 = faiss.IndexIDMap2(faiss.IndexFlatIP(d)); m2.add_with_ids(x, ids)
m2.remove_ids(ids[::7].copy())
record('idmap2', m2)
f = faiss.IndexFlatIP(d); f.add(x)
record('flat', f)
print(json.dumps(out))
`

// TestGoReadsFaissIndex: IndexIDMap, IndexIDMap2 and bare IndexFlatIP files
// written by faiss load here and give faiss's results.
func TestGoReadsFaissIndex(t *testing.T) {
	py := faissPython(t)
	dir := t.TempDir()
	out := runPython(t, py, dir, faissBuildScript)
	var res map[string]faissResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("decoding python output: %v", err)
	}
	qb, err := os.ReadFile(filepath.Join(dir, "q.f32"))
	if err != nil {
		t.Fatal(err)
	}
	qs, err := readArray[float32](&bytesSource{b: qb}, len(qb)/4, 4, "queries")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"idmap", "idmap2", "flat"} {
		t.Run(name, func(t *testing.T) {
			want, ok := res[name]
			if !ok {
				t.Fatalf("python wrote no %s result", name)
			}
			b, err := os.ReadFile(filepath.Join(dir, name+".faiss"))
			if err != nil {
				t.Fatal(err)
			}
			ix, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode of faiss %s: %v", want.Type, err)
			}
			f, _ := os.Open(filepath.Join(dir, name+".faiss"))
			defer f.Close()
			ix2, err := Read(f)
			if err != nil {
				t.Fatalf("Read of faiss %s: %v", want.Type, err)
			}
			if ix.Len() != want.NTotal || ix2.Len() != want.NTotal || ix.Dim() != 64 {
				t.Fatalf("loaded %d/%d vectors of dim %d, faiss has %d", ix.Len(), ix2.Len(), ix.Dim(), want.NTotal)
			}
			for i := range want.IDs {
				q := qs[i*64 : (i+1)*64]
				sameRanking(t, ix.Search(q, 10, nil), want.hits(i), 1e-5)
				sameRanking(t, ix2.Search(q, 10, nil), want.hits(i), 1e-5)
			}
		})
	}
}
