package notebook

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memhost/memhost/host/chunk"
	"github.com/memhost/memhost/host/markdown"
)

// editPages are real-looking pages for the section editor's seeds.
var editPages = []string{
	"",
	"\n",
	shopping,
	"# Shopping List\n\n## Groceries\n- Milk (oat)\n- Eggs (dozen)\n\n\n\n## Hardware Store\n- WD-40",
	"# Contacts\n\n## Sarah Chen\n- Phone: 555-1234\n\n## Bob Smith\n- Email: bob@example.com\n",
	"# Build notes\n\n```sh\n# not a heading\n## Groceries\nmake build\n```\n\n## Groceries\n- x\n",
	"# Log\n```\nunclosed fence\n",
	"## A\ntext\n### sub\nmore\n## B\n",
	"# T\r\n\r\n## Groceries\r\n- Milk\r\n\r\n## Hardware Store\r\n- WD-40\r\n",
	"---\ntitle: Groceries\n---\n\n# Shopping\n\n## Groceries\n- Milk\n",
	"## 会议\n- 第一项\n\n## Café ☕\n- crème brûlée\n",
	"## Groceries ##\n- closing hashes\n# H1\n## groceries\n",
	"## Long\n" + strings.Repeat("word ", 2000) + "\n",
	"   ## indented heading\n    ## code, not a heading\n",
}

// cleanText is what host.Write and host.Remember do to a text before it
// reaches the editor (host/pages.go): the editor is only ever given text
// with something in it.
func cleanText(s string) (string, bool) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if strings.TrimSpace(s) == "" || !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return "", false
	}
	return strings.TrimLeft(strings.TrimRight(s, " \t\n"), "\n"), true
}

// section finds the H2 section named name as the editor should: its
// heading's index and the index of the next H1/H2 heading (or len(lines));
// start is -1 when there is none. A leading frontmatter block (a "---"
// line first, through the next one) holds no headings and no fences.
func section(lines []string, name string) (start, end int) {
	fm := 0
	if len(lines) > 0 && strings.TrimRight(lines[0], " \t") == "---" {
		for i := 1; i < len(lines) && fm == 0; i++ {
			if strings.TrimRight(lines[i], " \t") == "---" {
				fm = i + 1
			}
		}
	}
	levels := append(make([]int, fm), markdown.HeadingLevels(lines[fm:])...)
	start = -1
	for i := range lines {
		if start < 0 && levels[i] == 2 && strings.EqualFold(markdown.HeadingText(lines[i]), name) {
			start = i
		} else if start >= 0 && (levels[i] == 1 || levels[i] == 2) {
			return start, i
		}
	}
	return start, len(lines)
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// noCR drops carriage returns at the ends of lines: an edit writes a page
// with its most common line ending, and drops CRs left at the ends of the
// lines of an LF page ("0\r\r" becomes "0\n"), so only pages without CRs
// are compared byte for byte.
func noCR(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(l, "\r")
	}
	return out
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzEdit checks the section editor on any page, section name and text:
// the new text is where the Edit says, the lines outside the edited section
// are untouched (byte for byte on pages without CRs; line by line, but for
// their endings, on others), the edited section can be found again, and
// replacing it again changes nothing.
func FuzzEdit(f *testing.F) {
	for _, p := range editPages {
		for _, s := range []string{"", "Groceries", "## hardware store", "Pharmacy", "Sarah", "A", "B", "会议", "Café ☕"} {
			f.Add(p, s, "- Salmon", false)
			f.Add(p, s, "- Bread\n- Butter", true)
		}
	}
	f.Add(shopping, "Groceries", "First line\n\n### Sub\nmore", true)
	f.Add(shopping, "Groceries", "\n\n  indented\n\n", false)
	f.Add(shopping, "Groceries", "## Injected\nx", true)
	f.Add(shopping, "Groceries", "```\nunclosed", false)
	f.Add(shopping, "a# #", "x", true)
	f.Add("0\r\r", "x", "t", true)
	f.Add("# T\n- a\r\r\n\n## x\r\nold\r", "x", "t\r", true)
	f.Add("a\r", "", "b\r", false)
	f.Add(shopping, "0 # #", "x", false)
	f.Add(shopping, "## # #", "x", true)
	f.Add(shopping, "Evil\n## Injected", "x", false)
	f.Add(shopping, "Evil\r\n# Injected\u2028", "x", true)
	f.Fuzz(func(t *testing.T, page, sec, text string, replace bool) {
		// Text with no lines (host refuses it first) adds none.
		if e := Append(page, sec, "\n"); e.EndLine != e.StartLine-1 || e.StartLine < 1 {
			t.Fatalf("Append of no text gives lines %d-%d of %q", e.StartLine, e.EndLine, e.Page)
		}
		text, ok := cleanText(text)
		if !ok {
			return
		}
		var e Edit
		if replace {
			e = Replace(page, sec, text)
		} else {
			e = Append(page, sec, text)
		}
		lines, out := markdown.Lines(page), markdown.Lines(e.Page)
		body := markdown.Lines(strings.Trim(text, "\n"))
		if e.StartLine < 1 || e.EndLine > len(out) || !equalLines(noCR(out[e.StartLine-1:e.EndLine]), noCR(body)) {
			t.Fatalf("new text %q is not on lines %d-%d of %q", body, e.StartLine, e.EndLine, e.Page)
		}
		if !strings.HasSuffix(e.Page, "\n") {
			t.Fatalf("page %q does not end in a newline", e.Page)
		}
		name := SectionName(sec)
		if name == "" && replace {
			return // the whole page is replaced
		}
		// keep: lines before the edit, kept as they were; tail: lines after
		// it, from the next H1/H2 heading on.
		var keep, tail []string
		start, end := -1, len(lines)
		if name != "" {
			start, end = section(lines, name)
		}
		switch {
		case start < 0:
			keep = trimBlank(lines) // a new section, or text, at the end
		case replace:
			keep = lines[:start+1] // through the heading
			tail = lines[end:]
		default:
			keep = trimBlank(lines[:end])
			tail = lines[end:]
		}
		if len(out) < len(keep)+len(tail) || !equalLines(noCR(out[:len(keep)]), noCR(keep)) || !equalLines(noCR(out[len(out)-len(tail):]), noCR(tail)) {
			t.Fatalf("lines outside the section changed:\nbefore %q\nafter  %q", page, e.Page)
		}
		if !strings.Contains(page, "\r") {
			pre := strings.Join(keep, "\n")
			post := strings.Join(tail, "\n")
			if !strings.HasPrefix(e.Page, pre) || !strings.HasSuffix(e.Page, post+"\n") {
				t.Fatalf("bytes outside the section changed:\nbefore %q\nafter  %q", page, e.Page)
			}
		}
		// The text went into the section named name, which an edit of the
		// same section finds again (also one named with a line break, or
		// with what reads as closing #s, which CheckSection refuses); not
		// when the text brings its own H1/H2 heading or fence (a daily log
		// entry may be a section of its own).
		if name == "" || hasStructure(body) {
			return
		}
		s, en := section(out, name)
		if s < 0 || s >= e.StartLine-1 || en < e.EndLine {
			t.Fatalf("section %q of the result (lines %d-%d) does not hold the new text (lines %d-%d):\n%q", name, s+1, en, e.StartLine, e.EndLine, e.Page)
		}
		// Replacing a section twice with the same text changes nothing the
		// second time.
		if replace {
			again := Replace(e.Page, sec, text)
			if again.Page != e.Page {
				t.Fatalf("Replace is not idempotent:\nonce  %q\ntwice %q", e.Page, again.Page)
			}
		}
	})
}

// hasStructure reports whether lines hold an H1/H2 heading or a code fence.
func hasStructure(lines []string) bool {
	for i, l := range markdown.HeadingLevels(lines) {
		t := strings.TrimLeft(lines[i], " ")
		if l == 1 || l == 2 || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			return true
		}
	}
	return false
}

