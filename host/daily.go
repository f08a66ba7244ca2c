package host

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
)

// maxHeadingRunes keeps daily-log headings to one readable line.
const maxHeadingRunes = 80

// DailyLog appends "## HH:MM — <first line>" and the rest of the text to
// daily/YYYY-MM-DD.md in the configured time zone, creating the page with a
// "# Daily Log — YYYY-MM-DD" title. Nothing of the text is dropped: a first
// line over 80 characters is shortened in the heading and written whole
// below it.
func (o hostOps) DailyLog(ctx context.Context, req memhost.DailyLogRequest) (out memhost.DailyLogResponse, err error) {
	h := o.h
	text, err := notebook.CleanText(req.Text)
	if err != nil {
		return memhost.DailyLogResponse{}, err
	}
	text, redacted, err := h.redact("text", text)
	if err != nil {
		return memhost.DailyLogResponse{}, err
	}
	defer func() {
		if err == nil {
			out.Redacted = redacted
		}
	}()
	// The first line becomes the entry's heading, whatever it starts with.
	if _, rest, ok := strings.Cut(text, "\n"); ok {
		if err := noSections("text", rest, 1); err != nil {
			return memhost.DailyLogResponse{}, err
		}
	}
	now := h.now().In(h.loc())
	day := now.Format(time.DateOnly)
	rel := "daily/" + day + ".md"
	// The first line is the entry's title; the rest goes below it. A first
	// line too long for a heading is shortened there and kept whole below.
	lines := strings.SplitN(strings.TrimSpace(text), "\n", 2)
	first := strings.TrimSpace(strings.TrimLeft(notebook.StripListMarker(strings.TrimSpace(lines[0])), "#"))
	body := ""
	if len(lines) == 2 {
		body = strings.Trim(lines[1], "\n")
	}
	if utf8.RuneCountInString(first) > maxHeadingRunes {
		first = strings.TrimSpace(string([]rune(first)[:maxHeadingRunes-1])) + "…"
		body = text
	}
	heading := "## " + now.Format("15:04") + " — " + first
	block := heading
	if strings.TrimSpace(body) != "" {
		block += "\n" + body
	}
	resp := memhost.DailyLogResponse{Path: rel, Heading: heading}
	rel, _, err = h.once.Update(ctx, once.Request{Op: api.OpDailyLog.Name, ID: req.RequestID, Resp: &resp}, rel, func(old []byte, exists bool) ([]byte, error) {
		resp.Created = !exists
		page := string(old)
		if !exists {
			page = "# Daily Log — " + day + "\n"
		}
		e := notebook.Append(page, "", block)
		resp.Lines = memhost.Lines{Start: e.StartLine, End: e.EndLine}
		return []byte(e.Page), nil
	})
	if err != nil {
		return memhost.DailyLogResponse{}, err
	}
	resp.Warnings = h.indexWritten(ctx, rel)
	return resp, nil
}
