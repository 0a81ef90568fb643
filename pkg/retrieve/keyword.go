package retrieve

import (
	"bytes"
	"cmp"
	"encoding/json"
	"iter"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
)

// Field is one part of a tool document that BM25F weighs separately.
type Field int

// Document fields.
const (
	FieldName        Field = iota // tool name split into words
	FieldTitle                    // tool title
	FieldDescription              // tool description
	FieldParams                   // parameter names, descriptions and enum values
	FieldServer                   // server id split into words, server title and description
	FieldTags                     // tags
	numFields
)

// FieldWeights are the BM25F boosts of the document fields.
type FieldWeights [numFields]float64

// DefaultFieldWeights favour the tool name and title over the description
// and the description over parameter and server text.
var DefaultFieldWeights = FieldWeights{
	FieldName:        2.5,
	FieldTitle:       2.0,
	FieldDescription: 1.0,
	FieldParams:      0.5,
	FieldServer:      0.6,
	FieldTags:        1.5,
}

// BM25 parameters.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// kdoc is one tool in the keyword index.
type kdoc struct {
	slot int
	tool catalog.Tool
	// hash and srvFP identify the indexed content with the tool's status,
	// type and scope: unchanged, the tool is not re-indexed. srvFP is
	// shared by the tools of a server (one string per server).
	hash, srvFP string
	// ents are the tool's terms with their field frequencies, sorted by
	// term id (ids of the index's dictionary; ids of the analysing
	// worker's dictionary until the tool is added).
	ents    []kent
	lens    [numFields]float32
	shape   toolShape // action family and object words of the name
	removed bool      // taken out of the index (set under the write lock)
	appOnly bool      // an MCP App's own tool (catalog.AppOnly): never retrieved
	ix      *KeywordIndex
}

// kent is one term of a tool: its id and its frequency in each field.
type kent struct {
	term uint32
	tf   [numFields]uint16
}

// posting is one tool holding a term: the tool's slot and the index of
// the term's entry among the tool's ents (no pointers: the posting lists
// are not scanned by the garbage collector).
type posting struct {
	slot, ent uint32
}

// KeywordIndex is an in-memory BM25F index over catalog tools. It is safe
// for concurrent use. Sync updates it incrementally: only tools whose
// content or server text changed are re-tokenized.
//
// The layout is flat, for the heap of a 100k-tool catalog: one dictionary
// (term → id), one posting list of (slot, entry) pairs per term id, and
// per tool one slice of (term id, field frequencies) entries; no map or
// pointer per tool and term.
type KeywordIndex struct {
	weights FieldWeights
	// outputSchema indexes the output schema's properties with the
	// parameters (Experimental.OutputSchemaText).
	outputSchema bool

	mu       sync.RWMutex
	byID     map[string]*kdoc
	slots    []*kdoc // nil entries are free
	free     []int
	termIDs  map[string]uint32 // dictionary
	termStr  []string          // term id → term ("" for a free id)
	post     [][]posting       // term id → the tools holding it (unordered)
	freeTerm []uint32          // term ids without tools, for reuse
	servers  map[string]catalog.Server
	gen      uint64 // bumped by every Sync that changed something

	srvMu     sync.Mutex
	srvAll    *serverStats // server statistics with every tool visible, at srvAllGen
	srvAllGen uint64
}

// NewKeywordIndex returns an empty index using w as field boosts (the zero
// value means DefaultFieldWeights).
func NewKeywordIndex(w FieldWeights) *KeywordIndex {
	if w == (FieldWeights{}) {
		w = DefaultFieldWeights
	}
	return &KeywordIndex{
		weights: w,
		byID:    map[string]*kdoc{},
		termIDs: map[string]uint32{},
		servers: map[string]catalog.Server{},
	}
}

// Len returns the number of indexed tools.
func (ix *KeywordIndex) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byID)
}

func serverFingerprint(s catalog.Server) string {
	return s.ID + "\x00" + s.Title + "\x00" + s.Description
}

// postings returns the tools holding term (nil when none). The caller
// holds ix.mu for reading.
func (ix *KeywordIndex) postings(term string) []posting {
	id, ok := ix.termIDs[term]
	if !ok {
		return nil
	}
	return ix.post[id]
}

// entry returns the tool and the field frequencies of a posting.
func (ix *KeywordIndex) entry(e posting) (*kdoc, *[numFields]uint16) {
	d := ix.slots[e.slot]
	return d, &d.ents[e.ent].tf
}

