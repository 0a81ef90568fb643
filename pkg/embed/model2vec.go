package embed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/toolrag/mcp-gateway/pkg/aws/awsclient"
	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// StaticModel is a loaded static embedding model (*model2vec.Model).
type StaticModel interface {
	Embed(text string) []float32
	Dim() int
	ID() string
}

// S3GetObjectAPI is the part of *s3.Client the model2vec loader uses.
type S3GetObjectAPI interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// Model2VecConfig configures a static (Model2Vec) model.
type Model2VecConfig struct {
	// Path is a model directory (model.safetensors, tokenizer.json,
	// config.json) or s3://bucket/prefix holding the same files.
	Path string
	// Load loads a model directory (default: model2vec.LoadDir).
	Load func(dir string) (StaticModel, error)
	// S3 fetches s3:// paths (default: an S3 client from the SDK's default
	// configuration).
	S3 S3GetObjectAPI
}

// model2vecFiles are fetched from S3; config.json may be absent.
var model2vecFiles = []struct {
	name     string
	optional bool
}{
	{model2vec.SafetensorsFile, false},
	{model2vec.TokenizerFile, false},
	{model2vec.ConfigFile, true},
}

// NewModel2Vec loads the model at cfg.Path (downloading s3:// paths into a
// temporary directory, removed once the model is in memory).
func NewModel2Vec(ctx context.Context, cfg Model2VecConfig) (Embedder, error) {
	if cfg.Path == "" {
		return nil, errors.New("embed: the model2vec embedder needs a path (TOOL_RAG_MODEL2VEC_PATH)")
	}
	load := cfg.Load
	if load == nil {
		load = func(dir string) (StaticModel, error) {
			m, err := model2vec.LoadDir(dir)
			if err != nil {
				return nil, err
			}
			return m, nil
		}
	}
	dir := cfg.Path
	if strings.HasPrefix(cfg.Path, "s3://") {
		tmp, err := os.MkdirTemp("", "model2vec-*")
		if err != nil {
			return nil, fmt.Errorf("embed: creating a temporary directory for %s: %w", cfg.Path, err)
		}
		defer os.RemoveAll(tmp)
		if err := downloadModel(ctx, cfg.S3, cfg.Path, tmp); err != nil {
			return nil, err
		}
		dir = tmp
	}
	m, err := load(dir)
	if err != nil {
		return nil, fmt.Errorf("embed: loading the model2vec model from %s: %w", cfg.Path, err)
	}
	if m.Dim() <= 0 {
		return nil, fmt.Errorf("embed: the model2vec model at %s has dimension %d", cfg.Path, m.Dim())
	}
	return FromStatic(m), nil
}

// FromStatic adapts an already loaded static model. Its vectors are
// re-normalised to unit length; ModelID is m.ID(), prefixed with
// "model2vec:" unless it already is.
func FromStatic(m StaticModel) Embedder {
	s := &staticEmbedder{m: m}
	s.inProcess = s.embed
	return s
}

type staticEmbedder struct {
	inProcess
	m StaticModel
}

func (s *staticEmbedder) Dim() int { return s.m.Dim() }
func (s *staticEmbedder) ModelID() string {
	if id := s.m.ID(); strings.HasPrefix(id, "model2vec:") {
		return id
	}
	return "model2vec:" + s.m.ID()
}

func (s *staticEmbedder) embed(text string) []float32 {
	v := s.m.Embed(text)
	if len(v) != s.m.Dim() {
		// Never expected from model2vec; keep the Embedder contract anyway.
		w := make([]float32, s.m.Dim())
		copy(w, v)
		v = w
	}
	vindex.Normalize(v)
	return v
}

// parseS3URI splits s3://bucket/prefix.
func parseS3URI(uri string) (bucket, prefix string, err error) {
	rest := strings.TrimPrefix(uri, "s3://")
	bucket, prefix, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("embed: %q has no bucket (want s3://bucket/prefix)", uri)
	}
	prefix = strings.Trim(prefix, "/")
	return bucket, prefix, nil
}

func downloadModel(ctx context.Context, client S3GetObjectAPI, uri, dir string) error {
	bucket, prefix, err := parseS3URI(uri)
	if err != nil {
		return err
	}
	if client == nil {
		c, err := awsclient.S3(ctx, "")
		if err != nil {
			return fmt.Errorf("embed: an S3 client to read %s: %w", uri, err)
		}
		client = c
	}
	for _, f := range model2vecFiles {
		key := f.name
		if prefix != "" {
			key = prefix + "/" + f.name
		}
		out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			var nsk *types.NoSuchKey
			if f.optional && errors.As(err, &nsk) {
				continue
			}
			return fmt.Errorf("embed: downloading s3://%s/%s: %w", bucket, key, err)
		}
		err = writeFile(filepath.Join(dir, f.name), out.Body)
		out.Body.Close()
		if err != nil {
			return fmt.Errorf("embed: downloading s3://%s/%s: %w", bucket, key, err)
		}
	}
	return nil
}

func writeFile(path string, r io.Reader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
