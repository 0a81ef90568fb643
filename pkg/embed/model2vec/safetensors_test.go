package model2vec

import (
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"
)

// le returns the little-endian bytes of vs, each of size bytes.
func le(size int, vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, v)[:len(b)+size]
	}
	return b
}

// TestTensorFloats: every float and 8-bit dtype decodes to float32.
func TestTensorFloats(t *testing.T) {
	tests := []struct {
		dtype string
		data  []byte
		want  []float32
	}{
		{"F32", le(4, uint64(math.Float32bits(1.5)), uint64(math.Float32bits(-2))), []float32{1.5, -2}},
		{"F64", le(8, math.Float64bits(0.25), math.Float64bits(-3)), []float32{0.25, -3}},
		{"F16", le(2, 0x3c00, 0xc000, 0x3800), []float32{1, -2, 0.5}},
		{"BF16", le(2, 0x3fc0, 0xc040), []float32{1.5, -3}},
		{"I8", []byte{1, 0xff, 0x80}, []float32{1, -1, -128}},
		{"U8", []byte{1, 0xff}, []float32{1, 255}},
	}
	for _, tt := range tests {
		got, err := tensor{DType: tt.dtype, Data: tt.data}.floats()
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, %v; want %v", tt.dtype, got, err, tt.want)
		}
	}
	if _, err := (tensor{DType: "I32", Data: le(4, 1)}).floats(); err == nil || !strings.Contains(err.Error(), "not a float") {
		t.Errorf("I32 as floats: error %v", err)
	}
}

// TestTensorInts: every integer dtype decodes to int64; a U64 past
// MaxInt64 is refused.
func TestTensorInts(t *testing.T) {
	tests := []struct {
		dtype string
		data  []byte
		want  []int64
	}{
		{"I16", le(2, 7, 0xfffe), []int64{7, -2}},
		{"I32", le(4, 7, 0xfffffffe), []int64{7, -2}},
		{"U32", le(4, 7, 0xfffffffe), []int64{7, 0xfffffffe}},
		{"I64", le(8, 7, math.MaxUint64), []int64{7, -1}},
		{"U64", le(8, 7, math.MaxInt64), []int64{7, math.MaxInt64}},
	}
	for _, tt := range tests {
		got, err := tensor{DType: tt.dtype, Data: tt.data}.ints()
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, %v; want %v", tt.dtype, got, err, tt.want)
		}
	}
	if _, err := (tensor{DType: "U64", Data: le(8, 1, math.MaxInt64+1)}).ints(); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("U64 past MaxInt64: error %v", err)
	}
	if _, err := (tensor{DType: "F32", Data: le(4, 1)}).ints(); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Errorf("F32 as ints: error %v", err)
	}
}
