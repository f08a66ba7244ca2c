package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/memhost/memhost/sdk"
)

// fakeGen is a Generator with function fields.
type fakeGen struct {
	complete func(context.Context, sdk.CompleteRequest) (sdk.CompleteResponse, error)
}

func (f *fakeGen) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "g", Version: "1", ModelID: "m", MaxInputTokens: 8192}, nil
}
func (f *fakeGen) Status(context.Context) (sdk.Status, error) {
	return sdk.Status{State: sdk.StateReady, Progress: 1}, nil
}
func (f *fakeGen) Configure(context.Context, map[string]string) error { return nil }
func (f *fakeGen) Complete(ctx context.Context, r sdk.CompleteRequest) (sdk.CompleteResponse, error) {
	return f.complete(ctx, r)
}

// serve serves plugins on a real gRPC server on a loopback port and
// returns the connection to it.
func serve(t *testing.T, impl sdk.Provider) *grpc.ClientConn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	for _, p := range sdk.PluginMap(impl) {
		if err := p.(interface {
			GRPCServer(*goplugin.GRPCBroker, *grpc.Server) error
		}).GRPCServer(nil, srv); err != nil {
			t.Fatal(err)
		}
	}
	go srv.Serve(ln)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); srv.Stop() })
	return conn
}

func generatorClient(t *testing.T, conn *grpc.ClientConn) sdk.Generator {
	t.Helper()
	raw, err := (&sdk.GeneratorGRPCPlugin{}).GRPCClient(context.Background(), nil, conn)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(sdk.Generator)
}

func TestGeneratorRoundTrip(t *testing.T) {
	var got sdk.CompleteRequest
	c := generatorClient(t, serve(t, &fakeGen{complete: func(_ context.Context, r sdk.CompleteRequest) (sdk.CompleteResponse, error) {
		got = r
		return sdk.CompleteResponse{Text: `{"ok":true}`, Model: "m1", InputTokens: 12, OutputTokens: 3}, nil
	}}))
	ctx := context.Background()
	info, err := c.Info(ctx)
	if err != nil || info.Name != "g" || info.MaxInputTokens != 8192 {
		t.Errorf("Info = %+v, %v", info, err)
	}
	req := sdk.CompleteRequest{
		Messages:  []sdk.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "héllo\nworld"}},
		Schema:    json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`),
		MaxTokens: 64, Temperature: 0.25,
	}
	resp, err := c.Complete(ctx, req)
	if err != nil || resp != (sdk.CompleteResponse{Text: `{"ok":true}`, Model: "m1", InputTokens: 12, OutputTokens: 3}) {
		t.Errorf("Complete = %+v, %v", resp, err)
	}
	if len(got.Messages) != 2 || got.Messages[1] != req.Messages[1] || string(got.Schema) != string(req.Schema) ||
		got.MaxTokens != 64 || got.Temperature != 0.25 {
		t.Errorf("the plugin got %+v", got)
	}
	// No schema stays no schema (not an empty JSON text).
	if _, err := c.Complete(ctx, sdk.CompleteRequest{Messages: req.Messages}); err != nil || got.Schema != nil {
		t.Errorf("schema-less request arrived with schema %q (%v)", got.Schema, err)
	}
	if _, err := c.Complete(ctx, sdk.CompleteRequest{Messages: req.Messages, Schema: json.RawMessage(`{"type":`)}); !errors.Is(err, sdk.ErrBadRequest) {
		t.Errorf("broken schema: %v, want ErrBadRequest", err)
	}
}

func TestGeneratorErrorsCrossTheWire(t *testing.T) {
	var next error
	c := generatorClient(t, serve(t, &fakeGen{complete: func(ctx context.Context, _ sdk.CompleteRequest) (sdk.CompleteResponse, error) {
		if next != nil {
			return sdk.CompleteResponse{}, next
		}
		<-ctx.Done()
		return sdk.CompleteResponse{}, ctx.Err()
	}}))
	for _, tt := range []struct{ err, want error }{
		{sdk.NotReady("set DEEPSEEK_API_KEY"), sdk.ErrNotReady},
		{sdk.BadRequest("no messages"), sdk.ErrBadRequest},
	} {
		next = tt.err
		_, err := c.Complete(context.Background(), sdk.CompleteRequest{})
		if !errors.Is(err, tt.want) || err.Error() != tt.err.Error() {
			t.Errorf("%q came back as %q", tt.err, err)
		}
	}
	next = nil
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Complete(ctx, sdk.CompleteRequest{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timed-out Complete: %v", err)
	}
}

// TestKindNotServed: a generator client on a plugin that serves only an
// embedder gets a clear error, not gRPC's.
func TestKindNotServed(t *testing.T) {
	conn := serve(t, &fake{})
	_, err := generatorClient(t, conn).Info(context.Background())
	if !errors.Is(err, sdk.ErrBadRequest) || !strings.Contains(err.Error(), "does not serve this kind") {
		t.Errorf("generator call on an embedder: %v", err)
	}
	if m := sdk.PluginMap(&fake{}); len(m) != 1 || m[sdk.PluginName] == nil {
		t.Errorf("PluginMap(embedder) = %v", m)
	}
	if m := sdk.PluginMap(nil); len(m) != 2 {
		t.Errorf("PluginMap(nil) = %v, want both kinds", m)
	}
}
