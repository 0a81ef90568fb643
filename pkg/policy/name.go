package policy

import "unicode/utf8"

// MaxNameBytes bounds a tool or prompt name.
const MaxNameBytes = 512

// CheckName refuses a tool or prompt name that cannot name anything
// exactly: empty, longer than MaxNameBytes, not valid UTF-8, or holding a
// control character. Names are otherwise compared byte for byte: there is
// no case folding or other equivalence for a caller to exploit.
func CheckName(kind, name string) error {
	switch {
	case name == "":
		return invalid("the %s name is empty", kind)
	case len(name) > MaxNameBytes:
		return invalid("the %s name is %d bytes; the limit is %d", kind, len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return invalid("the %s name is not valid UTF-8", kind)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return invalid("the %s name %q contains a control character", kind, name)
		}
	}
	return nil
}
