//go:build !amd64

package vindex

const useAVX2 = false

func dotAVX2(a, b *float32, n int) float32 { panic("unreachable") }

func dot4AVX2(q, m *float32, n, stride, groups int, out *float32) { panic("unreachable") }

func dotU8AVX2(w *float32, c *uint8, n int) float32 { panic("unreachable") }

func dotU8x2AVX2(w1, w2 *float32, c *uint8, n int, out *float32) { panic("unreachable") }
