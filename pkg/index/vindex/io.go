package vindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"unsafe"
)

// ErrCorrupt is wrapped by every error Read and Decode return for malformed
// or truncated input.
var ErrCorrupt = errors.New("vindex: corrupt or truncated index")

// ErrUnsupported is wrapped by the errors Read and Decode return for a
// well-formed faiss index of a type or metric this package does not handle
// (IndexFlatL2, HNSW, IVF, ...).
var ErrUnsupported = errors.New("vindex: unsupported faiss index")

// faiss fourcc codes (faiss/impl/index_write.cpp).
const (
	fourccFlatIP   = "IxFI"
	fourccFlatL2   = "IxF2"
	fourccIDMap    = "IxMp"
	fourccIDMap2   = "IxM2"
	headerLen      = 33      // after the fourcc: d i32, ntotal i64, 2×dummy i64, is_trained u8, metric i32
	faissDummy     = 1 << 20 // written by faiss in both dummy fields
	metricIP       = 0
	metricL2       = 1
	readChunkElems = 1 << 18 // Read grows its buffers by at most this many elements per step
)

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func appendHeader(b []byte, fourcc string, d int, ntotal int64) []byte {
	b = append(b, fourcc...)
	b = binary.LittleEndian.AppendUint32(b, uint32(int32(d)))
	b = binary.LittleEndian.AppendUint64(b, uint64(ntotal))
	b = binary.LittleEndian.AppendUint64(b, faissDummy)
	b = binary.LittleEndian.AppendUint64(b, faissDummy)
	b = append(b, 1) // is_trained
	b = binary.LittleEndian.AppendUint32(b, metricIP)
	return b
}

// headLen is the size of what WriteTo writes before the vectors of a float
// index: the IndexIDMap and IndexFlatIP headers and the vector data size.
const headLen = 2*(4+headerLen) + 8

// sqParamsLen is the size of a ScalarQuantizer's fields before its trained
// ranges: qtype, rangestat, rangestat_arg, d, code_size, len(trained).
const sqParamsLen = 4 + 4 + 4 + 8 + 8 + 8

// head returns the bytes WriteTo writes before the vectors (or codes);
// ix.mu is held.
func (ix *Index) head() []byte {
	n := int64(len(ix.ids))
	if ix.sq != nil {
		// faiss write_index: IndexScalarQuantizer is its header, the
		// ScalarQuantizer (qtype, rangestat, rangestat_arg, d,
		// code_size, trained = vmin ‖ vdiff) and the codes vector.
		head := make([]byte, 0, 2*(4+headerLen)+sqParamsLen+8*ix.dim+8)
		head = appendHeader(head, fourccIDMap, ix.dim, n)
		head = appendHeader(head, fourccSQ, ix.dim, n)
		head = binary.LittleEndian.AppendUint32(head, sqQT8bit)
		head = binary.LittleEndian.AppendUint32(head, sqRSMinMax)
		head = binary.LittleEndian.AppendUint32(head, math.Float32bits(0))
		head = binary.LittleEndian.AppendUint64(head, uint64(ix.dim))
		head = binary.LittleEndian.AppendUint64(head, uint64(ix.dim)) // code_size: one byte per component
		head = binary.LittleEndian.AppendUint64(head, uint64(2*ix.dim))
		for _, part := range [][]float32{ix.sq.vmin, ix.sq.vdiff} {
			for _, v := range part {
				head = binary.LittleEndian.AppendUint32(head, math.Float32bits(v))
			}
		}
		return binary.LittleEndian.AppendUint64(head, uint64(len(ix.codes)))
	}
	head := make([]byte, 0, headLen)
	head = appendHeader(head, fourccIDMap, ix.dim, n)
	head = appendHeader(head, fourccFlatIP, ix.dim, n)
	return binary.LittleEndian.AppendUint64(head, uint64(len(ix.vecs)))
}

