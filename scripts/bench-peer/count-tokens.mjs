// Counts the tokens each tool fed the embedding model, with the model's own
// tokenizer (llama.cpp's, through node-llama-cpp from QMD's install: the
// same tokenizer memhost's local plugin runs through its Go binding).
// Neither CLI reports tokens, so scripts/bench-peer.sh calls this after its
// embedding runs:
//
//   QMD_EMBED_MODEL=MODEL.gguf node count-tokens.mjs QMD_PKG_DIR memhost MEMORY_DB
//   QMD_EMBED_MODEL=MODEL.gguf node count-tokens.mjs QMD_PKG_DIR qmd INDEX_SQLITE
//
// and prints {"texts": N, "tokens": N, "truncated": N} as JSON.
//
// What each tool embeds, from its source:
//  - memhost (plugins/embeddings-local): every chunk with a vector, each
//    distinct hash once (host/embedq), as context + "\n" + text when it has
//    a context (pages have none), with no prefix for MiniLM; tokenized with
//    [CLS] and [SEP] and cut to the model's context (512 tokens for MiniLM),
//    keeping [SEP].
//  - QMD (store.js generateEmbeddings): each document with vectors, chunked
//    by chunkDocumentByTokens (900 tokens, 15% overlap), each chunk
//    formatted "title: T | text: ..." (formatDocForEmbedding), cut to 508
//    tokens when it has more than the model's 512 (truncateToContextSize),
//    then node-llama-cpp adds [CLS] and [SEP] (getEmbeddingFor).
// QMD's own exported functions are used for its side, so its chunks are its
// chunks.
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { createRequire } from "node:module";

const [pkgDir, mode, dbPath] = process.argv.slice(2);
const store = await import(pathToFileURL(join(pkgDir, "dist/store.js")).href);
const llmMod = await import(pathToFileURL(join(pkgDir, "dist/llm.js")).href);
const Database = createRequire(join(pkgDir, "package.json"))("better-sqlite3");

const llm = llmMod.getDefaultLlamaCpp();
const model = await llm.ensureEmbedModel();
const ctx = model.trainContextSize; // 512 for MiniLM
const count = (text) => model.tokenize(text).length; // no special tokens
const SPECIAL = 2; // [CLS] and [SEP], added by both tools for a BERT model

const db = new Database(dbPath, { readonly: true });
let texts = 0, tokens = 0, truncated = 0;
if (mode === "memhost") {
  const rows = db.prepare(
    "SELECT hash, min(text) AS text, min(coalesce(context, '')) AS context FROM chunks WHERE embedded = 1 GROUP BY hash").all();
  for (const r of rows) {
    let n = count(r.context ? r.context + "\n" + r.text : r.text) + SPECIAL;
    if (n > ctx) { n = ctx; truncated++; }
    texts++; tokens += n;
  }
} else if (mode === "qmd") {
  const modelUri = llm.embedModelName;
  const limit = llm.resolveEmbedTokenLimit();
  const rows = db.prepare(
    `SELECT c.hash, c.doc, min(d.path) AS path FROM content c JOIN documents d ON d.hash = c.hash AND d.active = 1
     WHERE c.hash IN (SELECT hash FROM content_vectors) GROUP BY c.hash`).all();
  for (const r of rows) {
    const title = store.extractTitle(r.doc, r.path);
    const chunks = await store.chunkDocumentByTokens(r.doc, undefined, undefined, undefined, r.path);
    for (const ch of chunks) {
      let n = count(llmMod.formatDocForEmbedding(ch.text, title, modelUri));
      if (n > limit) { n = Math.max(1, limit - 4); truncated++; }
      texts++; tokens += n + SPECIAL;
    }
  }
} else {
  console.error(`count-tokens: unknown mode ${mode} (memhost or qmd)`);
  process.exit(2);
}
console.log(JSON.stringify({ texts, tokens, truncated, context: ctx }));
await llm.dispose?.();
process.exit(0);
