package vindex

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernels. It is a variable so that tests can
// exercise the portable kernel on machines that have AVX2.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotAVX2 returns the inner product of the n floats at a and b; n is a
// multiple of 8.
//
//go:noescape
func dotAVX2(a, b *float32, n int) float32

// dot4AVX2 computes, for groups*4 rows of m spaced stride floats apart, the
// inner product of the first n floats (a multiple of 8) of q and of the row,
// and stores them in out[0:groups*4].
//
//go:noescape
func dot4AVX2(q, m *float32, n, stride, groups int, out *float32)

// dotU8AVX2 returns the inner product of the n floats at w and the n bytes
// at c; n is a multiple of 8.
//
//go:noescape
func dotU8AVX2(w *float32, c *uint8, n int) float32

// dotU8x2AVX2 stores in out[0:2] the inner products of the n floats at w1
// and at w2 with the n bytes at c (each as dotU8AVX2 computes it); n is a
// multiple of 8.
//
//go:noescape
func dotU8x2AVX2(w1, w2 *float32, c *uint8, n int, out *float32)
