//go:build !amd64

package vindex

var kernels = []string{"generic"}

func setKernel(name string) (ok bool, restore func()) { return name == "generic", func() {} }
