package embed

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

// writeTinyModel saves a real Model2Vec model directory whose vocabulary
// puts weather words on one axis and email words on another.
func writeTinyModel(t *testing.T, dir string) *model2vec.Model {
	t.Helper()
	vocab := []string{"[UNK]", "weather", "forecast", "rain", "email", "send", "message", "##s"}
	rows := [][]float32{
		{0, 0, 0, 0},
		{1, 0.1, 0, 0}, {0.9, 0.2, 0, 0}, {0.8, 0, 0.2, 0},
		{0, 0, 1, 0.1}, {0.1, 0, 0.9, 0.2}, {0, 0.1, 0.8, 0},
		{0, 0, 0, 0.05},
	}
	var emb []float32
	for _, r := range rows {
		emb = append(emb, r...)
	}
	tj, err := model2vec.WordPieceJSON(vocab, "[UNK]")
	if err != nil {
		t.Fatal(err)
	}
	m, err := model2vec.New(model2vec.Parts{Embeddings: emb, Rows: len(rows), Dim: 4, Tokenizer: tj})
	if err != nil {
		t.Fatal(err)
	}
	if err := model2vec.Save(dir, m, model2vec.F32); err != nil {
		t.Fatal(err)
	}
	return m
}

func checkTinyModel(t *testing.T, e Embedder) {
	t.Helper()
	ctx := context.Background()
	if e.Dim() != 4 || !strings.HasPrefix(e.ModelID(), "model2vec:") {
		t.Errorf("Dim %d ModelID %q", e.Dim(), e.ModelID())
	}
	docs, err := e.EmbedDocuments(ctx, []string{"weather forecast", "send email message", "zzz"})
	if err != nil {
		t.Fatal(err)
	}
	q, err := e.EmbedQuery(ctx, "rain forecasts")
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range docs[:2] {
		if n := norm(d); math.Abs(n-1) > 1e-5 {
			t.Errorf("doc %d norm %v", i, n)
		}
	}
	if norm(docs[2]) != 0 {
		t.Errorf("text without known tokens: want the zero vector, got %v", docs[2])
	}
	if dot(q, docs[0]) <= dot(q, docs[1]) {
		t.Errorf("query about rain scores the email tool (%v) above the weather tool (%v)", dot(q, docs[1]), dot(q, docs[0]))
	}
}

func TestModel2VecLocalDir(t *testing.T) {
	dir := t.TempDir()
	m := writeTinyModel(t, dir)
	e, err := NewModel2Vec(context.Background(), Model2VecConfig{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	checkTinyModel(t, e)
	// The ID comes from the model's content: the saved copy matches.
	if want := m.ID(); e.ModelID() != want || strings.Count(want, "model2vec:") != 1 {
		t.Errorf("ModelID %q, want %q", e.ModelID(), want)
	}
}

func TestModel2VecMissingDir(t *testing.T) {
	_, err := NewModel2Vec(context.Background(), Model2VecConfig{Path: filepath.Join(t.TempDir(), "nope")})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("err = %v, want an error naming the path", err)
	}
	if _, err := NewModel2Vec(context.Background(), Model2VecConfig{}); err == nil || !strings.Contains(err.Error(), "TOOL_RAG_MODEL2VEC_PATH") {
		t.Errorf("empty path: err = %v", err)
	}
}

func TestModel2VecCustomLoader(t *testing.T) {
	var gotDir string
	_, err := NewModel2Vec(context.Background(), Model2VecConfig{Path: "/models/x", Load: func(dir string) (StaticModel, error) {
		gotDir = dir
		return nil, errors.New("bad header")
	}})
	if gotDir != "/models/x" || err == nil || !strings.Contains(err.Error(), "bad header") || !strings.Contains(err.Error(), "/models/x") {
		t.Errorf("dir %q err %v", gotDir, err)
	}
}

func newFakeS3(t *testing.T) *s3.Client {
	t.Helper()
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(srv.Close)
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	})
}

func putDir(t *testing.T, c *s3.Client, bucket, prefix, dir string, skip string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if en.Name() == skip {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, en.Name()))
		if err != nil {
			t.Fatal(err)
		}
		key := en.Name()
		if prefix != "" {
			key = prefix + "/" + key
		}
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(b)}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestModel2VecFromS3(t *testing.T) {
	dir := t.TempDir()
	writeTinyModel(t, dir)
	local, err := NewModel2Vec(context.Background(), Model2VecConfig{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, uri, prefix, skip, wantErr string
	}{
		{name: "prefix", uri: "s3://models/potion/tiny", prefix: "potion/tiny"},
		{name: "prefix with slash", uri: "s3://models/potion/tiny/", prefix: "potion/tiny"},
		{name: "bucket root", uri: "s3://models", prefix: ""},
		{name: "config.json optional", uri: "s3://models/m", prefix: "m", skip: model2vec.ConfigFile},
		{name: "tokenizer missing", uri: "s3://models/m", prefix: "m", skip: model2vec.TokenizerFile, wantErr: "s3://models/m/tokenizer.json"},
		{name: "wrong prefix", uri: "s3://models/other", prefix: "m", wantErr: "s3://models/other/model.safetensors"},
		{name: "no bucket", uri: "s3:///x", prefix: "m", wantErr: "no bucket"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeS3(t)
			putDir(t, c, "models", tc.prefix, dir, tc.skip)
			e, err := NewModel2Vec(context.Background(), Model2VecConfig{Path: tc.uri, S3: c})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkTinyModel(t, e)
			if tc.skip == "" && e.ModelID() != local.ModelID() {
				t.Errorf("ModelID from S3 %q differs from the local copy %q", e.ModelID(), local.ModelID())
			}
		})
	}
}

func TestModel2VecS3TempDirRemoved(t *testing.T) {
	dir := t.TempDir()
	writeTinyModel(t, dir)
	c := newFakeS3(t)
	putDir(t, c, "models", "m", dir, "")
	var loadedFrom string
	_, err := NewModel2Vec(context.Background(), Model2VecConfig{Path: "s3://models/m", S3: c, Load: func(d string) (StaticModel, error) {
		loadedFrom = d
		for _, f := range []string{model2vec.SafetensorsFile, model2vec.TokenizerFile, model2vec.ConfigFile} {
			if _, err := os.Stat(filepath.Join(d, f)); err != nil {
				t.Errorf("%s not downloaded: %v", f, err)
			}
		}
		return model2vec.LoadDir(d)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(loadedFrom); !os.IsNotExist(err) {
		t.Errorf("temporary model directory %s still exists (err %v)", loadedFrom, err)
	}
}

type fixedModel struct{ id string }

func (f fixedModel) Embed(string) []float32 { return []float32{3, 4} }
func (f fixedModel) Dim() int               { return 2 }
func (f fixedModel) ID() string             { return f.id }

func TestFromStatic(t *testing.T) {
	tests := []struct{ id, want string }{
		{"potion-tools-v1", "model2vec:potion-tools-v1"},
		{"model2vec:abc", "model2vec:abc"},
	}
	for _, tc := range tests {
		e := FromStatic(fixedModel{tc.id})
		if e.ModelID() != tc.want {
			t.Errorf("ModelID(%q) = %q, want %q", tc.id, e.ModelID(), tc.want)
		}
		v, err := e.EmbedQuery(context.Background(), "x")
		if err != nil || v[0] != 0.6 || v[1] != 0.8 {
			t.Errorf("EmbedQuery = %v %v, want [0.6 0.8] (normalised)", v, err)
		}
	}
}
