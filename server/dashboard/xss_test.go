package dashboard_test

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/memhost/memhost/server/dashboard"
)

// hostileFields is a page whose frontmatter and Dataview fields try to
// run script every way the properties table and the field labels allow:
// markup in keys, values, tags and wikilinks, quotes that would close an
// attribute, javascript: targets.
const hostileFields = `---
"<img src=x onerror=alert(1)>": "<script>alert(1)</script>"
"<script>alert(1)</script>": plain
title: "\" onmouseover=\"alert(1)"
tags: ["<b onclick=alert(1)>x</b>", "#<svg onload=alert(1)>"]
related: "[[<img src=x onerror=alert(1)>]]"
friends: ["[[a\" onmouseover=\"alert(1)]]", "[[javascript:alert(1)]]"]
homepage: "javascript:alert(1)"
site: "[[javascript:alert(1)|<img src=x onerror=alert(1)>]]"
nested: {k: "<script>alert(1)</script>"}
---
# Fields

[k:: <script>alert(1)</script>] and [link:: [[javascript:alert(1)]]]
(<img src=x>:: v) and (href:: [[x#" onmouseover="alert(1)]])
[go:: [click](javascript:alert(1))]

- works at:: [[a" onmouseover="alert(1)]]
- bio:: <img src=x onerror=alert(1)> <script>alert(1)</script>

status:: <svg onload=alert(1)></svg>
`

// brokenFields is frontmatter that is not YAML: it is shown as it is.
const brokenFields = "---\n<script>alert(1)</script>: [\n<img src=x onerror=alert(1)>\n---\n# Broken\n"

// scriptURL says whether a URL runs script, read as a browser reads it:
// spaces and control characters before it, tabs and newlines anywhere in
// it, in any case.
func scriptURL(u string) bool {
	u = strings.TrimLeftFunc(u, func(r rune) bool { return r <= ' ' })
	u = strings.ToLower(strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(u))
	for _, scheme := range []string{"javascript:", "vbscript:", "data:"} {
		if strings.HasPrefix(u, scheme) {
			return true
		}
	}
	return false
}

// unsafe lists what HTML holds that could run script in a browser: an
// element that runs or embeds script, an event-handler attribute, a URL
// with a script scheme. It parses as a browser does, so markup that only
// looks like a tag in escaped text is not counted.
func unsafe(doc string) []string {
	var bad []string
	z := html.NewTokenizer(strings.NewReader(doc))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				bad = append(bad, "parse: "+z.Err().Error())
			}
			return bad
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		switch tok.Data {
		case "img":
			// Safe mode keeps a markdown image whose URL it dropped
			// (![x](javascript:...)) as an image of nothing.
			for _, a := range tok.Attr {
				if a.Key == "src" && a.Val != "" {
					bad = append(bad, "<img src="+a.Val+">")
				}
			}
		case "script", "svg", "iframe", "object", "embed", "style", "math", "base", "form", "meta", "link":
			bad = append(bad, "<"+tok.Data+">")
		}
		for _, a := range tok.Attr {
			switch a.Key {
			case "href", "src", "action", "formaction", "srcdoc", "xlink:href":
				if scriptURL(a.Val) {
					bad = append(bad, "<"+tok.Data+" "+a.Key+"="+a.Val+">")
				}
			default:
				if strings.HasPrefix(a.Key, "on") {
					bad = append(bad, "<"+tok.Data+" "+a.Key+">")
				}
			}
		}
	}
}

// shownText is what a browser shows of HTML: its text, entities decoded.
func shownText(doc string) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(doc))
	for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
		if tt == html.TextToken {
			b.Write(z.Text())
		}
	}
	return b.String()
}

// TestFieldsXSS: a page whose frontmatter and Dataview fields are hostile
// renders, in the page view and in the editor's preview, no element that
// runs script, no event-handler attribute and no link off the dashboard;
// the hostile text is still shown, as text.
func TestFieldsXSS(t *testing.T) {
	d := dashboard.New(openHome(t, map[string]string{
		"knowledge/fields.md":  hostileFields,
		"knowledge/broken.md":  brokenFields,
		"knowledge/hostile.md": hostile,
	}, noon))
	for _, tc := range []struct {
		path  string
		src   string
		shown []string // text the reader must still see
	}{
		{"knowledge/fields.md", hostileFields, []string{
			"<img src=x onerror=alert(1)>",   // a key
			"<script>alert(1)</script>",      // a value, a key, a field's value
			`" onmouseover="alert(1)`,        // a value that would close an attribute
			"#<b onclick=alert(1)>x</b>",     // a tag
			"#<svg onload=alert(1)>",         // a tag written with its #
			"javascript:alert(1)",            // a plain value
			`a" onmouseover="alert(1)`,       // a wikilink's label, in a property and a field
			"k", "works at", "bio", "status", // field keys
		}},
		{"knowledge/broken.md", brokenFields, []string{"not valid YAML", "<script>alert(1)</script>: ["}},
		// The browser test's page (browser_test.go), for machines
		// without chromium.
		{"knowledge/hostile.md", hostile, []string{"<script>window.__pwned='fmvalue'</script>", "Hostile marker"}},
	} {
		code, body := fetchUI(t, d, "/ui/page/"+tc.path)
		checkPage(t, tc.path, code, body)
		v := view(t, body)
		if bad := unsafe(v); len(bad) > 0 {
			t.Errorf("%s: the page view holds %q:\n%s", tc.path, bad, v)
		}
		shown := shownText(v)
		for _, want := range tc.shown {
			if !strings.Contains(shown, want) {
				t.Errorf("%s: the page view does not show %q:\n%s", tc.path, want, v)
			}
		}
		// The editor's preview is inserted into the page as HTML.
		rec := httptest.NewRecorder()
		req, _ := json.Marshal(map[string]string{"text": tc.src})
		d.ServeHTTP(rec, httptest.NewRequest("POST", "/ui/api/preview", strings.NewReader(string(req))))
		var pv struct{ HTML string }
		if err := json.Unmarshal(rec.Body.Bytes(), &pv); err != nil || pv.HTML == "" {
			t.Fatalf("%s: preview %d %v:\n%s", tc.path, rec.Code, err, rec.Body)
		}
		if bad := unsafe(pv.HTML); len(bad) > 0 {
			t.Errorf("%s: the preview holds %q:\n%s", tc.path, bad, pv.HTML)
		}
	}
}