// FuzzFrontmatter checks that a page's leading YAML frontmatter
// (--- ... ---), which memhost does not parse, survives an edit of a
// section below it and reaches the index whole.
func FuzzFrontmatter(f *testing.F) {
	fms := []string{
		"",
		"title: Groceries",
		"title: Shopping\ntags: [food, weekly]\ndate: 2025-05-26",
		"# a YAML comment\ntitle: x",
		"## Groceries\ntitle: a comment that looks like the section",
		"description: |\n  A block scalar\n\n  with a blank line\n  ```\n  and a fence",
		"title: \"Café ☕ 会议\"\naliases:\n  - one\n  - two",
		"key: " + strings.Repeat("long value ", 300),
	}
	rests := []string{
		"",
		"# Shopping\n\n## Groceries\n- Milk\n\n## Hardware Store\n- WD-40\n",
		"\n# Notes\nSome prose.\n",
		"## Groceries\n```\n## Groceries\n```\n",
	}
	for _, fm := range fms {
		for _, r := range rests {
			f.Add(fm, r, "Groceries", "- Salmon", false)
			f.Add(fm, r, "Hardware Store", "- Nails", true)
			f.Add(fm, r, "", "appended at the end", false)
		}
	}
	f.Fuzz(func(t *testing.T, fm, rest, sec, text string, replace bool) {
		text, ok := cleanText(text)
		if !ok || strings.Contains(fm+rest, "\r") {
			return // CRLF pages are FuzzEdit's
		}
		for _, l := range strings.Split(fm, "\n") {
			if strings.TrimRight(l, " \t") == "---" {
				return // it would end the frontmatter
			}
		}
		block := "---\n" + fm + "\n---\n"
		if fm == "" {
			block = "---\n---\n"
		}
		page := block + rest
		fmLines := markdown.Lines(block)
		if SectionName(sec) == "" && markdown.FrontmatterLines(markdown.Lines(text)) > 0 {
			replace = false // a whole page with frontmatter of its own replaces the old
		}
		var e Edit
		if replace {
			e = Replace(page, sec, text)
		} else {
			e = Append(page, sec, text)
		}
		if !strings.HasPrefix(e.Page, block) {
			t.Fatalf("the frontmatter %q changed; the page is now\n%q", block, e.Page)
		}
		// The chunker leaves the frontmatter out and keeps the body's line
		// numbers: no chunk starts in it.
		for _, c := range chunk.Split(e.Page, chunk.DefaultOptions()) {
			if c.StartLine <= len(fmLines) {
				t.Fatalf("chunk at lines %d-%d holds frontmatter (lines 1-%d): %q", c.StartLine, c.EndLine, len(fmLines), c.Text)
			}
		}
	})
}

