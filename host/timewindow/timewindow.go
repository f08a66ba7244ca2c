// Package timewindow finds a time expression in a query ("last
// Saturday", "two weeks ago", "in March", "yesterday") and resolves it
// against a reference time to the days it names, so that a search can
// favour what was said then.
//
// It is written by hand: the Go libraries that parse relative dates
// either cost every process that links them a second of start-up and
// tens of megabytes (their language data is built at init), or resolve
// a bare weekday or month forward (into the future a search of the past
// never wants), keep the reference's day when they move the month
// (February from March 30 is March 2), give a point rather than the
// span a phrase names, or read a whole string rather than find a phrase
// in a sentence.
package timewindow

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Window is the days a phrase of a query names: from the start of Since's
// day to the end of Until's, in the reference time's zone.
type Window struct {
	Since, Until time.Time
	Phrase       string // as the query has it
}

// Contains reports whether t falls in the window.
func (w Window) Contains(t time.Time) bool { return !t.Before(w.Since) && !t.After(w.Until) }

var (
	months = map[string]time.Month{
		"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
		"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
		"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
	}
	weekdays = map[string]time.Weekday{
		"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
		"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
	}
	counts = map[string]int{
		"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
		"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a few": 3, "a couple of": 2, "couple of": 2, "several": 3,
	}
)

const (
	monthRE   = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?`
	weekdayRE = `(sunday|monday|tuesday|wednesday|thursday|friday|saturday)`
	countRE   = `(\d{1,3}|a couple of|couple of|a few|several|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)`
	unitRE    = `(day|week|month|year)s?`
)

// A rule is a phrase and how it resolves: m holds the submatches of re
// (lower case), ref the reference day (midnight).
type rule struct {
	re      *regexp.Regexp
	resolve func(m []string, ref time.Time) (since, until time.Time, ok bool)
}

// The rules, as whole words in any case. Where two match, the phrase
// that starts first wins, then the one listed first.
var rules = []rule{
	{regexp.MustCompile(`\bthe day before yesterday\b`), func(_ []string, ref time.Time) (time.Time, time.Time, bool) {
		d := ref.AddDate(0, 0, -2)
		return d, d, true
	}},
	{regexp.MustCompile(`\byesterday\b`), func(_ []string, ref time.Time) (time.Time, time.Time, bool) {
		d := ref.AddDate(0, 0, -1)
		return d, d, true
	}},
	{regexp.MustCompile(`\btoday\b`), func(_ []string, ref time.Time) (time.Time, time.Time, bool) { return ref, ref, true }},
	// "three weeks ago": the day that many units back, widened by the
	// slack of its unit (ago).
	{regexp.MustCompile(`\b` + countRE + ` ` + unitRE + ` ago\b`), func(m []string, ref time.Time) (time.Time, time.Time, bool) {
		n, ok := counts[m[1]]
		if !ok {
			var err error
			if n, err = strconv.Atoi(m[1]); err != nil {
				return time.Time{}, time.Time{}, false
			}
		}
		return ago(ref, n, m[2])
	}},
	// "last week", "this month", "past year": last is the calendar unit
	// before the reference's, this the reference's up to the reference,
	// past the unit's length back from the reference.
	{regexp.MustCompile(`\b(last|this|past|previous) (weekend|week|month|year)\b`), func(m []string, ref time.Time) (time.Time, time.Time, bool) {
		return unit(ref, m[1], m[2])
	}},
	// "last Saturday", "on Saturday": the latest such day before the
	// reference's. A bare weekday ("a Sunday") says no day.
	{regexp.MustCompile(`\b(last|on|this past|past) ` + weekdayRE + `\b`), func(m []string, ref time.Time) (time.Time, time.Time, bool) {
		back := (int(ref.Weekday())-int(weekdays[m[2]])+6)%7 + 1
		d := ref.AddDate(0, 0, -back)
		return d, d, true
	}},
	// "March 5th", "March 5, 2023", "5th of March": that day, the latest
	// not after the reference's when no year is said.
	{regexp.MustCompile(`\b` + monthRE + ` (\d{1,2})(?:st|nd|rd|th)?(?:,? (\d{4}))?\b`), func(m []string, ref time.Time) (time.Time, time.Time, bool) {
		return day(ref, months[m[1]], m[2], m[3])
	}},
	{regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th)? (?:of )?` + monthRE + `(?:,? (\d{4}))?\b`), func(m []string, ref time.Time) (time.Time, time.Time, bool) {
		return day(ref, months[m[2]], m[1], m[3])
	}},
	// "in March", "last May", "early June 2023": the month, the latest
	// not after the reference's ("last": before it) when no year is said.
	// A month name without one of these words before it is no date ("May
	// I ask", "march on").
	{regexp.MustCompile(`\b(in|during|since|last|early|late|mid|mid-|of|this) ` + monthRE + `(?: (\d{4}))?\b`), func(m []string, ref time.Time) (time.Time, time.Time, bool) {
		mon := months[m[2]]
		y := ref.Year()
		switch {
		case m[3] != "":
			y, _ = strconv.Atoi(m[3])
		case mon > ref.Month() || m[1] == "last" && mon == ref.Month():
			y--
		}
		first := time.Date(y, mon, 1, 0, 0, 0, 0, ref.Location())
		return first, first.AddDate(0, 1, -1), true
	}},
	// "in 2022": the year.
	{regexp.MustCompile(`\b(?:in|during|since) ((?:19|20)\d\d)\b`), func(m []string, ref time.Time) (time.Time, time.Time, bool) {
		y, _ := strconv.Atoi(m[1])
		first := time.Date(y, 1, 1, 0, 0, 0, 0, ref.Location())
		return first, first.AddDate(1, 0, -1), true
	}},
}

