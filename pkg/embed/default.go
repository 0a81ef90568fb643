package embed

// NewBuiltin returns the default offline embedder.
func NewBuiltin() Embedder { return NewHashing() }
