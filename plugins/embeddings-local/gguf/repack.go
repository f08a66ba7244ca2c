package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Repacking a model's weight matrices as BF16 before llama.cpp loads it.
//
// Quantised sentence-embedding models such as all-MiniLM-L6-v2 Q4_K_M keep
// most matrices in Q5_0 (rows of 384 are not a multiple of the 256 that
// K-quants need), the rest in Q4_K, Q6_K and Q8_0. This llama.cpp
// multiplies those with 256-bit integer kernels, or for K-quants one row
// at a time; built for a CPU with AVX512_BF16 it also has a BF16 matrix
// kernel (tinyBLAS with vdpbf16ps, 32 products an instruction), which at
// the shape of embedding (one text of tens to hundreds of tokens a decode)
// is the fastest it has: 1.5x the packed model's tokens per CPU-second on
// all-MiniLM-L6-v2 (docs/benchmarks.md).
//
// So where the kernels were compiled with AVX512_BF16, the provider
// rewrites the model in memory before loading it: each weight matrix of
// the transformer blocks (tensors "blk.*" of two dimensions) in one of the
// types above becomes BF16, each weight llama.cpp's own dequantisation
// (d·(q−16), d·sc·q − dmin·m, d·sc·q, d·q) rounded to the nearest BF16.
// Everything else — metadata, the token embedding table (a lookup, not a
// product), norms and biases — is copied byte for byte. The vectors move
// by rounding noise: cosine > 0.999 to the packed model's
// (TestRepackSameVectors), well inside what search can tell apart, so the
// model's id (and every vector already stored under it) stays valid.
//
// Where the binary has llama.cpp's AMX kernels (package amx), they are
// faster still, and they take Q8_0 and the K-quants but not Q5_0: there
// the target is Q8_0, and only the Q5_0 matrices change, each weight
// exactly as it was (1.7x the BF16 kernel's tokens a CPU-second on a
// Xeon with both).

// GGML tensor types (ggml.h's enum ggml_type) this file reads or writes.
const (
	ggmlQ5_0 = 6
	ggmlQ8_0 = 8
	ggmlQ4K  = 12
	ggmlQ6K  = 14
	ggmlBF16 = 30
)

// quantBlocks gives the block size in elements and bytes of the types
// repacked.
var quantBlocks = map[uint32][2]uint64{
	ggmlQ5_0: {32, 22},
	ggmlQ8_0: {32, 34},
	ggmlQ4K:  {256, 144},
	ggmlQ6K:  {256, 210},
}

// ggufTensor is one tensor's entry in a GGUF file's tensor table.
type ggufTensor struct {
	name   string
	dims   []uint64
	typ    uint32
	offset uint64 // from the start of the data section
}

func (t ggufTensor) elements() uint64 {
	n := uint64(1)
	for _, d := range t.dims {
		n *= d
	}
	return n
}

// A Target is the type Repack gives the weight matrices it rewrites.
type Target uint32

const (
	// BF16: every matrix of the types of quantBlocks, dequantised and
	// rounded to BF16 (for tinyBLAS's AVX512_BF16 kernel).
	BF16 Target = ggmlBF16
	// Q8_0: the Q5_0 matrices only, as Q8_0: the same scale and each 5-bit
	// weight less 16 as a byte, exactly the same weights. llama.cpp's AMX
	// kernels take Q8_0 and the K-quants, not Q5_0.
	Q8_0 Target = ggmlQ8_0
)

// repackedTo is the type the tensor becomes for target, ok false when it
// is kept as it is.
func (t ggufTensor) repackedTo(target Target) (typ uint32, ok bool) {
	if _, ok := quantBlocks[t.typ]; !ok || len(t.dims) != 2 || !strings.HasPrefix(t.name, "blk.") {
		return 0, false
	}
	if target == Q8_0 && t.typ != ggmlQ5_0 {
		return 0, false
	}
	return uint32(target), true
}

