package host

import (
	"context"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
)

// TestCalendarBoundaries: the daily log and the week's rollup follow the
// home's time zone across a month's and a year's end and both DST changes:
// an entry a second before local midnight and one a second after land in
// two days' logs; across a DST change the heading shows the local time.
func TestCalendarBoundaries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, zone   string
		at           time.Time // the first entry; the second is 2 s later
		day1, head1  string
		day2, head2  string
		week1, week2 string // the rollup page of each entry's week
	}{
		{"year end", "UTC", time.Date(2027, 12, 31, 23, 59, 59, 0, time.UTC),
			"2027-12-31", "23:59", "2028-01-01", "00:00", "2027-W52", "2027-W52"},
		{"month end, east of UTC", "Asia/Tokyo", time.Date(2027, 2, 28, 14, 59, 59, 0, time.UTC),
			"2027-02-28", "23:59", "2027-03-01", "00:00", "2027-W08", "2027-W09"},
		{"clocks go forward", "Europe/London", time.Date(2027, 3, 28, 0, 59, 59, 0, time.UTC),
			"2027-03-28", "00:59", "2027-03-28", "02:00", "2027-W12", "2027-W12"},
		{"clocks go back", "America/New_York", time.Date(2027, 11, 7, 5, 59, 59, 0, time.UTC),
			"2027-11-07", "01:59", "2027-11-07", "01:00", "2027-W44", "2027-W44"},
		{"midnight west of UTC", "America/New_York", time.Date(2028, 1, 1, 4, 59, 59, 0, time.UTC),
			"2027-12-31", "23:59", "2028-01-01", "00:00", "2027-W52", "2027-W52"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clk := &clock{t: tc.at}
			cfg := config.Default()
			cfg.Timezone = tc.zone
			h, err := Open(ctx, Options{Home: t.TempDir(), Config: cfg, Now: clk.now})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			check := func(day, head, week string) {
				t.Helper()
				r, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "entry at " + head})
				if err != nil {
					t.Fatal(err)
				}
				if want := "daily/" + day + ".md"; r.Path != want || r.Heading != "## "+head+" — entry at "+head {
					t.Errorf("at %v: DailyLog wrote %s %q, want %s ## %s", clk.now(), r.Path, r.Heading, want, head)
				}
				ro, err := h.Rollup(ctx, memhost.RollupRequest{Period: "week"})
				if err != nil {
					t.Fatal(err)
				}
				if ro.Period != week {
					t.Errorf("at %v: the week's rollup is %s, want %s", clk.now(), ro.Period, week)
				}
			}
			check(tc.day1, tc.head1, tc.week1)
			clk.set(tc.at.Add(2 * time.Second))
			check(tc.day2, tc.head2, tc.week2)
		})
	}
}
