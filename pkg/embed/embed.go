// Package embed turns tool documents and queries into L2-normalised vectors.
// Providers: builtin (offline, the default), url (OpenAI-shaped
// /v1/embeddings), bedrock (Titan Text Embeddings V2) and model2vec (a
// static model directory, local or s3://).
package embed

import "context"

// Embedder embeds documents and queries. Vectors are L2-normalised and have
// Dim() components; a blank text (or, for builtin and model2vec, one with no
// usable word) gets the zero vector. ModelID identifies the model and its
// settings so that an index built with another model is detected and
// rebuilt. Implementations are safe for concurrent use.
//
// Build one with New(ctx, cfg) from ConfigFromEnv(os.Getenv), or directly
// with NewBuiltin, NewURL, NewBedrock, NewModel2Vec or FromStatic.
type Embedder interface {
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	Dim() int
	ModelID() string
}
