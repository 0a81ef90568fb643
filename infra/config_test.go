package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
		want string // "" = valid
	}{
		{"defaults", func(c *Config) {}, ""},
		{"bad stage", func(c *Config) { c.Stage = "my stage" }, `stage "my stage"`},
		{"unknown embedder", func(c *Config) { c.Embedder.Kind = "openai" }, `embedder.kind "openai"`},
		{"url embedder without url", func(c *Config) { c.Embedder.Kind = "url" }, "embedder.url is required"},
		{"bedrock without dims", func(c *Config) { c.Embedder = EmbedderConfig{Kind: "bedrock", ModelID: "m", Dims: -1} }, "embedder.dims"},
		{"unknown reranker", func(c *Config) { c.Reranker.Kind = "local" }, `reranker.kind "local"`},
		{"bad schedule", func(c *Config) { c.SyncSchedule = "every 5 minutes" }, `syncSchedule "every 5 minutes"`},
		{"schedule off", func(c *Config) { c.HealthSchedule = "off" }, ""},
		{"prefix without slash", func(c *Config) { c.IndexPrefix = "index" }, `indexPrefix "index"`},
		{"bad egress", func(c *Config) { c.Vpc.Egress = "igw" }, `vpc.egress "igw"`},
		{"bad secrets store", func(c *Config) { c.SecretsStore = "vault" }, `secretsStore "vault"`},
		{"bad arch", func(c *Config) { c.Fargate.Architecture = "riscv" }, `fargate.architecture "riscv"`},
		{"domain without cert", func(c *Config) { c.Domain = &DomainConfig{Name: "mcp.example.com"} }, "domain needs name and certificateArn"},
		{"gateway 2048 MiB", func(c *Config) { c.Functions.Gateway.MemoryMiB = 2048 }, ""},
		{"largest function", func(c *Config) { c.Functions.Sync = FunctionSize{MemoryMiB: 10240, TimeoutSeconds: 900} }, ""},
		{"gateway at the HTTP API limit", func(c *Config) { c.Functions.Gateway.TimeoutSeconds = 30 }, ""},
		{"gateway memory too small", func(c *Config) { c.Functions.Gateway.MemoryMiB = 64 }, "functions.gateway.memoryMiB 64 must be between 128 and 10240"},
		{"sync memory too large", func(c *Config) { c.Functions.Sync.MemoryMiB = 10241 }, "functions.sync.memoryMiB 10241 must be between 128 and 10240"},
		{"health memory negative", func(c *Config) { c.Functions.Health.MemoryMiB = -1 }, "functions.health.memoryMiB -1"},
		{"sync timeout too long", func(c *Config) { c.Functions.Sync.TimeoutSeconds = 901 }, "functions.sync.timeoutSeconds 901 must be between 1 and 900"},
		{"health timeout negative", func(c *Config) { c.Functions.Health.TimeoutSeconds = -5 }, "functions.health.timeoutSeconds -5"},
		{"gateway timeout beyond the HTTP API", func(c *Config) { c.Functions.Gateway.TimeoutSeconds = 31 }, "functions.gateway.timeoutSeconds 31 must be at most 30: API Gateway's HTTP API stops waiting"},
		{"gateway timeout beyond Lambda", func(c *Config) { c.Functions.Gateway.TimeoutSeconds = 1000 }, "functions.gateway.timeoutSeconds 1000 must be between 1 and 900"},
		{"streamed front door", func(c *Config) { c.Streamed = &StreamedConfig{} }, ""},
		{"streamed timeout beyond Lambda", func(c *Config) {
			c.Streamed, c.Functions.GatewayStream.TimeoutSeconds = &StreamedConfig{}, 901
		}, "functions.gatewayStream.timeoutSeconds 901 must be between 1 and 900"},
		{"streamed concurrency", func(c *Config) { c.Functions.GatewayStream.ReservedConcurrency = 1001 }, "functions.gatewayStream.reservedConcurrency 1001"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var cfg Config
			c.edit(&cfg)
			cfg.Defaults()
			err := cfg.Validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	var c Config
	c.Stage = "prod"
	c.Embedder.Kind = "bedrock"
	c.Defaults()
	if c.Embedder.ModelID != "amazon.titan-embed-text-v2:0" || c.Embedder.Dims != 512 {
		t.Errorf("bedrock defaults %+v", c.Embedder)
	}
	if c.SecretsPrefix != "/toolrag/prod/" || c.Vpc.Namespace != "toolrag-prod.internal" || c.IndexPrefix != "index/" {
		t.Errorf("defaults %+v", c)
	}
	want := FunctionsConfig{
		Gateway: FunctionSize{MemoryMiB: 1769, TimeoutSeconds: 29, ReservedConcurrency: 100},
		Sync:    FunctionSize{MemoryMiB: 2240, TimeoutSeconds: 900},
		Health:  FunctionSize{MemoryMiB: 256, TimeoutSeconds: 60},
		// The streamed front door's function follows the gateway's memory.
		GatewayStream: FunctionSize{MemoryMiB: 1769, TimeoutSeconds: 900, ReservedConcurrency: 20},
	}
	if c.Functions != want {
		t.Errorf("function defaults %+v, want %+v", c.Functions, want)
	}
	// A size given in the file is kept; only the zero fields are filled.
	c = Config{Functions: FunctionsConfig{Gateway: FunctionSize{MemoryMiB: 2048}}}
	c.Defaults()
	if c.Functions.Gateway != (FunctionSize{MemoryMiB: 2048, TimeoutSeconds: 29, ReservedConcurrency: 100}) || c.Functions.Sync != want.Sync {
		t.Errorf("partial functions block: %+v", c.Functions)
	}
}

// TestExampleFunctions keeps config.example.json's functions block equal
// to the defaults, so the example documents them.
func TestExampleFunctions(t *testing.T) {
	c, err := LoadConfig("config.example.json")
	if err != nil {
		t.Fatal(err)
	}
	var d Config
	d.Defaults()
	if c.Functions != d.Functions {
		t.Errorf("config.example.json functions %+v, defaults %+v", c.Functions, d.Functions)
	}
}

func TestFunctionContext(t *testing.T) {
	cases := []struct {
		ctx     map[string]string
		want    FunctionsConfig // after Defaults
		wantErr string
	}{
		{ctx: map[string]string{}, want: FunctionsConfig{Gateway: FunctionSize{1024, 29, 100}, Sync: FunctionSize{2240, 900, 0}, Health: FunctionSize{256, 60, 0}, GatewayStream: FunctionSize{1024, 900, 20}}},
		{ctx: map[string]string{"gatewayMemory": "2048"}, want: FunctionsConfig{Gateway: FunctionSize{2048, 29, 100}, Sync: FunctionSize{2240, 900, 0}, Health: FunctionSize{256, 60, 0}, GatewayStream: FunctionSize{2048, 900, 20}}},
		{ctx: map[string]string{"gatewayMemory": "3008", "syncMemory": "4096"}, want: FunctionsConfig{Gateway: FunctionSize{3008, 29, 100}, Sync: FunctionSize{4096, 900, 0}, Health: FunctionSize{256, 60, 0}, GatewayStream: FunctionSize{3008, 900, 20}}},
		// Defaults derived from the catalog size; reserved concurrency off.
		{ctx: map[string]string{"expectedTools": "10000", "gatewayReservedConcurrency": "-1"}, want: FunctionsConfig{Gateway: FunctionSize{1024, 29, -1}, Sync: FunctionSize{1024, 900, 0}, Health: FunctionSize{256, 60, 0}, GatewayStream: FunctionSize{1024, 900, 20}}},
		{ctx: map[string]string{"expectedTools": "300000"}, want: FunctionsConfig{Gateway: FunctionSize{1024, 29, 100}, Sync: FunctionSize{6464, 900, 0}, Health: FunctionSize{256, 60, 0}, GatewayStream: FunctionSize{1024, 900, 20}}},
		{ctx: map[string]string{"gatewayMemory": "2GB"}, wantErr: `context gatewayMemory "2GB" is not a number`},
		{ctx: map[string]string{"syncMemory": ""}, wantErr: `context syncMemory "" is not a number`},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.ctx), func(t *testing.T) {
			// The file says 1024 for the gateway; the context wins.
			cfg := Config{Functions: FunctionsConfig{Gateway: FunctionSize{MemoryMiB: 1024}}}
			err := cfg.applyContext(func(k string) (string, bool) { v, ok := c.ctx[k]; return v, ok })
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg.Defaults()
			if cfg.Functions != c.want {
				t.Errorf("functions %+v, want %+v", cfg.Functions, c.want)
			}
		})
	}
	// An override outside Lambda's limits is caught by Validate.
	cfg := Config{}
	if err := cfg.applyContext(func(k string) (string, bool) { return "20000", k == "gatewayMemory" }); err != nil {
		t.Fatal(err)
	}
	cfg.Defaults()
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "functions.gateway.memoryMiB 20000") {
		t.Errorf("err = %v", err)
	}
}

