package testenv

import (
	"reflect"
	"strings"
	"testing"
)

// EnvCase is one row of a table test of a FromEnv-style parser: the
// variables set (all others are empty), and either the value the parser
// must return or a piece of its error (the variable it names).
type EnvCase[C any] struct {
	Name    string
	Env     map[string]string
	Want    C
	WantErr string
}

// Getenv is a getenv over m: a variable not in m is empty.
func Getenv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// CheckFromEnv runs parse over every case as a subtest: with WantErr set
// the error must contain it, otherwise the value must equal Want.
func CheckFromEnv[C any](t *testing.T, parse func(getenv func(string) string) (C, error), cases []EnvCase[C]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			got, err := parse(Getenv(tc.Env))
			switch {
			case tc.WantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.WantErr) {
					t.Errorf("err = %v, want it to name %s", err, tc.WantErr)
				}
			case err != nil:
				t.Fatal(err)
			case !reflect.DeepEqual(got, tc.Want):
				t.Errorf("got  %+v\nwant %+v", got, tc.Want)
			}
		})
	}
}
