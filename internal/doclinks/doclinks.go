package doclinks

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// A Link is one relative link found in a Markdown file.
type Link struct {
	File   string // the Markdown file, relative to the root
	Line   int
	Target string // as written, e.g. "docs/oauth.md#scopes"
}

// A Problem is a link whose target or fragment does not resolve.
type Problem struct {
	Link
	Reason string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Target, p.Reason)
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)(\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	heading    = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// skipDir reports directories whose Markdown is not the project's own
// (installed tools, dependencies, build output) or is test data.
func skipDir(name string) bool {
	switch name {
	case "node_modules", "testdata", "cdk.out", "dist", "bin", "vendor":
		return true
	}
	return strings.HasPrefix(name, ".") && name != "."
}

// Files lists the Markdown files under root, relative to it.
func Files(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}

// parsed is what one Markdown file holds: its relative links and the
// anchors its headings (and explicit <a id>) define.
type parsed struct {
	links   []Link
	anchors map[string]bool
}

func parse(root, file string) (parsed, error) {
	p := parsed{anchors: map[string]bool{}}
	f, err := os.Open(filepath.Join(root, file))
	if err != nil {
		return p, err
	}
	defer f.Close()
	seen := map[string]int{}
	fence := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			p.anchors[m[1]] = true
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			slug := Slug(m[2])
			if k := seen[slug]; k > 0 {
				p.anchors[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				p.anchors[slug] = true
			}
			seen[slug]++
		}
		text := codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, strings.Trim(m[1], "<>"))
		}
		if m := refLink.FindStringSubmatch(text); m != nil {
			targets = append(targets, strings.Trim(m[1], "<>"))
		}
		for _, t := range targets {
			if scheme.MatchString(t) || strings.HasPrefix(t, "//") {
				continue
			}
			p.links = append(p.links, Link{File: file, Line: n, Target: t})
		}
	}
	return p, sc.Err()
}

// Slug is the anchor GitHub gives a heading: the text without inline
// markup, lower case, punctuation other than '-' and '_' dropped, spaces
// turned into '-'.
func Slug(text string) string {
	text = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(text, "$1")
	text = strings.ReplaceAll(text, "`", "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Check returns every relative link of the given Markdown files (relative to
// root) whose file does not exist or whose fragment names no anchor of a
// Markdown target.
func Check(root string, files []string) ([]Problem, error) {
	cache := map[string]parsed{}
	get := func(file string) (parsed, error) {
		if p, ok := cache[file]; ok {
			return p, nil
		}
		p, err := parse(root, file)
		if err == nil {
			cache[file] = p
		}
		return p, err
	}
	var problems []Problem
	for _, file := range files {
		p, err := get(file)
		if err != nil {
			return nil, err
		}
		for _, l := range p.links {
			path, frag, _ := strings.Cut(l.Target, "#")
			target := file
			if path != "" {
				target = filepath.Clean(filepath.Join(filepath.Dir(file), path))
				if strings.HasPrefix(target, "..") {
					problems = append(problems, Problem{l, "points outside the repository"})
					continue
				}
				if _, err := os.Stat(filepath.Join(root, target)); err != nil {
					problems = append(problems, Problem{l, "no such file or directory"})
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			tp, err := get(target)
			if err != nil {
				return nil, err
			}
			if !tp.anchors[frag] {
				problems = append(problems, Problem{l, "no heading or anchor #" + frag + " in " + target})
			}
		}
	}
	return problems, nil
}
