package train

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSoftTargetGrad checks the soft-target loss against the one-hot one
// it generalises, and its gradient against finite differences.
func TestSoftTargetGrad(t *testing.T) {
	inf := float32(math.Inf(-1))
	logits := []float32{2, 0.5, inf, -1}
	oneHot := []float32{0, 1, 0, 0}
	g1, g2 := make([]float32, 4), make([]float32, 4)
	l1 := softmaxGrad(logits, 1, g1, 1, 1)
	l2 := softTargetGrad(logits, oneHot, g2, 1)
	if math.Abs(l1-l2) > 1e-6 {
		t.Errorf("one-hot target: loss %v, softmaxGrad %v", l2, l1)
	}
	for j := range g1 {
		if math.Abs(float64(g1[j]-g2[j])) > 1e-6 {
			t.Errorf("one-hot target: grad[%d] %v, softmaxGrad %v", j, g2[j], g1[j])
		}
	}
	soft := []float32{0.2, 0.7, 0, 0.1}
	g := make([]float32, 4)
	base := softTargetGrad(logits, soft, g, 1)
	for _, j := range []int{0, 1, 3} {
		x := append([]float32(nil), logits...)
		x[j] += 1e-3
		num := (softTargetGrad(x, soft, make([]float32, 4), 1) - base) / 1e-3
		if math.Abs(num-float64(g[j])) > 1e-3 {
			t.Errorf("grad[%d] = %v, finite difference %v", j, g[j], num)
		}
	}
	if g[2] != 0 {
		t.Errorf("masked entry has gradient %v", g[2])
	}
}

// TestTeacherTarget checks the mixed target: a distribution over the
// unmasked documents, the positive's share at least 1−w, the teacher's
// nearer document above its farther one, and no target when a vector is
// missing.
func TestTeacherTarget(t *testing.T) {
	tr := &trainer{opts: Options{TeacherWeight: 0.5, TeacherTemperature: 0.1}}
	tr.dTeach = [][]float32{{1, 0}, {0.8, 0.6}, {0, 1}, nil}
	q := []float32{1, 0}
	row := []float32{1, 1, float32(math.Inf(-1)), 1}
	target := make([]float32, 3)
	if !tr.teacherTarget(q, []int32{0, 1, 2}, row[:3], 1, target) {
		t.Fatal("no target")
	}
	sum := target[0] + target[1] + target[2]
	if math.Abs(float64(sum)-1) > 1e-6 || target[2] != 0 || target[1] < 0.5 || target[0] <= 0 {
		t.Errorf("target %v", target)
	}
	if tr.teacherTarget(q, []int32{0, 3}, []float32{1, 1}, 0, make([]float32, 2)) {
		t.Error("a document without a teacher vector: want no target")
	}
	if tr.teacherTarget(nil, []int32{0}, []float32{1}, 0, make([]float32, 1)) {
		t.Error("a query without a teacher vector: want no target")
	}
}

func TestLoadTeacher(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", TeacherRunes+5)
	path := filepath.Join(dir, "v.jsonl")
	os.WriteFile(path, []byte(`{"t":"email my boss","v":[3,4]}`+"\n"+`{"t":"`+long[:TeacherRunes]+`","v":[0,2]}`+"\n"), 0o644)
	tr := &trainer{pairs: []Pair{{Query: "email my boss"}, {Query: "unknown"}}, logf: t.Logf}
	if err := tr.loadTeacher(path, []string{long, "other"}); err != nil {
		t.Fatal(err)
	}
	if v := tr.qTeach[0]; len(v) != 2 || math.Abs(float64(v[0])-0.6) > 1e-6 {
		t.Errorf("query vector %v, want the unit vector (0.6, 0.8)", v)
	}
	if tr.qTeach[1] != nil || tr.dTeach[1] != nil || tr.dTeach[0] == nil {
		t.Errorf("matched %v / %v", tr.qTeach, tr.dTeach)
	}
	os.WriteFile(path, []byte("{not json\n"), 0o644)
	if err := tr.loadTeacher(path, nil); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("corrupt file: err = %v", err)
	}
}

func TestTeacherText(t *testing.T) {
	short := "get the weather"
	if TeacherText(short) != short {
		t.Error("a short text must stay as it is")
	}
	got := TeacherText(strings.Repeat("é", TeacherRunes+10))
	if n := utf8.RuneCountInString(got); n != TeacherRunes || !utf8.ValidString(got) {
		t.Errorf("cut to %d runes (valid UTF-8: %v), want %d", n, utf8.ValidString(got), TeacherRunes)
	}
}

func TestReadTeacherVectors(t *testing.T) {
	in := `{"t":"send an email","v":[0.5,-1]}` + "\n\n" + `{"t":"x","v":[1,2]}` + "\n"
	ts, vs, err := ReadTeacherVectors(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ts, []string{"send an email", "x"}) || len(vs) != 2 || vs[0][1] != -1 {
		t.Errorf("read %q %v", ts, vs)
	}
	for _, bad := range []string{`{"t":"a","v":[1]}` + "\nnot json\n", `{"v":[1]}`, `{"t":"a","v":[]}`} {
		if _, _, err := ReadTeacherVectors(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%q: err = %v, want one naming the line", bad, err)
		}
	}
}
