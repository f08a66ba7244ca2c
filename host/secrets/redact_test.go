package secrets

import (
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// splitFrontmatter returns the YAML between a page's "---" lines.
func splitFrontmatter(t *testing.T, page string) string {
	t.Helper()
	start, end, ok := frontmatter(page)
	if !ok {
		t.Fatalf("no frontmatter in %q", page)
	}
	return page[start:end]
}

func TestRedactKeepsFrontmatterYAML(t *testing.T) {
	s := scanner(t)
	indented := "  " + strings.ReplaceAll(rsaKey, "\n", "\n  ")
	for _, c := range []struct {
		name, page string
		key        string // the key whose value held the secret
		wantValue  string // its value after redaction, %s for the marker
	}{
		{"plain value", "---\ntitle: Deploy\ntoken: " + githubPAT + "\ntags: [ops]\n---\nbody\n", "token", "%s"},
		{"plain value with comment", "---\ntoken: " + githubPAT + " # rotate me\n---\n", "token", "%s"},
		{"plain value, secret mid-value", "---\nnote: use " + githubPAT + " for the push\n---\n", "note", "use %s for the push"},
		{"plain value with quotes and backslash", "---\nnote: say \"hi\" C:\\tmp " + githubPAT + "\n---\n", "note", "say \"hi\" C:\\tmp %s"},
		{"double quoted", "---\ntoken: \"" + githubPAT + "\"\n---\n", "token", "%s"},
		{"single quoted", "---\ntoken: '" + githubPAT + "'\n---\n", "token", "%s"},
		{"generic password", "---\npassword: " + genericPwd + "\n---\n", "password", "%s"},
		{"flow sequence", "---\nkeys: [a, " + awsKey + ", b]\n---\n", "keys", "%s"},
		{"block sequence", "---\nkeys:\n  - a\n  - " + awsKey + "\n---\n", "keys", "%s"},
		{"literal block private key", "---\nkey: |\n" + indented + "\nnext: 1\n---\n", "key", "%s\n"},
		{"plain multi-line private key", "---\nkey: " + strings.ReplaceAll(rsaKey, "\n", "\n  ") + "\nnext: 1\n---\n", "key", "%s"},
		{"crlf", "---\r\ntitle: x\r\ntoken: " + githubPAT + "\r\n---\r\nbody\r\n", "token", "%s"},
		{"non-ascii before", "---\ntitre: Grüße 東京\nnote: clé " + githubPAT + " ok\n---\n", "note", "clé %s ok"},
		{"secret as a key", "---\n" + awsKey + ": yes\n---\n", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, fs := s.Redact(c.page)
			if len(fs) != 1 {
				t.Fatalf("Redact(%q) findings = %+v, want one", c.page, fs)
			}
			var before, after map[string]any
			if err := yaml.Unmarshal([]byte(splitFrontmatter(t, c.page)), &before); err != nil {
				t.Fatalf("test page does not parse: %v", err)
			}
			if err := yaml.Unmarshal([]byte(splitFrontmatter(t, got)), &after); err != nil {
				t.Fatalf("Redact(%q) = %q: frontmatter no longer parses: %v", c.page, got, err)
			}
			if len(after) != len(before) {
				t.Fatalf("Redact(%q) = %q: keys %v, want %v", c.page, got, after, before)
			}
			marker := Marker(fs[0])
			if c.key == "" {
				if _, ok := after[marker]; !ok {
					t.Fatalf("Redact(%q) = %q: keys %v, want the marker as a key", c.page, got, after)
				}
				return
			}
			want := strings.Replace(c.wantValue, "%s", marker, 1)
			gotValue := after[c.key]
			if list, ok := gotValue.([]any); ok {
				gotValue = list[1]
			}
			if gotValue != want {
				t.Fatalf("Redact(%q) = %q: %s is %#v, want %q", c.page, got, c.key, gotValue, want)
			}
			for k, v := range before {
				if k != c.key && after[k] == nil && v != nil {
					t.Fatalf("Redact(%q) = %q lost key %s", c.page, got, k)
				}
			}
		})
	}
}

func TestRedactFrontmatterThatNeverParsed(t *testing.T) {
	s := scanner(t)
	page := "---\ntoken: " + githubPAT + "\n  bad: [\n---\nbody\n"
	got, fs := s.Redact(page)
	if len(fs) != 1 || strings.Contains(got, githubPAT) {
		t.Fatalf("Redact(%q) = %q, %+v: want the token redacted all the same", page, got, fs)
	}
}

func TestRedactKeepsMarkdown(t *testing.T) {
	s := scanner(t)
	page := "# Deploy notes\n\n## Keys for [[Project Atlas]]\n\n" +
		"The AWS key " + awsKey + " belongs to [[Ops Team]] and [[Billing|the billing account]].\n\n" +
		"## Private key\n\n" + rsaKey + "\n\n### After the key\n\nSee [[Runbook#Rotation]].\n"
	got, fs := s.Redact(page)
	if len(fs) != 2 {
		t.Fatalf("Redact findings = %+v, want 2", fs)
	}
	for _, keep := range []string{
		"# Deploy notes\n", "\n## Keys for [[Project Atlas]]\n", "[[Ops Team]]", "[[Billing|the billing account]]",
		"\n## Private key\n\n[secret redacted: private-key …", "\n### After the key\n", "[[Runbook#Rotation]]",
		"The AWS key [secret redacted: aws-access-token …",
	} {
		if !strings.Contains(got, keep) {
			t.Fatalf("Redact lost %q:\n%s", keep, got)
		}
	}
	// The private key's 4 lines became one.
	if gotLines, wantLines := strings.Count(got, "\n"), strings.Count(page, "\n")-3; gotLines != wantLines {
		t.Fatalf("Redact gave %d lines, want %d:\n%s", gotLines, wantLines, got)
	}
}

