// Package doclinks checks the repository's Markdown: every relative link and
// image in a README or a doc must name a file or directory that exists, and
// every #fragment must name a heading (or an explicit anchor) of its target.
// The checks are tests, so `make test` fails on a broken link, and on
// docs/benchmarks.md or docs/retrieval.md outgrowing its line limit.
package doclinks
