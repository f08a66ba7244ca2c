// Package gguf reads what the local provider needs of a GGUF model file
// (its metadata) and rewrites one with its weight matrices as BF16 or
// Q8_0 (repack.go).
package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// Meta is what the provider needs from a GGUF file's metadata.
type Meta struct {
	Architecture string
	Name         string
	Embedding    int  // <arch>.embedding_length
	Context      int  // <arch>.context_length
	Pooling      bool // <arch>.pooling_type is set: the model pools sentence embeddings
}

// encoderArchs are llama.cpp architectures of sentence-embedding models.
var encoderArchs = map[string]bool{
	"bert": true, "nomic-bert": true, "nomic-bert-moe": true, "jina-bert-v2": true,
	"modern-bert": true, "neo-bert": true, "t5encoder": true,
}

// IsEmbedding reports whether the model makes sentence embeddings.
func (m Meta) IsEmbedding() bool { return encoderArchs[m.Architecture] || m.Pooling }

// Read reads the metadata of a GGUF file (format versions 2 and 3);
// an error names the file and what is wrong with it.
func Read(path string) (Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return Meta{}, err
	}
	defer f.Close()
	m, err := Parse(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return m, fmt.Errorf("%s is not a usable GGUF model: %w", path, err)
	}
	return m, nil
}

func Parse(r io.Reader) (Meta, error) {
	var m Meta
	hdr, err := readHeader(r)
	if err != nil {
		return m, err
	}
	ints := map[string]int64{}
	strs := map[string]string{}
	for i := uint64(0); i < hdr.KVs; i++ {
		key, err := readString(r)
		if err != nil {
			return m, fmt.Errorf("metadata key %d: %w", i, err)
		}
		var typ uint32
		if err := binary.Read(r, binary.LittleEndian, &typ); err != nil {
			return m, fmt.Errorf("metadata %s: %w", key, eof(err))
		}
		v, err := readValue(r, typ, 0)
		if err != nil {
			return m, fmt.Errorf("metadata %s: %w", key, err)
		}
		switch x := v.(type) {
		case string:
			strs[key] = x
		case int64:
			ints[key] = x
		}
	}
	m.Architecture = strs["general.architecture"]
	if m.Architecture == "" {
		return m, errors.New("no general.architecture in its metadata")
	}
	m.Name = strs["general.name"]
	m.Embedding = int(ints[m.Architecture+".embedding_length"])
	m.Context = int(ints[m.Architecture+".context_length"])
	_, m.Pooling = ints[m.Architecture+".pooling_type"]
	if m.Embedding <= 0 {
		return m, fmt.Errorf("no %s.embedding_length in its metadata", m.Architecture)
	}
	return m, nil
}

// ggufHeader is a GGUF file's first 24 bytes.
type ggufHeader struct {
	Magic   [4]byte
	Version uint32
	Tensors uint64
	KVs     uint64
}

func readHeader(r io.Reader) (ggufHeader, error) {
	var hdr ggufHeader
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return hdr, fmt.Errorf("header: %w", eof(err))
	}
	if string(hdr.Magic[:]) != "GGUF" {
		return hdr, errors.New("no GGUF magic number (corrupt, or not a GGUF file)")
	}
	if hdr.Version < 2 || hdr.Version > 3 {
		return hdr, fmt.Errorf("GGUF version %d is not supported", hdr.Version)
	}
	if hdr.KVs > 1<<20 {
		return hdr, fmt.Errorf("implausible metadata count %d (corrupt file)", hdr.KVs)
	}
	return hdr, nil
}

func eof(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("file ends too early (truncated download?)")
	}
	return err
}

func readString(r io.Reader) (string, error) {
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return "", eof(err)
	}
	if n > 1<<24 {
		return "", fmt.Errorf("implausible string length %d (corrupt file)", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", eof(err)
	}
	return strings.ToValidUTF8(string(b), "?"), nil
}

// maxArrayDepth is the most arrays readValue reads inside one another.
// GGUF allows arrays of arrays; models nest none (a tokenizer's lists are
// arrays of strings). Without a limit a file of a few MB of nested array
// headers would recurse a million frames deep.
const maxArrayDepth = 4

// readValue reads a metadata value, inside depth arrays: strings and
// integers are returned (as string and int64), other values are read past.
func readValue(r io.Reader, typ uint32, depth int) (any, error) {
	le := binary.LittleEndian
	switch typ {
	case 0, 1, 7: // uint8, int8, bool
		var v uint8
		err := binary.Read(r, le, &v)
		if typ == 1 {
			return int64(int8(v)), eof(err)
		}
		return int64(v), eof(err)
	case 2, 3: // uint16, int16
		var v uint16
		err := binary.Read(r, le, &v)
		if typ == 3 {
			return int64(int16(v)), eof(err)
		}
		return int64(v), eof(err)
	case 4, 5: // uint32, int32
		var v uint32
		err := binary.Read(r, le, &v)
		if typ == 5 {
			return int64(int32(v)), eof(err)
		}
		return int64(v), eof(err)
	case 6: // float32
		var v uint32
		err := binary.Read(r, le, &v)
		return float64(math.Float32frombits(v)), eof(err)
	case 8:
		return readString(r)
	case 9: // array
		var et uint32
		var n uint64
		if err := binary.Read(r, le, &et); err != nil {
			return nil, eof(err)
		}
		if err := binary.Read(r, le, &n); err != nil {
			return nil, eof(err)
		}
		if n > 1<<26 {
			return nil, fmt.Errorf("implausible array length %d (corrupt file)", n)
		}
		if et == 9 && depth+1 >= maxArrayDepth {
			return nil, fmt.Errorf("arrays nested over %d deep (corrupt file)", maxArrayDepth)
		}
		for i := uint64(0); i < n; i++ {
			if _, err := readValue(r, et, depth+1); err != nil {
				return nil, err
			}
		}
		return nil, nil
	case 10, 11: // uint64, int64
		var v uint64
		err := binary.Read(r, le, &v)
		return int64(v), eof(err)
	case 12: // float64
		var v uint64
		err := binary.Read(r, le, &v)
		return math.Float64frombits(v), eof(err)
	}
	return nil, fmt.Errorf("unknown value type %d (corrupt file)", typ)
}