// tf returns the tool's field frequencies of term (nil when the tool does
// not hold it). The caller holds the index's lock for reading.
func (d *kdoc) tf(term string) *[numFields]uint16 {
	id, ok := d.ix.termIDs[term]
	if !ok {
		return nil
	}
	if i, ok := slices.BinarySearchFunc(d.ents, id, func(e kent, id uint32) int { return cmp.Compare(e.term, id) }); ok {
		return &d.ents[i].tf
	}
	return nil
}

// termFreqs yields the tool's terms with their field frequencies. The
// caller holds the index's lock for reading.
func (d *kdoc) termFreqs() iter.Seq2[string, *[numFields]uint16] {
	return func(yield func(string, *[numFields]uint16) bool) {
		for i := range d.ents {
			if !yield(d.ix.termStr[d.ents[i].term], &d.ents[i].tf) {
				return
			}
		}
	}
}

// Sync makes the index hold exactly tools. Tools whose content hash and
// server text are unchanged keep their entry; changed and new tools are
// (re-)tokenized; tools missing from the list are removed. It returns how
// many entries were added or replaced and how many were removed.
func (ix *KeywordIndex) Sync(tools []catalog.Tool, servers []catalog.Server) (updated, removed int) {
	updated, removed, _ = ix.SyncPrepared(tools, servers, nil)
	return updated, removed
}

// SyncPrepared is Sync taking each changed or new tool's terms from
// prepared (see DecodeKeywordTerms) when it holds them for the tool's
// current content and server text, and analysing the others. reused
// counts the tools taken from prepared; prepared may be nil.
func (ix *KeywordIndex) SyncPrepared(tools []catalog.Tool, servers []catalog.Server, prepared *KeywordTerms) (updated, removed, reused int) {
	srvs := make(map[string]catalog.Server, len(servers))
	fps := make(map[string]string, len(servers))
	for _, s := range servers {
		srvs[s.ID] = s
	}
	fpOf := func(id string) string {
		fp, ok := fps[id]
		if !ok {
			fp = serverFingerprint(srvs[id])
			fps[id] = fp
		}
		return fp
	}
	idOf := func(t *catalog.Tool) {
		if t.ID == "" {
			t.ID = catalog.ToolID(t.Server, t.Name)
		}
	}
	// want: each tool id's last record (a tool listed twice is indexed
	// once, from its last record).
	want := make(map[string]int, len(tools))
	for i, t := range tools {
		idOf(&t)
		want[t.ID] = i
	}
	// Tokenize outside the lock.
	ix.mu.RLock()
	var fresh []*kdoc
	for i, t := range tools {
		idOf(&t)
		if want[t.ID] != i {
			continue
		}
		h := t.ContentHash
		if h == "" {
			h = catalog.ContentHash(t)
		}
		fp := fpOf(t.Server)
		// Status, type and scope take part so that the stored record
		// stays current.
		if d, ok := ix.byID[t.ID]; ok && d.hash == h && d.srvFP == fp && d.tool.Status == t.Status &&
			d.tool.ToolType == t.ToolType && d.tool.PermissionScope == t.PermissionScope {
			continue
		}
		fresh = append(fresh, &kdoc{tool: t, hash: h, srvFP: fp, appOnly: catalog.AppOnly(t), ix: ix})
	}
	ix.mu.RUnlock()
	var parts []analyzed
	if prepared != nil {
		var rest []*kdoc
		p := analyzed{terms: prepared.terms}
		for _, d := range fresh {
			if prepared.fill(d) {
				p.docs = append(p.docs, d)
			} else {
				rest = append(rest, d)
			}
		}
		fresh = append(p.docs, rest...)
		reused = len(p.docs)
		parts = append([]analyzed{p}, analyzeAll(rest, srvs)...)
	} else {
		parts = analyzeAll(fresh, srvs)
	}

	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.servers = srvs
	var gone []*kdoc
	for id, d := range ix.byID {
		if _, ok := want[id]; !ok {
			gone = append(gone, d)
			removed++
		}
	}
	for _, d := range fresh {
		if old, ok := ix.byID[d.tool.ID]; ok {
			gone = append(gone, old)
		}
	}
	ix.removeAll(gone)
	ix.addAll(parts)
	updated = len(fresh)
	if updated+removed > 0 {
		ix.gen++
	}
	return updated, removed, reused
}

// analyzed is what one goroutine of analyzeAll tokenized: its docs, whose
// ents hold ids of its own dictionary terms.
type analyzed struct {
	docs  []*kdoc
	terms []string
}

