// Package embed turns tool documents and queries into L2-normalised vectors.
// Providers: builtin (offline, the default), url (OpenAI-shaped
// /v1/embeddings), bedrock (Titan Text Embeddings V2) and model2vec (a
// static model directory, local or s3://).
package embed

import "context"

// Embedder embeds documents and queries. Vectors are L2-normalised and have
// Dim() components. ModelID identifies the model and its settings so that an
// index built with another model is detected and rebuilt.
type Embedder interface {
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	Dim() int
	ModelID() string
}
