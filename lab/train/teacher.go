package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"unicode/utf8"

	"github.com/toolrag/mcp-gateway/lab/jsonl"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// TeacherRunes is where a text given to a teacher sentence encoder is cut
// (TeacherText): the encoder's cost grows with the square of the length,
// and the start of a tool document (name, title, description) carries its
// meaning.
const TeacherRunes = 600

// TeacherText is a text as the teacher embeds it: cut to TeacherRunes
// runes. Teacher vectors are looked up by this text.
func TeacherText(s string) string {
	if utf8.RuneCountInString(s) <= TeacherRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == TeacherRunes {
			return s[:i]
		}
		n++
	}
	return s
}

// ReadTeacherVectors reads a teacher's output: JSON lines {"t": text,
// "v": [numbers]} (blank lines skipped). A malformed line is an error that
// names it.
func ReadTeacherVectors(r io.Reader) (texts []string, vecs [][]float32, err error) {
	err = jsonl.Read(r, func(_ int, raw []byte) error {
		var row struct {
			T *string   `json:"t"`
			V []float32 `json:"v"`
		}
		if err := json.Unmarshal(raw, &row); err != nil {
			return err
		}
		if row.T == nil || len(row.V) == 0 {
			return errors.New(`want {"t": text, "v": [numbers]}`)
		}
		texts = append(texts, *row.T)
		vecs = append(vecs, row.V)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("train: teacher vectors: %w", err)
	}
	return texts, vecs, nil
}

// loadTeacher reads the teacher's vectors and attaches them, at unit
// length, to the training queries and tool documents whose text they
// embed.
func (tr *trainer) loadTeacher(path string, docs []string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("train: teacher vectors: %w", err)
	}
	texts, vecs, err := ReadTeacherVectors(f)
	f.Close()
	if err != nil {
		return err
	}
	byText := make(map[string][]float32, len(texts))
	for i, v := range vecs {
		if !slices.ContainsFunc(v, func(x float32) bool { return x != 0 }) {
			continue // a zero vector has no direction: left out
		}
		vindex.Normalize(v)
		byText[texts[i]] = v
	}
	tr.qTeach = make([][]float32, len(tr.pairs))
	nq, nd := 0, 0
	for i, p := range tr.pairs {
		if v := byText[TeacherText(p.Query)]; v != nil {
			tr.qTeach[i] = v
			nq++
		}
	}
	tr.dTeach = make([][]float32, len(docs))
	for i, d := range docs {
		if v := byText[TeacherText(d)]; v != nil {
			tr.dTeach[i] = v
			nd++
		}
	}
	tr.logf("teacher: vectors for %d of %d queries and %d of %d documents", nq, len(tr.pairs), nd, len(docs))
	return nil
}

// teacherTarget writes into target the soft target of one query over the
// batch's documents: (1−w)·one-hot(pos) + w·softmax(teacher cosines / T)
// over the unmasked documents. It reports false (target untouched) when
// the query or a document has no teacher vector.
func (tr *trainer) teacherTarget(q []float32, docTools []int32, row []float32, pos int, target []float32) bool {
	if q == nil {
		return false
	}
	invT := 1 / tr.opts.TeacherTemperature
	maxS := math.Inf(-1)
	for j, ti := range docTools {
		if math.IsInf(float64(row[j]), -1) {
			continue
		}
		d := tr.dTeach[ti]
		if d == nil {
			return false
		}
		s := float64(dot(q, d)) * invT
		target[j] = float32(s)
		maxS = max(maxS, s)
	}
	var z float64
	for j := range docTools {
		if math.IsInf(float64(row[j]), -1) {
			target[j] = 0
			continue
		}
		e := math.Exp(float64(target[j]) - maxS)
		target[j] = float32(e)
		z += e
	}
	w := float32(tr.opts.TeacherWeight)
	for j := range target {
		target[j] = w * target[j] / float32(z)
	}
	target[pos] += 1 - w
	return true
}

// softTargetGrad is softmaxGrad against a target distribution: it writes
// scale·(softmax − target) into grad and returns −Σ target·log softmax.
func softTargetGrad(logits, target, grad []float32, scale float32) float64 {
	logZ := logSumExp(logits)
	var loss float64
	for j, s := range logits {
		if math.IsInf(float64(s), -1) {
			grad[j] = 0
			continue
		}
		lp := float64(s) - logZ
		grad[j] = (float32(math.Exp(lp)) - target[j]) * scale
		if target[j] > 0 {
			loss -= float64(target[j]) * lp
		}
	}
	return loss
}
