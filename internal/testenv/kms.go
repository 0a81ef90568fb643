package testenv

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// KMS returns the endpoint URL ("http://127.0.0.1:<port>") of a local-kms
// (github.com/nsmithuk/local-kms, built by scripts/deps.sh into
// .tools/bin) shared by the whole test binary, started on first use with
// its key database in a temporary folder and stopped like DynamoDB Local
// (Main, or the kernel when the test binary exits). Each test creates its
// own keys. local-kms listens on every interface of the port; tests reach
// it on 127.0.0.1.
//
// When TOOLRAG_KMS_ENDPOINT is set that endpoint is used and nothing is
// started.
func KMS(t testing.TB) string {
	t.Helper()
	if ep := os.Getenv("TOOLRAG_KMS_ENDPOINT"); ep != "" {
		return ep
	}
	bin := filepath.Join(ToolsDir(t), "bin", "local-kms")
	if _, err := os.Stat(bin); err != nil {
		Missing(t, "local-kms ("+bin+")")
	}
	return localKMS.get(t, "local-kms", func() (string, func(), error) { return startLocalKMS(bin) })
}

var localKMS shared[string]

func startLocalKMS(bin string) (string, func(), error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "toolrag-kms-")
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "KMS_DATA_PATH="+dir,
		"KMS_SEED_PATH="+filepath.Join(dir, "none.yaml"), "KMS_REGION=us-east-1", "KMS_ACCOUNT_ID=111122223333")
	ep := "http://127.0.0.1:" + strconv.Itoa(port)
	stop, err := startDaemon(cmd, "local-kms on "+ep, 30*time.Second, func(c *http.Client) bool { return answersKMS(c, ep) })
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return ep, func() {
		stop()
		os.RemoveAll(dir)
	}, nil
}

// answersKMS reports whether ep answers a ListKeys request as KMS does.
func answersKMS(client *http.Client, ep string) bool {
	resp := callAWSJSON(client, ep, "kms", "1.1", "TrentService.ListKeys", `{}`)
	if resp == nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Type") != "" && strings.Contains(resp.Header.Get("Content-Type"), "json")
}
