package functions_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/samtemplate"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// freezer is a TCP proxy in front of DynamoDB Local that can stop
// forwarding: connections stay open and requests get no answer, as when
// the DynamoDB process is stopped with SIGSTOP (the shared DynamoDB Local
// of the test binary keeps serving the other clients).
type freezer struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	frozen bool
	thawed chan struct{}
}

func startFreezer(t *testing.T, target string) *freezer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln, target: target, thawed: make(chan struct{})}
	close(f.thawed)
	t.Cleanup(func() { f.thaw(); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *freezer) URL() string { return "http://" + f.ln.Addr().String() }

func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.frozen {
		f.frozen, f.thawed = true, make(chan struct{})
	}
}

func (f *freezer) thaw() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen {
		f.frozen = false
		close(f.thawed)
	}
}

// wait blocks while the proxy is frozen.
func (f *freezer) wait() {
	f.mu.Lock()
	ch := f.thawed
	f.mu.Unlock()
	<-ch
}

func (f *freezer) serve(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", f.target)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				f.wait()
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
}

// emfValues returns, per metric name, the sum of the values of the EMF
// lines in logs that declare it in namespace with the dimension
// FunctionName=function.
func emfValues(t *testing.T, logs, namespace, function string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), `"CloudWatchMetrics"`) {
			continue
		}
		var doc map[string]any
		if json.Unmarshal(line, &doc) != nil {
			continue
		}
		aws, _ := doc["_aws"].(map[string]any)
		cwms, _ := aws["CloudWatchMetrics"].([]any)
		for _, d := range cwms {
			dir, _ := d.(map[string]any)
			dims, _ := json.Marshal(dir["Dimensions"])
			if dir["Namespace"] != namespace || string(dims) != `[["FunctionName"]]` || doc["FunctionName"] != function {
				continue
			}
			ms, _ := dir["Metrics"].([]any)
			for _, m := range ms {
				name, _ := m.(map[string]any)["Name"].(string)
				if v, ok := doc[name].(float64); ok {
					out[name] += v
				}
			}
		}
	}
	return out
}

// TestAlarmMetricsWhileDynamoDBFrozen runs the gateway function under
// aws-lambda-rie with DynamoDB frozen: a request of a live session and
// one with a key the instance has not cached are answered 503, and the
// function's EMF lines carry session_store_errors_total and
// auth_lookup_errors_total, in the namespace, with the dimension and at
// the threshold the stacks' alarms (template.yaml's
// GatewaySessionStoreAlarm and GatewayAuthUnavailableAlarm, the same as
// infra's) read: the alarms' metrics move when DynamoDB stops answering.
func TestAlarmMetricsWhileDynamoDBFrozen(t *testing.T) {
	rie, _ := emulated(t)
	raw, err := os.ReadFile(filepath.Join(testenv.Root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := samtemplate.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	bin := testenv.GoBinary(t, "./functions/gateway")
	d := newDeployment(t)
	ctx := context.Background()
	late := "k-not-cached-0123456789"
	if err := dynamo.NewKeyStore(d.ddb, d.tables.Keys).Create(ctx, policy.Key{ID: "late", SecretHash: policy.HashSecret(late), Servers: map[string]policy.Rule{"echo": {}}}); err != nil {
		t.Fatal(err)
	}

	// The index, as the sync function publishes it.
	startFunction(t, rie, "toolrag-sync", testenv.GoBinary(t, "./functions/sync"), 900, d.env).invoke(t, sample(t, "schedule-sync.json"))

	fz := startFreezer(t, strings.TrimPrefix(d.ddbURL, "http://"))
	env := map[string]string{}
	for k, v := range d.env {
		env[k] = v
	}
	env["TOOL_RAG_DYNAMODB_ENDPOINT"] = fz.URL()
	const fn = "toolrag-gateway-frozen"
	gw := startFunction(t, rie, fn, bin, 29, env)
	r := decodeHTTP(t, gw.invoke(t, sample(t, "http-api-initialize.json")))
	sid := r.header("Mcp-Session-Id")
	if r.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", r.StatusCode, r.Body)
	}

	fz.freeze()
	r = decodeHTTP(t, gw.invoke(t, withBody(t, "http-api-tools-list.json", sid, `{"jsonrpc":"2.0","id":21,"method":"tools/list"}`)))
	if r.StatusCode != 503 || r.header("Retry-After") == "" || !strings.Contains(r.Body, `"id":21`) {
		t.Fatalf("session request with DynamoDB frozen: %d Retry-After %q %s; want 503 with Retry-After and the request's id", r.StatusCode, r.header("Retry-After"), r.Body)
	}
	var ev map[string]any
	if err := json.Unmarshal(sample(t, "http-api-initialize.json"), &ev); err != nil {
		t.Fatal(err)
	}
	ev["headers"].(map[string]any)["authorization"] = "Bearer " + late
	lateInit, _ := json.Marshal(ev)
	r = decodeHTTP(t, gw.invoke(t, lateInit))
	if r.StatusCode != 503 {
		t.Fatalf("uncached key with DynamoDB frozen: %d %s; want 503", r.StatusCode, r.Body)
	}
	fz.thaw()
	// One more invocation after the thaw: the EMF line of the last frozen
	// request is written at the latest here.
	decodeHTTP(t, gw.invoke(t, sample(t, "http-api-health.json")))

	got := emfValues(t, gw.logs.String(), "ToolRAG", fn)
	for _, id := range []string{"GatewaySessionStoreAlarm", "GatewayAuthUnavailableAlarm"} {
		a := tmpl.Resources[id].Properties
		metric, _ := a["MetricName"].(string)
		threshold, _ := a["Threshold"].(int)
		if a["Namespace"] != "ToolRAG" || !strings.Contains(js(a["Dimensions"]), `"FunctionName"`) || a["Statistic"] != "Sum" {
			t.Fatalf("%s no longer reads the gateway's EMF counter: %s", id, js(a))
		}
		if got[metric] < float64(threshold) || threshold < 1 {
			t.Errorf("%s reads %s (Sum >= %d): the gateway's EMF lines add up to %v while DynamoDB was frozen", id, metric, threshold, got[metric])
		}
	}
	t.Logf("EMF while frozen: session_store_errors_total=%v auth_lookup_errors_total=%v", got["session_store_errors_total"], got["auth_lookup_errors_total"])
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }
