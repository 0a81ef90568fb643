package tracing

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// RequestIDHeader is the response header that carries the request id.
const RequestIDHeader = "X-Request-Id"

// Middleware gives every request a request id (the Lambda / API Gateway
// one on AWS, the caller's X-Request-Id when it is a plain token, else a
// generated one), returns it in the X-Request-Id response header and puts
// it in the request context for log lines (LogHandler). With tracing on,
// it also continues the caller's traceparent (unless the context already
// has a span: the Lambda invocation's, which continued it) and wraps the
// request in an HTTP server span.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		id := requestIDFor(ctx, r.Header.Get(RequestIDHeader))
		w.Header().Set(RequestIDHeader, id)
		ctx = WithRequestID(ctx, id)
		if !on.Load() {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		if !trace.SpanContextFromContext(ctx).IsValid() {
			// (A Lambda invocation's span already continued the caller.)
			ctx = prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
		}
		ctx, span := tracer.Start(ctx, r.Method+" "+route(r.URL.Path), trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(
				attribute.String("http.request.method", r.Method),
				attribute.String("url.path", r.URL.Path),
				attribute.String("toolrag.request_id", id),
			))
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		defer func() {
			span.SetAttributes(attribute.Int("http.response.status_code", sw.code))
			if sw.code >= 500 {
				span.SetStatus(codes.Error, http.StatusText(sw.code))
				span.SetAttributes(attribute.String("error.type", http.StatusText(sw.code)))
			}
			span.End()
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// route is a low-cardinality name for a path: its first segment.
func route(p string) string {
	if len(p) <= 1 {
		return "/"
	}
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			return p[:i+1] + "*"
		}
	}
	return p
}

type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type stageKey struct{}

type stage struct {
	span   trace.Span
	parent trace.Span
	ended  bool
}

// Around traces middleware mw (authentication) as a span named name: from
// the request reaching mw until mw hands it on to next, or answers it
// itself (a rejection: the span is marked failed with the status code).
// attrs, when set, describes the request once mw let it through (the
// principal).
func Around(name string, mw func(http.Handler) http.Handler, next http.Handler, attrs func(context.Context) []attribute.KeyValue) http.Handler {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st, ok := r.Context().Value(stageKey{}).(*stage); ok && !st.ended {
			st.ended = true
			if attrs != nil {
				st.span.SetAttributes(attrs(r.Context())...)
			}
			st.span.End()
			r = r.WithContext(trace.ContextWithSpan(context.WithValue(r.Context(), stageKey{}, nil), st.parent))
		}
		next.ServeHTTP(w, r)
	})
	wrapped := mw(inner)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !on.Load() {
			wrapped.ServeHTTP(w, r)
			return
		}
		parent := trace.SpanFromContext(r.Context())
		ctx, span := tracer.Start(r.Context(), name)
		st := &stage{span: span, parent: parent}
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		wrapped.ServeHTTP(sw, r.WithContext(context.WithValue(ctx, stageKey{}, st)))
		if !st.ended {
			st.ended = true
			span.SetAttributes(attribute.Int("http.response.status_code", sw.code))
			if sw.code >= 400 {
				span.SetStatus(codes.Error, "rejected: "+http.StatusText(sw.code))
				span.SetAttributes(attribute.String("error.type", http.StatusText(sw.code)))
			}
			span.End()
		}
	})
}

// Transport returns base wrapped so that every request carries its
// context's trace context in headers (a copy of the request is sent when
// there is one to add; the caller's request is never changed).
func Transport(base http.RoundTripper) http.RoundTripper { return transport{base} }

type transport struct{ base http.RoundTripper }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if on.Load() && trace.SpanContextFromContext(req.Context()).IsValid() {
		req = req.Clone(req.Context())
		prop.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	}
	return t.base.RoundTrip(req)
}