// rowBytes returns the stored rows as bytes (native order); ix.mu is held.
func (ix *Index) rowBytes() (b []byte, wordSize int) {
	if ix.sq != nil {
		return ix.codes, 1
	}
	return f32bytes(ix.vecs), 4
}

// EncodedSize is how many bytes WriteTo writes.
func (ix *Index) EncodedSize() int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.sq != nil {
		return int64(2*(4+headerLen)+sqParamsLen+8*ix.dim+8) + int64(len(ix.codes)) + 8 + int64(len(ix.ids))*8
	}
	return headLen + int64(len(ix.vecs))*4 + 8 + int64(len(ix.ids))*8
}

// EncodedReader returns the bytes WriteTo would write as a reader over the
// index's own memory (nothing is copied), for uploading a large index
// without encoding it into a buffer first. The index must not change while
// the reader is in use. ok is false on a big-endian machine, where the
// bytes must be converted: use WriteTo.
func (ix *Index) EncodedReader() (r *io.SectionReader, ok bool) {
	if !littleEndian || ix.dim < 1 || ix.dim > MaxDim {
		return nil, false
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := int64(len(ix.ids))
	head := ix.head()
	rows, _ := ix.rowBytes()
	parts := sections{head, rows, binary.LittleEndian.AppendUint64(nil, uint64(n)), i64bytes(ix.ids)}
	return io.NewSectionReader(parts, 0, parts.size()), true
}

// sections reads a sequence of byte slices as one.
type sections [][]byte

func (s sections) size() int64 {
	var n int64
	for _, p := range s {
		n += int64(len(p))
	}
	return n
}

// ReadAt implements io.ReaderAt.
func (s sections) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("vindex: negative offset")
	}
	n := 0
	for _, part := range s {
		if len(p) == 0 {
			break
		}
		if off >= int64(len(part)) {
			off -= int64(len(part))
			continue
		}
		c := copy(p, part[off:])
		n += c
		p = p[c:]
		off = 0
	}
	if len(p) > 0 {
		return n, io.EOF
	}
	return n, nil
}

// WriteTo writes the index as faiss IndexIDMap(IndexFlatIP), or a
// quantised one as IndexIDMap(IndexScalarQuantizer) (faiss write_index
// layout, little-endian), which faiss.read_index loads.
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	if ix.dim < 1 || ix.dim > MaxDim {
		return 0, fmt.Errorf("vindex: cannot write an index of dimension %d (want 1..%d)", ix.dim, MaxDim)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := int64(len(ix.ids))
	head := ix.head()
	var written int64
	put := func(p []byte) error {
		m, err := w.Write(p)
		written += int64(m)
		if err == nil && m < len(p) {
			err = io.ErrShortWrite
		}
		return err
	}
	if err := put(head); err != nil {
		return written, fmt.Errorf("vindex: writing index: %w", err)
	}
	rows, size := ix.rowBytes()
	if err := writeLE(put, rows, size); err != nil {
		return written, fmt.Errorf("vindex: writing index vectors: %w", err)
	}
	if err := put(binary.LittleEndian.AppendUint64(nil, uint64(n))); err != nil {
		return written, fmt.Errorf("vindex: writing index ids: %w", err)
	}
	if err := writeLE(put, i64bytes(ix.ids), 8); err != nil {
		return written, fmt.Errorf("vindex: writing index ids: %w", err)
	}
	return written, nil
}

// writeLE writes native-endian words of size bytes as little-endian.
func writeLE(put func([]byte) error, p []byte, size int) error {
	if littleEndian || size == 1 {
		return put(p)
	}
	buf := make([]byte, 0, 64<<10)
	for len(p) > 0 {
		c := min(len(p), cap(buf))
		buf = append(buf[:0], p[:c]...)
		swapWords(buf, size)
		if err := put(buf); err != nil {
			return err
		}
		p = p[c:]
	}
	return nil
}

