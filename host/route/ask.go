package route

import (
	"context"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/memhost/memhost/host/generate"
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/sdk"
)

// Remember's auto routing (`remember --auto`): the generator, prompted as
// a librarian, chooses the category, page, section and tags of a
// remembered text from those the notebook has. The rules of route.Route
// stay the default, and the fallback when no generator is configured or
// its answer cannot be used; the response then says so in a warning.

// Routing says who chose where remember wrote.
const (
	RoutedByRules     = "rules"
	RoutedByGenerator = "generator"
)

// routeSchema is the answer the generator must give.
const routeSchema = `{
  "type": "object",
  "properties": {
    "category": {"type": "string", "enum": ["lists", "reference", "knowledge"]},
    "page": {"type": "string", "minLength": 1, "maxLength": 60, "pattern": "^[a-z0-9][a-z0-9-]*$"},
    "section": {"type": "string", "maxLength": 80},
    "tags": {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 40}}
  },
  "required": ["category", "page", "section", "tags"],
  "additionalProperties": false
}`

const librarian = `You are Libby, the librarian of a memory notebook kept as markdown pages. ` +
	`Decide where a new memory belongs. Prefer an existing page and section when one fits; ` +
	`create a new page or section only when none does.
Categories:
- lists: to-dos, shopping and other lists of things to do or get
- reference: contacts, preferences, standing orders (always/never instructions), notes to look up
- knowledge: facts and things learned
"page" is the page's name: lowercase words joined by hyphens, without ".md".
"section" is the text of an H2 heading on that page (for a person on the contacts page, the person's name), or "" for the end of the page.
"tags": up to 5 short lowercase tags, reusing existing tags where they fit.
Answer with JSON only.`

// Catalogue limits: the prompt stays small whatever the notebook holds.
const (
	maxCataloguePages    = 200
	maxCatalogueSections = 40
	MaxCatalogueBytes    = 1 << 20 // pages larger than this are named without their sections
)

type routeAnswer struct {
	Category string   `json:"category"`
	Page     string   `json:"page"`
	Section  string   `json:"section"`
	Tags     []string `json:"tags"`
}

// catalogue describes the notebook's pages of remember's categories, one
// line each with its sections and tags, and every tag in use.
func catalogue(nb *notebook.Notebook) (string, []string) {
	var b strings.Builder
	tagSet := map[string]bool{}
	pages := 0
	for _, cat := range []string{notebook.Lists, notebook.Reference, notebook.Knowledge} {
		entries, _ := os.ReadDir(nb.Abs(cat))
		for _, e := range entries {
			if pages >= maxCataloguePages {
				break
			}
			if !e.Type().IsRegular() || path.Ext(e.Name()) != ".md" {
				continue
			}
			rel := cat + "/" + e.Name()
			pages++
			fmt.Fprintf(&b, "- %s/%s", cat, strings.TrimSuffix(e.Name(), ".md"))
			if fi, err := e.Info(); err != nil || fi.Size() > MaxCatalogueBytes {
				b.WriteString("\n")
				continue
			}
			data, err := nb.Read(rel)
			if err != nil {
				b.WriteString("\n")
				continue
			}
			lines := markdown.Lines(string(data))
			var sections []string
			for i, level := range markdown.HeadingLevels(lines) {
				if level == 2 && len(sections) < maxCatalogueSections {
					sections = append(sections, markdown.HeadingText(lines[i]))
				}
			}
			if len(sections) > 0 {
				fmt.Fprintf(&b, " (sections: %s)", strings.Join(sections, "; "))
			}
			if tags := notebook.PageTags(string(data)); len(tags) > 0 {
				fmt.Fprintf(&b, " [tags: %s]", strings.Join(tags, ", "))
				for _, t := range tags {
					tagSet[t] = true
				}
			}
			b.WriteString("\n")
		}
	}
	if pages == 0 {
		b.WriteString("(the notebook has no pages yet)\n")
	}
	tags := make([]string, 0, len(tagSet))
	for t := range tagSet {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	return b.String(), tags
}

// Ask asks the generator where text belongs, given the notebook's pages
// (generator is how the caller gets the generator: held until release).
// ok is false when the rules must route it; warning then says why.
func Ask(ctx context.Context, nb *notebook.Notebook, text string, generator func(context.Context) (sdk.Generator, func(), error)) (r Routed, tags []string, ok bool, warning string) {
	fallback := func(format string, args ...any) (Routed, []string, bool, string) {
		return Routed{}, nil, false, fmt.Sprintf(format, args...) + "; routed by the rules instead"
	}
	g, release, err := generator(ctx)
	defer release()
	if err != nil {
		if ctx.Err() != nil {
			return fallback("%v", ctx.Err())
		}
		return fallback("%v", err)
	}
	pages, existing := catalogue(nb)
	user := "Existing pages:\n" + pages + "Existing tags: " + strings.Join(existing, ", ") +
		"\n\nNew memory:\n\"\"\"\n" + text + "\n\"\"\""
	var a routeAnswer
	msgs := []sdk.Message{{Role: "system", Content: librarian}, {Role: "user", Content: user}}
	if _, err := generate.CompleteJSON(ctx, g, msgs, routeSchema, 300, &a); err != nil {
		return fallback("the generator's routing could not be used (%v)", oneLine(err))
	}
	if err := notebook.CheckName(a.Page); err != nil {
		return fallback("the generator chose the page name %q (%v)", a.Page, err)
	}
	section := strings.TrimSpace(a.Section)
	if err := notebook.CheckSection(section); err != nil {
		return fallback("the generator chose the section %q (%v)", a.Section, err)
	}
	r = Routed{Path: a.Category + "/" + a.Page + ".md"}
	if section != "" {
		r.Section = notebook.SectionName(section)
	}
	for _, t := range a.Tags {
		if c := notebook.CleanTag(t); c != "" && len(tags) < 5 {
			tags = append(tags, c)
		}
	}
	return r, tags, true, ""
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