func TestLoadConfig(t *testing.T) {
	c, err := LoadConfig("config.example.json")
	if err != nil {
		t.Fatalf("the example config does not load: %v", err)
	}
	c.Defaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("the example config is invalid: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(bad, []byte(`{"stage":"dev","embeder":{"kind":"builtin"}}`), 0o644)
	if _, err := LoadConfig(bad); err == nil || !strings.Contains(err.Error(), `unknown field "embeder"`) {
		t.Errorf("typo in config: err = %v", err)
	}
	applied := Config{}
	ctx := map[string]string{"stage": "qa", "embedder": "bedrock", "bedrockDims": "256"}
	if err := applied.applyContext(func(k string) (string, bool) { v, ok := ctx[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if applied.Stage != "qa" || applied.Embedder.Kind != "bedrock" || applied.Embedder.Dims != 256 {
		t.Errorf("context not applied: %+v", applied)
	}
	ctx["bedrockDims"] = "many"
	if err := applied.applyContext(func(k string) (string, bool) { v, ok := ctx[k]; return v, ok }); err == nil {
		t.Error("bad bedrockDims accepted")
	}
}

func TestLoadServers(t *testing.T) {
	if s, err := LoadServers(filepath.Join(t.TempDir(), "absent.json")); err != nil || s != nil {
		t.Fatalf("a missing list must mean no servers: %v %v", s, err)
	}
	cases := []struct{ name, body, want string }{
		{"not json", `{`, "run `toolrag provision`"},
		{"version", `{"version":2,"servers":[]}`, "version 2 is not supported"},
		{"no id", `{"version":1,"servers":[{"kind":"remote","url":"https://x"}]}`, "has no id"},
		{"dup", `{"version":1,"servers":[{"id":"a","kind":"remote","url":"https://x"},{"id":"a","kind":"remote","url":"https://y"}]}`, "listed twice"},
		{"remote without url", `{"version":1,"servers":[{"id":"a","kind":"remote"}]}`, "has no url"},
		{"docker without port", `{"version":1,"servers":[{"id":"a","kind":"docker","build":"servers/a","host":"a"}]}`, "needs port"},
		{"unknown kind", `{"version":1,"servers":[{"id":"a","kind":"lambda"}]}`, `unknown kind "lambda"`},
	}
	for _, c := range cases {
		p := filepath.Join(t.TempDir(), "s.json")
		os.WriteFile(p, []byte(c.body), 0o644)
		if _, err := LoadServers(p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

func TestStdioDockerfileQuoting(t *testing.T) {
	var fc FargateConfig
	c := Config{Fargate: fc}
	c.Defaults()
	s := Server{
		ID: "q", Kind: "stdio", Host: "q", Dir: "servers/q",
		Setup:   []string{`echo "a $HOME \ b"` + "\nnpm ci"},
		Command: []string{"node", `it's "quoted".js`},
		Env:     map[string]string{"B": "2", "A": `x"y`},
	}
	df := StdioDockerfile(s, c.Fargate, "base:1")
	var run, cmd []string
	for _, line := range strings.Split(df, "\n") {
		if v, ok := strings.CutPrefix(line, "RUN "); ok {
			if err := json.Unmarshal([]byte(v), &run); err != nil {
				t.Fatalf("RUN line is not a JSON array: %v\n%s", err, df)
			}
		}
		if v, ok := strings.CutPrefix(line, "CMD "); ok {
			if err := json.Unmarshal([]byte(v), &cmd); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{"env", `A=x"y`, "B=2", "sh", "-c", s.Setup[0]}
	if strings.Join(run, "|") != strings.Join(want, "|") {
		t.Errorf("RUN = %q, want %q", run, want)
	}
	if strings.Join(cmd, "|") != strings.Join(s.Command, "|") {
		t.Errorf("CMD = %q", cmd)
	}
	if strings.Count(df, "\n") != 11 { // with ENV HOME and USER
		t.Errorf("a newline in a step leaked into the Dockerfile:\n%s", df)
	}
}

func TestStageStdioExcludes(t *testing.T) {
	root := t.TempDir()
	srv := filepath.Join(root, "servers", "s")
	for _, p := range []string{"main.py", "node_modules/x/index.js", ".git/HEAD", ".provision-state.json", "lib/a.py"} {
		os.MkdirAll(filepath.Dir(filepath.Join(srv, p)), 0o755)
		os.WriteFile(filepath.Join(srv, p), []byte("x"), 0o644)
	}
	c := Config{}
	c.Defaults()
	c.Fargate.BridgeBinary = filepath.Join(root, "nope")
	dir := filepath.Join(t.TempDir(), "s")
	found, err := StageStdio(dir, root, Server{ID: "s", Kind: "stdio", Host: "s", Dir: "servers/s", Command: []string{"python", "main.py"}}, c.Fargate, "base")
	if err != nil {
		t.Fatal(err)
	}
	if found {
		t.Error("bridge reported found")
	}
	for p, want := range map[string]bool{"server/main.py": true, "server/lib/a.py": true, "server/node_modules": false, "server/.git": false, "server/.provision-state.json": false, "Dockerfile": true, "toolrag": true} {
		_, err := os.Stat(filepath.Join(dir, p))
		if (err == nil) != want {
			t.Errorf("%s present=%v, want %v", p, err == nil, want)
		}
	}
}