// Slack of "N units ago", either side of the day it names: people round
// a count of units ("three weeks ago" is often 17 or 25 days), about half
// a unit each way; a day or two days ago is meant to the day.
var slack = map[string]int{"day": 1, "week": 3, "month": 15, "year": 182}

func ago(ref time.Time, n int, unit string) (time.Time, time.Time, bool) {
	if n < 1 {
		return time.Time{}, time.Time{}, false
	}
	var d time.Time
	switch unit {
	case "day":
		d = ref.AddDate(0, 0, -n)
	case "week":
		d = ref.AddDate(0, 0, -7*n)
	case "month":
		d = addMonths(ref, -n)
	case "year":
		d = addMonths(ref, -12*n)
	}
	s := slack[unit]
	if unit == "day" && n < 3 {
		s = 0
	}
	return d.AddDate(0, 0, -s), d.AddDate(0, 0, s), true
}

// addMonths moves t by n months, keeping the day but for the last days of
// a longer month (January 31 less two months is November 30).
func addMonths(t time.Time, n int) time.Time {
	first := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location()).AddDate(0, n, 0)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(t.Day(), last)-1)
}

func unit(ref time.Time, which, u string) (time.Time, time.Time, bool) {
	monday := ref.AddDate(0, 0, -((int(ref.Weekday()) + 6) % 7))
	month := time.Date(ref.Year(), ref.Month(), 1, 0, 0, 0, 0, ref.Location())
	year := time.Date(ref.Year(), 1, 1, 0, 0, 0, 0, ref.Location())
	if which == "previous" {
		which = "last"
	}
	switch which + " " + u {
	case "last week":
		return monday.AddDate(0, 0, -7), monday.AddDate(0, 0, -1), true
	case "this week":
		return monday, ref, true
	case "past week":
		return ref.AddDate(0, 0, -7), ref, true
	case "last weekend", "past weekend":
		// The Saturday and Sunday before the reference's day (the one
		// just gone on a Monday, the week's before on a Saturday).
		sun := ref.AddDate(0, 0, -((int(ref.Weekday())+6)%7 + 1))
		if ref.Weekday() == time.Sunday {
			sun = ref.AddDate(0, 0, -7)
		}
		return sun.AddDate(0, 0, -1), sun, true
	case "last month":
		return month.AddDate(0, -1, 0), month.AddDate(0, 0, -1), true
	case "this month":
		return month, ref, true
	case "past month":
		return addMonths(ref, -1), ref, true
	case "last year":
		return year.AddDate(-1, 0, 0), year.AddDate(0, 0, -1), true
	case "this year":
		return year, ref, true
	case "past year":
		return addMonths(ref, -12), ref, true
	}
	return time.Time{}, time.Time{}, false // "this weekend" names days to come as often as days gone
}

func day(ref time.Time, mon time.Month, dd, yyyy string) (time.Time, time.Time, bool) {
	d, _ := strconv.Atoi(dd)
	y := ref.Year()
	if yyyy != "" {
		y, _ = strconv.Atoi(yyyy)
	}
	t := time.Date(y, mon, d, 0, 0, 0, 0, ref.Location())
	if d < 1 || t.Day() != d { // February 30
		return time.Time{}, time.Time{}, false
	}
	if yyyy == "" && t.After(ref) {
		t = time.Date(y-1, mon, d, 0, 0, 0, 0, ref.Location())
	}
	return t, t, true
}

// Find returns the window of the first time phrase of query, resolved
// against ref (its day, in its zone), and false when query has none.
func Find(query string, ref time.Time) (Window, bool) {
	lower := strings.ToLower(query)
	refDay := time.Date(ref.Year(), ref.Month(), ref.Day(), 0, 0, 0, 0, ref.Location())
	best, bestAt := Window{}, -1
	for _, r := range rules {
		for _, loc := range r.re.FindAllStringSubmatchIndex(lower, -1) {
			if bestAt >= 0 && loc[0] >= bestAt {
				break
			}
			m := make([]string, len(loc)/2)
			for i := range m {
				if loc[2*i] >= 0 {
					m[i] = lower[loc[2*i]:loc[2*i+1]]
				}
			}
			since, until, ok := r.resolve(m, refDay)
			if !ok {
				continue
			}
			phrase := lower[loc[0]:loc[1]]
			if len(lower) == len(query) { // else lowering moved the bytes
				phrase = query[loc[0]:loc[1]]
			}
			best, bestAt = Window{Since: since, Until: until.AddDate(0, 0, 1).Add(-time.Nanosecond), Phrase: phrase}, loc[0]
			break
		}
	}
	return best, bestAt >= 0
}