func swapWords(p []byte, size int) {
	for i := 0; i+size <= len(p); i += size {
		if size == 4 {
			binary.NativeEndian.PutUint32(p[i:], bits.ReverseBytes32(binary.NativeEndian.Uint32(p[i:])))
		} else {
			binary.NativeEndian.PutUint64(p[i:], bits.ReverseBytes64(binary.NativeEndian.Uint64(p[i:])))
		}
	}
}

func f32bytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), len(f)*4)
}

func i64bytes(v []int64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*8)
}

// Read reads an index written by WriteTo or by faiss.write_index: an
// IndexIDMap or IndexIDMap2 wrapping an IndexFlatIP, or a bare IndexFlatIP
// (whose vectors get the ids 0..n-1). It reads exactly the bytes of one
// index from r. Malformed or truncated input gives an error wrapping
// ErrCorrupt, another index type or metric one wrapping ErrUnsupported.
// Memory grows with the bytes actually read, never with what a header claims.
func Read(r io.Reader) (*Index, error) {
	return decode(&readerSource{r: r})
}

// Decode is Read for an index already in memory, such as a blob fetched from
// S3 at cold start. It checks every length against len(b) before allocating
// and rejects trailing bytes. The vectors and ids are copied out of b, so the
// caller may reuse or modify b once Decode returns.
func Decode(b []byte) (*Index, error) {
	return decodeAll(&bytesSource{b: b})
}

// DecodeInPlace is Decode for a blob the caller hands over: the index keeps
// b's memory for its vectors instead of copying them (the vector bytes are
// moved at most 3 bytes towards the start of b to align them), so loading
// an index needs about the blob's size instead of twice it. The caller
// must not use or modify b afterwards, nor on error (b may have been
// changed). On a big-endian machine it copies, like Decode.
func DecodeInPlace(b []byte) (*Index, error) {
	return decodeAll(&bytesSource{b: b, orig: b, inPlace: littleEndian})
}

// decodeAll decodes one index that must take all of s.
func decodeAll(s *bytesSource) (*Index, error) {
	ix, err := decode(s)
	if err != nil {
		return nil, err
	}
	if len(s.b) > 0 {
		return nil, fmt.Errorf("%w: %d unexpected bytes after the index", ErrCorrupt, len(s.b))
	}
	return ix, nil
}

// source is what decode reads from: an io.Reader or a byte slice.
type source interface {
	// take returns the next n bytes (n is small); the slice is valid until
	// the next call.
	take(n int) ([]byte, error)
	// remaining returns how many bytes are left, or -1 when unknown.
	remaining() int64
	// fill reads exactly len(p) bytes into p.
	fill(p []byte) error
	// offset returns how many bytes were consumed.
	offset() int64
}

type bytesSource struct {
	b   []byte
	off int64
	// With inPlace, the vectors alias orig (the whole input) instead of
	// being copied out of it.
	orig    []byte
	inPlace bool
}

// aliasFloats returns the next n float32s as a slice of the input itself,
// moved left by up to 3 bytes (into the already consumed header) when the
// input does not place them at a 4-byte aligned address.
func (s *bytesSource) aliasFloats(n int) ([]float32, error) {
	size := int64(n) * 4
	if size > int64(len(s.b)) {
		return nil, fmt.Errorf("%w: header promises %d vectors (%d bytes) at byte %d but only %d bytes follow", ErrCorrupt, n, size, s.off, len(s.b))
	}
	if n == 0 {
		return nil, nil
	}
	start := s.off
	shift := int64(uintptr(unsafe.Pointer(&s.orig[start])) % 4)
	if shift > start {
		return nil, fmt.Errorf("vindex: vectors at byte %d cannot be aligned in place", start)
	}
	dst := s.orig[start-shift : start-shift+size]
	if shift != 0 {
		copy(dst, s.orig[start:start+size])
	}
	s.b = s.b[size:]
	s.off += size
	return unsafe.Slice((*float32)(unsafe.Pointer(&dst[0])), n), nil
}

