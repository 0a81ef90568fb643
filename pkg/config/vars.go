package config

import (
	"fmt"
	"strings"
	"time"
)

// Vars reads settings through getenv and collects every invalid value, so
// that one error names them all (what FromEnv does for Env, for a
// runtime's own settings).
type Vars struct{ p parser }

// NewVars reads through getenv.
func NewVars(getenv func(string) string) *Vars { return &Vars{parser{getenv: getenv}} }

// Str returns the trimmed value, or def when unset.
func (v *Vars) Str(name, def string) string { return v.p.str(name, def) }

// Seconds reads a non-negative number of seconds.
func (v *Vars) Seconds(name string, def time.Duration) time.Duration {
	return v.p.seconds(name, def.Seconds())
}

// Int reads an integer from min to max.
func (v *Vars) Int(name string, def, min, max int) int { return v.p.int(name, def, min, max) }

// Bool reads 1/0, true/false, yes/no or on/off.
func (v *Vars) Bool(name string, def bool) bool { return v.p.bool(name, def) }

// Fail records an invalid value found by the caller.
func (v *Vars) Fail(format string, args ...any) {
	v.p.errs = append(v.p.errs, fmt.Sprintf(format, args...))
}

// Err names every invalid value, or is nil.
func (v *Vars) Err() error {
	if len(v.p.errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid environment: %s", strings.Join(v.p.errs, "; "))
}
