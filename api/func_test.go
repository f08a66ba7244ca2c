package api_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/api/apitest"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/knowledge"
)

// TestWrapRunsMiddlewareInOrder: Wrap's middleware run outermost first,
// each seeing the operation and its request, and the answer comes back
// through them as the operation's own type.
func TestWrapRunsMiddlewareInOrder(t *testing.T) {
	t.Parallel()
	fake := &apitest.Fake{RememberFn: func(_ context.Context, req memhost.RememberRequest) (memhost.RememberResponse, error) {
		return memhost.RememberResponse{Path: "knowledge/" + req.Text + ".md"}, nil
	}}
	var seen []string
	mw := func(tag string) api.Middleware {
		return func(ctx context.Context, op api.Operation, req any, next func(context.Context) (any, error)) (any, error) {
			seen = append(seen, tag+" "+op.Info().Name+" "+req.(memhost.RememberRequest).Text)
			out, err := next(ctx)
			seen = append(seen, tag+" done")
			return out, err
		}
	}
	resp, err := api.Wrap(fake, mw("outer"), mw("inner")).Remember(context.Background(), memhost.RememberRequest{Text: "x"})
	if err != nil || resp.Path != "knowledge/x.md" {
		t.Fatalf("Remember = %+v, %v", resp, err)
	}
	want := []string{"outer remember x", "inner remember x", "inner done", "outer done"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("middleware ran %q, want %q", seen, want)
	}
}

// TestFuncAnswers: a Func may answer with the response type or a pointer
// to it (a forwarder's decoded answer); an answer and an error together
// both reach the caller; an answer of another type is an internal error.
func TestFuncAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stored := errors.New("pushed nothing")
	for name, c := range map[string]struct {
		out     any
		err     error
		path    string
		wantErr string
	}{
		"value":            {out: memhost.WriteResponse{Path: "a.md"}, path: "a.md"},
		"pointer":          {out: &memhost.WriteResponse{Path: "b.md"}, path: "b.md"},
		"answer and error": {out: memhost.WriteResponse{Path: "c.md"}, err: stored, path: "c.md", wantErr: "pushed nothing"},
		"nothing":          {err: stored, wantErr: "pushed nothing"},
		"another type":     {out: memhost.GetResponse{}, wantErr: "write answered a memhost.GetResponse"},
	} {
		f := api.Func(func(context.Context, api.Operation, any) (any, error) { return c.out, c.err })
		resp, err := f.Write(ctx, memhost.WriteRequest{Path: "a.md"})
		if resp.Path != c.path || (err == nil) != (c.wantErr == "") || err != nil && !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: Write = %+v, %v; want path %q, error %q", name, resp, err, c.path, c.wantErr)
		}
	}
}

// TestInvokeRefusesAnotherRequestType: an operation given another
// request type fails with an internal error, running nothing.
func TestInvokeRefusesAnotherRequestType(t *testing.T) {
	t.Parallel()
	ran := false
	fake := &apitest.Fake{RememberFn: func(context.Context, memhost.RememberRequest) (memhost.RememberResponse, error) {
		ran = true
		return memhost.RememberResponse{}, nil
	}}
	_, err := api.OpRemember.Invoke(context.Background(), fake, memhost.WriteRequest{})
	if fault.KindOf(err) != fault.Internal || ran {
		t.Errorf("Invoke with a WriteRequest: %v (ran %v), want an internal error", err, ran)
	}
}

// TestFakeUnsetFails: an operation of the fake whose function is not set
// fails with ErrNotSet, naming the operation.
func TestFakeUnsetFails(t *testing.T) {
	t.Parallel()
	_, err := (&apitest.Fake{}).FactAdd(context.Background(), knowledge.FactAddRequest{})
	if !errors.Is(err, apitest.ErrNotSet) || !strings.HasPrefix(err.Error(), "fact/add: ") {
		t.Errorf("FactAdd on an empty fake: %v", err)
	}
}
