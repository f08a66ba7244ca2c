package fault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

type pathErr struct{ kind Kind }

func (p pathErr) Error() string   { return "path" }
func (p pathErr) FaultKind() Kind { return p.kind }

func TestKindOf(t *testing.T) {
	cause := errors.New("disk full")
	tests := []struct {
		name string
		err  error
		want Kind
	}{
		{"nil", nil, ""},
		{"plain", errors.New("x"), Internal},
		{"bad input", BadInputf("query", "the query is empty"), BadInput},
		{"wrapped", fmt.Errorf("recall: %w", Errorf(NotFound, "path", "no page %s", "a.md")), NotFound},
		{"kinded of another package", fmt.Errorf("write: %w", pathErr{Outside}), Outside},
		{"zero kind", &Error{Message: "x"}, Internal},
		{"canceled", fmt.Errorf("sync: %w", context.Canceled), Canceled},
		{"deadline", context.DeadlineExceeded, Timeout},
		{"wrapped deadline", fmt.Errorf("asking the plugin: %w", context.DeadlineExceeded), Timeout},
		{"kind set over deadline", Errorf(Unavailable, "", "the plugin did not answer: %w", context.DeadlineExceeded), Unavailable},
	}
	for _, tt := range tests {
		if got := KindOf(tt.err); got != tt.want {
			t.Errorf("%s: KindOf = %q, want %q", tt.name, got, tt.want)
		}
	}
	err := Errorf(Internal, "", "saving: %w", cause)
	if !errors.Is(err, cause) || err.Error() != "saving: disk full" {
		t.Fatalf("Errorf with %%w: %v (is cause %v)", err, errors.Is(err, cause))
	}
	if f := FieldOf(fmt.Errorf("x: %w", BadInputf("since", "bad"))); f != "since" {
		t.Fatalf("FieldOf = %q, want since", f)
	}
	if FieldOf(fs.ErrNotExist) != "" {
		t.Fatal("FieldOf of a foreign error should be empty")
	}
}

// A refused value of megabytes is named by its start in the message, not
// echoed whole, even inside a cause's text.
func TestLongValuesShortened(t *testing.T) {
	big := strings.Repeat("a", 10<<20)
	for _, err := range []error{
		BadInputf("section", "section %q names no heading", big),
		Errorf(NotFound, "path", "no page %s", []byte(big)),
		Errorf(NotFound, "path", "cannot read: %v", &fs.PathError{Op: "open", Path: "/tmp/" + big, Err: fs.ErrNotExist}),
	} {
		if msg := err.Error(); len(msg) > 200 || !strings.Contains(msg, "aaaa…") {
			t.Fatalf("message of %d bytes: %.120s", len(msg), msg)
		}
	}
	if msg := BadInputf("x", "value %q", "short").Error(); msg != `value "short"` {
		t.Fatalf("a short value changed: %s", msg)
	}
}
