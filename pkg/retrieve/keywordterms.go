package retrieve

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"sync"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// KeywordTerms is the analysis of a catalog's tools as the keyword index
// holds it (each tool's terms with their field frequencies, field lengths
// and name shape), decoded from what EncodeTerms wrote. A cold start hands
// it to SyncPrepared instead of tokenizing every tool again: a tool is
// taken from it only when its content hash and server text are those it
// was analysed with; the others are analysed as usual.
type KeywordTerms struct {
	terms  []string
	srvFPs []string
	docs   map[string]*termDoc
}

type termDoc struct {
	hash  string
	srv   uint32 // index in srvFPs
	lens  [numFields]float32
	shape toolShape
	ents  []kent // ids of terms, sorted
	taken bool   // handed to a kdoc by fill
}

// Len returns the number of tools the terms were analysed for.
func (p *KeywordTerms) Len() int {
	if p == nil {
		return 0
	}
	return len(p.docs)
}

// fill sets d's analysis from p when p holds it for d's content; ents are
// ids of p.terms. A tool's analysis is handed out once, not copied (addAll
// rewrites the ents in place; at 100k tools a copy is ~50 MB): a second
// fill for the same tool returns false, and the tool is analysed.
func (p *KeywordTerms) fill(d *kdoc) bool {
	td, ok := p.docs[d.tool.ID]
	if !ok || td.taken || td.hash != d.hash || p.srvFPs[td.srv] != d.srvFP {
		return false
	}
	d.ents, td.ents = td.ents, nil
	d.lens = td.lens
	d.shape = toolShape{verb: td.shape.verb, object: td.shape.object}
	td.shape.object, td.taken = nil, true
	return true
}

// keywordTermsMagic starts an encoding; the analyser version follows it.
const keywordTermsMagic = "toolrag-keyword-terms/1\n"

// keywordAnalyzerRevision is bumped by hand when the analysis changes in a
// way the probe below might not see.
const keywordAnalyzerRevision = "1"

// AnalyzerVersion identifies the keyword analysis: a revision number and
// a hash of the analysis of a fixed probe catalog (names split, stems,
// stop words, parameters, enums, joined name words, name shapes), so that
// terms written by another analyser are not used even when nobody bumped
// the revision.
var AnalyzerVersion = sync.OnceValue(func() string {
	probe := []catalog.Tool{
		{Server: "github-server", Name: "search_issues", Title: "Search Issues", Description: "Searches the repositories' open issues and pull requests by label, running quickly.",
			Tags: []string{"vcs", "tracking"}, InputSchema: []byte(`{"type":"object","properties":{"query":{"type":"string","description":"Search query, e.g. 'is:open'"},"state":{"enum":["open","closed","all"]},"perPage":{"type":"integer","description":"Results per page (1-100)"}}}`)},
		{Server: "browser", Name: "browser_take_screenshot", Description: "Take a screen shot of the current page; screenshots are saved as PNG files. Don't use it for PDFs.",
			InputSchema: []byte(`{"type":"object","properties":{"fullPage":{"type":"boolean","description":"Capture the full scrollable page"},"filename":{"type":"string"}}}`)},
		{Server: "fs", Name: "createDirectory", Title: "Create a directory", Description: "Creates directories, recursively; fails when the path exists as a file. Läuft überall, 10x faster."},
	}
	for i := range probe {
		catalog.Finalize(&probe[i])
	}
	srv := []catalog.Server{{ID: "github-server", Title: "GitHub", Description: "Issues, pulls and repositories"}, {ID: "browser", Title: "Browser automation"}, {ID: "fs"}}
	ix := NewKeywordIndex(FieldWeights{})
	ix.Sync(probe, srv)
	var buf bytes.Buffer
	ix.encodeTerms(&buf, "")
	h := sha256.Sum256(buf.Bytes())
	return keywordAnalyzerRevision + "-" + hex.EncodeToString(h[:8])
})

