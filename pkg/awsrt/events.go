package awsrt

import "time"

// sessionStateIdle is how long mcp-go keeps the per-session transport state
// of an idle legacy session in one instance (the session itself lives in
// the sessions table and outlives it).
const sessionStateIdle = 10 * time.Minute
