package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// A write is one thing memhost acknowledged (its command succeeded), or
// one the person wrote in their editor: each must be in the files exactly
// once at the end.
type write struct {
	Kind    string // daily, remember, edit (notebook); turn (a hook's transcript line); turn-b (session append on b)
	Machine string // a, b, or p (the person, on a)
	Day     int
	Text    string // turns: the content as written
	Full    string // the text as written
	Code    string // the write's own word, which nothing else contains: it occurs exactly once
	Session string // turns: memhost's session
	Turn    string // turn: the transcript line's uuid
	Path    string // remember: the page memhost named
}

// ledger is what the simulation expects to find.
type ledger struct {
	writes   []write
	unacked  []write // refused while the disk was full: there at most once
	failures []string
	n        int
	renames  int
}

func newLedger() *ledger { return &ledger{} }

func (l *ledger) add(w write) { l.writes = append(l.writes, w) }

// code is a new write's own word: the machine's letter and a serial
// ("a00042"), which no corpus text holds.
func (l *ledger) code(machine string) string {
	l.n++
	return fmt.Sprintf("%s%05d", machine, l.n)
}

func (l *ledger) renamed(from, to string) { l.renames++ }

func (l *ledger) byKind(kinds ...string) []write {
	var out []write
	for _, w := range l.writes {
		for _, k := range kinds {
			if w.Kind == k {
				out = append(out, w)
			}
		}
	}
	return out
}

// derived reports whether a notebook path is written by memhost from
// other files (episode logs, rollups, skill pages), so that a write's text
// is expected there again.
func derived(rel string) bool {
	return strings.HasPrefix(rel, "episodes/") || strings.HasPrefix(rel, "daily/rollups/") || strings.HasPrefix(rel, "skills/")
}

// homeFiles is what a home's files hold, read once for the audit.
type homeFiles struct {
	pages     map[string]string        // notebook path → text (pages that are not derived)
	conflicts []string                 // NAME.conflict-<commit>.md copies
	turns     map[string][]sessionTurn // session → its transcript's turns
	problems  []string
}

type sessionTurn struct {
	ID      string `json:"id"`
	Content string `json:"content"`
}

func readHome(home string) homeFiles {
	h := homeFiles{pages: map[string]string{}, turns: map[string][]sessionTurn{}}
	nb := filepath.Join(home, "notebook")
	filepath.WalkDir(nb, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			h.problems = append(h.problems, err.Error())
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		rel, _ := filepath.Rel(nb, path)
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(path)
		if err != nil {
			h.problems = append(h.problems, err.Error())
			return nil
		}
		if !utf8.Valid(b) {
			h.problems = append(h.problems, "notebook/"+rel+": not UTF-8 (torn?)")
		}
		switch {
		case strings.Contains(rel, ".conflict-"):
			h.conflicts = append(h.conflicts, rel)
		case !derived(rel):
			h.pages[rel] = string(b)
		}
		return nil
	})
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*.jsonl"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		b, err := os.ReadFile(f)
		if err != nil {
			h.problems = append(h.problems, err.Error())
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for n := 1; sc.Scan(); n++ {
			var t sessionTurn
			if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
				h.problems = append(h.problems, fmt.Sprintf("sessions/%s line %d: not JSON (torn?): %v", filepath.Base(f), n, err))
				continue
			}
			h.turns[name] = append(h.turns[name], t)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			h.problems = append(h.problems, fmt.Sprintf("sessions/%s: the last line has no newline (torn?)", filepath.Base(f)))
		}
	}
	return h
}

// count is how often w's code occurs in the home's pages (only under
// daily/ for a daily log's entry).
func (h homeFiles) count(w write) int {
	n := 0
	for rel, text := range h.pages {
		if w.Kind == "daily" && !strings.HasPrefix(rel, "daily/") {
			continue
		}
		n += strings.Count(text, w.Code)
	}
	return n
}

// holds reports whether the line holding w's code is w's text as
// written (or with a secret redacted in it).
func (h homeFiles) holds(w write) bool {
	for _, text := range h.pages {
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, w.Code) {
				return strings.Contains(l, strings.TrimSpace(w.Full)) || strings.Contains(l, "[secret redacted")
			}
		}
	}
	return false
}