// EncodeTerms returns the analysis of every indexed tool, to be decoded
// by DecodeKeywordTerms. The same index content gives the same bytes
// (tools in id order, terms in sorted order).
func (ix *KeywordIndex) EncodeTerms() []byte {
	var buf bytes.Buffer
	ix.encodeTerms(&buf, AnalyzerVersion())
	// A checksum of everything before it: damage is an error, never
	// other terms.
	return binary.BigEndian.AppendUint32(buf.Bytes(), crc32.Checksum(buf.Bytes(), castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (ix *KeywordIndex) encodeTerms(buf *bytes.Buffer, version string) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var tmp [binary.MaxVarintLen64]byte
	uv := func(v uint64) { buf.Write(tmp[:binary.PutUvarint(tmp[:], v)]) }
	str := func(s string) { uv(uint64(len(s))); buf.WriteString(s) }

	buf.WriteString(keywordTermsMagic)
	str(version)
	// The dictionary: the live terms, sorted.
	var terms []string
	for _, t := range ix.termStr {
		if t != "" {
			terms = append(terms, t)
		}
	}
	slices.Sort(terms)
	pos := make(map[string]uint32, len(terms))
	uv(uint64(len(terms)))
	for i, t := range terms {
		pos[t] = uint32(i)
		str(t)
	}
	ids := make([]string, 0, len(ix.byID))
	for id := range ix.byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var fps []string
	fpPos := map[string]uint32{}
	for _, id := range ids {
		fp := ix.byID[id].srvFP
		if _, ok := fpPos[fp]; !ok {
			fpPos[fp] = uint32(len(fps))
			fps = append(fps, fp)
		}
	}
	uv(uint64(len(fps)))
	for _, fp := range fps {
		str(fp)
	}
	uv(uint64(len(ids)))
	var ents []kent
	for _, id := range ids {
		d := ix.byID[id]
		str(id)
		str(d.hash)
		uv(uint64(fpPos[d.srvFP]))
		for _, l := range d.lens {
			uv(uint64(math.Float32bits(l)))
		}
		str(d.shape.verb)
		uv(uint64(len(d.shape.object)))
		for _, o := range d.shape.object {
			str(o)
		}
		ents = ents[:0]
		for _, e := range d.ents {
			ents = append(ents, kent{term: pos[ix.termStr[e.term]], tf: e.tf})
		}
		slices.SortFunc(ents, func(a, b kent) int { return cmp.Compare(a.term, b.term) })
		uv(uint64(len(ents)))
		prev := uint32(0)
		for _, e := range ents {
			uv(uint64(e.term - prev)) // ascending: deltas
			prev = e.term
			for _, tf := range e.tf {
				uv(uint64(tf))
			}
		}
	}
}

// ErrOtherAnalyzer is returned by DecodeKeywordTerms for terms written by
// another version of the keyword analysis.
var ErrOtherAnalyzer = errors.New("keyword terms written by another analyser version")

// DecodeKeywordTerms decodes what EncodeTerms wrote. Damaged input or
// input from another analyser version is an error (ErrOtherAnalyzer for
// the latter): the caller analyses the tools instead.
func DecodeKeywordTerms(b []byte) (*KeywordTerms, error) {
	if !bytes.HasPrefix(b, []byte(keywordTermsMagic)) || len(b) < len(keywordTermsMagic)+4 {
		return nil, errors.New("keyword terms: not an encoding of keyword terms")
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return nil, errors.New("keyword terms are damaged: checksum mismatch")
	}
	b = body
	r := termReader{b: b}
	r.i = len(keywordTermsMagic)
	if v := r.str(); r.err == nil && v != AnalyzerVersion() {
		return nil, fmt.Errorf("%w (%q; this gateway's is %q)", ErrOtherAnalyzer, v, AnalyzerVersion())
	}
	p := &KeywordTerms{}
	n := r.count()
	p.terms = make([]string, 0, n)
	for range n {
		p.terms = append(p.terms, r.str())
	}
	n = r.count()
	p.srvFPs = make([]string, 0, n)
	for range n {
		p.srvFPs = append(p.srvFPs, r.str())
	}
	n = r.count()
	p.docs = make(map[string]*termDoc, n)
	for range n {
		if r.err != nil {
			break
		}
		id := r.str()
		td := &termDoc{hash: r.str()}
		if s := r.uv(); s < uint64(len(p.srvFPs)) {
			td.srv = uint32(s)
		} else {
			r.fail("server index out of range")
		}
		for f := range td.lens {
			v := r.uv()
			if v > math.MaxUint32 {
				r.fail("field length out of range")
			}
			td.lens[f] = math.Float32frombits(uint32(v))
		}
		td.shape.verb = r.str()
		for k := r.count(); k > 0; k-- {
			td.shape.object = append(td.shape.object, r.str())
		}
		k := r.count()
		td.ents = make([]kent, 0, k)
		term := uint64(0)
		for j := range k {
			d := r.uv()
			if j > 0 && d == 0 {
				r.fail("terms not ascending")
			}
			term += d
			if term >= uint64(len(p.terms)) {
				r.fail("term id out of range")
				break
			}
			e := kent{term: uint32(term)}
			for f := range e.tf {
				v := r.uv()
				if v > math.MaxUint16 {
					r.fail("term frequency out of range")
				}
				e.tf[f] = uint16(v)
			}
			td.ents = append(td.ents, e)
		}
		if _, dup := p.docs[id]; dup {
			r.fail("tool listed twice")
		}
		p.docs[id] = td
	}
	if r.err == nil && r.i != len(b) {
		r.fail("trailing bytes")
	}
	if r.err != nil {
		return nil, fmt.Errorf("keyword terms are damaged at byte %d: %w", r.i, r.err)
	}
	return p, nil
}

type termReader struct {
	b   []byte
	i   int
	err error
}

func (r *termReader) fail(why string) {
	if r.err == nil {
		r.err = errors.New(why)
	}
}

func (r *termReader) uv() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		r.fail("truncated number")
		return 0
	}
	r.i += n
	return v
}

// count reads a length, which cannot exceed the bytes left (every item
// takes at least one).
func (r *termReader) count() int {
	v := r.uv()
	if v > uint64(len(r.b)-r.i) {
		r.fail("count past the end")
		return 0
	}
	return int(v)
}

func (r *termReader) str() string {
	n := r.count()
	if r.err != nil {
		return ""
	}
	s := string(r.b[r.i : r.i+n])
	r.i += n
	return s
}

// NewKeywordAnalyser returns the keyword analysis of a catalog (EncodeTerms)
// for the catalog copy a sync publishes (indexpub.KeywordsFunc), so that a
// gateway decodes it at cold start instead of analysing every tool. It
// keeps its index between calls: only changed tools are analysed again.
func NewKeywordAnalyser() func(ctx context.Context, tools []catalog.Tool, servers []catalog.Server) ([]byte, error) {
	var mu sync.Mutex
	ix := NewKeywordIndex(FieldWeights{})
	return func(_ context.Context, tools []catalog.Tool, servers []catalog.Server) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		ix.Sync(tools, servers)
		return ix.EncodeTerms(), nil
	}
}
