// Command listserver is a stdio MCP server for the bridge tests. Its extra
// tools are named in a file, so a test can change its surface:
//
//	listserver -tools FILE [-watch] [-refuse FILE]
//
// FILE holds one tool name per line; each such tool answers its own name.
// It is read at start, and with -watch every 20ms, when a change replaces
// the tools (and sends notifications/tools/list_changed). The server always
// has two more tools: pid (answers its process id) and hold {ms, marker}
// (creates the file marker, then waits ms milliseconds or until canceled).
// If the -refuse file exists at start, the server writes its content to
// stderr and exits with status 2.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	toolsFile, watch, refuse := "", false, ""
	for i := 1; i < len(os.Args); i++ {
		switch os.Args[i] {
		case "-tools":
			i++
			toolsFile = os.Args[i]
		case "-watch":
			watch = true
		case "-refuse":
			i++
			refuse = os.Args[i]
		}
	}
	if refuse != "" {
		if msg, err := os.ReadFile(refuse); err == nil {
			fmt.Fprintln(os.Stderr, "listserver: refusing to start:", strings.TrimSpace(string(msg)))
			os.Exit(2)
		}
	}

	s := server.NewMCPServer("listserver", "0.1.0",
		server.WithToolCapabilities(true),
		server.WithInstructions("Test server of the bridge."),
	)
	s.AddTool(mcp.NewTool("pid", mcp.WithDescription("Answer the process id.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strconv.Itoa(os.Getpid())), nil
		})
	s.AddTool(mcp.NewTool("hold",
		mcp.WithDescription("Create the marker file, then wait ms milliseconds."),
		mcp.WithNumber("ms", mcp.Required()),
		mcp.WithString("marker"),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if m := req.GetString("marker", ""); m != "" {
			if err := os.WriteFile(m, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
		}
		t := time.NewTimer(time.Duration(req.GetFloat("ms", 0)) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return mcp.NewToolResultText("held"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})

	var names []string
	load := func() {
		if toolsFile == "" {
			return
		}
		b, err := os.ReadFile(toolsFile)
		if err != nil {
			return
		}
		var next []string
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				next = append(next, l)
			}
		}
		if slices.Equal(next, names) {
			return
		}
		s.DeleteTools(names...)
		names = next
		for _, n := range names {
			s.AddTool(mcp.NewTool(n, mcp.WithDescription("Answer "+n+".")),
				func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText(n), nil
				})
		}
	}
	load()
	if watch {
		go func() {
			for range time.Tick(20 * time.Millisecond) {
				load()
			}
		}()
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	if err := server.NewStdioServer(s).Listen(ctx, os.Stdin, os.Stdout); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "listserver:", err)
		os.Exit(1)
	}
}
