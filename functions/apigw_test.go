package functions_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// apiGateway is an HTTP API (payload format 2.0) in front of a function
// under the emulator: each HTTP request becomes an invoke of the event API
// Gateway would send, and the function's result the HTTP response
// (headers, cookies, body), so browsers and MCP clients of a test talk
// plain HTTP to the function as they would to a deployment.
func apiGateway(t *testing.T, fn *function) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h := map[string]string{}
		for k, v := range r.Header {
			if strings.EqualFold(k, "Cookie") {
				continue
			}
			h[strings.ToLower(k)] = strings.Join(v, ",")
		}
		h["host"] = r.Host
		h["x-forwarded-proto"] = "http"
		var cookies []string
		for _, c := range r.Cookies() {
			cookies = append(cookies, c.Name+"="+c.Value)
		}
		ev := events.APIGatewayV2HTTPRequest{
			Version: "2.0", RouteKey: "$default", RawPath: r.URL.Path, RawQueryString: r.URL.RawQuery,
			Cookies: cookies, Headers: h, Body: string(body),
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				AccountID: "123456789012", APIID: "local", DomainName: r.Host, Stage: "$default",
				RequestID: "req-" + time.Now().Format("150405.000000"),
				HTTP:      events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.Method, Path: r.URL.Path, Protocol: "HTTP/1.1", SourceIP: "127.0.0.1"},
			},
		}
		raw, _ := json.Marshal(ev)
		resp, err := http.Post(fn.url, "application/json", bytes.NewReader(raw))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		var res events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(out, &res); err != nil || res.StatusCode == 0 {
			http.Error(w, "function result: "+string(out), http.StatusBadGateway)
			return
		}
		for k, v := range res.Headers {
			w.Header().Set(k, v)
		}
		for k, vs := range res.MultiValueHeaders {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		for _, c := range res.Cookies {
			w.Header().Add("Set-Cookie", c)
		}
		b := []byte(res.Body)
		if res.IsBase64Encoded {
			b, _ = base64.StdEncoding.DecodeString(res.Body)
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(res.StatusCode)
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}