// auditHome checks that every acknowledged write is in this home exactly
// once and no turn is stored twice.
func (s *sim) auditHome(m *machine, shared bool) []string {
	h := readHome(m.home)
	var out []string
	for _, p := range h.problems {
		out = append(out, m.name+": "+p)
	}
	for _, w := range s.ledger.writes {
		if !shared && w.Machine != m.name && !(m.name == "a" && w.Machine == "p") {
			continue
		}
		switch w.Kind {
		case "daily", "remember", "edit":
			if n := h.count(w); n != 1 {
				out = append(out, fmt.Sprintf("%s: %s of day %d from %s found %d times in the notebook: %q", m.name, w.Kind, w.Day+1, w.Machine, n, w.Full))
			} else if w.Kind != "remember" && !h.holds(w) { // remember routes its text: its code is what stays
				out = append(out, fmt.Sprintf("%s: %s of day %d from %s changed: %q is not in the notebook as written", m.name, w.Kind, w.Day+1, w.Machine, w.Full))
			}
		case "turn":
			n, content := 0, ""
			for _, t := range h.turns[w.Session] {
				if t.ID == w.Turn || t.ID == w.Turn+"#0" {
					n++
					content = t.Content
				}
			}
			switch {
			case n != 1:
				out = append(out, fmt.Sprintf("%s: turn %s of %s stored %d times", m.name, w.Turn, w.Session, n))
			case content != w.Text && !strings.Contains(content, "[secret redacted"):
				out = append(out, fmt.Sprintf("%s: turn %s of %s stored as %.60q, written as %.60q", m.name, w.Turn, w.Session, content, w.Text))
			}
		case "turn-b":
			n := 0
			for _, t := range h.turns[w.Session] {
				if t.Content == w.Text {
					n++
				}
			}
			if n != 1 {
				out = append(out, fmt.Sprintf("%s: turn of %s found %d times: %q", m.name, w.Session, n, w.Text))
			}
		}
	}
	for _, w := range s.ledger.unacked {
		if w.Kind == "turn" {
			n := 0
			for _, t := range h.turns[w.Session] {
				if t.ID == w.Turn || t.ID == w.Turn+"#0" {
					n++
				}
			}
			if n > 1 {
				out = append(out, fmt.Sprintf("%s: turn %s of %s, not stored while the disk was full, found %d times", m.name, w.Turn, w.Session, n))
			}
			continue
		}
		if n := h.count(w); n > 1 {
			out = append(out, fmt.Sprintf("%s: %s refused while the disk was full found %d times: %q", m.name, w.Kind, n, w.Full))
		}
	}
	for sid, turns := range h.turns {
		seen := map[string]bool{}
		for _, t := range turns {
			if t.ID != "" && seen[t.ID] {
				out = append(out, fmt.Sprintf("%s: session %s holds turn %s twice", m.name, sid, t.ID))
			}
			seen[t.ID] = true
		}
	}
	for _, c := range h.conflicts {
		s.event("%s: conflict copy %s", m.name, c)
	}
	return out
}

// audit checks both homes and the remote at the end of the run.
func (s *sim) audit() []string {
	out := append([]string{}, s.ledger.failures...)
	out = append(out, s.auditHome(s.a, true)...)
	out = append(out, s.auditHome(s.b, true)...)
	for _, m := range []*machine{s.a, s.b} {
		out = append(out, s.auditIndex(m)...)
		if st, err := gitCmd(m.home, "status", "--porcelain"); err != nil || strings.TrimSpace(st) != "" {
			out = append(out, fmt.Sprintf("%s: changes left uncommitted after the last sync: %s %v", m.name, strings.TrimSpace(st), err))
		}
	}
	out = append(out, compareShared(s.a.home, s.b.home)...)
	ls, err := gitCmd("", "--git-dir", s.remote, "ls-tree", "-r", "--name-only", "main")
	if err != nil {
		out = append(out, fmt.Sprintf("remote: %v: %s", err, ls))
	}
	for _, p := range strings.Fields(ls) {
		if !strings.HasPrefix(p, "notebook/") && !strings.HasPrefix(p, "sessions/") && p != ".gitignore" && p != ".gitattributes" {
			out = append(out, "remote: a file outside the shared folders was committed: "+p)
		}
	}
	return out
}

// auditIndex asks the home whether its index agrees with its files.
func (s *sim) auditIndex(m *machine) []string {
	var out []string
	var files struct {
		Files []struct {
			Path  string `json:"path"`
			Stale bool   `json:"stale"`
		} `json:"files"`
	}
	if err := m.jsonCall("files", &files, "files"); err != nil {
		return []string{m.name + ": " + err.Error()}
	}
	for _, f := range files.Files {
		if f.Stale {
			out = append(out, fmt.Sprintf("%s: %s is stale in the index", m.name, f.Path))
		}
	}
	var h struct {
		Checks []struct{ Name, Status, Message string } `json:"checks"`
	}
	r := m.run("", "--json", "health")
	if err := json.Unmarshal([]byte(r.Out), &h); err != nil {
		return append(out, fmt.Sprintf("%s: health: %v %v", m.name, r.Fail, err))
	}
	for _, c := range h.Checks {
		switch c.Name {
		case "database", "index-drift", "pages", "transcripts":
			if c.Status != "pass" {
				out = append(out, fmt.Sprintf("%s: health %s: %s: %s", m.name, c.Name, c.Status, c.Message))
			}
		}
	}
	return out
}

// compareShared checks that the two homes hold the same shared files
// (those git tracks in either) byte for byte.
func compareShared(a, b string) []string {
	list := func(home string) map[string]bool {
		out, _ := gitCmd(home, "ls-files")
		m := map[string]bool{}
		for _, p := range strings.Split(strings.TrimSpace(out), "\n") {
			if p != "" {
				m[p] = true
			}
		}
		return m
	}
	all := list(a)
	for p := range list(b) {
		all[p] = true
	}
	var paths []string
	for p := range all {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []string
	for _, p := range paths {
		x, errA := os.ReadFile(filepath.Join(a, p))
		y, errB := os.ReadFile(filepath.Join(b, p))
		switch {
		case errA != nil || errB != nil:
			out = append(out, fmt.Sprintf("shared %s: a: %v, b: %v", p, errA, errB))
		case !bytes.Equal(x, y):
			out = append(out, fmt.Sprintf("shared %s differs between the machines after the last sync", p))
		}
	}
	return out
}

func execGit(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	return cmd
}
