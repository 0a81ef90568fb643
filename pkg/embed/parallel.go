package embed

import (
	"context"
	"runtime"
	"sync"
)

// inProcess is the EmbedQuery and EmbedDocuments of an in-process
// embedder (builtin, hashing, model2vec), whose embedding function does no
// I/O: a query only checks ctx first, documents go through embedAll.
type inProcess func(text string) []float32

func (f inProcess) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return f(text), nil
}

func (f inProcess) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return embedAll(ctx, texts, f)
}

// embedAll runs a local (CPU-bound) embedding function over texts on up to
// GOMAXPROCS goroutines, one per 64 texts at least, checking ctx between
// texts. The in-process embedders (builtin, hashing, model2vec) share it.
func embedAll(ctx context.Context, texts []string, embed func(string) []float32) ([][]float32, error) {
	out := make([][]float32, len(texts))
	workers := min(runtime.GOMAXPROCS(0), len(texts)/64+1)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(texts); i += workers {
				if i%256 == 0 && ctx.Err() != nil {
					return
				}
				out[i] = embed(texts[i])
			}
		}(w)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
