package sessions

import (
	"errors"
	"time"
)

// ParseWhen reads a since/until value: a date (the start, or with endOfDay
// the end, of that day in the configured zone) or RFC 3339.
func ParseWhen(s string, endOfDay bool, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
		if endOfDay {
			t = t.Add(24*time.Hour - time.Nanosecond)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return t, errors.New("want YYYY-MM-DD or an RFC 3339 time")
	}
	return t, nil
}

// TurnTime reads a turn's timestamp: RFC 3339, or a zone-less
// "2006-01-02T15:04:05" taken in the configured zone.
func TurnTime(s string, loc *time.Location) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04:05", s, loc); err == nil {
		return t, true
	}
	return time.Time{}, false
}
