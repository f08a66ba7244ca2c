package history

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memhost/memhost"
)

func TestSaveReadPrune(t *testing.T) {
	home := t.TempDir()
	t0 := time.Date(2026, 11, 20, 23, 45, 0, 0, time.FixedZone("x", -7*3600))
	keep := 2 * 24 * time.Hour
	// A file of another's stays.
	if err := os.MkdirAll(filepath.Join(home, Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, Dir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 8 { // every 12 hours: 3.5 days
		now := t0.Add(time.Duration(i) * 12 * time.Hour)
		rep := memhost.HealthReport{Timestamp: now.UTC().Format(time.RFC3339), Overall: "HEALTHY"}
		if err := Save(home, rep, now, keep); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(home, Dir))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// The last is 2026-11-24T18:45Z; one exactly 2 days older is kept.
	want := []string{"2026-11-22T18-45-00.000Z.json", "2026-11-23T06-45-00.000Z.json", "2026-11-23T18-45-00.000Z.json",
		"2026-11-24T06-45-00.000Z.json", "2026-11-24T18-45-00.000Z.json", "notes.txt"}
	if len(names) != len(want) {
		t.Fatalf("history holds %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("history holds %v, want %v", names, want)
		}
	}
	got, err := Read(home, 2)
	if err != nil || len(got) != 2 || got[0].Timestamp != "2026-11-24T18:45:00Z" || got[1].Timestamp != "2026-11-24T06:45:00Z" {
		t.Fatalf("Read(2) = %+v, %v; want the two newest, newest first", got, err)
	}
	if got, _ := Read(home, 0); len(got) != 5 {
		t.Fatalf("Read(0) = %d reports, want all 5", len(got))
	}
	if got, err := Read(t.TempDir(), 0); err != nil || len(got) != 0 {
		t.Fatalf("Read of no history = %v, %v", got, err)
	}
}

// TestSameSecondKeepsBoth: a check just after another, in one second, is
// kept beside it, and read first.
func TestSameSecondKeepsBoth(t *testing.T) {
	home := t.TempDir()
	t0 := time.Date(2026, 11, 28, 14, 30, 0, 100e6, time.UTC)
	for i, overall := range []memhost.HealthOverall{"HEALTHY", "DEGRADED"} {
		if err := Save(home, memhost.HealthReport{Overall: overall}, t0.Add(time.Duration(i)*300*time.Millisecond), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read(home, 0)
	if err != nil || len(got) != 2 || got[0].Overall != "DEGRADED" {
		t.Fatalf("Read = %+v, %v; want both, the later first", got, err)
	}
}
