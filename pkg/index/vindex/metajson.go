package vindex

import (
	"bytes"
	"encoding/json"
	"errors"
)

// DecodeMeta decodes a Meta from its JSON (as stored next to an index)
// exactly as json.Unmarshal does, only faster for the form Meta is written
// in: a flat object whose two large maps (IDs and Hashes, one entry per
// tool, 100k at a large catalog) are read by a small parser into maps of
// their final size, without reflection and without encoding/json's
// separate validation pass; each scalar field is still decoded (and
// checked) by encoding/json. Any other form (other keys' spelling, null,
// nesting, damage) is decoded by json.Unmarshal itself, with its errors.
func DecodeMeta(b []byte) (Meta, error) {
	if m, ok := parseMeta(b); ok {
		return m, nil
	}
	var m Meta
	err := json.Unmarshal(b, &m)
	return m, err
}

var errNotFlat = errors.New("not the flat form")

func parseMeta(b []byte) (Meta, bool) {
	var m Meta
	p := flatParser{b: b}
	if !p.byte('{') {
		return m, false
	}
	if p.byte('}') {
		return m, p.end() == nil
	}
	for {
		key, ok := p.str()
		if !ok || !p.byte(':') {
			return m, false
		}
		var err error
		switch key {
		case "ids":
			m.IDs, err = p.stringMap(m.IDs, m.Count)
		case "hashes":
			m.Hashes, err = p.stringMap(m.Hashes, m.Count)
		case "model_id":
			err = p.scalar(&m.ModelID)
		case "dim":
			err = p.scalar(&m.Dim)
		case "count":
			err = p.scalar(&m.Count)
		case "built_at":
			err = p.scalar(&m.BuiltAt)
		case "index_sha256":
			err = p.scalar(&m.IndexSHA256)
		default:
			return m, false
		}
		if err != nil {
			return m, false
		}
		if p.byte(',') {
			continue
		}
		if p.byte('}') {
			return m, p.end() == nil
		}
		return m, false
	}
}

type flatParser struct {
	b []byte
	i int
}

func (p *flatParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte consumes c (after whitespace) when it is next.
func (p *flatParser) byte(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *flatParser) end() error {
	p.space()
	if p.i != len(p.b) {
		return errNotFlat
	}
	return nil
}

// str reads a JSON string. One with escapes or bytes outside printable
// ASCII is decoded (and checked) by encoding/json.
func (p *flatParser) str() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	start := p.i
	plain := true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if plain {
				return string(p.b[start : p.i-1]), true
			}
			var s string
			if err := json.Unmarshal(p.b[start-1:p.i], &s); err != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			plain = false
			p.i += 2
		case c < 0x20 || c >= 0x80:
			plain = false
			p.i++
		default:
			p.i++
		}
	}
	return "", false
}

// scalar decodes the next value, a string or a number, into v with
// encoding/json.
func (p *flatParser) scalar(v any) error {
	p.space()
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '"' {
		if _, ok := p.str(); !ok {
			return errNotFlat
		}
	} else {
		for p.i < len(p.b) && bytes.IndexByte([]byte("+-.0123456789eE"), p.b[p.i]) >= 0 {
			p.i++
		}
	}
	if p.i == start {
		return errNotFlat
	}
	return json.Unmarshal(p.b[start:p.i], v)
}

// stringMap reads an object of strings into m (a new map sized for hint
// entries when m is nil), as encoding/json decodes into a map.
func (p *flatParser) stringMap(m map[string]string, hint int) (map[string]string, error) {
	if !p.byte('{') {
		return nil, errNotFlat
	}
	if m == nil {
		// Each entry takes at least 6 bytes: a damaged count cannot
		// size the map past what the input holds.
		m = make(map[string]string, min(max(hint, 0), (len(p.b)-p.i)/6))
	}
	if p.byte('}') {
		return m, nil
	}
	for {
		k, ok := p.str()
		if !ok || !p.byte(':') {
			return nil, errNotFlat
		}
		v, ok := p.str()
		if !ok {
			return nil, errNotFlat
		}
		m[k] = v
		if p.byte(',') {
			continue
		}
		if p.byte('}') {
			return m, nil
		}
		return nil, errNotFlat
	}
}
