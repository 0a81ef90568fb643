package model2vec

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// maxHeaderLen bounds the JSON header of a safetensors file (the reference
// implementation uses 100 MB).
const maxHeaderLen = 100 << 20

// tensor is one entry of a safetensors file, with its raw little-endian data.
type tensor struct {
	DType string
	Shape []int
	Data  []byte
}

// elemSize returns the byte size of one element of a safetensors dtype, or 0
// when the dtype is unknown.
func elemSize(dtype string) int {
	switch dtype {
	case "BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2":
		return 1
	case "I16", "U16", "F16", "BF16":
		return 2
	case "I32", "U32", "F32":
		return 4
	case "I64", "U64", "F64":
		return 8
	}
	return 0
}

type headerEntry struct {
	DType       string  `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// parseSafetensors splits a safetensors file into its tensors and metadata.
// Every length, shape and offset is checked against the file size, so a
// corrupt or hostile file yields an error, never a panic or a huge
// allocation.
func parseSafetensors(b []byte) (map[string]tensor, map[string]string, error) {
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("safetensors: file is %d bytes, shorter than the 8-byte header length", len(b))
	}
	n := binary.LittleEndian.Uint64(b[:8])
	if n > maxHeaderLen {
		return nil, nil, fmt.Errorf("safetensors: header length %d exceeds the %d-byte limit", n, maxHeaderLen)
	}
	if n > uint64(len(b)-8) {
		return nil, nil, fmt.Errorf("safetensors: header length %d runs past the end of the %d-byte file", n, len(b))
	}
	hdr := b[8 : 8+n]
	data := b[8+n:]

	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, nil, fmt.Errorf("safetensors: header is not a JSON object: %w", err)
	}
	var meta map[string]string
	tensors := make(map[string]tensor, len(raw))
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &meta); err != nil {
				return nil, nil, fmt.Errorf("safetensors: __metadata__ must map strings to strings: %w", err)
			}
			continue
		}
		var e headerEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: %w", name, err)
		}
		size := elemSize(e.DType)
		if size == 0 {
			return nil, nil, fmt.Errorf("safetensors: tensor %q has unknown dtype %q", name, e.DType)
		}
		if len(e.DataOffsets) != 2 {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: data_offsets must have 2 entries, has %d", name, len(e.DataOffsets))
		}
		begin, end := e.DataOffsets[0], e.DataOffsets[1]
		if begin < 0 || end < begin || end > int64(len(data)) {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: data_offsets [%d, %d] outside the %d data bytes", name, begin, end, len(data))
		}
		count := int64(1)
		shape := make([]int, len(e.Shape))
		for i, d := range e.Shape {
			if d < 0 {
				return nil, nil, fmt.Errorf("safetensors: tensor %q: negative dimension %d", name, d)
			}
			if d != 0 && count > math.MaxInt32/d {
				return nil, nil, fmt.Errorf("safetensors: tensor %q: shape %v is too large", name, e.Shape)
			}
			count *= d
			shape[i] = int(d)
		}
		if count*int64(size) != end-begin {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: shape %v of %s needs %d bytes, data_offsets give %d",
				name, e.Shape, e.DType, count*int64(size), end-begin)
		}
		tensors[name] = tensor{DType: e.DType, Shape: shape, Data: data[begin:end]}
	}
	return tensors, meta, nil
}

// floats decodes a float or int8 tensor into float32 values.
func (t tensor) floats() ([]float32, error) {
	d := t.Data
	switch t.DType {
	case "F32":
		return decodeEach(d, 4, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }), nil
	case "F64":
		return decodeEach(d, 8, func(b []byte) float32 { return float32(math.Float64frombits(binary.LittleEndian.Uint64(b))) }), nil
	case "F16":
		return decodeEach(d, 2, func(b []byte) float32 { return f16ToF32(binary.LittleEndian.Uint16(b)) }), nil
	case "BF16":
		return decodeEach(d, 2, func(b []byte) float32 { return math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16) }), nil
	case "I8":
		out := make([]float32, len(d))
		for i, v := range d {
			out[i] = float32(int8(v))
		}
		return out, nil
	case "U8":
		out := make([]float32, len(d))
		for i, v := range d {
			out[i] = float32(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("dtype %s is not a float or int8 type", t.DType)
}

// ints decodes an integer tensor.
func (t tensor) ints() ([]int64, error) {
	d := t.Data
	switch t.DType {
	case "I32":
		return decodeEach(d, 4, func(b []byte) int64 { return int64(int32(binary.LittleEndian.Uint32(b))) }), nil
	case "U32":
		return decodeEach(d, 4, func(b []byte) int64 { return int64(binary.LittleEndian.Uint32(b)) }), nil
	case "I64", "U64":
		out := decodeEach(d, 8, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
		if t.DType == "U64" && slices.ContainsFunc(out, func(v int64) bool { return v < 0 }) {
			return nil, errors.New("U64 value out of range")
		}
		return out, nil
	case "I16":
		return decodeEach(d, 2, func(b []byte) int64 { return int64(int16(binary.LittleEndian.Uint16(b))) }), nil
	}
	return nil, fmt.Errorf("dtype %s is not an integer type", t.DType)
}

// decodeEach decodes d as consecutive little-endian values of size bytes,
// each with value (which reads its bytes from the start of the slice it is
// given).
func decodeEach[T any](d []byte, size int, value func([]byte) T) []T {
	out := make([]T, len(d)/size)
	for i := range out {
		out[i] = value(d[size*i:])
	}
	return out
}

// writeSafetensors serialises tensors (sorted by name, contiguous, the data
// section 8-byte aligned) and metadata.
func writeSafetensors(tensors map[string]tensor, meta map[string]string) ([]byte, error) {
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	header := make(map[string]any, len(tensors)+1)
	if len(meta) > 0 {
		header["__metadata__"] = meta
	}
	var off int64
	for _, n := range names {
		t := tensors[n]
		shape := make([]int64, len(t.Shape))
		for i, d := range t.Shape {
			shape[i] = int64(d)
		}
		header[n] = headerEntry{DType: t.DType, Shape: shape, DataOffsets: []int64{off, off + int64(len(t.Data))}}
		off += int64(len(t.Data))
	}
	hj, err := json.Marshal(header) // map keys are sorted: stable bytes
	if err != nil {
		return nil, fmt.Errorf("safetensors: encode header: %w", err)
	}
	for (8+len(hj))%8 != 0 {
		hj = append(hj, ' ')
	}
	out := make([]byte, 8, 8+len(hj)+int(off))
	binary.LittleEndian.PutUint64(out, uint64(len(hj)))
	out = append(out, hj...)
	for _, n := range names {
		out = append(out, tensors[n].Data...)
	}
	return out, nil
}

func f32Tensor(v []float32, shape ...int) tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return tensor{DType: "F32", Shape: shape, Data: b}
}

func f16Tensor(v []float32, shape ...int) tensor {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], f32ToF16(x))
	}
	return tensor{DType: "F16", Shape: shape, Data: b}
}

func i32Tensor(v []int32, shape ...int) tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return tensor{DType: "I32", Shape: shape, Data: b}
}

// f16ToF32 converts an IEEE 754 half-precision value.
func f16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0: // signed zero
		return math.Float32frombits(sign)
	}
	// subnormal: mant * 2^-24
	f := float32(mant) * (1.0 / (1 << 24))
	if sign != 0 {
		f = -f
	}
	return f
}

// f32ToF16 converts to half precision with round-to-nearest-even; values
// beyond the half range become ±Inf.
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff { // inf / NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - e)
		half := mant >> shift
		rem := mant & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, which is still correct
	}
	return sign | uint16(half)
}
