package sdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/memhost/memhost/sdk/proto"
)

// Handshake is shared by memhost and every plugin. It is a UX feature,
// not security: it stops a plugin binary run by hand from hanging. Never
// change the magic cookie; bump ProtocolVersion for incompatible changes.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "MEMHOST_PLUGIN",
	MagicCookieValue: "a5e1b8f0-embeddings",
}

// PluginName is the name an embedder is dispensed under.
const PluginName = "embedder"

// GRPCPlugin is the go-plugin glue for Embedder: the host uses it with a
// nil Impl to get a client, Serve with the provider's Impl.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl Embedder
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer registers the provider.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterEmbedderServer(s, &grpcServer{providerServer: providerServer{p.Impl}, impl: p.Impl})
	return nil
}

// GRPCClient returns an Embedder that calls the plugin.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	cl := pb.NewEmbedderClient(c)
	return &GRPCClient{providerClient: providerClient{cl}, client: cl}, nil
}

// PluginMap is the plugin set of a memhost plugin serving impl: an
// Embedder, a Generator, or a value that is both (served as both kinds).
// The host asks with a nil impl for the set of every kind.
func PluginMap(impl Provider) map[string]plugin.Plugin {
	m := map[string]plugin.Plugin{}
	e, isEmb := impl.(Embedder)
	g, isGen := impl.(Generator)
	if impl == nil || isEmb {
		m[PluginName] = &GRPCPlugin{Impl: e}
	}
	if impl == nil || isGen {
		m[GeneratorPluginName] = &GeneratorGRPCPlugin{Impl: g}
	}
	return m
}

// Serve runs impl, an Embedder or a Generator, as a plugin; it returns
// only when memhost stops the plugin. Logs written through Logger() (or
// hclog.Default()) reach memhost's log with their levels, under the
// plugin's name. A value that is neither kind ends the process with a
// message saying so.
func Serve(impl Provider) {
	m := PluginMap(impl)
	if impl == nil || len(m) == 0 {
		fmt.Fprintf(os.Stderr, "sdk.Serve: %T is neither an sdk.Embedder nor an sdk.Generator\n", impl)
		os.Exit(1)
	}
	go exitWithParent()
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         m,
		GRPCServer:      plugin.DefaultGRPCServer,
		Logger:          Logger(),
	})
}

// exitWithParent ends the plugin when the process that started it is gone
// (killed before it could stop its plugins): the plugin is then adopted by
// another process and its parent id changes.
func exitWithParent() {
	parent := os.Getppid()
	for range time.Tick(time.Second) {
		if os.Getppid() != parent {
			os.Exit(0)
		}
	}
}

// Logger returns the logger plugins should use: hclog JSON on stderr,
// which go-plugin parses on the host side so that levels survive.
func Logger() hclog.Logger {
	l := hclog.New(&hclog.LoggerOptions{
		Level:      hclog.Trace,
		Output:     os.Stderr,
		JSONFormat: true,
	})
	hclog.SetDefault(l)
	return l
}

// grpcServer adapts an Embedder to the generated gRPC server.
type grpcServer struct {
	unimplementedEmbedder
	providerServer
	impl Embedder
}

// unimplementedEmbedder puts the generated defaults one level below
// providerServer's methods.
type unimplementedEmbedder struct{ pb.UnimplementedEmbedderServer }

func (s *grpcServer) Embed(ctx context.Context, req *pb.EmbedRequest) (*pb.EmbedResponse, error) {
	kind := KindDocument
	if req.Kind == pb.Kind_KIND_QUERY {
		kind = KindQuery
	}
	vecs, err := s.impl.Embed(ctx, req.Texts, kind)
	if err != nil {
		return nil, toStatus(err)
	}
	if len(vecs) != len(req.Texts) {
		return nil, status.Errorf(codes.Internal, "provider returned %d vectors for %d texts", len(vecs), len(req.Texts))
	}
	resp := &pb.EmbedResponse{}
	if len(vecs) == 0 {
		return resp, nil
	}
	dims := len(vecs[0])
	resp.Dimensions = int32(dims)
	resp.Values = make([]float32, 0, dims*len(vecs))
	for i, v := range vecs {
		if len(v) != dims {
			return nil, status.Errorf(codes.Internal, "provider returned vectors of %d and %d dimensions (texts 0 and %d)", dims, len(v), i)
		}
		resp.Values = append(resp.Values, v...)
	}
	return resp, nil
}

// toStatus turns a provider's error into a gRPC status the client turns
// back into the same sentinel.
func toStatus(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, ErrNotReady):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, ErrBadRequest):
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return status.Error(codes.Unknown, err.Error())
}

var stateToPB = map[State]pb.State{
	StateReady: pb.State_STATE_READY, StateDownloading: pb.State_STATE_DOWNLOADING,
	StateLoading: pb.State_STATE_LOADING, StateError: pb.State_STATE_ERROR,
}

var stateFromPB = map[pb.State]State{
	pb.State_STATE_READY: StateReady, pb.State_STATE_DOWNLOADING: StateDownloading,
	pb.State_STATE_LOADING: StateLoading, pb.State_STATE_ERROR: StateError,
}

// GRPCClient is the host's side: an Embedder that calls a plugin. gRPC
// errors come back as the sdk's sentinels and the context's errors.
type GRPCClient struct {
	providerClient
	client pb.EmbedderClient
}

var _ Embedder = (*GRPCClient)(nil)

// Embed calls the plugin and checks the shape of its answer.
func (c *GRPCClient) Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error) {
	pk := pb.Kind_KIND_DOCUMENT
	if kind == KindQuery {
		pk = pb.Kind_KIND_QUERY
	}
	r, err := c.client.Embed(ctx, &pb.EmbedRequest{Texts: texts, Kind: pk})
	if err != nil {
		return nil, fromStatus(err)
	}
	dims := int(r.Dimensions)
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	if dims <= 0 || len(r.Values) != dims*len(texts) {
		return nil, fmt.Errorf("plugin returned %d values of %d dimensions for %d texts", len(r.Values), dims, len(texts))
	}
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = r.Values[i*dims : (i+1)*dims : (i+1)*dims]
	}
	return out, nil
}

func fromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	msg := st.Message()
	switch st.Code() {
	case codes.Canceled:
		return fmt.Errorf("%s: %w", msg, context.Canceled)
	case codes.DeadlineExceeded:
		return fmt.Errorf("%s: %w", msg, context.DeadlineExceeded)
	case codes.FailedPrecondition:
		return fmt.Errorf("%w: %s", ErrNotReady, strings.TrimPrefix(msg, ErrNotReady.Error()+": "))
	case codes.InvalidArgument:
		return fmt.Errorf("%w: %s", ErrBadRequest, strings.TrimPrefix(msg, ErrBadRequest.Error()+": "))
	case codes.Unavailable:
		return fmt.Errorf("%w: %s", ErrUnavailable, msg)
	case codes.Unimplemented:
		return unimplemented(st)
	}
	return errors.New(msg)
}
