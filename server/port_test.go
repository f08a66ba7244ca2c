package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
)

// openWith opens home with cfg as the configuration (no config.yaml, so
// nothing in it counts as the user's choice unless the test writes one).
func openWith(home string, cfg config.Config) func(context.Context) (*host.Host, error) {
	return func(ctx context.Context) (*host.Host, error) {
		return host.Open(ctx, host.Options{Home: home, Config: cfg})
	}
}

// TestPortHeld: two homes on one machine. A server whose address is the
// default moves to a free port when another holds it, says so and
// records it in serve.json; one whose address the user chose fails and
// names what holds it: the other home's server, with its pid.
func TestPortHeld(t *testing.T) {
	first := start(t, t.TempDir(), "127.0.0.1:0", "")
	memhostAddr := strings.TrimPrefix(first.info.URL, "http://")
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() }) // after the parallel subtests
	otherAddr := other.Addr().String()
	memhostHolder := fmt.Sprintf("memhost serve of %q (pid %d)", first.info.Home, first.info.PID)

	for _, tt := range []struct {
		name, held, holder string
	}{
		{"held by memhost", memhostAddr, memhostHolder},
		{"held by another program", otherAddr, "another program"},
	} {
		t.Run(tt.name+", by default", func(t *testing.T) {
			t.Parallel() // naming "another program" waits out its 2 s probe
			home := t.TempDir()
			cfg := config.Default()
			cfg.Server.Listen = tt.held // as if it were the default: no flag, file or variable chose it
			r := start(t, home, "", "", func(o *RunOptions) { o.Listen, o.Open = nil, openWith(home, cfg) })
			if r.info.URL == "" || r.info.URL == "http://"+tt.held {
				t.Fatalf("url %q, want another port than %s", r.info.URL, tt.held)
			}
			if want := tt.held + " is in use by " + tt.holder; r.info.Moved != want {
				t.Fatalf("moved = %q, want %q", r.info.Moved, want)
			}
			st, err := ReadState(home)
			if err != nil || st.URL != r.info.URL || st.Moved != r.info.Moved {
				t.Fatalf("serve.json = %+v, %v; want url %s", st, err, r.info.URL)
			}
			code, body, _ := do(t, "GET", r.info.URL+"/api/v1/server", "")
			if code != 200 || !strings.Contains(body, fmt.Sprintf("%q", r.info.Home)) {
				t.Fatalf("the new address answers %d %s", code, body)
			}
		})
		for _, how := range []string{"flag", "config.yaml", "environment"} {
			t.Run(tt.name+", chosen by "+how, func(t *testing.T) {
				t.Parallel()
				home := t.TempDir()
				cfg := config.Default()
				cfg.Server.Listen = tt.held
				opts := RunOptions{Home: home, Open: openWith(home, cfg), Getenv: func(string) string { return "" }}
				switch how {
				case "flag":
					opts.Listen = &tt.held
				case "config.yaml":
					if err := os.WriteFile(filepath.Join(home, config.FileName), []byte("server:\n  listen: "+tt.held+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				case "environment":
					opts.Getenv = func(k string) string {
						if k == "MEMHOST_SERVER_LISTEN" {
							return tt.held
						}
						return ""
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				err := Run(ctx, opts)
				want := "address " + tt.held + " is in use by " + tt.holder
				if fault.KindOf(err) != fault.Conflict || fault.FieldOf(err) != "listen" || !strings.Contains(err.Error(), want) {
					t.Fatalf("Run: %v (kind %s), want a conflict on listen saying %q", err, fault.KindOf(err), want)
				}
			})
		}
	}
}