func (s *bytesSource) take(n int) ([]byte, error) {
	if n > len(s.b) {
		return nil, io.ErrUnexpectedEOF
	}
	p := s.b[:n]
	s.b = s.b[n:]
	s.off += int64(n)
	return p, nil
}
func (s *bytesSource) remaining() int64 { return int64(len(s.b)) }
func (s *bytesSource) offset() int64    { return s.off }
func (s *bytesSource) fill(p []byte) error {
	if len(p) > len(s.b) {
		return io.ErrUnexpectedEOF
	}
	copy(p, s.b)
	s.b = s.b[len(p):]
	s.off += int64(len(p))
	return nil
}

type readerSource struct {
	r   io.Reader
	buf [64]byte
	off int64
}

func (s *readerSource) take(n int) ([]byte, error) {
	if err := s.fill(s.buf[:n]); err != nil {
		return nil, err
	}
	return s.buf[:n], nil
}
func (s *readerSource) remaining() int64 { return -1 }
func (s *readerSource) offset() int64    { return s.off }
func (s *readerSource) fill(p []byte) error {
	m, err := io.ReadFull(s.r, p)
	s.off += int64(m)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// failure turns a read error into the error decode returns.
func failure(s source, what string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: input ends at byte %d while reading %s", ErrCorrupt, s.offset(), what)
	}
	return fmt.Errorf("vindex: reading index %s at byte %d: %w", what, s.offset(), err)
}

func typeName(fourcc string) string {
	switch fourcc {
	case fourccIDMap:
		return "IndexIDMap"
	case fourccIDMap2:
		return "IndexIDMap2"
	case fourccFlatIP:
		return "IndexFlatIP"
	case fourccSQ:
		return "IndexScalarQuantizer"
	}
	return fmt.Sprintf("index %q", fourcc)
}

type header struct {
	fourcc string
	d      int
	ntotal int64
}

// readFourcc reads a fourcc and classifies it.
func readFourcc(s source) (string, error) {
	p, err := s.take(4)
	if err != nil {
		return "", failure(s, "the index type", err)
	}
	return string(p), nil
}

func unknownType(fourcc string, at int64) error {
	faissLike := fourcc[0] == 'I'
	for i := 1; i < 4; i++ {
		c := fourcc[i]
		faissLike = faissLike && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
	}
	if faissLike {
		return fmt.Errorf("%w: index type %q at byte %d; only IndexIDMap/IndexIDMap2 over IndexFlatIP or IndexScalarQuantizer (IxMp, IxM2, IxFI, IxSQ) is supported", ErrUnsupported, fourcc, at)
	}
	return fmt.Errorf("%w: not a faiss index (type code %q at byte %d)", ErrCorrupt, fourcc, at)
}

// readHeader reads the 33 bytes after a fourcc and checks the dimension and
// the metric.
func readHeader(s source, fourcc string) (header, error) {
	at := s.offset()
	p, err := s.take(headerLen)
	if err != nil {
		return header{}, failure(s, "the "+typeName(fourcc)+" header", err)
	}
	d := int32(binary.LittleEndian.Uint32(p[0:]))
	ntotal := int64(binary.LittleEndian.Uint64(p[4:]))
	metric := int32(binary.LittleEndian.Uint32(p[29:]))
	if d < 1 || d > MaxDim {
		return header{}, fmt.Errorf("%w: the %s header at byte %d has dimension %d, want 1..%d", ErrCorrupt, typeName(fourcc), at, d, MaxDim)
	}
	if ntotal < 0 || ntotal > math.MaxInt32 {
		return header{}, fmt.Errorf("%w: the %s header at byte %d has %d vectors, want 0..%d", ErrCorrupt, typeName(fourcc), at, ntotal, math.MaxInt32)
	}
	if metric != metricIP {
		name := fmt.Sprintf("metric type %d", metric)
		if metric == metricL2 {
			name = "the L2 metric"
		}
		return header{}, fmt.Errorf("%w: the %s uses %s; only inner product (metric 0) is supported", ErrUnsupported, typeName(fourcc), name)
	}
	return header{fourcc: fourcc, d: int(d), ntotal: ntotal}, nil
}

