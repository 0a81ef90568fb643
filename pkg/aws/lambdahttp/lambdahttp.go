// Package lambdahttp serves an http.Handler as a Lambda function, for
// every front end that invokes one with HTTP requests: API Gateway HTTP
// API (payload 2.0) and REST API (1.0) through aws-lambda-go-api-proxy,
// and Function URLs (streamed or buffered). Answers over Lambda's payload
// limit become errors that say so (Response), and requests
// that need a long-lived stream are refused with a clear error. Budget and
// LimitMemory keep a function inside its time and memory.
package lambdahttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// HTTPAPIHandler adapts h to API Gateway HTTP API (payload format 2.0)
// events. Answers over Lambda's 6 MB payload limit become errors that say
// so (Response).
func HTTPAPIHandler(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(withFlush(Response(h, PayloadLimit))).ProxyWithContext
}

// RESTHandler adapts h to API Gateway REST API (payload format 1.0)
// events.
func RESTHandler(h http.Handler) func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	return httpadapter.New(withFlush(Response(h, PayloadLimit))).ProxyWithContext
}

// FunctionURLHandler adapts h to Lambda Function URL events of a function
// URL with InvokeMode RESPONSE_STREAM. (For InvokeMode BUFFERED the events
// and responses have the HTTP API 2.0 shape: use HTTPAPIHandler.)
func FunctionURLHandler(h http.Handler) func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	return lambdaurl.Wrap(withFlush(h))
}

// Options tunes Dispatch.
type Options struct {
	// FunctionURLBuffered answers Function URL events with a buffered
	// response (InvokeMode BUFFERED) instead of a response stream
	// (TOOL_RAG_FUNCTION_URL_MODE=buffered).
	FunctionURLBuffered bool
	// AllFunctionURL treats every 2.0 event as a Function URL request, for
	// a Function URL behind a custom domain (TOOL_RAG_FUNCTION_URL=1).
	// Otherwise a 2.0 event is a Function URL request when its
	// requestContext.domainName contains ".lambda-url.".
	AllFunctionURL bool
	// Task, when set, receives the events that carry "toolrag_task": the
	// gateway's own MCP tasks, run in an asynchronous invocation of the
	// function (pkg/awsrt). Start sets it when the handler has HandleTask.
	Task func(ctx context.Context, raw json.RawMessage) (any, error)
}

// OptionsFromEnv reads Options through getenv.
func OptionsFromEnv(getenv func(string) string) Options {
	return Options{
		FunctionURLBuffered: strings.EqualFold(strings.TrimSpace(getenv("TOOL_RAG_FUNCTION_URL_MODE")), "buffered"),
		AllFunctionURL:      strings.TrimSpace(getenv("TOOL_RAG_FUNCTION_URL")) == "1",
	}
}

// Start serves h as the Lambda function's handler, for whichever front end
// invokes it (see Dispatch). It does not return.
func Start(h http.Handler) {
	o := OptionsFromEnv(os.Getenv)
	if t, ok := h.(interface {
		HandleTask(context.Context, json.RawMessage) (any, error)
	}); ok {
		o.Task = t.HandleTask
	}
	lambda.Start(tracing.InvocationFrom("gateway", "http", EventHeaders, Dispatch(h, o)))
}

// EventHeaders returns the HTTP headers of an API Gateway or Function URL
// event (nil for another event): the invocation's span continues the
// caller's traceparent in them.
func EventHeaders(raw json.RawMessage) http.Header {
	var ev struct {
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	}
	if json.Unmarshal(raw, &ev) != nil || len(ev.Headers)+len(ev.MultiValueHeaders) == 0 {
		return nil
	}
	h := make(http.Header, len(ev.Headers)+len(ev.MultiValueHeaders))
	for k, vs := range ev.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	for k, v := range ev.Headers {
		if h.Get(k) == "" {
			h.Set(k, v)
		}
	}
	return h
}

// Dispatch returns a handler for raw Lambda events that tells the front
// end by the event's shape: "version":"2.0" with requestContext.http is an
// HTTP API or a Function URL request (told apart by the domain name or
// Options), "httpMethod" is a REST API request. Anything else is an
// error.
func Dispatch(h http.Handler, o Options) func(context.Context, json.RawMessage) (any, error) {
	v2 := HTTPAPIHandler(h)
	v1 := RESTHandler(h)
	url := FunctionURLHandler(h)
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var probe struct {
			Version        string          `json:"version"`
			HTTPMethod     string          `json:"httpMethod"`
			Task           json.RawMessage `json:"toolrag_task"`
			RequestContext struct {
				DomainName string           `json:"domainName"`
				HTTP       *json.RawMessage `json:"http"`
			} `json:"requestContext"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, fmt.Errorf("the event is not a JSON object: %w", err)
		}
		switch {
		case len(probe.Task) > 0 && o.Task != nil:
			return o.Task(ctx, raw)
		case probe.Version == "2.0" && probe.RequestContext.HTTP != nil:
			isURL := o.AllFunctionURL || strings.Contains(probe.RequestContext.DomainName, ".lambda-url.")
			if isURL && !o.FunctionURLBuffered {
				var ev events.LambdaFunctionURLRequest
				if err := json.Unmarshal(raw, &ev); err != nil {
					return nil, fmt.Errorf("the event looks like a Function URL request but does not decode as one: %w", err)
				}
				return url(ctx, &ev)
			}
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, fmt.Errorf("the event looks like an HTTP API 2.0 request but does not decode as one: %w", err)
			}
			return v2(ctx, ev)
		case probe.HTTPMethod != "":
			var ev events.APIGatewayProxyRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, fmt.Errorf("the event looks like a REST API request but does not decode as one: %w", err)
			}
			return v1(ctx, ev)
		}
		return nil, errors.New("unsupported event: the gateway function expects API Gateway HTTP API (2.0) or REST API (1.0) requests or Function URL requests; EventBridge events go to the sync and health functions")
	}
}

// withFlush adapts h to the Lambda response writers. Those buffer (API
// Gateway) or stream by themselves (Function URL) but do not implement
// http.Flusher, and mcp-go only switches a POST answer to text/event-stream
// — which carries the notifications a tool emits while it runs, such as
// find_tools' notifications/tools/list_changed — when the writer can flush.
// So POST requests get a writer with a Flush that has nothing to do; the
// whole SSE body (notifications, then the result) is returned at the end.
// GET requests (a listening SSE stream) keep a writer without Flush, so
// mcp-go answers 405: a Lambda invocation cannot hold a stream open (for
// the same reason the gateway refuses subscriptions/listen, under
// gateway.Config.NoClientStreams).
// A 405 answer without an Allow header gets "Allow: POST, DELETE" (RFC
// 9110 requires one; those are the methods an invocation can serve).
func withFlush(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(allowWriter{w}, r)
			return
		}
		if _, ok := w.(http.Flusher); ok {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(flushWriter{w}, r)
	})
}

// flushWriter adds a Flush with nothing to do to a ResponseWriter that
// buffers or streams on its own.
type flushWriter struct{ http.ResponseWriter }

func (flushWriter) Flush() {}

// allowWriter adds the Allow header a 405 answer must carry when the
// handler did not set one.
type allowWriter struct{ http.ResponseWriter }

// AllowOnLambda is the Allow header of a 405 from the gateway function.
const AllowOnLambda = "POST, DELETE"

func (w allowWriter) WriteHeader(code int) {
	if code == http.StatusMethodNotAllowed && w.Header().Get("Allow") == "" {
		w.Header().Set("Allow", AllowOnLambda)
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the adapter's writer.
func (w allowWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
