package sdk_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/memhost/memhost/sdk"
)

// fake is an Embedder with function fields.
type fake struct {
	info      func(context.Context) (sdk.Info, error)
	status    func(context.Context) (sdk.Status, error)
	configure func(context.Context, map[string]string) error
	embed     func(context.Context, []string, sdk.Kind) ([][]float32, error)
}

func (f *fake) Info(ctx context.Context) (sdk.Info, error)     { return f.info(ctx) }
func (f *fake) Status(ctx context.Context) (sdk.Status, error) { return f.status(ctx) }
func (f *fake) Configure(ctx context.Context, o map[string]string) error {
	return f.configure(ctx, o)
}
func (f *fake) Embed(ctx context.Context, t []string, k sdk.Kind) ([][]float32, error) {
	return f.embed(ctx, t, k)
}

// connect serves impl on a real gRPC server on a loopback port and returns
// the sdk's client to it. (go-plugin's TestPluginGRPCConn races between its
// Serve and Stop under -race, so the connection is made here.)
func connect(t *testing.T, impl sdk.Embedder) sdk.Embedder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	p := &sdk.GRPCPlugin{Impl: impl}
	if err := p.GRPCServer(nil, srv); err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); srv.Stop() })
	raw, err := p.GRPCClient(context.Background(), nil, conn)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(sdk.Embedder)
}

func TestRoundTrip(t *testing.T) {
	var gotKind sdk.Kind
	var gotOpts map[string]string
	c := connect(t, &fake{
		info: func(context.Context) (sdk.Info, error) {
			return sdk.Info{Name: "n", Version: "v", ModelID: "m", Dimensions: 3, MaxInputTokens: 7}, nil
		},
		status: func(context.Context) (sdk.Status, error) {
			return sdk.Status{State: sdk.StateDownloading, Progress: 0.42, Message: "fetching"}, nil
		},
		configure: func(_ context.Context, o map[string]string) error { gotOpts = o; return nil },
		embed: func(_ context.Context, texts []string, k sdk.Kind) ([][]float32, error) {
			gotKind = k
			out := make([][]float32, len(texts))
			for i := range texts {
				out[i] = []float32{float32(i), 1, 2}
			}
			return out, nil
		},
	})
	ctx := context.Background()
	info, err := c.Info(ctx)
	if err != nil || info != (sdk.Info{Name: "n", Version: "v", ModelID: "m", Dimensions: 3, MaxInputTokens: 7}) {
		t.Errorf("Info = %+v, %v", info, err)
	}
	st, err := c.Status(ctx)
	if err != nil || st != (sdk.Status{State: sdk.StateDownloading, Progress: 0.42, Message: "fetching"}) {
		t.Errorf("Status = %+v, %v", st, err)
	}
	if err := c.Configure(ctx, map[string]string{"a": "b"}); err != nil || gotOpts["a"] != "b" {
		t.Errorf("Configure: %v, %v", err, gotOpts)
	}
	v, err := c.Embed(ctx, []string{"x", "y"}, sdk.KindQuery)
	if err != nil || len(v) != 2 || v[1][0] != 1 || len(v[1]) != 3 || gotKind != sdk.KindQuery {
		t.Errorf("Embed = %v, %v (kind %v)", v, err, gotKind)
	}
	if v, err := c.Embed(ctx, nil, sdk.KindDocument); err != nil || len(v) != 0 {
		t.Errorf("Embed(none) = %v, %v", v, err)
	}
}

func TestErrorsCrossTheWire(t *testing.T) {
	var next error
	c := connect(t, &fake{
		configure: func(context.Context, map[string]string) error { return next },
		embed: func(ctx context.Context, texts []string, _ sdk.Kind) ([][]float32, error) {
			if next != nil {
				return nil, next
			}
			<-ctx.Done() // a slow provider that honours cancellation
			return nil, ctx.Err()
		},
	})
	ctx := context.Background()
	tests := []struct {
		err  error
		want error
	}{
		{sdk.NotReady("model downloading 42%%"), sdk.ErrNotReady},
		{sdk.BadRequest("unknown option x"), sdk.ErrBadRequest},
	}
	for _, tt := range tests {
		next = tt.err
		err := c.Configure(ctx, nil)
		if !errors.Is(err, tt.want) || err.Error() != tt.err.Error() {
			t.Errorf("Configure error %q came back as %q (want errors.Is %v)", tt.err, err, tt.want)
		}
	}
	next = errors.New("disk on fire")
	if err := c.Configure(ctx, nil); err == nil || err.Error() != "disk on fire" {
		t.Errorf("plain error came back as %v", err)
	}
	next = nil
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Embed(cctx, []string{"x"}, sdk.KindDocument)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("timed-out Embed: %v after %v", err, time.Since(start))
	}
}

func TestMalformedEmbedIsRefused(t *testing.T) {
	c := connect(t, &fake{embed: func(_ context.Context, texts []string, _ sdk.Kind) ([][]float32, error) {
		return [][]float32{{1, 2}, {1}}, nil // ragged
	}})
	if _, err := c.Embed(context.Background(), []string{"a", "b"}, sdk.KindDocument); err == nil {
		t.Error("ragged vectors accepted")
	}
	c = connect(t, &fake{embed: func(context.Context, []string, sdk.Kind) ([][]float32, error) {
		return [][]float32{{1}}, nil // too few
	}})
	if _, err := c.Embed(context.Background(), []string{"a", "b"}, sdk.KindDocument); err == nil {
		t.Error("one vector for two texts accepted")
	}
}
