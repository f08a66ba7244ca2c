// Package history keeps the home's health reports in health/history/, a
// JSON file per check named by its time in UTC
// (2026-11-28T14-30-00.000Z.json): each is written whole and atomically, so a
// crash leaves no torn report, pruning is removing files by name, and the
// latest N are the last N names. A day of half-hourly checks is 48 small
// files.
package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/internal/fsx"
)

// Dir is the history's folder, relative to the home.
const Dir = "health/history"

// nameLayout names a report's file: its time, UTC, with no colon.
const nameLayout = "2006-01-02T15-04-05.000Z"

// DefaultLimit is how many reports Read returns when asked for 0.
const DefaultLimit = 48

// Save writes rep, made at now, to the history of home and removes the
// reports older than keep. Names are to the millisecond, so two checks
// of one second (a person's after the schedule's) are both kept.
func Save(home string, rep memhost.HealthReport, now time.Time, keep time.Duration) error {
	dir := filepath.Join(home, filepath.FromSlash(Dir))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(filepath.Join(dir, now.UTC().Format(nameLayout)+".json"), append(b, '\n'), 0o600); err != nil {
		return err
	}
	names, err := list(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		if t, _ := time.Parse(nameLayout, strings.TrimSuffix(n, ".json")); now.Sub(t) > keep {
			if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Read returns up to limit reports of home's history (DefaultLimit for
// 0), newest first. A report that cannot be read is skipped.
func Read(home string, limit int) ([]memhost.HealthReport, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	names, err := list(filepath.Join(home, filepath.FromSlash(Dir)))
	if err != nil {
		return nil, err
	}
	out := []memhost.HealthReport{}
	for i := len(names) - 1; i >= 0 && len(out) < limit; i-- {
		b, err := fsx.ReadFile(filepath.Join(home, filepath.FromSlash(Dir), names[i]))
		if err != nil {
			continue
		}
		var rep memhost.HealthReport
		if json.Unmarshal(b, &rep) == nil {
			out = append(out, rep)
		}
	}
	return out, nil
}

// list is the report files of dir, oldest first; other files are not
// the history's and are left alone.
func list(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("health history: %w", err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if _, err := time.Parse(nameLayout, strings.TrimSuffix(n, ".json")); err == nil && strings.HasSuffix(n, ".json") && e.Type().IsRegular() {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}
