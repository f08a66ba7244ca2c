// Package prompt assembles the block an agent puts in its system prompt:
// the notebook's reference pages and its recent daily logs, within the
// size limits of memory.prompt. It reads pages and writes nothing.
package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/notebook"
)

// Build assembles every reference page (memory.prompt.maxPerFileChars
// each, maxTotalReferenceChars in all, truncation marked), then the daily
// logs of the last dailyWindow days, today first. Pages come in name order,
// so the block is stable for a stable notebook. A daily log over the
// per-file limit keeps its end, where the latest entries are.
func Build(nb *notebook.Notebook, p config.Prompt, today time.Time) (memhost.ContextResponse, error) {
	var resp memhost.ContextResponse
	var b strings.Builder
	b.WriteString("# Memory\n\nYour notebook's reference pages and recent daily logs. Search the rest with `memhost recall`.\n")

	refDir := path.Clean(strings.Trim(p.ReferenceDir, "/"))
	b.WriteString("\n## Reference\n")
	var refs []string
	if err := nb.Inside(refDir); err != nil {
		// The indexer does not follow such a link either: what context
		// shows must be what recall can find and the notebook holds.
		fmt.Fprintf(&b, "\n(%s/ leads outside the notebook; not read)\n", refDir)
	} else {
		var err error
		if refs, err = listPages(nb, refDir); err != nil {
			return resp, err
		}
		if len(refs) == 0 {
			b.WriteString("\n(no reference pages yet)\n")
		}
	}
	total := 0
	for _, rel := range refs {
		data, err := nb.Read(rel)
		if err != nil {
			continue // removed since listing
		}
		text := strings.ToValidUTF8(string(data), "\uFFFD")
		cf := memhost.ContextFile{Path: rel}
		room := min(p.MaxPerFileChars, p.MaxTotalReferenceChars-total)
		if room < utf8.RuneCountInString(text) && room < minUsefulChars {
			cf.Omitted = true
			resp.Files = append(resp.Files, cf)
			continue
		}
		text, cf.Truncated = truncateHead(text, room)
		cf.Chars = utf8.RuneCountInString(text)
		total += cf.Chars
		fmt.Fprintf(&b, "\n### %s\n\n%s\n", rel, strings.TrimRight(text, "\n"))
		if cf.Truncated {
			fmt.Fprintf(&b, "\n[… truncated: %s is longer than %d characters; read the rest with `memhost get %s`]\n", rel, room, rel)
		}
		resp.Files = append(resp.Files, cf)
	}
	if omitted := countOmitted(resp.Files); omitted > 0 {
		fmt.Fprintf(&b, "\n[… %d more reference pages left out: the reference total is limited to %d characters]\n", omitted, p.MaxTotalReferenceChars)
	}

	if p.DailyWindow > 0 {
		b.WriteString("\n## Daily log\n")
		found := false
		for i := 0; i < p.DailyWindow; i++ {
			day := today.AddDate(0, 0, -i).Format(time.DateOnly)
			rel := "daily/" + day + ".md"
			if nb.Inside(rel) != nil {
				continue // a link out of the notebook, which is not indexed either
			}
			data, err := nb.Read(rel)
			if errors.Is(err, notebook.ErrNotFound) {
				continue
			}
			if err != nil {
				return resp, err
			}
			found = true
			text := strings.ToValidUTF8(string(data), "\uFFFD")
			cf := memhost.ContextFile{Path: rel}
			text, cf.Truncated = truncateTail(text, p.MaxPerFileChars)
			cf.Chars = utf8.RuneCountInString(text)
			label := "today"
			if i == 1 {
				label = "yesterday"
			} else if i > 1 {
				label = fmt.Sprintf("%d days ago", i)
			}
			fmt.Fprintf(&b, "\n### %s (%s)\n\n", rel, label)
			if cf.Truncated {
				fmt.Fprintf(&b, "[… earlier entries truncated: read them with `memhost get %s`]\n\n", rel)
			}
			b.WriteString(strings.TrimRight(text, "\n") + "\n")
			resp.Files = append(resp.Files, cf)
		}
		if !found {
			b.WriteString("\n(no daily log entries for today or yesterday)\n")
		}
	}
	resp.Text = b.String()
	if resp.Files == nil {
		resp.Files = []memhost.ContextFile{}
	}
	return resp, nil
}

// minUsefulChars: a page that would be cut shorter than this by the total
// limit is left out instead of shown as a stub.
const minUsefulChars = 100

func countOmitted(files []memhost.ContextFile) int {
	n := 0
	for _, f := range files {
		if f.Omitted {
			n++
		}
	}
	return n
}

// listPages returns the .md pages under a notebook folder (which must be
// inside the notebook), sorted. Like the indexer's scan it skips hidden
// files and folders, and follows a symlinked page only when it leads to a
// file inside the notebook.
func listPages(nb *notebook.Notebook, dir string) ([]string, error) {
	root := nb.Abs(dir)
	var out []string
	err := fs.WalkDir(os.DirFS(root), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.EqualFold(path.Ext(p), ".md") {
			return nil
		}
		rel := path.Join(dir, p)
		switch {
		case d.Type().IsRegular():
			out = append(out, rel)
		case d.Type()&fs.ModeSymlink != 0 && nb.Inside(rel) == nil:
			if fi, err := os.Stat(nb.Abs(rel)); err == nil && fi.Mode().IsRegular() {
				out = append(out, rel)
			}
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// truncateHead keeps the first n characters, cut at a line end when one is
// near.
func truncateHead(s string, n int) (string, bool) {
	r := []rune(s)
	if len(r) <= n {
		return s, false
	}
	cut := string(r[:n])
	if i := strings.LastIndexByte(cut, '\n'); i > len(cut)*3/4 {
		cut = cut[:i+1]
	}
	return cut, true
}

// truncateTail keeps the last n characters, from a line start when one is
// near.
func truncateTail(s string, n int) (string, bool) {
	r := []rune(s)
	if len(r) <= n {
		return s, false
	}
	cut := string(r[len(r)-n:])
	if i := strings.IndexByte(cut, '\n'); i >= 0 && i < len(cut)/4 {
		cut = cut[i+1:]
	}
	return cut, true
}
