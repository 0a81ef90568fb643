// Package jsonl reads JSON Lines, one JSON value a line: the format of the
// lab's datasets (tools.jsonl, queries.jsonl, pairs.jsonl) and of the
// teacher's vectors.
package jsonl

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// Read calls fn with each non-blank line of r, without its surrounding
// white space, and the line's number (from 1). Lines may be of any
// length; fn may keep raw. An error of fn stops the reading and is
// returned as "line N: err".
func Read(r io.Reader, fn func(line int, raw []byte) error) error {
	return read(r, "", fn)
}

// ReadFile is Read over the file at path; an error of fn is returned as
// "path line N: err".
func ReadFile(path string, fn func(line int, raw []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return read(f, path+" ", fn)
}

func read(r io.Reader, name string, fn func(line int, raw []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if b = bytes.TrimSpace(b); len(b) > 0 {
			if ferr := fn(n, b); ferr != nil {
				return fmt.Errorf("%sline %d: %w", name, n, ferr)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