// analyzeAll tokenizes docs on up to GOMAXPROCS goroutines (a cold start
// indexes the whole catalog at once). The server field is tokenized once
// per server, and each goroutine stems each distinct word once and keeps
// its own term dictionary, so that the shared one is touched once per
// distinct term and goroutine (in addAll), not once per word.
func analyzeAll(docs []*kdoc, srvs map[string]catalog.Server) []analyzed {
	serverTerms := map[string][]string{}
	cache := stemCache{}
	for _, d := range docs {
		id := d.tool.Server
		if _, ok := serverTerms[id]; !ok {
			srv := srvs[id]
			serverTerms[id] = cache.terms(id + " " + srv.Title + " " + srv.Description)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), 1+len(docs)/analyzeChunk)
	if workers <= 1 {
		a := newAnalyzer(cache)
		for _, d := range docs {
			a.analyze(d, serverTerms[d.tool.Server])
		}
		return []analyzed{{docs: docs, terms: a.terms}}
	}
	out := make([]analyzed, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		c := cache
		if w > 0 {
			c = stemCache{}
		}
		wg.Go(func() {
			a := newAnalyzer(c)
			var mine []*kdoc
			for {
				end := int(next.Add(analyzeChunk))
				start := end - analyzeChunk
				if start >= len(docs) {
					break
				}
				for _, d := range docs[start:min(end, len(docs))] {
					a.analyze(d, serverTerms[d.tool.Server])
					mine = append(mine, d)
				}
			}
			out[w] = analyzed{docs: mine, terms: a.terms}
		})
	}
	wg.Wait()
	return out
}

// analyzeChunk is how many documents a goroutine of analyzeAll takes at once.
const analyzeChunk = 256

// analyzer tokenizes documents on one goroutine, with its stem cache, its
// term dictionary and a scratch table reused from one document to the
// next.
type analyzer struct {
	c       stemCache
	ids     map[string]uint32
	terms   []string
	scratch []kent
	// at[id] is the index in scratch of term id when stamp[id] is the
	// current document's (doc): no table to clear between documents.
	at    []int32
	stamp []uint32
	doc   uint32
}

func newAnalyzer(c stemCache) *analyzer {
	return &analyzer{c: c, ids: map[string]uint32{}}
}

func (a *analyzer) id(term string) uint32 {
	id, ok := a.ids[term]
	if !ok {
		id = uint32(len(a.terms))
		a.ids[term] = id
		a.terms = append(a.terms, term)
	}
	return id
}

// analyze fills d's terms and field lengths. serverTerms are the terms of
// its server's id, title and description (shared, read only).
func (a *analyzer) analyze(d *kdoc, serverTerms []string) {
	c := a.c
	t := d.tool
	var fields [numFields][]string
	fields[FieldName] = c.terms(t.Name)
	fields[FieldTitle] = c.terms(t.Title)
	fields[FieldDescription] = c.terms(t.Description)
	var params []string
	for _, p := range indexer.SchemaParams(t.InputSchema) {
		params = append(params, c.terms(p.Name)...)
		params = append(params, c.terms(p.Description)...)
		for _, e := range p.Enum {
			params = append(params, c.terms(e)...)
		}
	}
	if d.ix != nil && d.ix.outputSchema {
		for _, p := range indexer.SchemaParams(outputSchema(t)) {
			params = append(params, c.terms(p.Name)...)
			params = append(params, c.terms(p.Description)...)
		}
	}
	fields[FieldParams] = params
	fields[FieldServer] = serverTerms
	fields[FieldTags] = c.terms(strings.Join(t.Tags, " "))
	d.shape = shapeOf(t.Name, c)
	a.scratch = a.scratch[:0]
	a.doc++
	for f, terms := range fields {
		d.lens[f] = float32(len(terms))
		if Field(f) == FieldName {
			// Adjacent name words also count joined ("screen_shot" holds
			// "screenshot"), so a query's compound finds a split name;
			// they do not count in the field's length.
			terms = append(terms, nameJoins(t.Name, c)...)
		}
		for _, term := range terms {
			id := a.id(term)
			for len(a.at) < len(a.terms) {
				a.at, a.stamp = append(a.at, 0), append(a.stamp, 0)
			}
			if a.stamp[id] != a.doc {
				a.stamp[id], a.at[id] = a.doc, int32(len(a.scratch))
				a.scratch = append(a.scratch, kent{term: id})
			}
			i := a.at[id]
			if tf := &a.scratch[i].tf; tf[f] < math.MaxUint16 {
				tf[f]++
			}
		}
	}
	d.ents = slices.Clone(a.scratch)
}

