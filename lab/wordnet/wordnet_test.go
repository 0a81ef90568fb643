package wordnet

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseData(t *testing.T) {
	tests := []struct {
		name, line string
		want       Synset
		err        string
	}{
		{
			name: "noun with a hypernym",
			line: `02084071 05 n 03 dog 0 domestic_dog 0 Canis_familiaris 0 001 @ 02083346 n 0000 | a member of the genus Canis; "the dog barked"`,
			want: Synset{Offset: "02084071", Words: []string{"dog", "domestic_dog", "Canis_familiaris"},
				Pointers: []Pointer{{Symbol: "@", Offset: "02083346", POS: "n"}}, Gloss: `a member of the genus Canis; "the dog barked"`},
		},
		{
			name: "adjective marker removed, hex word count",
			line: "00001740 00 a 0a w0 0 w1 0 w2 0 w3 0 w4 0 w5 0 w6 0 w7 0 w8 0 able(a) 0 000 | having the means  ",
			want: Synset{Offset: "00001740", Words: []string{"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "able"}, Gloss: "having the means"},
		},
		{
			name: "a pointer cut short is dropped",
			line: "00000001 00 n 01 x 0 002 @ 00000002 n 0000 ~ 00000003 | g",
			want: Synset{Offset: "00000001", Words: []string{"x"}, Pointers: []Pointer{{Symbol: "@", Offset: "00000002", POS: "n"}}, Gloss: "g"},
		},
		{name: "no gloss", line: "00000001 00 n 01 x 0 000", err: "no gloss"},
		{name: "short", line: "00000001 00 n | g", err: "short data line"},
		{name: "word count past the line", line: "00000001 00 n 05 x 0 000 | g", err: "bad word count"},
		{name: "word count not hex", line: "00000001 00 n zz x 0 000 | g", err: "bad word count"},
		{name: "pointer count not a number", line: "00000001 00 n 01 x 0 abc | g", err: "bad pointer count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseData(tc.line)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestEachLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.noun")
	body := "  1 licence header\n  2 more header\nfirst\r\nsecond\nthird"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := EachLine(path, func(l string) error { got = append(got, l); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"first", "second", "third"}; !reflect.DeepEqual(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	err := EachLine(path, func(l string) error {
		if l == "second" {
			return errors.New("bad line")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), path+" line 4: bad line") {
		t.Errorf("err = %v, want the file and line 4 named", err)
	}
	if err := EachLine(filepath.Join(t.TempDir(), "missing"), func(string) error { return nil }); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
}
