package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/internal/subcommand"
	"github.com/toolrag/mcp-gateway/pkg/aws/awsclient"
	"github.com/toolrag/mcp-gateway/pkg/aws/syncinvoke"
	"github.com/toolrag/mcp-gateway/pkg/bridge"
)

func init() {
	commands.Add("bridge", subcommand.Command{
		Summary: "serve a stdio MCP server over Streamable HTTP (/mcp, /health): toolrag bridge [flags] -- <command> [args...]",
		Usage:   "toolrag bridge [flags] -- <command> [args...]",
		About: `Runs <command> as a pool of stdio MCP server processes and serves it over
Streamable HTTP at --path, with GET /health. The server gets the bridge's
whole environment except ` + bridge.TokenEnv + `.

With ` + bridge.TokenEnv + ` set (the hop credential), every request must carry
Authorization: Bearer <it>; others are answered 401.`,
		Flags: bridgeFlags,
	})
}

func bridgeFlags(fs *flag.FlagSet) subcommand.Run {
	addr := fs.String("addr", ":8080", "listen address")
	fs.StringVar(addr, "listen", ":8080", "same as -addr")
	path := fs.String("path", bridge.DefaultPath, "URL path of the MCP endpoint")
	pool := fs.Int("pool", bridge.DefaultPoolSize, "number of server processes")
	maxConc := fs.Int("max-concurrent", 16, "calls in flight to the server; more wait for a slot")
	callTimeout := fs.Duration("call-timeout", 60*time.Second, "timeout of one call to the server")
	connectTimeout := fs.Duration("connect-timeout", 20*time.Second, "timeout of starting a server process, initialize included")
	refresh := fs.Duration("refresh", bridge.DefaultRefreshInterval, "how often to re-read the server's tools, prompts and resources (negative: only after a restart)")
	healthTimeout := fs.Duration("health-timeout", bridge.DefaultHealthTimeout, "timeout of the ping behind /health")
	drain := fs.Duration("drain", 25*time.Second, "on SIGTERM, how long requests in flight may take to finish")
	name := fs.String("name", "", "name of the server in errors and logs (default: the command's base name)")
	cwd := fs.String("cwd", "", "working directory of the server (default: the bridge's)")
	probe := fs.Bool("probe", false, "check the bridge listening on -addr (GET /health, then an MCP initialize, ping and tools/list at -path, with the hop credential of "+bridge.TokenEnv+") and exit 0 if it is healthy, 1 otherwise: a container health check that needs no curl in the image")
	syncFunction := fs.String("sync-function", os.Getenv("TOOL_RAG_SYNC_FUNCTION"), "on AWS: the sync function to invoke (asynchronously, for -sync-server alone) when the server announces a change of its lists; damped for a server that announces changes in a loop (default $TOOL_RAG_SYNC_FUNCTION)")
	syncServer := fs.String("sync-server", os.Getenv("TOOL_RAG_SYNC_SERVER"), "with -sync-function: the server's id in the gateway's registry (default $TOOL_RAG_SYNC_SERVER)")
	requireToken := fs.Bool("require-token", false, "refuse to start unless "+bridge.TokenEnv+" holds the hop credential (the Fargate images set it, so a missing secret never opens the hop)")
	return func(ctx context.Context, stdout, _ io.Writer) error {
		token := os.Getenv(bridge.TokenEnv)
		if *probe {
			return probeBridge(ctx, *addr, *path, token, *healthTimeout+5*time.Second, stdout)
		}
		if *requireToken && token == "" {
			return fmt.Errorf("bridge: --require-token is set but %s is empty: the task definition must fill it from the server's secret", bridge.TokenEnv)
		}
		cmd := fs.Args()
		if len(cmd) == 0 {
			fs.Usage()
			return errors.New("bridge: no server command: give it after --")
		}
		var inherit []string
		for _, kv := range os.Environ() {
			if k, _, ok := strings.Cut(kv, "="); ok && k != "" {
				inherit = append(inherit, k)
			}
		}
		var trigger func(context.Context) error
		if *syncFunction != "" {
			if *syncServer == "" {
				return errors.New("bridge: -sync-function needs -sync-server, the server's id in the gateway's registry")
			}
			lc, err := awsclient.Lambda(ctx, firstEnv("TOOL_RAG_LAMBDA_ENDPOINT", "AWS_ENDPOINT_URL_LAMBDA", "AWS_ENDPOINT_URL"))
			if err != nil {
				return fmt.Errorf("bridge: the Lambda client for -sync-function: %w", err)
			}
			trigger = syncinvoke.Trigger(lc, *syncFunction, *syncServer)
		}
		b, err := bridge.New(ctx, bridge.Config{
			Command: cmd[0], Args: cmd[1:], Cwd: *cwd, Name: *name, InheritEnv: inherit,
			PoolSize: *pool, MaxConcurrent: *maxConc, CallTimeout: *callTimeout, ConnectTimeout: *connectTimeout,
			RefreshInterval: *refresh, HealthTimeout: *healthTimeout, Path: *path, Token: token,
			Logger: slog.Default(), SyncTrigger: trigger,
		})
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			b.Close()
			return fmt.Errorf("bridge: cannot listen on %s: %w", *addr, err)
		}
		return b.Serve(ctx, ln, *drain)
	}
}

// probeBridge checks the bridge on addr with bridge.Probe and fails
// unless it is healthy.
func probeBridge(ctx context.Context, addr, path, token string, timeout time.Duration, stdout io.Writer) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bridge: -addr %q is not host:port: %w", addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	summary, err := bridge.Probe(ctx, "http://"+net.JoinHostPort(host, port), path, token)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, summary)
	return nil
}

// firstEnv is the first of the named environment variables that is set.
func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}
