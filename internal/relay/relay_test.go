package relay

import (
	"bytes"
	"strings"
	"testing"
)

func TestFrames(t *testing.T) {
	var b bytes.Buffer
	big := bytes.Repeat([]byte("x"), MaxFrame+10)
	if err := Write(&b, Hello, []byte(`{"args":["memhost"]}`)); err != nil {
		t.Fatal(err)
	}
	if err := Chunks(&b, Stdout, big); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, Exit, ExitPayload(2)); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, Stdout, big); err == nil {
		t.Error("a frame over MaxFrame was written")
	}
	typ, p, err := Read(&b)
	if err != nil || typ != Hello || string(p) != `{"args":["memhost"]}` {
		t.Fatalf("hello: %c %q %v", typ, p, err)
	}
	var out []byte
	for range 2 {
		typ, p, err := Read(&b)
		if err != nil || typ != Stdout {
			t.Fatalf("stdout chunk: %c %v", typ, err)
		}
		out = append(out, p...)
	}
	if !bytes.Equal(out, big) {
		t.Errorf("stdout came back as %d bytes, want %d", len(out), len(big))
	}
	typ, p, err = Read(&b)
	if code, cerr := ExitCode(p); err != nil || typ != Exit || cerr != nil || code != 2 {
		t.Errorf("exit: %c %v %d %v", typ, err, code, cerr)
	}
	if _, err := ExitCode([]byte{1}); err == nil {
		t.Error("a short exit frame was accepted")
	}
	// A frame header announcing more than MaxFrame is refused, not
	// allocated.
	if _, _, err := Read(strings.NewReader("O\xff\xff\xff\xff")); err == nil {
		t.Error("a 4 GB frame header was accepted")
	}
}
