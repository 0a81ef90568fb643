//go:build ignore

// zipbootstrap writes a Lambda deployment zip holding one executable file,
// without needing the zip program: go run scripts/zipbootstrap.go OUT.zip FILE
package main

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/zipbootstrap.go OUT.zip FILE")
		os.Exit(2)
	}
	if err := write(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "zipbootstrap:", err)
		os.Exit(1)
	}
}

func write(out, file string) error {
	src, err := os.Open(file)
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	h := &zip.FileHeader{Name: file, Method: zip.Deflate}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, src); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}
