// Package reliability holds the gateway's integration tests for failure and
// abuse: upstreams that crash, hang, answer garbage or too much, sync runs
// that are interrupted or meet a dead upstream, the access-policy matrix over
// every surface and key kind, secrets kept out of logs and metrics, rate
// limits and request limits. It has no non-test code; see docs/reliability.md.
package reliability
