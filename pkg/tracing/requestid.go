package tracing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"go.opentelemetry.io/otel/trace"
)

type requestIDKey struct{}

// WithRequestID returns ctx carrying request id id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the request id of ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestIDFor picks the request id: API Gateway's (it is in the API
// Gateway access log), else the Lambda invocation's, else the caller's
// X-Request-Id when it is a short plain token, else a new random one.
func requestIDFor(ctx context.Context, given string) string {
	if rc, ok := core.GetAPIGatewayV2ContextFromContext(ctx); ok && rc.RequestID != "" {
		return rc.RequestID
	}
	if rc, ok := core.GetAPIGatewayContextFromContext(ctx); ok && rc.RequestID != "" {
		return rc.RequestID
	}
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		return lc.AwsRequestID
	}
	if plainToken(given) {
		return given
	}
	return NewRequestID()
}

// NewRequestID returns a random 16-byte hex id.
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func plainToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// LogHandler returns h adding to every record logged with a context the
// request id (request_id) and, when the context has a sampled span, the
// trace and span ids (trace_id, span_id), so that audit lines and error
// logs can be matched to an API Gateway access log line and to a trace.
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(logHandler); ok {
		return h
	}
	return logHandler{h}
}

type logHandler struct{ next slog.Handler }

func (h logHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		id := RequestID(ctx)
		if id != "" {
			r.AddAttrs(slog.String("request_id", id))
		}
		// On Lambda behind API Gateway the request id is API Gateway's
		// (its access log has it); the invocation's is kept too.
		if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" && lc.AwsRequestID != id {
			r.AddAttrs(slog.String("lambda_request_id", lc.AwsRequestID))
		}
		if on.Load() {
			if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && sc.IsSampled() {
				r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
			}
		}
	}
	return h.next.Handle(ctx, r)
}

func (h logHandler) WithAttrs(as []slog.Attr) slog.Handler { return logHandler{h.next.WithAttrs(as)} }

func (h logHandler) WithGroup(name string) slog.Handler { return logHandler{h.next.WithGroup(name)} }
