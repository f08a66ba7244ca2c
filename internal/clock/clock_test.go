package clock

import (
	"os"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, true},
		{"-26h", -26 * time.Hour, true},
		{"8760h30m", 8760*time.Hour + 30*time.Minute, true},
		{"tomorrow", 0, false},
		{"5", 0, false},
	} {
		got, err := Parse(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestSet(t *testing.T) {
	want := time.Date(2027, 3, 28, 0, 59, 0, 0, time.UTC)
	restore := Set(want)
	got := Now()
	restore()
	if d := got.Sub(want); d < 0 || d > time.Minute {
		t.Fatalf("Now after Set(%v) = %v", want, got)
	}
	// Restored: the offset of the environment again (a test-dates run
	// sets one).
	env, _ := Parse(os.Getenv(EnvOffset))
	if d := Now().Sub(time.Now()) - env; d.Abs() > time.Minute {
		t.Fatalf("restore left the clock %v away from the environment's offset %v", d, env)
	}
}
