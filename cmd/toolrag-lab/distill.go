package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolrag/mcp-gateway/internal/subcommand"
	"github.com/toolrag/mcp-gateway/lab/train"
	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

func distillFlags(fs *flag.FlagSet) subcommand.Run {
	data := fs.String("data", "../shared/train", "folder of datasets whose tool documents and queries make the corpus")
	exclude := fs.String("exclude", strings.Join(train.DevDatasets, ","), "comma-separated dataset folders to leave out (default: the real-MCP DEV datasets)")
	textsOut := fs.String("texts", "", "write the corpus texts (one JSON string per line) to this file for the teacher, and stop")
	vectors := fs.String("vectors", "", "the teacher's vectors of the corpus texts (JSON lines {\"t\": text, \"v\": [...]})")
	tokenizer := fs.String("tokenizer", "pkg/embed/toolmodel/model/tokenizer.json", "the student's tokenizer.json (the builtin model's)")
	out := fs.String("out", "", "where to write the student's Model2Vec directory (required with --vectors)")
	var o train.DistillOptions
	fs.IntVar(&o.Dim, "dim", 0, "student dimension (default 128)")
	fs.IntVar(&o.Epochs, "epochs", 0, "passes over the corpus (default 8)")
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed (same seed, same table)")
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		if *textsOut != "" {
			var ex []string
			if *exclude != "" {
				ex = strings.Split(*exclude, ",")
			}
			c, err := train.LoadCorpus(*data, ex)
			if err != nil {
				return err
			}
			texts := train.CorpusTexts(c)
			f, err := os.Create(*textsOut)
			if err != nil {
				return err
			}
			if err := train.WriteTexts(f, texts); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "wrote %d texts to %s\n", len(texts), *textsOut)
			return nil
		}
		if *vectors == "" || *out == "" {
			return errors.New("distill: give --texts FILE (write the corpus), or --vectors FILE and --out DIR (train on the teacher's vectors)")
		}
		f, err := os.Open(*vectors)
		if err != nil {
			return err
		}
		o.Texts, o.Vectors, err = train.ReadTeacherVectors(f)
		f.Close()
		if err != nil {
			return err
		}
		if o.Tokenizer, err = os.ReadFile(*tokenizer); err != nil {
			return err
		}
		res, err := train.Distill(ctx, o, func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) })
		if err != nil {
			return err
		}
		if err := model2vec.Save(*out, res.Model, model2vec.I8); err != nil {
			return err
		}
		saved, err := model2vec.LoadDir(*out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s (i8, id %s, %d texts)\n", *out, saved.ID(), res.Texts)
		return nil
	}
}

const distillAbout = `Distils a sentence encoder (the teacher, lab/teacher) into a static token
table over the builtin model's tokenizer, in two halves around the teacher.

Reads:  --data: the training datasets whose tool documents and queries make
        the corpus; --vectors: the teacher's vectors of that corpus (JSON
        lines {"t": text, "v": [...]}); --tokenizer: the student's tokenizer.
Writes: --texts: the corpus, one JSON string per line (first half, then
        stop); --out: the student's Model2Vec directory (second half).

Example (what make distilled runs):
  toolrag-lab distill --data ../shared/train --texts .tools/distill/texts.jsonl
  (cd lab/teacher && npm ci && node embed.js ../../.tools/distill/texts.jsonl ../../.tools/distill/vectors.jsonl)
  toolrag-lab distill --vectors .tools/distill/vectors.jsonl --out .tools/distill/table`
