// Package jsonhttp is the one outbound JSON client of the gateway: the URL
// embedder, the URL reranker and the LLM planner post JSON through it. It
// bounds every attempt with a timeout and every answer with a size limit,
// retries what is worth retrying (network errors, timeouts, 408, 429 and
// 5xx) with exponential backoff and jitter (a Retry-After header takes
// precedence), and surfaces the error body of a failed answer with the
// API key redacted.
package jsonhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/internal/pause"
	"github.com/toolrag/mcp-gateway/internal/redact"
)

// Config configures a Client.
type Config struct {
	// Name prefixes every error ("embed", "rerank", "planner").
	Name string
	// URL is the endpoint every request is posted to.
	URL string
	// APIKey, when set, is sent as "Authorization: Bearer <APIKey>" and
	// redacted from error bodies.
	APIKey string
	// Timeout bounds each attempt: connecting, sending and reading the
	// whole answer (default 30s).
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt (0:
	// none).
	MaxRetries int
	// RetryBaseDelay is the first backoff delay, doubled per retry, with
	// equal jitter (default 500ms).
	RetryBaseDelay time.Duration
	// MaxRetryDelay caps any single wait, Retry-After included (default
	// 20s).
	MaxRetryDelay time.Duration
	// MaxResponseBytes bounds an answer (default 16 MiB); a larger one is
	// an error, not a truncated body.
	MaxResponseBytes int64
	// HTTPClient defaults to a client without an overall timeout (Timeout
	// applies per attempt).
	HTTPClient *http.Client
	// Sleep waits between retries (default: a timer that ends with ctx);
	// tests replace it to record the delays.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Client posts JSON to one endpoint.
type Client struct{ cfg Config }

// New returns a Client with cfg's defaults filled in.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.RetryBaseDelay <= 0 {
		cfg.RetryBaseDelay = 500 * time.Millisecond
	}
	if cfg.MaxRetryDelay <= 0 {
		cfg.MaxRetryDelay = 20 * time.Second
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 16 << 20
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Sleep == nil {
		cfg.Sleep = pause.For
	}
	return &Client{cfg: cfg}
}

// SetSleep replaces the wait between retries (tests).
func (c *Client) SetSleep(f func(ctx context.Context, d time.Duration) error) { c.cfg.Sleep = f }

// StatusError is an answer other than 200: its status and its body (a
// snippet, the API key redacted).
type StatusError struct {
	Name, URL, Status string
	Code              int
	Body              string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: %s answered %s: %s", e.Name, e.URL, e.Status, e.Body)
}

// retryable marks failures worth another attempt.
type retryable struct{ err error }

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// Post sends body as JSON and returns the body of the 200 answer, retrying
// as the package comment says. An answer other than 200 is a *StatusError
// (after the retries, for a retryable status); an error after more than
// one attempt says how many were made.
func (c *Client) Post(ctx context.Context, body []byte) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		raw, retryAfter, err := c.attempt(ctx, body)
		if err == nil {
			return raw, nil
		}
		var re *retryable
		if !errors.As(err, &re) || attempt >= c.cfg.MaxRetries || ctx.Err() != nil {
			if re != nil {
				err = re.err
				if attempt > 0 {
					err = fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
				}
			}
			return nil, err
		}
		delay := retryAfter
		if delay < 0 {
			delay = Backoff(c.cfg.RetryBaseDelay, attempt)
		}
		if err := c.cfg.Sleep(ctx, min(delay, c.cfg.MaxRetryDelay)); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", c.cfg.Name, c.cfg.URL, err)
		}
	}
}

// attempt makes one HTTP call. retryAfter is the server's Retry-After, or
// -1 when absent.
func (c *Client) attempt(ctx context.Context, body []byte) (raw []byte, retryAfter time.Duration, err error) {
	name, u := c.cfg.Name, c.cfg.URL
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, -1, fmt.Errorf("%s: building the request for %s: %w", name, u, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, -1, fmt.Errorf("%s: %s: %w", name, u, ctx.Err())
		case actx.Err() != nil:
			return nil, -1, &retryable{fmt.Errorf("%s: %s did not answer within %s", name, u, c.cfg.Timeout)}
		}
		return nil, -1, &retryable{fmt.Errorf("%s: calling %s: %w", name, u, scrub(err))}
	}
	defer resp.Body.Close()
	raw, err = io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxResponseBytes+1))
	switch {
	case err != nil && actx.Err() != nil && ctx.Err() == nil:
		return nil, -1, &retryable{fmt.Errorf("%s: %s did not finish its answer within %s", name, u, c.cfg.Timeout)}
	case err != nil:
		return nil, -1, &retryable{fmt.Errorf("%s: reading the answer of %s: %w", name, u, err)}
	case int64(len(raw)) > c.cfg.MaxResponseBytes:
		return nil, -1, fmt.Errorf("%s: the answer of %s is larger than %d bytes", name, u, c.cfg.MaxResponseBytes)
	}
	if resp.StatusCode == http.StatusOK {
		return raw, -1, nil
	}
	serr := &StatusError{Name: name, URL: u, Status: resp.Status, Code: resp.StatusCode, Body: redact.Snippet(raw, c.cfg.APIKey)}
	if Retryable(resp.StatusCode) {
		return nil, ParseRetryAfter(resp.Header.Get("Retry-After")), &retryable{serr}
	}
	return nil, -1, serr
}

// Retryable reports whether an answer with this status is worth another
// attempt: 408, 429 and every 5xx.
func Retryable(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// Backoff is base·2^attempt with equal jitter (between half and all of it).
func Backoff(base time.Duration, attempt int) time.Duration {
	d := base << min(attempt, 16)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// ParseRetryAfter reads seconds or an HTTP date; -1 when absent or invalid.
func ParseRetryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return -1
}

// scrub drops the URL (which may carry credentials in userinfo) from
// net/http errors; the caller names the endpoint itself.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}
