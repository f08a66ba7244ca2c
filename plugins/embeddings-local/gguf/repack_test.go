package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testModel is the MiniLM model in ../shared/models (or
// $MEMHOST_TEST_MODEL); tests that need it skip without it.
func testModel(t *testing.T) string {
	p := os.Getenv("MEMHOST_TEST_MODEL")
	if p == "" {
		p = filepath.Join("..", "..", "..", "..", "shared", "models", "all-MiniLM-L6-v2-Q4_K_M.gguf")
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no test model at %s", p)
	}
	return p
}

// TestRepackGGUF: the repacked file has the same metadata and tensors, the
// blocks' weight matrices as BF16 at aligned offsets, the rest unchanged.
func TestRepackGGUF(t *testing.T) {
	data, out, n := repackTestModel(t, BF16)
	before, err := Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	after, err := Parse(bytes.NewReader(out.Bytes()))
	if err != nil || after != before {
		t.Fatalf("metadata after repacking = %+v, %v; before %+v", after, err, before)
	}
	old, oldStart, err := tensorTable(data)
	if err != nil {
		t.Fatal(err)
	}
	got, start, err := tensorTable(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(old) {
		t.Fatalf("%d tensors after, %d before", len(got), len(old))
	}
	bf := 0
	for i, tn := range got {
		o := old[i]
		if tn.name != o.name || len(tn.dims) != len(o.dims) || tn.offset%32 != 0 {
			t.Fatalf("tensor %d: %+v, was %+v", i, tn, o)
		}
		_, repacked := o.repackedTo(BF16)
		switch {
		case repacked:
			if tn.typ != ggmlBF16 {
				t.Errorf("%s: type %d, want BF16", tn.name, tn.typ)
			}
			bf++
		case tn.typ != o.typ:
			t.Errorf("%s: type %d, was %d", tn.name, tn.typ, o.typ)
		default: // kept as it was: the same bytes (its first 32 at least)
			a := data[oldStart+o.offset:][:32]
			b := out.Bytes()[start+tn.offset:][:32]
			if !bytes.Equal(a, b) {
				t.Errorf("%s: bytes changed", tn.name)
			}
			if strings.HasPrefix(tn.name, "blk.") && len(tn.dims) == 2 {
				t.Errorf("%s: a block's matrix of type %d not repacked", tn.name, tn.typ)
			}
		}
	}
	if bf != n || bf < 30 {
		t.Errorf("%d BF16 tensors, repack said %d", bf, n)
	}
	if uint64(out.Len()) < start {
		t.Errorf("file of %d bytes, data starts at %d", out.Len(), start)
	}
	// Truncated input is an error, not a short model nor a panic: cut at
	// half, in the padding before the data, and at every tensor's start.
	l, err := parseLayout(data)
	if err != nil {
		t.Fatal(err)
	}
	cuts := []uint64{uint64(len(data)) / 2, l.dataStart - 1}
	for _, tn := range l.tensors {
		cuts = append(cuts, l.dataStart+tn.offset)
	}
	for _, cut := range cuts {
		if cut >= uint64(len(data)) {
			continue
		}
		if _, err := Repack(data[:cut], &bytes.Buffer{}, BF16); err == nil {
			t.Errorf("a model cut at %d of %d bytes repacked without error", cut, len(data))
		}
	}
}

// TestToBF16Blocks decodes hand-made blocks of Q5_0 and Q8_0 to known
// weights, and rewrites the Q5_0 one as the Q8_0 one (K-quants are held to llama.cpp's own decoding by
// TestRepackSameVectors).
func TestToBF16Blocks(t *testing.T) {
	half := []byte{0x00, 0x3c} // 1.0
	// Q5_0: d = 1, quants 0..31 → weights -16..15; low nibbles in qs,
	// fifth bits in qh.
	q5 := append([]byte{}, half...)
	var qh uint32
	var qs [16]byte
	for j := range 16 {
		lo, hi := j, j+16 // element j holds quant j, element j+16 quant j+16
		qs[j] = byte(lo&0x0f) | byte(hi&0x0f)<<4
		qh |= uint32(lo>>4) << j
		qh |= uint32(hi>>4) << (j + 16)
	}
	q5 = binary.LittleEndian.AppendUint32(q5, qh)
	q5 = append(q5, qs[:]...)
	for i, w := range decodeBF16(toBF16(q5, ggmlQ5_0)) {
		if w != float32(i-16) {
			t.Fatalf("Q5_0 weight %d = %v, want %d", i, w, i-16)
		}
	}
	// Q8_0: d = 1, quants -16..15.
	q8 := append([]byte{}, half...)
	for i := range 32 {
		q8 = append(q8, byte(int8(i-16)))
	}
	for i, w := range decodeBF16(toBF16(q8, ggmlQ8_0)) {
		if w != float32(i-16) {
			t.Fatalf("Q8_0 weight %d = %v, want %d", i, w, i-16)
		}
	}
	// The same Q5_0 block as Q8_0: the scale's bytes, then each weight.
	got := q5ToQ8(q5)
	if !bytes.Equal(got, q8) {
		t.Errorf("Q5_0 block as Q8_0 = % x, want % x", got, q8)
	}
	// Quants in a scrambled order, so that both halves of the block have
	// fifth bits set and unset: element i holds (7i+3) mod 32.
	perm := func(i int) int { return (7*i + 3) % 32 }
	qh, qs = 0, [16]byte{}
	for j := range 16 {
		lo, hi := perm(j), perm(j+16)
		qs[j] = byte(lo&0x0f) | byte(hi&0x0f)<<4
		qh |= uint32(lo>>4) << j
		qh |= uint32(hi>>4) << (j + 16)
	}
	q5p := binary.LittleEndian.AppendUint32(append([]byte{}, half...), qh)
	q5p = append(q5p, qs[:]...)
	q8p := append([]byte{}, half...)
	for i := range 32 {
		q8p = append(q8p, byte(int8(perm(i)-16)))
	}
	if got := q5ToQ8(q5p); !bytes.Equal(got, q8p) {
		t.Errorf("scrambled Q5_0 block as Q8_0 = % x, want % x", got, q8p)
	}
	for i, w := range decodeBF16(toBF16(q5p, ggmlQ5_0)) {
		if w != float32(perm(i)-16) {
			t.Fatalf("scrambled Q5_0 weight %d = %v, want %d", i, w, perm(i)-16)
		}
	}
	if got := bf16(1.00390625); got != 0x3f80 { // a tie rounds to even
		t.Errorf("bf16(1+2^-8) = %#x, want 0x3f80", got)
	}
	if got := bf16(1.01171875); got != 0x3f82 { // 1+3·2^-8: a tie, to even upwards
		t.Errorf("bf16(1+3·2^-8) = %#x, want 0x3f82", got)
	}
}

func decodeBF16(b []byte) []float32 {
	out := make([]float32, len(b)/2)
	for i := range out {
		out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
	}
	return out
}

// tensorTable reads a GGUF file's tensor table and where its data starts.
func tensorTable(data []byte) ([]ggufTensor, uint64, error) {
	l, err := parseLayout(data)
	return l.tensors, l.dataStart, err
}

// TestRepackQ8: for AMX, the Q5_0 matrices of the blocks become Q8_0 with
// the same weights, and every other tensor keeps its type and bytes.
func TestRepackQ8(t *testing.T) {
	data, out, n := repackTestModel(t, Q8_0)
	old, oldStart, err := tensorTable(data)
	if err != nil {
		t.Fatal(err)
	}
	got, start, err := tensorTable(out.Bytes())
	if err != nil || len(got) != len(old) {
		t.Fatalf("%d tensors after, %d before, %v", len(got), len(old), err)
	}
	// A kept tensor's bytes run to the next tensor's (or the file's end).
	ends := []uint64{uint64(len(data)) - oldStart}
	for _, o := range old {
		ends = append(ends, o.offset)
	}
	slices.Sort(ends)
	q8 := 0
	for i, tn := range got {
		o := old[i]
		src := data[oldStart+o.offset:]
		dst := out.Bytes()[start+tn.offset:]
		if o.typ == ggmlQ5_0 && strings.HasPrefix(o.name, "blk.") && len(o.dims) == 2 {
			if tn.typ != ggmlQ8_0 || tn.offset%32 != 0 {
				t.Fatalf("%s: type %d at %d, want Q8_0 aligned", tn.name, tn.typ, tn.offset)
			}
			blocks := o.elements() / 32
			a := decodeBF16(toBF16(src[:blocks*22], ggmlQ5_0))
			b := decodeBF16(toBF16(dst[:blocks*34], ggmlQ8_0))
			if !slices.Equal(a, b) {
				t.Fatalf("%s: the weights changed", tn.name)
			}
			q8++
			continue
		}
		j, _ := slices.BinarySearch(ends, o.offset+1)
		n := ends[j] - o.offset
		if tn.typ != o.typ || uint64(len(dst)) < n || !bytes.Equal(src[:n], dst[:n]) {
			t.Errorf("%s: type %d (was %d), or its %d bytes changed", tn.name, tn.typ, o.typ, n)
		}
	}
	if q8 != n || q8 < 20 {
		t.Errorf("%d Q8_0 tensors, repack said %d", q8, n)
	}
}

// repackTestModel repacks the test model as target: the model's bytes,
// the repacked ones, and how many tensors changed (at least one).
func repackTestModel(t *testing.T, target Target) (data []byte, out *bytes.Buffer, n int) {
	t.Helper()
	data, err := os.ReadFile(testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	out = &bytes.Buffer{}
	n, err = Repack(data, out, target)
	if err != nil || n == 0 {
		t.Fatalf("repack: %d tensors, %v", n, err)
	}
	return data, out, n
}