// FuzzClean checks page path validation against a notebook with symlinks
// that lead out of it, back into it, nowhere, and round in a loop: an
// accepted path is canonical (relative, clean, no "..", ending in .md in
// any case, as Clean allows) and everything it resolves through stays in
// the notebook.
func FuzzClean(f *testing.F) {
	dir := f.TempDir()
	outside := filepath.Join(dir, "outside")
	nb, err := Open(filepath.Join(dir, "nb"), filepath.Join(dir, "lock"))
	if err != nil {
		f.Fatal(err)
	}
	root := nb.Root() // symlinks resolved, as resolved paths are compared with it
	if err := os.MkdirAll(filepath.Join(outside, "sub"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("x"), 0o644); err != nil {
		f.Fatal(err)
	}
	links := map[string]string{
		"out":         outside,
		"esc":         "../outside",
		"lists/up":    "..",
		"inside":      "reference",
		"dangling":    "/nonexistent/memhost-fuzz",
		"loop":        "loop",
		"page.md":     filepath.Join(outside, "secret.md"),
		"knowledge/f": "../lists",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range []string{
		"lists/todos", "reference/contacts.md", "knowledge/facts.MD", "daily/2025-05-26.md",
		"../etc/passwd", "/etc/passwd", "a/../../b", "a/../b", "./a/./b", "a//b", "lists/",
		"out/x", "out/sub/x.md", "esc/secret", "lists/up/out/x", "lists/up/lists/todos", "inside/x",
		"dangling/x", "dangling", "loop/x", "loop", "page", "page.md", "knowledge/f/todos",
		"", ".", "..", ".md", "a.txt", "a.md.txt", "  spaced name  ", "\t", "a\x00b", `..\x`, `C:\x`,
		"./ 0", `./\`, "a/ b", "a /b", "a/b .md", `.//\x`, "~/notes", "日本語/メモ", "é\u0301", "a/b/c/d/e/f/g", strings.Repeat("a/", 200) + "x",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := nb.Clean(p)
		trimmed := filepath.ToSlash(strings.TrimSpace(p))
		for _, part := range strings.Split(trimmed, "/") {
			if part == ".." && err == nil {
				t.Fatalf("Clean(%q) = %q, accepting a \"..\" element", p, rel)
			}
		}
		if err != nil {
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("Clean(%q): %v is not a *PathError", p, err)
			}
			return
		}
		if rel == "" || path.IsAbs(rel) || filepath.IsAbs(rel) || path.Clean(rel) != rel || strings.ContainsRune(rel, 0) {
			t.Fatalf("Clean(%q) = %q, not a clean relative path", p, rel)
		}
		if !strings.EqualFold(path.Ext(rel), ".md") {
			t.Fatalf("Clean(%q) = %q, not a .md page", p, rel)
		}
		for _, part := range strings.Split(rel, "/") {
			if part == ".." || part == "." || part == "" {
				t.Fatalf("Clean(%q) = %q, with a %q element", p, rel, part)
			}
		}
		// A canonical path is its own canonical form.
		if again, err := nb.Clean(rel); err != nil || again != rel {
			t.Fatalf("Clean(%q) = %q, but Clean(%q) = %q, %v", p, rel, rel, again, err)
		}
		// Walk the path as the kernel will: every existing symlink on it
		// resolves, and inside the notebook.
		full := root
		for _, part := range strings.Split(rel, "/") {
			full = filepath.Join(full, part)
			fi, err := os.Lstat(full)
			if errors.Is(err, fs.ErrNotExist) {
				break // the rest is made fresh inside
			}
			if err != nil {
				if errors.Is(err, fs.ErrInvalid) || strings.Contains(err.Error(), "not a directory") {
					break // under a file: the write fails, inside
				}
				t.Fatalf("Clean(%q) = %q: %v", p, rel, err)
			}
			if fi.Mode()&fs.ModeSymlink == 0 {
				continue
			}
			resolved, err := filepath.EvalSymlinks(full)
			if err != nil {
				t.Fatalf("Clean(%q) = %q, through the link %s, which does not resolve: %v", p, rel, full, err)
			}
			if resolved != root && !strings.HasPrefix(resolved, root+string(filepath.Separator)) {
				t.Fatalf("Clean(%q) = %q, through %s to %s outside the notebook", p, rel, full, resolved)
			}
		}
	})
}
