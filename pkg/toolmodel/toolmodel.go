// Package toolmodel ships the gateway's own tool-retrieval embedding model,
// built into the binary: a static Model2Vec model (model/model.safetensors,
// model/tokenizer.json, model/config.json) trained by pkg/train on public
// (query, tool) pairs. See docs/model.md for its provenance, recipe and
// figures; `make model` retrains it.
//
// Tools should be embedded as their gateway document (indexer.Document),
// the layout the model was trained on; queries are embedded as they are.
//
// A second, smaller table (distilled/, same tokenizer) was distilled by
// pkg/distill from a pretrained sentence encoder's vectors of the training
// text; the builtin embedder serves it next to the model (`make distilled`
// rebuilds it).
package toolmodel

import (
	"embed"
	"fmt"
	"io/fs"
	"sync"

	"github.com/toolrag/mcp-gateway/pkg/model2vec"
)

//go:embed model distilled
var files embed.FS

// loaded is one built-in model directory, parsed once.
type loaded struct {
	dir   string
	once  sync.Once
	model *model2vec.Model
	err   error
}

func (l *loaded) load() (*model2vec.Model, error) {
	l.once.Do(func() {
		sub, err := fs.Sub(files, l.dir)
		if err == nil {
			l.model, err = model2vec.LoadFS(sub)
		}
		if err != nil {
			l.err = fmt.Errorf("toolmodel: built-in %s model: %w", l.dir, err)
		}
	})
	return l.model, l.err
}

var (
	modelDir     = &loaded{dir: "model"}
	distilledDir = &loaded{dir: "distilled"}
)

// Load returns the built-in model. It is parsed once, on the first call,
// and shared: the model is read-only and safe for concurrent use.
func Load() (*model2vec.Model, error) { return modelDir.load() }

// LoadDistilled returns the built-in distilled table (128 dimensions, the
// model's tokenizer), parsed once and shared like Load's.
func LoadDistilled() (*model2vec.Model, error) { return distilledDir.load() }

// DistilledFS returns the distilled table's directory.
func DistilledFS() fs.FS {
	sub, _ := fs.Sub(files, "distilled")
	return sub
}

// FS returns the model directory (model.safetensors, tokenizer.json,
// config.json), for example to copy it next to a deployment.
func FS() fs.FS {
	sub, _ := fs.Sub(files, "model")
	return sub
}