func decode(s source) (*Index, error) {
	fourcc, err := readFourcc(s)
	if err != nil {
		return nil, err
	}
	switch fourcc {
	case fourccIDMap, fourccIDMap2:
		outer, err := readHeader(s, fourcc)
		if err != nil {
			return nil, err
		}
		at := s.offset()
		inner, err := readFourcc(s)
		if err != nil {
			return nil, err
		}
		switch inner {
		case fourccFlatIP, fourccSQ:
		case fourccFlatL2:
			return nil, fmt.Errorf("%w: the %s wraps an IndexFlatL2; only IndexFlatIP (inner product) is supported", ErrUnsupported, typeName(fourcc))
		default:
			return nil, unknownType(inner, at)
		}
		h, err := readHeader(s, inner)
		if err != nil {
			return nil, err
		}
		if h.d != outer.d || h.ntotal != outer.ntotal {
			return nil, fmt.Errorf("%w: the %s says dimension %d and %d vectors but its %s says %d and %d", ErrCorrupt, typeName(fourcc), outer.d, outer.ntotal, typeName(inner), h.d, h.ntotal)
		}
		rows, err := readRows(s, h)
		if err != nil {
			return nil, err
		}
		p, err := s.take(8)
		if err != nil {
			return nil, failure(s, "the id count", err)
		}
		nids := binary.LittleEndian.Uint64(p)
		if nids != uint64(h.ntotal) {
			return nil, fmt.Errorf("%w: the %s has %d vectors but %d ids", ErrCorrupt, typeName(fourcc), h.ntotal, nids)
		}
		ids, err := readArray[int64](s, int(nids), 8, "ids")
		if err != nil {
			return nil, err
		}
		return assemble(h.d, ids, rows)
	case fourccFlatIP, fourccSQ:
		h, err := readHeader(s, fourcc)
		if err != nil {
			return nil, err
		}
		rows, err := readRows(s, h)
		if err != nil {
			return nil, err
		}
		ids := make([]int64, h.ntotal)
		for i := range ids {
			ids[i] = int64(i)
		}
		return assemble(h.d, ids, rows)
	case fourccFlatL2:
		return nil, fmt.Errorf("%w: the file is an IndexFlatL2; only inner-product indexes are supported", ErrUnsupported)
	default:
		return nil, unknownType(fourcc, 0)
	}
}

// rows is the vector data of an index: float32 vectors, or a quantiser and
// its codes.
type rows struct {
	vecs  []float32
	sq    *sq8
	codes []uint8
}

