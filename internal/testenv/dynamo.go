package testenv

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// DynamoDB Local lifecycle
//
// DynamoDB returns the endpoint of one DynamoDB Local process shared by every
// test of the test binary. The process is started on first use (not at all
// when no test needs it) and stopped in one of two ways:
//
//   - a package that calls testenv.Main(m) from its TestMain stops it
//     gracefully after the last test;
//   - in any case the JVM is started with PR_SET_PDEATHSIG=SIGKILL from an OS
//     thread that lives as long as the test binary, so the kernel kills it
//     when the test binary exits or crashes. No emulator outlives its tests.
//
// Tests share the process, so each test must use its own table names (for
// example a prefix from UniqueName).
//
// When TOOLRAG_DYNAMODB_ENDPOINT is set (for example LocalStack or a DynamoDB
// Local started by hand) that endpoint is used and nothing is started.

var (
	dynamoLocal shared[string]

	atExitMu sync.Mutex
	atExit   []func()
)

// Main runs the tests of a package and then stops the external programs the
// tests started through testenv (DynamoDB Local). Use it from TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	atExitMu.Lock()
	fns := atExit
	atExit = nil
	atExitMu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
	os.Exit(code)
}

// AtExit runs fn after every test and benchmark of the binary, when Main
// returns: the cleanup of something a benchmark starts once and every
// later run reuses (a cleanup of the benchmark itself would run after its
// first run). fn must not use the testing.TB.
func AtExit(fn func()) { registerAtExit(fn) }

func registerAtExit(fn func()) {
	atExitMu.Lock()
	atExit = append(atExit, fn)
	atExitMu.Unlock()
}

// DynamoDB returns the endpoint URL ("http://127.0.0.1:<port>") of a
// DynamoDB Local shared by the whole test binary, starting it on first use
// (java -jar .tools/dynamodb-local/DynamoDBLocal.jar -inMemory -sharedDb).
// DynamoDB Local, not dynalite, because the stores use transactions and TTL.
func DynamoDB(t testing.TB) string {
	t.Helper()
	if ep := os.Getenv("TOOLRAG_DYNAMODB_ENDPOINT"); ep != "" {
		return ep
	}
	dir := filepath.Join(ToolsDir(t), "dynamodb-local")
	jar := filepath.Join(dir, "DynamoDBLocal.jar")
	if _, err := os.Stat(jar); err != nil {
		Missing(t, "DynamoDB Local ("+jar+")")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		Missing(t, "java (Java 17 runs DynamoDB Local)")
	}
	return dynamoLocal.get(t, "DynamoDB Local", func() (string, func(), error) { return startDynamoDBLocal(java, dir, jar) })
}

// UniqueName returns a name that no other test of this run uses, made of
// prefix, the test name (sanitized for DynamoDB table names) and a counter.
func UniqueName(t testing.TB, prefix string) string {
	uniqueMu.Lock()
	uniqueN++
	n := uniqueN
	uniqueMu.Unlock()
	var b []byte
	for _, r := range t.Name() {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b = append(b, byte(r))
		default:
			b = append(b, '_')
		}
	}
	if len(b) > 60 {
		b = b[len(b)-60:]
	}
	return fmt.Sprintf("%s%s-%d-%d", prefix, b, os.Getpid()%100000, n)
}

var (
	uniqueMu sync.Mutex
	uniqueN  int
)

func startDynamoDBLocal(java, dir, jar string) (endpoint string, stop func(), err error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(java,
		"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx512m",
		"-Djava.library.path="+filepath.Join(dir, "DynamoDBLocal_lib"),
		"-jar", jar, "-inMemory", "-sharedDb", "-disableTelemetry", "-port", strconv.Itoa(port))
	cmd.Dir = dir
	endpoint = "http://127.0.0.1:" + strconv.Itoa(port)
	stop, err = startDaemon(cmd, "DynamoDB Local on "+endpoint, 120*time.Second, func(c *http.Client) bool { return answersDynamoDB(c, endpoint) })
	if err != nil {
		return "", nil, err
	}
	return endpoint, stop, nil
}

// answersDynamoDB reports whether endpoint answers a ListTables request
// the way DynamoDB does.
func answersDynamoDB(client *http.Client, endpoint string) bool {
	resp := callAWSJSON(client, endpoint, "dynamodb", "1.0", "DynamoDB_20120810.ListTables", `{"Limit":1}`)
	if resp == nil {
		return false
	}
	defer resp.Body.Close()
	var out struct {
		TableNames *[]string `json:"TableNames"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&out) == nil && out.TableNames != nil
}

// callAWSJSON posts body to endpoint as a call of target in the AWS JSON
// protocol of version ("1.0", "1.1"), signed for service with any
// credentials (the emulators check only that there are some), and returns
// the answer, or nil when none came.
func callAWSJSON(client *http.Client, endpoint, service, version, target, body string) *http.Response {
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return nil
	}
	req.Header.Set("Content-Type", "application/x-amz-json-"+version)
	req.Header.Set("X-Amz-Target", target)
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/"+service+"/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := client.Do(req)
	if err != nil {
		return nil
	}
	return resp
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
