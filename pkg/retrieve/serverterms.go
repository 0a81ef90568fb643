package retrieve

import (
	"sync"
)

// serverTerms is the server-level keyword index of one keyword index
// generation: for a term, the servers whose tools hold it, with the
// term's frequency summed over each server's tools. It turns the server
// term of two-level scoring (scoreServers) from a pass over every tool
// posting of the query's terms into a pass over their servers, and is
// used whenever each server is either wholly visible to the request or
// wholly hidden (a key granted whole servers); a view that shows part of
// a server's tools is scored from the tool postings as before. A term's
// entry is computed the first time a query asks for it (so the first
// query after a sync costs what it did before), and kept until the
// keyword index changes.
type serverTerms struct {
	gen    uint64
	names  []string         // servers, by index
	byName map[string]int32 // server → index
	ntools []int32          // indexed tools per server
	srvOf  []int32          // by slot: server index

	mu   sync.RWMutex
	post map[string][]srvTF
}

// srvTF is one server holding a term: tf summed over the server's tools
// (every field but the server field), and the server field's tf (the
// server text is the same in every tool of the server: counted once).
type srvTF struct {
	srv      int32
	tf       uint32
	srvField uint16
}

// serverTermsCache holds the serverTerms of the current generation.
type serverTermsCache struct {
	mu sync.Mutex
	st *serverTerms
}

// get returns the serverTerms of ix's generation. Must be called with
// ix.mu held for reading.
func (c *serverTermsCache) get(ix *KeywordIndex) *serverTerms {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st != nil && c.st.gen == ix.gen {
		return c.st
	}
	c.st = newServerTerms(ix)
	return c.st
}

func newServerTerms(ix *KeywordIndex) *serverTerms {
	st := &serverTerms{gen: ix.gen, byName: map[string]int32{}, srvOf: make([]int32, len(ix.slots)), post: map[string][]srvTF{}}
	for _, d := range ix.slots {
		if d == nil {
			continue
		}
		k, ok := st.byName[d.tool.Server]
		if !ok {
			k = int32(len(st.names))
			st.byName[d.tool.Server] = k
			st.names = append(st.names, d.tool.Server)
			st.ntools = append(st.ntools, 0)
		}
		st.ntools[k]++
		st.srvOf[d.slot] = k
	}
	return st
}

// servers returns term's servers, computing them from the tool postings
// the first time. Must be called with ix.mu held for reading.
func (st *serverTerms) servers(ix *KeywordIndex, term string) []srvTF {
	st.mu.RLock()
	list, ok := st.post[term]
	st.mu.RUnlock()
	if ok {
		return list
	}
	p := ix.postings(term)
	byServer := map[int32]int{}
	for _, e := range p {
		_, tf := ix.entry(e)
		k := st.srvOf[e.slot]
		i, seen := byServer[k]
		if !seen {
			i = len(list)
			byServer[k] = i
			list = append(list, srvTF{srv: k})
		}
		for f := Field(0); f < numFields; f++ {
			if f != FieldServer {
				list[i].tf += uint32(tf[f])
			}
		}
		if tf[FieldServer] > 0 {
			list[i].srvField = tf[FieldServer]
		}
	}
	st.mu.Lock()
	st.post[term] = list
	st.mu.Unlock()
	return list
}

// scoreServers is snapshot.scoreServers from the server-term index, by
// visible server index (s.srvNames); ok is false when the view shows part
// of some server's tools (then the caller scores from the tool postings).
func (st *serverTerms) scoreServers(s *visibleCorpus, qterms []string) ([]float64, bool) {
	s.servers()
	// Visible index of each server, -1 when hidden; every visible
	// server must be wholly visible.
	vis := make([]int32, len(st.names))
	for i := range vis {
		vis[i] = -1
	}
	for k, name := range s.srvNames {
		g, ok := st.byName[name]
		if !ok || int(st.ntools[g]) != len(s.byServer[name]) {
			return nil, false
		}
		vis[g] = int32(k)
	}
	acc := make([]float64, len(s.srvNames))
	n := float64(len(s.srvNames))
	if n == 0 {
		return acc, true
	}
	counts, order := countTerms(qterms)
	for _, term := range order {
		list := st.servers(s.ix, term)
		df := 0
		for _, p := range list {
			if vis[p.srv] >= 0 {
				df++
			}
		}
		if df == 0 {
			continue
		}
		w := idf(n, float64(df)) * float64(counts[term])
		for _, p := range list {
			k := vis[p.srv]
			if k < 0 {
				continue
			}
			t := (float64(p.tf) + float64(p.srvField)) / s.srvNorm[k]
			acc[k] += w * t / (bm25K1 + t)
		}
	}
	return acc, true
}
