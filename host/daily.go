package host

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memhost/memhost/host/notebook"
)

// DailyLogRequest appends an entry to today's daily log.
type DailyLogRequest struct {
	Text string `json:"text"`
}

// DailyLogResponse says where the entry went.
type DailyLogResponse struct {
	Path    string `json:"path"`
	Heading string `json:"heading"`
	Lines   Lines  `json:"lines"`
	Created bool   `json:"created"`
}

// maxHeadingRunes keeps daily-log headings to one readable line.
const maxHeadingRunes = 80

// DailyLog appends "## HH:MM — <first line>" and the text to
// daily/YYYY-MM-DD.md in the configured time zone, creating the page with a
// "# Daily Log — YYYY-MM-DD" title.
func (h *Host) DailyLog(ctx context.Context, req DailyLogRequest) (DailyLogResponse, error) {
	text, err := cleanText(req.Text)
	if err != nil {
		return DailyLogResponse{}, err
	}
	now := h.now().In(h.loc)
	day := now.Format(time.DateOnly)
	rel := "daily/" + day + ".md"
	first := strings.TrimSpace(strings.SplitN(strings.TrimSpace(text), "\n", 2)[0])
	first = strings.TrimSpace(strings.TrimLeft(listMarker.ReplaceAllString(first, ""), "#"))
	if utf8.RuneCountInString(first) > maxHeadingRunes {
		first = strings.TrimSpace(string([]rune(first)[:maxHeadingRunes-1])) + "…"
	}
	heading := "## " + now.Format("15:04") + " — " + first
	resp := DailyLogResponse{Path: rel, Heading: heading}
	err = h.notebook.Update(ctx, rel, func(old []byte, exists bool) ([]byte, error) {
		resp.Created = !exists
		page := string(old)
		if !exists {
			page = "# Daily Log — " + day + "\n"
		}
		e := notebook.Append(page, "", heading+"\n"+text)
		resp.Lines = Lines{e.StartLine, e.EndLine}
		return []byte(e.Page), nil
	})
	if err != nil {
		return DailyLogResponse{}, err
	}
	return resp, h.syncPaths(ctx, rel)
}