// sizeAs is the bytes of the tensor's elements as typ (BF16 or Q8_0).
func (t ggufTensor) sizeAs(typ uint32) uint64 {
	if typ == ggmlBF16 {
		return t.elements() * 2
	}
	b := quantBlocks[typ]
	return t.elements() / b[0] * b[1]
}

// ggufLayout is where a GGUF file's parts are.
type ggufLayout struct {
	hdr            ggufHeader
	kvStart, kvEnd int64 // the metadata, copied as it is
	align          uint64
	tensors        []ggufTensor
	dataStart      uint64
}

// parseLayout reads a GGUF file's header, metadata and tensor table.
func parseLayout(data []byte) (ggufLayout, error) {
	var l ggufLayout
	r := &offsetReader{r: bytes.NewReader(data), size: int64(len(data))}
	var err error
	if l.hdr, err = readHeader(r); err != nil {
		return l, err
	}
	if l.hdr.Version != 3 || l.hdr.Tensors > 1<<20 {
		return l, errors.New("not a GGUF version 3 file, or an implausible tensor count")
	}
	l.kvStart, l.align = r.off, 32
	for i := uint64(0); i < l.hdr.KVs; i++ {
		key, err := readString(r)
		if err != nil {
			return l, err
		}
		var typ uint32
		if err := binary.Read(r, binary.LittleEndian, &typ); err != nil {
			return l, eof(err)
		}
		v, err := readValue(r, typ, 0)
		if err != nil {
			return l, fmt.Errorf("metadata %s: %w", key, err)
		}
		if n, ok := v.(int64); ok && key == "general.alignment" && n > 0 && n <= 1<<16 {
			l.align = uint64(n)
		}
	}
	l.kvEnd = r.off
	l.tensors = make([]ggufTensor, l.hdr.Tensors)
	for i := range l.tensors {
		t := &l.tensors[i]
		if t.name, err = readString(r); err != nil {
			return l, err
		}
		var nd uint32
		if err := binary.Read(r, binary.LittleEndian, &nd); err != nil || nd == 0 || nd > 4 {
			return l, fmt.Errorf("tensor %s: bad dimension count", t.name)
		}
		t.dims = make([]uint64, nd)
		if err := binary.Read(r, binary.LittleEndian, t.dims); err != nil {
			return l, eof(err)
		}
		if err := binary.Read(r, binary.LittleEndian, &t.typ); err != nil {
			return l, eof(err)
		}
		if err := binary.Read(r, binary.LittleEndian, &t.offset); err != nil {
			return l, eof(err)
		}
	}
	l.dataStart = alignUp(uint64(r.off), l.align)
	return l, nil
}

