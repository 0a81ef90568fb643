package sealed_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/sealed"
)

type rec struct {
	A string `json:"a"`
	N int    `json:"n"`
}

func TestSealOpen(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	box, err := sealed.New([]byte("a shared secret of enough bytes"))
	if err != nil {
		t.Fatal(err)
	}
	box.Now = clock
	other, _ := sealed.New([]byte("another secret of enough bytes!"))
	other.Now = clock
	tok, err := box.Seal("state", rec{"x", 7}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tok, "x") && strings.Contains(tok, "7") && len(tok) < 20 {
		t.Fatalf("token looks readable: %q", tok)
	}
	flip := []byte(tok)
	if flip[10] == 'A' {
		flip[10] = 'B'
	} else {
		flip[10] = 'A'
	}
	for _, tc := range []struct {
		name    string
		box     *sealed.Box
		purpose string
		token   string
		advance time.Duration
		want    error
	}{
		{"same key and purpose", box, "state", tok, 0, nil},
		{"just before expiry", box, "state", tok, 59 * time.Second, nil},
		{"expired", box, "state", tok, time.Minute, sealed.ErrExpired},
		{"tampered", box, "state", string(flip), 0, sealed.ErrInvalid},
		{"another key", other, "state", tok, 0, sealed.ErrInvalid},
		{"another purpose", box, "task", tok, 0, sealed.ErrInvalid},
		{"not base64", box, "state", "!!", 0, sealed.ErrInvalid},
		{"empty", box, "state", "", 0, sealed.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := now
			now = now.Add(tc.advance)
			defer func() { now = saved }()
			var got rec
			err := tc.box.Open(tc.purpose, tc.token, &got)
			if !errors.Is(err, tc.want) && err != tc.want {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
			if tc.want == nil && got != (rec{"x", 7}) {
				t.Fatalf("Open: %+v", got)
			}
		})
	}
	if _, err := sealed.New([]byte("short")); err == nil {
		t.Error("a 5-byte secret was accepted")
	}
}
