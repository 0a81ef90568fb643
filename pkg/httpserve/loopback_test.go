package httpserve

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestForeignHostOnLoopback(t *testing.T) {
	for _, tc := range []struct {
		name, local, host string
		want              bool
	}{
		{"loopback, localhost", "127.0.0.1:8080", "localhost:8080", false},
		{"loopback, 127.0.0.1", "127.0.0.1:8080", "127.0.0.1:8080", false},
		{"loopback, ::1", "[::1]:8080", "[::1]:8080", false},
		{"loopback, LOCALHOST", "127.0.0.1:8080", "LOCALHOST", false},
		{"loopback, foreign name", "127.0.0.1:8080", "rebind.attacker.example:8080", true},
		{"loopback, foreign address", "[::1]:8080", "10.0.0.5", true},
		{"public listener, any host", "10.0.0.5:8080", "gateway.example", false},
		{"no local address", "", "rebind.attacker.example", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Host = tc.host
			if tc.local != "" {
				addr, err := net.ResolveTCPAddr("tcp", tc.local)
				if err != nil {
					t.Fatal(err)
				}
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
			}
			if got := ForeignHostOnLoopback(r); got != tc.want {
				t.Fatalf("ForeignHostOnLoopback(local %q, Host %q) = %v, want %v", tc.local, tc.host, got, tc.want)
			}
		})
	}
}