// Repack reads the GGUF model in data and writes it to dst with its
// blocks' weight matrices as target has them. It returns how many tensors
// changed; with none, nothing is written and the caller loads the file as
// it is.
func Repack(data []byte, dst io.Writer, target Target) (int, error) {
	l, err := parseLayout(data)
	if err != nil {
		return 0, err
	}
	hdr, tensors, align, dataStart := l.hdr, l.tensors, l.align, l.dataStart
	changed := 0
	for _, t := range tensors {
		if _, ok := t.repackedTo(target); ok {
			if t.elements()%quantBlocks[t.typ][0] != 0 {
				return 0, fmt.Errorf("tensor %s: not whole blocks", t.name)
			}
			changed++
		}
	}
	if changed == 0 {
		return 0, nil
	}
	size := int64(len(data))
	if dataStart > uint64(size) {
		return 0, fmt.Errorf("the tensor data starts at %d, past the end of the file (%d bytes: truncated?)", dataStart, size)
	}
	dataSize := uint64(size) - dataStart

	// A tensor's bytes in the source run to the next tensor's offset (or
	// the end of the file); a repacked one's are exactly its blocks.
	offsets := make([]uint64, 0, len(tensors)+1)
	for _, t := range tensors {
		if t.offset > dataSize {
			return 0, fmt.Errorf("tensor %s: data past the end of the file (truncated?)", t.name)
		}
		offsets = append(offsets, t.offset)
	}
	offsets = append(offsets, dataSize)
	slices.Sort(offsets)
	srcLen := func(t ggufTensor) (uint64, error) {
		i, _ := slices.BinarySearch(offsets, t.offset)
		for i < len(offsets) && offsets[i] == t.offset {
			i++
		}
		if i == len(offsets) || t.offset > dataSize {
			return 0, fmt.Errorf("tensor %s: data past the end of the file (truncated?)", t.name)
		}
		n := offsets[i] - t.offset
		if _, ok := t.repackedTo(target); ok {
			b := quantBlocks[t.typ]
			if want := t.elements() / b[0] * b[1]; want <= n {
				return want, nil
			}
			return 0, fmt.Errorf("tensor %s: data past the end of the file (truncated?)", t.name)
		}
		return n, nil
	}

	// The new table: the new types, offsets after the grown tensors.
	newOff := make([]uint64, len(tensors))
	var off uint64
	for i, t := range tensors {
		n, err := srcLen(t)
		if err != nil {
			return 0, err
		}
		if typ, ok := t.repackedTo(target); ok {
			n = t.sizeAs(typ)
		}
		newOff[i] = off
		off = alignUp(off+n, align)
	}

	w := &countWriter{w: dst}
	binary.Write(w, binary.LittleEndian, hdr)
	w.Write(data[l.kvStart:l.kvEnd])
	for i, t := range tensors {
		typ := t.typ
		if to, ok := t.repackedTo(target); ok {
			typ = to
		}
		binary.Write(w, binary.LittleEndian, uint64(len(t.name)))
		io.WriteString(w, t.name)
		binary.Write(w, binary.LittleEndian, uint32(len(t.dims)))
		binary.Write(w, binary.LittleEndian, t.dims)
		binary.Write(w, binary.LittleEndian, typ)
		binary.Write(w, binary.LittleEndian, newOff[i])
	}
	w.pad(align)
	base := w.n
	for i, t := range tensors {
		n, _ := srcLen(t)
		buf := data[dataStart+t.offset:][:n]
		if w.n-base != int64(newOff[i]) {
			return 0, fmt.Errorf("tensor %s: at %d, not %d", t.name, w.n-base, newOff[i])
		}
		if to, ok := t.repackedTo(target); ok && to == ggmlQ8_0 {
			w.Write(q5ToQ8(buf))
		} else if ok {
			w.Write(toBF16(buf, t.typ))
		} else {
			w.Write(buf)
		}
		w.pad(align)
	}
	return changed, w.err
}

// toBF16 dequantises whole blocks of typ as llama.cpp does and rounds each
// weight to the nearest BF16.
func toBF16(b []byte, typ uint32) []byte {
	blk := quantBlocks[typ]
	out := make([]byte, uint64(len(b))/blk[1]*blk[0]*2)
	o := out
	var y [256]float32
	for ; uint64(len(b)) >= blk[1]; b = b[blk[1]:] {
		vals := y[:blk[0]]
		switch typ {
		case ggmlQ5_0:
			d := f16(b[0:2])
			qh := binary.LittleEndian.Uint32(b[2:6])
			qs := b[6:22]
			for j := range 16 {
				h0 := byte((qh>>j)<<4) & 0x10
				h1 := byte(qh>>(j+12)) & 0x10
				vals[j] = d * float32(int((qs[j]&0x0f)|h0)-16)
				vals[j+16] = d * float32(int((qs[j]>>4)|h1)-16)
			}
		case ggmlQ8_0:
			d := f16(b[0:2])
			for j, q := range b[2:34] {
				vals[j] = d * float32(int8(q))
			}
		case ggmlQ4K:
			d, dmin := f16(b[0:2]), f16(b[2:4])
			sc, qs := b[4:16], b[16:144]
			for j, is := 0, 0; j < 256; j, is = j+64, is+2 {
				s1, m1 := scaleMinK4(is, sc)
				s2, m2 := scaleMinK4(is+1, sc)
				d1, dm1 := d*float32(s1), dmin*float32(m1)
				d2, dm2 := d*float32(s2), dmin*float32(m2)
				q := qs[j/2 : j/2+32]
				for l := range 32 {
					vals[j+l] = d1*float32(q[l]&0x0f) - dm1
					vals[j+32+l] = d2*float32(q[l]>>4) - dm2
				}
			}
		case ggmlQ6K:
			d := f16(b[208:210])
			for half := range 2 {
				ql, qh, sc := b[half*64:], b[128+half*32:], b[192+half*8:]
				yy := vals[half*128:]
				for l := range 32 {
					is := l / 16
					q1 := int((ql[l]&0x0f)|((qh[l]>>0)&3)<<4) - 32
					q2 := int((ql[l+32]&0x0f)|((qh[l]>>2)&3)<<4) - 32
					q3 := int((ql[l]>>4)|((qh[l]>>4)&3)<<4) - 32
					q4 := int((ql[l+32]>>4)|((qh[l]>>6)&3)<<4) - 32
					yy[l] = d * float32(int8(sc[is])) * float32(q1)
					yy[l+32] = d * float32(int8(sc[is+2])) * float32(q2)
					yy[l+64] = d * float32(int8(sc[is+4])) * float32(q3)
					yy[l+96] = d * float32(int8(sc[is+6])) * float32(q4)
				}
			}
		}
		for i, v := range vals {
			binary.LittleEndian.PutUint16(o[2*i:], bf16(v))
		}
		o = o[2*len(vals):]
	}
	return out
}

