package mcpcmd

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/internal/syncbuf"
)

// TestInProcessNotifies: memhost mcp with no server runs the calls on a
// Host of its own and tells resource clients of its writes from the Host's
// change bus: a skill_learn, which no tool response used to announce,
// sends resources/updated to the subscriber of the page it wrote, and
// resources/list_changed.
func TestInProcessNotifies(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	h, err := host.Open(ctx, host.Options{Home: home, Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"s1", "s2", "s3"} {
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: s, Role: "user", Text: "ship it"}); err != nil {
			t.Fatal(err)
		}
		for _, tool := range []string{"Bash", "Edit"} {
			if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: s, Role: "tool", Text: tool, Meta: []byte(`{"tool": "` + tool + `"}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.Close()

	env := map[string]string{"MEMHOST_HOME": home, "MEMHOST_NO_SERVER": "1", "HOME": t.TempDir()}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncbuf.Buffer
	a := cmds{&cmdapp.App{IO: cmdapp.Stdio{Stdin: inR, Stdout: outW, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}}}
	runCtx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		done <- mcpCommand(a).Run(runCtx, []string{"mcp"})
		outW.Close()
	}()
	// The end of stdin ends the session: memhost mcp returns, nil.
	stop := func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("memhost mcp: %v; stderr: %s", err, stderr.String())
		}
		cancel()
	}

	updated := make(chan string, 16)
	listChanged := make(chan struct{}, 16)
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, &mcpsdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcpsdk.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
		ResourceListChangedHandler: func(context.Context, *mcpsdk.ResourceListChangedRequest) { listChanged <- struct{}{} },
	}).Connect(ctx, &mcpsdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr: %s", err, stderr.String())
	}
	defer func() {
		stop()
		cs.Close()
	}()
	const page = "memhost://notebook/skills/learned/bash-edit.md"
	if err := cs.Subscribe(ctx, &mcpsdk.SubscribeParams{URI: page}); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "skill_learn", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("skill_learn: %v %+v; stderr: %s", err, res, stderr.String())
	}
	var sr memhost.SkillsResponse
	if b, _ := json.Marshal(res.StructuredContent); json.Unmarshal(b, &sr) != nil || !slices.Equal(sr.Written, []string{"skills/learned/bash-edit.md"}) {
		t.Fatalf("skill_learn wrote %+v", res.StructuredContent)
	}
	select {
	case uri := <-updated:
		if uri != page {
			t.Fatalf("updated %s, want %s", uri, page)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no resources/updated of %s after skill_learn; stderr: %s", page, stderr.String())
	}
	select {
	case <-listChanged:
	case <-time.After(10 * time.Second):
		t.Fatal("no resources/list_changed after skill_learn wrote a page")
	}
}