// intern returns the id of term in the dictionary, adding it. The caller
// holds ix.mu.
func (ix *KeywordIndex) intern(term string) uint32 {
	if id, ok := ix.termIDs[term]; ok {
		return id
	}
	var id uint32
	if n := len(ix.freeTerm); n > 0 {
		id = ix.freeTerm[n-1]
		ix.freeTerm = ix.freeTerm[:n-1]
		ix.termStr[id] = term
	} else {
		id = uint32(len(ix.termStr))
		ix.termStr = append(ix.termStr, term)
		ix.post = append(ix.post, nil)
	}
	ix.termIDs[term] = id
	return id
}

// addAll adds analyzed docs: their terms move to the index's ids, and
// each posting list grows once, to its final length (a cold start fills
// the new lists from one allocation).
func (ix *KeywordIndex) addAll(parts []analyzed) {
	if len(ix.byID) == 0 && len(ix.termIDs) == 0 {
		// A cold start: the maps are made at their final size instead of
		// growing (and rehashing) through 100k tools.
		docs, terms := 0, 0
		for _, p := range parts {
			docs, terms = docs+len(p.docs), terms+len(p.terms)
		}
		ix.byID = make(map[string]*kdoc, docs)
		ix.termIDs = make(map[string]uint32, terms)
	}
	var grow []int
	for _, p := range parts {
		trans := make([]uint32, len(p.terms))
		for i, term := range p.terms {
			trans[i] = ix.intern(strings.Clone(term))
		}
		for len(grow) < len(ix.termStr) {
			grow = append(grow, 0)
		}
		for _, d := range p.docs {
			for i := range d.ents {
				id := trans[d.ents[i].term]
				d.ents[i].term = id
				grow[id]++
			}
			slices.SortFunc(d.ents, func(a, b kent) int { return cmp.Compare(a.term, b.term) })
		}
	}
	fresh := 0
	for id, n := range grow {
		if n > 0 && len(ix.post[id]) == 0 {
			fresh += n
		}
	}
	arena := make([]posting, 0, fresh)
	for id, n := range grow {
		switch {
		case n == 0:
		case len(ix.post[id]) == 0:
			ix.post[id] = arena[len(arena) : len(arena) : len(arena)+n]
			arena = arena[:len(arena)+n]
		default:
			ix.post[id] = slices.Grow(ix.post[id], n)
		}
	}
	for _, p := range parts {
		for _, d := range p.docs {
			ix.add(d)
		}
	}
}

func (ix *KeywordIndex) add(d *kdoc) {
	if n := len(ix.free); n > 0 {
		d.slot = ix.free[n-1]
		ix.free = ix.free[:n-1]
		ix.slots[d.slot] = d
	} else {
		d.slot = len(ix.slots)
		ix.slots = append(ix.slots, d)
	}
	ix.byID[d.tool.ID] = d
	for i, e := range d.ents {
		ix.post[e.term] = append(ix.post[e.term], posting{uint32(d.slot), uint32(i)})
	}
}

// removeAll takes docs out of the index. Each affected posting list is
// filtered once, so removing many tools costs one pass over their terms'
// lists rather than one per tool; terms left without tools leave the
// dictionary.
func (ix *KeywordIndex) removeAll(docs []*kdoc) {
	if len(docs) == 0 {
		return
	}
	terms := map[uint32]bool{}
	for _, d := range docs {
		d.removed = true
		for _, e := range d.ents {
			terms[e.term] = true
		}
		delete(ix.byID, d.tool.ID)
	}
	for id := range terms {
		p := ix.post[id]
		kept := p[:0]
		for _, e := range p {
			if !ix.slots[e.slot].removed {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			delete(ix.termIDs, ix.termStr[id])
			ix.termStr[id], ix.post[id] = "", nil
			ix.freeTerm = append(ix.freeTerm, id)
		} else {
			ix.post[id] = kept
		}
	}
	for _, d := range docs {
		ix.slots[d.slot] = nil
		ix.free = append(ix.free, d.slot)
	}
}

// Tool returns the indexed record of a tool.
func (ix *KeywordIndex) Tool(id string) (catalog.Tool, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	d, ok := ix.byID[id]
	if !ok {
		return catalog.Tool{}, false
	}
	return d.tool, true
}

// Server returns the indexed record of a server.
func (ix *KeywordIndex) Server(id string) (catalog.Server, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	s, ok := ix.servers[id]
	return s, ok
}

// outputSchema is the outputSchema the upstream gave t (nil when none).
func outputSchema(t catalog.Tool) json.RawMessage {
	if !bytes.Contains(t.Extra, []byte(`"outputSchema"`)) {
		return nil
	}
	var x struct {
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if json.Unmarshal(t.Extra, &x) != nil {
		return nil
	}
	return x.OutputSchema
}
