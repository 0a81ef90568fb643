// Package provision turns the server folders under servers/<id>/, each
// described by a manifest.yaml, into the files the gateway and the deploy
// tools read:
//
//   - config/registry.generated.yaml: the upstream registry the gateway
//     merges under config/registry.yaml (a stdio server whose setup steps
//     have not run is left out of it until they have);
//   - docker-compose.servers.yml: one compose service per docker-kind server;
//   - infra/servers.generated.json: the list the CDK app deploys to AWS.
//
// It also runs the one-time setup steps of stdio servers (npm ci, pip
// install, go build, ...), again only when they change.
//
// Generated files are rewritten in full on every run, so removing a server's
// folder and provisioning again removes it everywhere. When a manifest is
// invalid or a setup step fails, no generated file is touched.
package provision

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Generated file paths, relative to the repository root.
const (
	RegistryFile = "config/registry.generated.yaml"
	ComposeFile  = "docker-compose.servers.yml"
	InfraFile    = "infra/servers.generated.json"
	ServersDir   = "servers"
	ManifestName = "manifest.yaml"
	StateName    = ".provision-state.json"
)

// Options configures Run.
type Options struct {
	// Root is the repository root holding servers/ (default ".").
	Root string
	// Host means the gateway runs on the host, not in compose: docker-kind
	// servers publish their port on 127.0.0.1 and are registered as
	// http://127.0.0.1:<port><path> instead of http://<service>:<port><path>.
	Host bool
	// Force re-runs every stdio setup step even when unchanged.
	Force bool
	// Only limits setup to the server with this id. The generated files
	// still list every server.
	Only string
	// AllowSetup runs the setup steps of stdio manifests (shell commands
	// from servers/<id>/manifest.yaml, run as the current user): only with
	// this explicit consent (toolrag provision --allow-setup), never as part
	// of a sync. Without it, pending steps are listed and not run.
	AllowSetup bool
	// SkipSetup writes the generated files without running or listing any
	// setup step (for example on a machine that only deploys: the AWS image
	// build runs the steps itself).
	SkipSetup bool
	// Out receives progress and setup output (nil = discard).
	Out io.Writer
}

