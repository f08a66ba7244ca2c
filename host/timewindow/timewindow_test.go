package timewindow

import (
	"testing"
	"time"
)

// TestFind resolves phrases against a fixed Friday, 2023-11-10 04:20, in
// a zone that is not UTC: the windows are whole days of that zone.
func TestFind(t *testing.T) {
	zone := time.FixedZone("UTC-5", -5*3600)
	ref := time.Date(2023, 11, 10, 4, 20, 0, 0, zone)
	tests := []struct {
		query, phrase, since, until string // "" since: no window
	}{
		{"What did I buy last Saturday?", "last Saturday", "2023-11-04", "2023-11-04"},
		{"what did we talk about two weeks ago", "two weeks ago", "2023-10-24", "2023-10-30"},
		{"the trip in March", "in March", "2023-03-01", "2023-03-31"},
		{"what did I eat yesterday", "yesterday", "2023-11-09", "2023-11-09"},
		{"What did I do last month?", "last month", "2023-10-01", "2023-10-31"},
		{"the book I finished 3 days ago", "3 days ago", "2023-11-06", "2023-11-08"},
		{"a day ago", "a day ago", "2023-11-09", "2023-11-09"},
		{"a few months ago", "a few months ago", "2023-07-26", "2023-08-25"},
		{"the concert in December", "in December", "2022-12-01", "2022-12-31"}, // not the December to come
		{"last November", "last November", "2022-11-01", "2022-11-30"},
		{"in November", "in November", "2023-11-01", "2023-11-30"},
		{"in May 2021", "in May 2021", "2021-05-01", "2021-05-31"},
		{"on March 5th", "March 5th", "2023-03-05", "2023-03-05"},
		{"the 20th of November", "20th of November", "2022-11-20", "2022-11-20"},
		{"December 25, 2020", "December 25, 2020", "2020-12-25", "2020-12-25"},
		{"last week", "last week", "2023-10-30", "2023-11-05"},
		{"this week", "this week", "2023-11-06", "2023-11-10"},
		{"past week", "past week", "2023-11-03", "2023-11-10"},
		{"last weekend", "last weekend", "2023-11-04", "2023-11-05"},
		{"last year", "last year", "2022-01-01", "2022-12-31"},
		{"this month", "this month", "2023-11-01", "2023-11-10"},
		{"in 2022", "in 2022", "2022-01-01", "2022-12-31"},
		{"on Friday", "on Friday", "2023-11-03", "2023-11-03"},
		{"the day before yesterday", "the day before yesterday", "2023-11-08", "2023-11-08"},
		{"Yesterday and last month", "Yesterday", "2023-11-09", "2023-11-09"}, // the first phrase
		// No window: no date said, or a word that only looks like one.
		{"May I ask what I said about the second chapter?", "", "", ""},
		{"How many days ago did I buy a smoker?", "", "", ""},
		{"the rotation for Admon on a Sunday", "", "", ""},
		{"What am I doing this weekend?", "", "", ""},
		{"February 30", "", "", ""},
		{"we march on", "", "", ""},
	}
	for _, tt := range tests {
		w, ok := Find(tt.query, ref)
		if tt.since == "" {
			if ok {
				t.Errorf("Find(%q) = %+v, want none", tt.query, w)
			}
			continue
		}
		if !ok {
			t.Errorf("Find(%q): no window, want %s..%s", tt.query, tt.since, tt.until)
			continue
		}
		since, until := w.Since.Format(time.DateOnly), w.Until.Format(time.DateOnly)
		if w.Phrase != tt.phrase || since != tt.since || until != tt.until {
			t.Errorf("Find(%q) = %q %s..%s, want %q %s..%s", tt.query, w.Phrase, since, until, tt.phrase, tt.since, tt.until)
		}
		if w.Since.Location() != zone || w.Since.Hour() != 0 || w.Until.Hour() != 23 || w.Until.Minute() != 59 {
			t.Errorf("Find(%q): window %v..%v, want whole days in the reference's zone", tt.query, w.Since, w.Until)
		}
	}
}

func TestContains(t *testing.T) {
	ref := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC) // the day after Feb 29
	w, ok := Find("yesterday", ref)
	if !ok {
		t.Fatal("no window")
	}
	for _, tt := range []struct {
		t    time.Time
		want bool
	}{
		{time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC), true},
		{time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), false},
		{time.Date(2024, 2, 28, 23, 59, 59, 0, time.UTC), false},
	} {
		if got := w.Contains(tt.t); got != tt.want {
			t.Errorf("Contains(%v) = %v, want %v", tt.t, got, tt.want)
		}
	}
}

func TestAddMonths(t *testing.T) {
	for _, tt := range []struct {
		from string
		n    int
		want string
	}{
		{"2023-01-31", -2, "2022-11-30"},
		{"2024-03-31", -1, "2024-02-29"},
		{"2023-11-10", -13, "2022-10-10"},
		{"2023-11-10", -23, "2021-12-10"},
	} {
		from, _ := time.Parse(time.DateOnly, tt.from)
		if got := addMonths(from, tt.n).Format(time.DateOnly); got != tt.want {
			t.Errorf("addMonths(%s, %d) = %s, want %s", tt.from, tt.n, got, tt.want)
		}
	}
}
