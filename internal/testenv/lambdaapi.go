package testenv

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Invoker runs one invocation of a function with payload and returns its
// result; a function error is returned as err.
type Invoker func(ctx context.Context, payload []byte) ([]byte, error)

// LambdaAPI is a local endpoint of the Lambda Invoke API
// (POST /2015-03-31/functions/{name}/invocations), the part the AWS SDK's
// Lambda client calls, for functions running under aws-lambda-rie (which
// serves synchronous invokes only) or in the test's process:
//   - X-Amz-Invocation-Type RequestResponse (or none): the function's
//     result, 200, with X-Amz-Function-Error: Unhandled on a function
//     error;
//   - Event: 202 at once, with an empty body, and the payload handed to the
//     function in the background, as Lambda's asynchronous queue does
//     (without its retries of a failed invocation);
//   - DryRun: 204;
//   - a function it does not know: 404 ResourceNotFoundException.
//
// Point a gateway at it with TOOL_RAG_LAMBDA_ENDPOINT (AWS_ENDPOINT_URL_LAMBDA).
type LambdaAPI struct {
	URL string

	functions map[string]Invoker
	mu        sync.Mutex
	calls     []string
	errs      []error
	wg        sync.WaitGroup
}

// StartLambdaAPI serves functions (name → Invoker) until cleanup, which
// waits for the asynchronous invocations under way.
func StartLambdaAPI(t testing.TB, functions map[string]Invoker) *LambdaAPI {
	t.Helper()
	l := &LambdaAPI{functions: functions}
	srv := httptest.NewServer(http.HandlerFunc(l.serve))
	l.URL = srv.URL
	t.Cleanup(func() {
		for _, err := range l.Wait() {
			t.Error(err)
		}
		srv.Close()
	})
	return l
}

func (l *LambdaAPI) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/2015-03-31/functions/")
	name, ok2 := strings.CutSuffix(rest, "/invocations")
	if r.Method != http.MethodPost || !ok || !ok2 {
		lambdaError(w, http.StatusNotFound, "UnknownOperationException", "only Invoke is served here")
		return
	}
	if i := strings.LastIndex(name, ":function:"); i >= 0 { // an ARN
		name = name[i+len(":function:"):]
	}
	typ := r.Header.Get("X-Amz-Invocation-Type")
	if typ == "" {
		typ = "RequestResponse"
	}
	l.mu.Lock()
	l.calls = append(l.calls, name+" "+typ)
	l.mu.Unlock()
	fn, known := l.functions[name]
	if !known {
		lambdaError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return
	}
	payload, err := io.ReadAll(r.Body)
	if err != nil {
		lambdaError(w, http.StatusBadRequest, "InvalidRequestContentException", err.Error())
		return
	}
	switch typ {
	case "DryRun":
		w.WriteHeader(http.StatusNoContent)
	case "Event":
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			// The function's own limit bounds it (15 minutes at most).
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			if _, err := fn(ctx, payload); err != nil {
				l.mu.Lock()
				l.errs = append(l.errs, fmt.Errorf("asynchronous invocation of %s: %w", name, err))
				l.mu.Unlock()
			}
		}()
		w.Header().Set("X-Amzn-Requestid", fmt.Sprintf("local-%d", time.Now().UnixNano()))
		w.WriteHeader(http.StatusAccepted)
	case "RequestResponse":
		out, err := fn(r.Context(), payload)
		w.Header().Set("X-Amz-Executed-Version", "$LATEST")
		if err != nil {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			out = fmt.Appendf(nil, `{"errorMessage":%q,"errorType":"Error"}`, err.Error())
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	default:
		lambdaError(w, http.StatusBadRequest, "InvalidParameterValueException", "unknown invocation type "+typ)
	}
}

func lambdaError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("X-Amzn-Errortype", typ)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"Type":"User","message":%q}`, msg)
}

// Calls are the invocations received, as "<function> <invocation type>".
func (l *LambdaAPI) Calls() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

// Wait waits for the asynchronous invocations under way and returns their
// errors.
func (l *LambdaAPI) Wait() []error {
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// RIEInvoker invokes a function under aws-lambda-rie at its invoke URL
// (http://<address>/2015-03-31/functions/function/invocations).
func RIEInvoker(url string) Invoker {
	return func(ctx context.Context, payload []byte) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Amz-Function-Error") != "" || bytes.Contains(out, []byte(`"errorType"`)) {
			return out, fmt.Errorf("status %d: %.500s", resp.StatusCode, out)
		}
		return out, nil
	}
}
