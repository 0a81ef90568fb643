// Package guard holds the repository's structural checks, run by `make test`
// with every other test: the shipped binaries (cmd/toolrag and
// functions/*) never link the lab (lab/: training, evaluations, load tests),
// and every package says what it is for in a doc comment. It has no code of
// its own; the checks are its tests, which read the module with `go list`.
package guard