// readRows reads the vector data of an IndexFlatIP or IndexScalarQuantizer
// whose header is h.
func readRows(s source, h header) (rows, error) {
	if h.fourcc != fourccSQ {
		vecs, err := readVectors(s, h)
		return rows{vecs: vecs}, err
	}
	p, err := s.take(sqParamsLen)
	if err != nil {
		return rows{}, failure(s, "the scalar quantizer", err)
	}
	qtype := binary.LittleEndian.Uint32(p[0:])
	d := binary.LittleEndian.Uint64(p[12:])
	codeSize := binary.LittleEndian.Uint64(p[20:])
	ntrained := binary.LittleEndian.Uint64(p[28:])
	if qtype != sqQT8bit {
		return rows{}, fmt.Errorf("%w: the IndexScalarQuantizer has quantizer type %d; only QT_8bit (0) is supported", ErrUnsupported, qtype)
	}
	if d != uint64(h.d) || codeSize != uint64(h.d) || ntrained != 2*uint64(h.d) {
		return rows{}, fmt.Errorf("%w: the scalar quantizer has d=%d, code size %d and %d trained values; the index has dimension %d (want %d, %d and %d)", ErrCorrupt, d, codeSize, ntrained, h.d, h.d, h.d, 2*h.d)
	}
	trained, err := readArray[float32](s, 2*h.d, 4, "the quantizer ranges")
	if err != nil {
		return rows{}, err
	}
	q := &sq8{vmin: trained[:h.d:h.d], vdiff: trained[h.d:]}
	if err := checkSQ(q); err != nil {
		return rows{}, err
	}
	if p, err = s.take(8); err != nil {
		return rows{}, failure(s, "the code size", err)
	}
	nc := binary.LittleEndian.Uint64(p)
	if want := uint64(h.ntotal) * uint64(h.d); nc != want {
		return rows{}, fmt.Errorf("%w: the IndexScalarQuantizer has %d bytes of codes, want %d vectors × %d = %d", ErrCorrupt, nc, h.ntotal, h.d, want)
	}
	var codes []uint8
	if bs, ok := s.(*bytesSource); ok && bs.inPlace {
		if int64(nc) > int64(len(bs.b)) {
			return rows{}, fmt.Errorf("%w: header promises %d bytes of codes at byte %d but only %d bytes follow", ErrCorrupt, nc, bs.off, len(bs.b))
		}
		codes, _ = bs.take(int(nc)) // the codes stay in the input (no alignment needed)
		codes = codes[:len(codes):len(codes)]
	} else if codes, err = readArray[uint8](s, int(nc), 1, "codes"); err != nil {
		return rows{}, err
	}
	return rows{sq: q, codes: codes}, nil
}

func readVectors(s source, h header) ([]float32, error) {
	p, err := s.take(8)
	if err != nil {
		return nil, failure(s, "the vector data size", err)
	}
	nf := binary.LittleEndian.Uint64(p)
	want := uint64(h.ntotal) * uint64(h.d) // both bounded, cannot overflow
	if nf != want {
		return nil, fmt.Errorf("%w: the %s has %d floats of vector data, want %d vectors × %d = %d", ErrCorrupt, typeName(h.fourcc), nf, h.ntotal, h.d, want)
	}
	if bs, ok := s.(*bytesSource); ok && bs.inPlace {
		return bs.aliasFloats(int(nf))
	}
	return readArray[float32](s, int(nf), 4, "vectors")
}

// readArray reads n little-endian words of size bytes. With an unknown input
// length it grows the result as the data arrives, so a lying header cannot
// make it allocate more than about twice the bytes actually present.
func readArray[T float32 | int64 | uint8](s source, n, size int, what string) ([]T, error) {
	if rem := s.remaining(); rem >= 0 && int64(n)*int64(size) > rem {
		return nil, fmt.Errorf("%w: header promises %d %s (%d bytes) at byte %d but only %d bytes follow", ErrCorrupt, n, what, int64(n)*int64(size), s.offset(), rem)
	}
	step := n
	if s.remaining() < 0 {
		step = min(n, readChunkElems)
	}
	out := make([]T, 0, step)
	for len(out) < n {
		c := min(n-len(out), max(step, len(out))) // double, at least one chunk
		if cap(out)-len(out) < c {
			grown := make([]T, len(out), len(out)+c)
			copy(grown, out)
			out = grown
		}
		seg := out[len(out) : len(out)+c]
		b := unsafe.Slice((*byte)(unsafe.Pointer(&seg[0])), c*size)
		if err := s.fill(b); err != nil {
			return nil, failure(s, what, err)
		}
		if !littleEndian && size > 1 {
			swapWords(b, size)
		}
		out = out[:len(out)+c]
	}
	return out, nil
}

func assemble(dim int, ids []int64, r rows) (*Index, error) {
	pos := make(map[int64]int32, len(ids))
	for i, id := range ids {
		if j, dup := pos[id]; dup {
			return nil, fmt.Errorf("%w: id %d is stored twice (rows %d and %d)", ErrCorrupt, id, j, i)
		}
		pos[id] = int32(i)
	}
	return &Index{dim: dim, ids: ids, vecs: r.vecs, sq: r.sq, codes: r.codes, pos: pos}, nil
}
