package vindex

// kernels lists the kernel settings the tests run under; setKernel switches
// between them and returns a function restoring the previous one.
var kernels = []string{"avx2", "generic"}

func setKernel(name string) (ok bool, restore func()) {
	prev := useAVX2
	switch name {
	case "avx2":
		if !prev {
			return false, func() {}
		}
	case "generic":
		useAVX2 = false
	}
	return true, func() { useAVX2 = prev }
}