// Run provisions every server under <Root>/servers. Manifest problems are
// returned as Errors (each with file and line) and nothing is written.
func Run(ctx context.Context, opts Options) error {
	if opts.Root == "" {
		opts.Root = "."
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	servers, err := Load(opts.Root, out)
	if err != nil {
		return err
	}
	if opts.Only != "" {
		found := false
		for _, m := range servers {
			found = found || m.ID == opts.Only
		}
		if !found {
			return fmt.Errorf("provision: --only %q: no server with that id under %s (ids: %s)", opts.Only, ServersDir, idList(servers))
		}
	}
	files, err := Render(servers, opts.Host)
	if err != nil {
		return err
	}
	if !opts.SkipSetup {
		for _, m := range servers {
			if m.Kind != KindStdio || len(m.Setup) == 0 || (opts.Only != "" && m.ID != opts.Only) {
				continue
			}
			if !opts.AllowSetup {
				if opts.Force || setupPending(opts.Root, m) {
					fmt.Fprintf(out, "provision: %s: %d setup step(s) not run: they are shell commands from %s; review them, then run `toolrag provision --allow-setup`\n",
						m.ID, len(m.Setup), path.Join(ServersDir, m.ID, ManifestName))
				}
				continue
			}
			if err := runSetup(ctx, opts.Root, m, opts.Force, out); err != nil {
				return err
			}
		}
	}
	// A stdio server whose setup has not run cannot start: it stays out of
	// the registry a local gateway reads (which would try it and log its
	// failure) until its setup has run; the compose and infra files keep
	// it, since the image builds run the steps themselves.
	if !opts.SkipSetup {
		var ready, pending []*Manifest
		for _, m := range servers {
			if m.Kind == KindStdio && len(m.Setup) > 0 && setupPending(opts.Root, m) {
				pending = append(pending, m)
				fmt.Fprintf(out, "provision: %s: left out of %s until its setup has run\n", m.ID, RegistryFile)
				continue
			}
			ready = append(ready, m)
		}
		if len(pending) > 0 {
			reg, err := Render(ready, opts.Host)
			if err != nil {
				return err
			}
			files[RegistryFile] = append(reg[RegistryFile], []byte(fmt.Sprintf(
				"# Left out until their setup has run (review it, then `toolrag provision --allow-setup`): %s\n", idList(pending)))...)
		}
	}
	for _, name := range []string{RegistryFile, ComposeFile, InfraFile} {
		if err := writeAtomic(filepath.Join(opts.Root, filepath.FromSlash(name)), files[name]); err != nil {
			return fmt.Errorf("provision: writing %s: %w", name, err)
		}
	}
	counts := map[string]int{}
	for _, m := range servers {
		counts[m.Kind]++
	}
	fmt.Fprintf(out, "provision: %d servers (%d stdio, %d docker, %d remote); wrote %s, %s, %s\n",
		len(servers), counts[KindStdio], counts[KindDocker], counts[KindRemote], RegistryFile, ComposeFile, InfraFile)
	return nil
}

func idList(ms []*Manifest) string {
	if len(ms) == 0 {
		return "none"
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return strings.Join(ids, ", ")
}

// Load reads and validates every <root>/servers/<id>/manifest.yaml, sorted
// by id. Folders without a manifest are skipped with a note on out (which
// may be nil). All problems of all manifests are returned together as Errors.
func Load(root string, out io.Writer) ([]*Manifest, error) {
	if out == nil {
		out = io.Discard
	}
	dir := filepath.Join(root, ServersDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("provision: reading %s: %w", dir, err)
	}
	var (
		servers []*Manifest
		errs    Errors
	)
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		rel := path.Join(ServersDir, name, ManifestName)
		data, err := os.ReadFile(filepath.Join(dir, name, ManifestName))
		if errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(out, "provision: %s/%s has no %s; skipped\n", ServersDir, name, ManifestName)
			continue
		}
		if err != nil {
			errs = append(errs, &Error{File: rel, Msg: "cannot read: " + err.Error()})
			continue
		}
		m, err := ParseManifest(rel, data)
		var perrs Errors
		if errors.As(err, &perrs) {
			errs = append(errs, perrs...)
			continue
		} else if err != nil {
			errs = append(errs, &Error{File: rel, Msg: err.Error()})
			continue
		}
		if m.ID != name {
			errs = append(errs, &Error{File: rel, Line: m.line("id"), Msg: fmt.Sprintf("id %q must equal the folder name %q", m.ID, name)})
			continue
		}
		if m.Kind == KindDocker {
			df := filepath.Join(dir, name, filepath.FromSlash(m.Build), "Dockerfile")
			if st, err := os.Stat(df); err != nil || st.IsDir() {
				errs = append(errs, &Error{File: rel, Line: m.line("build"), Msg: fmt.Sprintf("kind docker needs a Dockerfile in its build context %s", path.Join(ServersDir, name, m.Build))})
				continue
			}
		}
		servers = append(servers, m)
	}
	errs = append(errs, checkUnique(servers)...)
	if len(errs) > 0 {
		return nil, errs.sorted()
	}
	sort.Slice(servers, func(i, j int) bool { return servers[i].ID < servers[j].ID })
	return servers, nil
}

// checkUnique rejects ids that differ only in case (they clash on
// case-insensitive file systems and in DNS) and deployable servers whose
// DNS names clash.
func checkUnique(ms []*Manifest) Errors {
	var errs Errors
	byFold := map[string]*Manifest{}
	byHost := map[string]*Manifest{}
	for _, m := range ms {
		if prev, ok := byFold[strings.ToLower(m.ID)]; ok {
			errs = append(errs, &Error{File: m.File, Line: m.line("id"), Msg: fmt.Sprintf("duplicate id %q: %s already declares %q (ids must differ in more than case)", m.ID, prev.File, prev.ID)})
			continue
		}
		byFold[strings.ToLower(m.ID)] = m
		if m.Kind == KindRemote {
			continue
		}
		h, err := HostName(m.ID)
		if err != nil {
			errs = append(errs, &Error{File: m.File, Line: m.line("id"), Msg: err.Error()})
			continue
		}
		if prev, ok := byHost[h]; ok {
			errs = append(errs, &Error{File: m.File, Line: m.line("id"), Msg: fmt.Sprintf("id %q gives the same host name %q as %q in %s; rename one", m.ID, h, prev.ID, prev.File)})
			continue
		}
		byHost[h] = m
	}
	return errs
}

// HostName returns the DNS label a deployable server is reached at (compose
// service name, Cloud Map service name): the id in lower case with every
// character other than a-z, 0-9 and '-' replaced by '-'.
func HostName(id string) (string, error) {
	b := []byte(strings.ToLower(id))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '-'
		}
	}
	h := strings.Trim(string(b), "-")
	if h == "" || len(h) > 63 {
		return "", fmt.Errorf("id %q cannot be turned into a host name (1 to 63 letters, digits and dashes)", id)
	}
	return h, nil
}

// writeAtomic replaces name with data through a temporary file in the same
// folder, so a reader never sees a half-written file.
func writeAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
