package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
)

// The vector tables, chunks_vec and chunks_bit, are made and searched by
// package vectors; the index keeps them in step with the chunks (a file's
// vectors go with its rows, removeFile) and upgrades them.

// BitVector is v's sign bits: bit i, of byte i/8 from the lowest bit, is
// set when v[i] > 0. The last byte is padded with zeros.
func BitVector(v []float32) []byte {
	b := make([]byte, (len(v)+7)/8)
	for i, x := range v {
		if x > 0 {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return b
}

// bitDimensions is the size of the bit vectors of dims dimensions: whole
// bytes, as vec0 stores them.
func bitDimensions(dims int) int { return (dims + 7) / 8 * 8 }

// TouchVectors gives the index's vectors a new generation: every
// transaction that changes chunks_vec and chunks_bit calls it, so that
// every process's snapshot of the bits is reloaded before its next search.
// A random value, unlike a counter, cannot come back after CopyFrom.
func TouchVectors(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_generation', hex(randomblob(16)))`)
	return err
}

// vecChunkSize is how many vectors vec0 keeps in a blob of chunks_vec
// (default 1024): reading one vector walks its blob's overflow pages, 5.0
// µs at 256 against 8.4 at 1024, for scans as fast (docs/benchmarks.md).
const vecChunkSize = 256

// VecTable creates chunks_vec (a statement) for dims-dimension unit
// vectors (L2 ranks as cosine does; sqlite-vec's SIMD code is L2's),
// partitioned by source: a search limited to sources reads only theirs.
func VecTable(dims int) string {
	return fmt.Sprintf(`CREATE VIRTUAL TABLE chunks_vec USING vec0(chunk_id INTEGER PRIMARY KEY, embedding float[%d], source TEXT PARTITION KEY, chunk_size=%d)`, dims, vecChunkSize)
}

// vecDims is the dimensions of chunks_vec's vectors, 0 without the table.
func vecDims(ctx context.Context, tx *sql.Tx) (dims int, err error) {
	if has, err := HasTable(ctx, tx, "chunks_vec"); err != nil || !has {
		return 0, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'dimensions'`).Scan(&dims); err != nil {
		return 0, fmt.Errorf("dimensions: %w", err)
	}
	return dims, nil
}

// smallVecChunks remakes chunks_vec in blobs of vecChunkSize (schema 14).
func smallVecChunks(ctx context.Context, tx *sql.Tx) error {
	dims, err := vecDims(ctx, tx)
	if err != nil || dims == 0 {
		return err
	}
	for _, stmt := range []string{
		`CREATE TEMP TABLE vec_copy AS SELECT chunk_id, embedding, source FROM chunks_vec`,
		`DROP TABLE chunks_vec`, VecTable(dims),
		`INSERT INTO chunks_vec(chunk_id, embedding, source) SELECT chunk_id, embedding, source FROM vec_copy ORDER BY chunk_id`,
		`DROP TABLE vec_copy`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return TouchVectors(ctx, tx)
}

// CreateBitTable creates chunks_bit for vectors of dims dimensions.
func CreateBitTable(ctx context.Context, tx *sql.Tx, dims int) error {
	_, err := tx.ExecContext(ctx, fmt.Sprintf(`CREATE VIRTUAL TABLE chunks_bit USING vec0(chunk_id INTEGER PRIMARY KEY, bits bit[%d], source TEXT PARTITION KEY)`, bitDimensions(dims)))
	return err
}

// fillBitTable creates chunks_bit from the vectors in chunks_vec: the
// upgrade from schema 8, which had none.
func fillBitTable(ctx context.Context, tx *sql.Tx) error {
	dims, err := vecDims(ctx, tx)
	if err != nil || dims == 0 {
		return err
	}
	if err := CreateBitTable(ctx, tx, dims); err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO chunks_bit(chunk_id, bits, source) VALUES (?, vec_bit(?), ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	rows, err := tx.QueryContext(ctx, `SELECT chunk_id, embedding, source FROM chunks_vec`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var emb sql.RawBytes
		var source string
		if err := rows.Scan(&id, &emb, &source); err != nil {
			return err
		}
		if _, err := ins.ExecContext(ctx, id, BitVector(DecodeVector(emb)), source); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return TouchVectors(ctx, tx)
}

// EncodeVector is the little-endian float32 blob sqlite-vec reads.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector reverses EncodeVector.
func DecodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
