// Package browsertest drives the operator console in headless Chromium
// (chromedp): the console end to end against the local runtime, and the
// first-render benchmark. It is its own module so that chromedp stays out
// of the gateway's go.mod; `make test` runs it (make test-browser).
package browsertest
