package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Server is one entry of infra/servers.generated.json, written by
// `toolrag provision` (pkg/provision.InfraServer; keep the two in step).
type Server struct {
	ID        string            `json:"id"`
	Kind      string            `json:"kind"` // remote | docker | stdio
	Host      string            `json:"host,omitempty"`
	Dir       string            `json:"dir,omitempty"`
	Transport string            `json:"transport"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Build     string            `json:"build,omitempty"`
	Port      int               `json:"port,omitempty"`
	Path      string            `json:"path,omitempty"`
	Command   []string          `json:"command,omitempty"`
	Setup     []string          `json:"setup,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Secrets   map[string]string `json:"secrets,omitempty"`
	BaseImage string            `json:"base_image,omitempty"`
}

type serverList struct {
	Version int      `json:"version"`
	Servers []Server `json:"servers"`
}

// LoadServers reads the provisioner's server list. A missing file is not an
// error: it means no upstream servers (nothing deployed on Fargate, nothing
// written to the registry table).
func LoadServers(path string) ([]Server, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("servers list: %w", err)
	}
	var l serverList
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("servers list %s: %w (run `toolrag provision` to regenerate it)", path, err)
	}
	if l.Version != 1 {
		return nil, fmt.Errorf("servers list %s: version %d is not supported (want 1; run `toolrag provision` again)", path, l.Version)
	}
	seen := map[string]bool{}
	for _, s := range l.Servers {
		switch {
		case s.ID == "":
			return nil, fmt.Errorf("servers list %s: a server has no id", path)
		case seen[s.ID]:
			return nil, fmt.Errorf("servers list %s: server %q is listed twice", path, s.ID)
		case s.Kind == "remote" && s.URL == "":
			return nil, fmt.Errorf("servers list %s: remote server %q has no url", path, s.ID)
		case s.Kind == "docker" && (s.Port == 0 || s.Build == "" || s.Host == ""):
			return nil, fmt.Errorf("servers list %s: docker server %q needs port, build and host", path, s.ID)
		case s.Kind == "stdio" && (len(s.Command) == 0 || s.Dir == "" || s.Host == ""):
			return nil, fmt.Errorf("servers list %s: stdio server %q needs command, dir and host", path, s.ID)
		case s.Kind != "remote" && s.Kind != "docker" && s.Kind != "stdio":
			return nil, fmt.Errorf("servers list %s: server %q has unknown kind %q", path, s.ID, s.Kind)
		}
		seen[s.ID] = true
	}
	sort.Slice(l.Servers, func(i, j int) bool { return l.Servers[i].ID < l.Servers[j].ID })
	return l.Servers, nil
}

// stageExcludes are never copied into a stdio image build folder: local
// install results (the image runs setup itself) and provisioner state.
var stageExcludes = map[string]bool{
	".git": true, "node_modules": true, ".venv": true, "venv": true, "__pycache__": true,
	".provision-state.json": true, ".env": true,
}

// StageStdio writes the image build folder of a stdio server into dir:
// server/ (a copy of the server folder), toolrag (the bridge binary) and a
// Dockerfile that installs the server with its setup steps and starts it
// behind `toolrag bridge`. It reports whether the bridge binary was found;
// when it was not, a stub is written so synth still works and the caller
// reports an error annotation.
func StageStdio(dir, repoRoot string, s Server, fc FargateConfig, baseImage string) (bridgeFound bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	src := filepath.Join(repoRoot, filepath.FromSlash(s.Dir))
	if err := copyDir(src, filepath.Join(dir, "server")); err != nil {
		return false, fmt.Errorf("stdio server %q: copying %s: %w", s.ID, src, err)
	}
	bridgeFound = true
	if err := copyFile(fc.BridgeBinary, filepath.Join(dir, "toolrag"), 0o755); errors.Is(err, os.ErrNotExist) {
		bridgeFound = false
		stub := "#!/bin/sh\necho 'this image was built without the toolrag bridge binary; run make build-bridge and deploy again' >&2\nexit 1\n"
		if err := os.WriteFile(filepath.Join(dir, "toolrag"), []byte(stub), 0o755); err != nil {
			return false, err
		}
	} else if err != nil {
		return false, fmt.Errorf("stdio server %q: copying the bridge binary: %w", s.ID, err)
	}
	df := StdioDockerfile(s, fc, baseImage)
	return bridgeFound, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644)
}

// StdioDockerfile renders the Dockerfile of a stdio server. Setup steps and
// the command use the exec (JSON) form, so no step is re-parsed by Docker;
// literal env values are given to the setup steps through env(1) and to the
// running container by the task definition.
func StdioDockerfile(s Server, fc FargateConfig, baseImage string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Generated by the toolrag CDK app for stdio server %q. Do not edit.\n", s.ID)
	fmt.Fprintf(&b, "FROM %s\n", baseImage)
	b.WriteString("WORKDIR /srv/server\nCOPY server/ ./\n")
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, step := range s.Setup {
		argv := []string{"env"}
		for _, k := range keys {
			argv = append(argv, k+"="+s.Env[k])
		}
		argv = append(argv, "sh", "-c", step)
		fmt.Fprintf(&b, "RUN %s\n", jsonArray(argv))
	}
	b.WriteString("COPY toolrag /usr/local/bin/toolrag\n")
	if s.Cwd != "" {
		fmt.Fprintf(&b, "WORKDIR %s\n", "/srv/server/"+strings.TrimPrefix(filepath.ToSlash(filepath.Clean(s.Cwd)), "./"))
	}
	// Not root: the task definition runs the container as fc.User too, on
	// a read-only root filesystem with /tmp writable (HOME).
	if fc.User != "" {
		fmt.Fprintf(&b, "ENV HOME=/tmp\nUSER %s\n", fc.User)
	}
	fmt.Fprintf(&b, "EXPOSE %d\n", fc.BridgePort)
	entry := []string{"/usr/local/bin/toolrag"}
	for _, a := range fc.BridgeArgs {
		a = strings.ReplaceAll(a, "{port}", strconv.Itoa(fc.BridgePort))
		a = strings.ReplaceAll(a, "{path}", "/mcp")
		a = strings.ReplaceAll(a, "{id}", s.ID)
		entry = append(entry, a)
	}
	fmt.Fprintf(&b, "ENTRYPOINT %s\n", jsonArray(entry))
	fmt.Fprintf(&b, "CMD %s\n", jsonArray(s.Command))
	return b.String()
}

func jsonArray(a []string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(a)
	return strings.TrimSpace(b.String())
}

func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel != "." && stageExcludes[d.Name()] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			return copyFile(p, target, info.Mode().Perm())
		}
		return nil // sockets, devices: skipped
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
