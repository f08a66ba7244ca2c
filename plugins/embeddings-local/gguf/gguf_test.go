package gguf

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// ggufBytes is a GGUF version 3 header and its metadata: each kv is a key,
// a value type and the value's bytes.
func ggufBytes(kvs ...any) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("GGUF")
	binary.Write(&b, le, uint32(3))
	binary.Write(&b, le, uint64(0))
	binary.Write(&b, le, uint64(len(kvs)/3))
	for i := 0; i < len(kvs); i += 3 {
		key := kvs[i].(string)
		binary.Write(&b, le, uint64(len(key)))
		b.WriteString(key)
		binary.Write(&b, le, kvs[i+1].(uint32))
		b.Write(kvs[i+2].([]byte))
	}
	return b.Bytes()
}

func str(s string) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(s)))
	b.WriteString(s)
	return b.Bytes()
}

func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// nested is an array of one array of ... of depth arrays of one uint32.
func nested(depth int) []byte {
	var b []byte
	for range depth - 1 {
		b = binary.LittleEndian.AppendUint32(b, 9) // an array of arrays
		b = binary.LittleEndian.AppendUint64(b, 1)
	}
	b = binary.LittleEndian.AppendUint32(b, 4) // the innermost: of uint32
	b = binary.LittleEndian.AppendUint64(b, 1)
	return append(b, u32(7)...)
}

// TestParseNestedArrays: arrays inside arrays are read past up to
// maxArrayDepth, and a file nesting deeper is refused with a clear error
// instead of recursing as deep as it asks.
func TestParseNestedArrays(t *testing.T) {
	ok := ggufBytes(
		"general.architecture", uint32(8), str("bert"),
		"x.nested", uint32(9), nested(maxArrayDepth),
		"bert.embedding_length", uint32(4), u32(384),
	)
	m, err := Parse(bytes.NewReader(ok))
	if err != nil || m.Architecture != "bert" || m.Embedding != 384 {
		t.Fatalf("arrays %d deep: %+v, %v", maxArrayDepth, m, err)
	}
	over := ggufBytes(
		"general.architecture", uint32(8), str("bert"),
		"x.nested", uint32(9), nested(maxArrayDepth+1),
	)
	if _, err := Parse(bytes.NewReader(over)); err == nil || !strings.Contains(err.Error(), "arrays nested over 4 deep") {
		t.Fatalf("arrays %d deep: %v", maxArrayDepth+1, err)
	}
	deep := ggufBytes(
		"general.architecture", uint32(8), str("bert"),
		"x.nested", uint32(9), nested(1_000_000),
	)
	_, err = Parse(bytes.NewReader(deep))
	if err == nil || !strings.Contains(err.Error(), "x.nested: arrays nested over 4 deep") {
		t.Fatalf("a million nested arrays: %v", err)
	}
}
