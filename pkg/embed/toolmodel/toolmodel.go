// Package toolmodel ships the gateway's own tool-retrieval embedding model,
// built into the binary: a static Model2Vec model (model/model.safetensors,
// model/tokenizer.json, model/config.json) trained by lab/train on public
// (query, tool) pairs. See docs/model.md for its provenance, recipe and
// figures; `make model` retrains it.
//
// Tools should be embedded as their gateway document (indexer.Document),
// the layout the model was trained on; queries are embedded as they are.
package toolmodel

import (
	"embed"
	"fmt"
	"io/fs"
	"sync"

	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

//go:embed model
var files embed.FS

var (
	once  sync.Once
	model *model2vec.Model
	err   error
)

// Load returns the built-in model. It is parsed once, on the first call,
// and shared: the model is read-only and safe for concurrent use.
func Load() (*model2vec.Model, error) {
	once.Do(func() {
		sub, e := fs.Sub(files, "model")
		if e != nil {
			err = fmt.Errorf("toolmodel: %w", e)
			return
		}
		model, err = model2vec.LoadFS(sub)
		if err != nil {
			err = fmt.Errorf("toolmodel: built-in model: %w", err)
		}
	})
	return model, err
}

// FS returns the model directory (model.safetensors, tokenizer.json,
// config.json), for example to copy it next to a deployment.
func FS() fs.FS {
	sub, _ := fs.Sub(files, "model")
	return sub
}
