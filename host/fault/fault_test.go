package fault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
