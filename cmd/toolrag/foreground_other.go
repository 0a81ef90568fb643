//go:build !unix

package main

func takeForeground() (restore func()) { return func() {} }