// q5ToQ8 rewrites whole Q5_0 blocks (a half-precision scale d, the 32
// weights' high bits, their low nibbles; weight j is d·(q−16)) as Q8_0
// blocks (d, then each weight q−16 as a signed byte): the same weights.
func q5ToQ8(b []byte) []byte {
	const q5, q8 = 22, 34
	out := make([]byte, len(b)/q5*q8)
	for o := out; len(b) >= q5; b, o = b[q5:], o[q8:] {
		copy(o[0:2], b[0:2])
		qh := binary.LittleEndian.Uint32(b[2:6])
		qs := b[6:22]
		for j := range 16 {
			h0 := byte((qh>>j)<<4) & 0x10
			h1 := byte(qh>>(j+12)) & 0x10
			o[2+j] = byte(int8(int((qs[j]&0x0f)|h0) - 16))
			o[2+j+16] = byte(int8(int((qs[j]>>4)|h1) - 16))
		}
	}
	return out
}

// bf16 rounds a float32 to the nearest BF16, ties to even (as ggml's
// ggml_compute_fp32_to_bf16).
func bf16(v float32) uint16 {
	u := math.Float32bits(v)
	if u&0x7fffffff > 0x7f800000 { // NaN stays NaN
		return uint16(u>>16) | 64
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

// scaleMinK4 is ggml's get_scale_min_k4: the 6-bit scale and min of
// sub-block j of a Q4_K block.
func scaleMinK4(j int, q []byte) (sc, m byte) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return (q[j+4] & 0x0f) | ((q[j-4] >> 6) << 4), (q[j+4] >> 4) | ((q[j] >> 6) << 4)
}

// f16 decodes an IEEE half-precision float.
func f16(b []byte) float32 {
	h := binary.LittleEndian.Uint16(b)
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
	case frac == 0:
		return math.Float32frombits(sign)
	}
	e := uint32(113) // subnormal: normalise
	for frac&0x400 == 0 {
		frac <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (frac&0x3ff)<<13)
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) / a * a }

// offsetReader reads an io.ReaderAt from the start, keeping its offset.
type offsetReader struct {
	r    io.ReaderAt
	off  int64
	size int64
}

func (o *offsetReader) Read(p []byte) (int, error) {
	if o.off >= o.size {
		return 0, io.EOF
	}
	n, err := o.r.ReadAt(p[:min(int64(len(p)), o.size-o.off)], o.off)
	o.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// countWriter counts what it writes and keeps the first error.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

func (c *countWriter) pad(align uint64) {
	if rem := uint64(c.n) % align; rem != 0 {
		c.Write(make([]byte, align-rem))
	}
}