func TestRedactKeepsJSONStrings(t *testing.T) {
	s := scanner(t)
	for _, c := range []struct {
		name, content string
		// escaped is whether gitleaks finds the secret in the JSON text
		// too: its generic rule does not see `password = \"...\"`.
		escaped bool
	}{
		{"token in prose", "my token is " + githubPAT + ", don't share", true},
		{"private key with newlines", "key:\n" + rsaKey + "\nend", true},
		{"quoted password", `db password = "` + genericPwd + `"`, false},
		{"several secrets", "aws " + awsKey + "\tslack " + slackBot + "\n" + pkcs8Key, true},
		{"non-ascii and quotes", `Grüße "東京" ` + openAIKey + ` \ done`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc, err := json.Marshal(map[string]string{"content": c.content})
			if err != nil {
				t.Fatal(err)
			}
			// The JSON text itself, whose string holds escaped secrets.
			got, fs := s.Redact(string(doc))
			if found := len(fs) > 0; found != c.escaped {
				t.Fatalf("Redact(%s) findings = %+v, want some: %v", doc, fs, c.escaped)
			}
			if !json.Valid([]byte(got)) {
				t.Fatalf("Redact(%s) = %s: not valid JSON", doc, got)
			}
			// The string's own text, put back into JSON.
			red, fs := s.Redact(c.content)
			if len(fs) == 0 {
				t.Fatalf("Redact(%q) found nothing", c.content)
			}
			back, err := json.Marshal(red)
			if err != nil {
				t.Fatal(err)
			}
			var out string
			if err := json.Unmarshal(back, &out); err != nil || out != red {
				t.Fatalf("redacted content %q does not round-trip JSON: %v", red, err)
			}
			if strings.ContainsAny(Marker(fs[0]), "\"\\\x00\n\r\t") {
				t.Fatalf("marker %q needs escaping", Marker(fs[0]))
			}
		})
	}
}

// TestRedactNeverSplitsEscapes covers a secret whose rule takes a
// backslash (the JWT rule does), in the text of a JSON string.
func TestRedactNeverSplitsEscapes(t *testing.T) {
	s := scanner(t)
	for _, c := range []struct {
		name, doc string
	}{
		{"secret ends on an escaping backslash", `{"a": "token ` + jwtToken + `\"quoted\" after"}`},
		{"secret ends on a \\u escape", `{"a": "x ` + jwtToken + `\u00e9 after"}`},
		{"secret after escaped slashes", `{"a": "https:\/\/x\/` + jwtToken + `"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !json.Valid([]byte(c.doc)) {
				t.Fatalf("test document is not JSON: %s", c.doc)
			}
			got, fs := s.Redact(c.doc)
			if len(fs) != 1 {
				t.Fatalf("Redact(%s) findings = %+v, want one", c.doc, fs)
			}
			if !json.Valid([]byte(got)) {
				t.Fatalf("Redact(%s) = %s: not valid JSON", c.doc, got)
			}
			if strings.Contains(got, "eyJ") {
				t.Fatalf("Redact(%s) = %s kept part of the token", c.doc, got)
			}
		})
	}
}

func TestWholeEscapes(t *testing.T) {
	for _, c := range []struct {
		text       string
		start, end int
		want       string // text[start:end] after widening
	}{
		{`ab\"cd`, 3, 5, `\"c`},
		{`ab\\cd`, 4, 5, `c`},
		{`abc\"d`, 1, 4, `bc\"`},
		{`abc\\"d`, 1, 5, `bc\\`},
		{`abc\u00e9d`, 1, 4, `bc\u00e9`},
		{`plain`, 1, 3, `la`},
	} {
		s, e := wholeEscapes(c.text, c.start, c.end)
		if got := c.text[s:e]; got != c.want {
			t.Fatalf("wholeEscapes(%q, %d, %d) covers %q, want %q", c.text, c.start, c.end, got, c.want)
		}
	}
}

func TestFrontmatter(t *testing.T) {
	for _, c := range []struct {
		page, want string
		ok         bool
	}{
		{"---\na: 1\n---\nbody", "a: 1\n", true},
		{"---  \r\na: 1\r\n--- \r\nbody", "a: 1\r\n", true},
		{"---\n---\n", "", true},
		{"---\na: 1\n", "", false},
		{"body\n---\na: 1\n---\n", "", false},
		{"", "", false},
	} {
		start, end, ok := frontmatter(c.page)
		if ok != c.ok || (ok && c.page[start:end] != c.want) {
			t.Fatalf("frontmatter(%q) = %d, %d, %v, want %q, %v", c.page, start, end, ok, c.want, c.ok)
		}
	}
}
