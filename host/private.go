package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/health"
)

// makePrivate creates home as 0700 when it is missing and, when it is
// there, takes the group's and others' permissions off it and off each
// entry directly in it (folders, config.yaml, tokens): everything deeper
// is then out of another local user's reach, whatever umask made it.
// Symlinks are left alone. It returns what it changed ("home 0755 ->
// 0700", "config.yaml 0644 -> 0600") and what it could not change.
func makePrivate(home string) (repaired, open []string, err error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, nil, fmt.Errorf("home %s: %w", home, err)
	}
	fix := func(p, name string) {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 || fi.Mode().Perm()&0o077 == 0 {
			return
		}
		perm := fi.Mode().Perm()
		if err := os.Chmod(p, perm&^0o077); err != nil {
			open = append(open, fmt.Sprintf("%s %04o (%v)", name, perm, errors.Unwrap(err)))
			return
		}
		repaired = append(repaired, fmt.Sprintf("%s %04o -> %04o", name, perm, perm&^0o077))
	}
	fix(home, "home")
	entries, err := os.ReadDir(home)
	if err != nil {
		return repaired, open, fmt.Errorf("home %s: %w", home, err)
	}
	for _, e := range entries {
		fix(filepath.Join(home, e.Name()), e.Name())
	}
	return repaired, open, nil
}

// privacyCheck is health's "home-private": the home is the user's alone.
// It warns while the home is open to others, and says what Open repaired.
func (h *Host) privacyCheck() memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "home-private", Status: health.Pass, Message: "the home is readable by its user only (0700)"}
	if fi, err := os.Stat(h.home); err == nil && fi.Mode().Perm()&0o077 != 0 {
		c.Status, c.Message = health.Warn, fmt.Sprintf("the home is %04o: other local users can read it; run chmod 700 %s", fi.Mode().Perm(), h.home)
	} else if len(h.privacy.open) > 0 {
		c.Status, c.Message = health.Warn, "could not make private: "+strings.Join(h.privacy.open, ", ")
	}
	if len(h.privacy.repaired) > 0 {
		c.Message += "; made private when opened: " + strings.Join(h.privacy.repaired, ", ")
	}
	return c
}
