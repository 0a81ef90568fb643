package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadWordNet(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		// Licence header lines start with two spaces and are skipped.
		"data.noun": "  1 This software and database is being provided to you\n" +
			"02084071 05 n 03 dog 0 domestic_dog 0 Canis_familiaris 0 001 @ 02083346 n 0000 | a member of the genus Canis; \"the dog barked all night\"\n" +
			"02083346 05 n 01 canine 0 000 | any of various fissiped mammals with nonretractile claws\n" +
			"09999999 18 n 01 Abraham_Lincoln 0 000 | 16th President of the United States\n",
		"data.verb": "01168468 34 v 02 eat 0 feed 1 000 | take in solid food; \"She was eating a banana\"\n",
		"data.adj":  "00001740 00 a 01 able(a) 0 000 | having the necessary means or skill\n",
		"data.adv":  "00001740 02 r 01 quickly 0 000 | with speed\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pairs, err := loadWordNet(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range pairs {
		_, words, _ := strings.Cut(p.ToolIDs[0], "|")
		got[p.Query] = words
	}
	want := map[string]string{
		"a member of the genus Canis":                              "dog, domestic dog, Canis familiaris, canine",
		"any of various fissiped mammals with nonretractile claws": "canine",
		"take in solid food":                                       "eat, feed",
		"having the necessary means or skill":                      "able",
		"with speed":                                               "quickly",
	}
	if len(got) != len(want) {
		t.Fatalf("pairs %v, want %v (proper names only are skipped)", got, want)
	}
	for q, w := range want {
		if got[q] != w {
			t.Errorf("%q → %q, want %q", q, got[q], w)
		}
	}
	if _, err := loadWordNet(t.TempDir()); err == nil {
		t.Fatal("a folder without WordNet files must fail")
	}
}
