package sdk

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	pb "github.com/memhost/memhost/sdk/proto"
)

// GeneratorPluginName is the name a generator is dispensed under.
const GeneratorPluginName = "generator"

// GeneratorGRPCPlugin is the go-plugin glue for Generator: the host uses
// it with a nil Impl to get a client, Serve with the provider's Impl.
type GeneratorGRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl Generator
}

var _ plugin.GRPCPlugin = (*GeneratorGRPCPlugin)(nil)

// GRPCServer registers the provider.
func (p *GeneratorGRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterGeneratorServer(s, &generatorServer{providerServer: providerServer{p.Impl}, impl: p.Impl})
	return nil
}

// GRPCClient returns a Generator that calls the plugin.
func (p *GeneratorGRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	cl := pb.NewGeneratorClient(c)
	return &GeneratorClient{providerClient: providerClient{cl}, client: cl}, nil
}

// generatorServer adapts a Generator to the generated gRPC server.
type generatorServer struct {
	unimplementedGenerator
	providerServer
	impl Generator
}

// unimplementedGenerator puts the generated defaults one level below
// providerServer's methods.
type unimplementedGenerator struct {
	pb.UnimplementedGeneratorServer
}

func (s *generatorServer) Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	r := CompleteRequest{MaxTokens: int(req.MaxTokens), Temperature: req.Temperature}
	for _, m := range req.Messages {
		r.Messages = append(r.Messages, Message{Role: m.Role, Content: m.Content})
	}
	if req.Schema != "" {
		r.Schema = json.RawMessage(req.Schema)
	}
	resp, err := s.impl.Complete(ctx, r)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.CompleteResponse{Text: resp.Text, Model: resp.Model,
		InputTokens: int32(resp.InputTokens), OutputTokens: int32(resp.OutputTokens)}, nil
}

// GeneratorClient is the host's side: a Generator that calls a plugin.
// gRPC errors come back as the sdk's sentinels and the context's errors.
type GeneratorClient struct {
	providerClient
	client pb.GeneratorClient
}

var _ Generator = (*GeneratorClient)(nil)

// Complete calls the plugin. A schema that is not JSON is refused here,
// before it travels.
func (c *GeneratorClient) Complete(ctx context.Context, req CompleteRequest) (CompleteResponse, error) {
	if len(req.Schema) > 0 && !json.Valid(req.Schema) {
		return CompleteResponse{}, BadRequest("the answer's schema is not valid JSON")
	}
	r := &pb.CompleteRequest{Schema: string(req.Schema), MaxTokens: int32(req.MaxTokens), Temperature: req.Temperature}
	for _, m := range req.Messages {
		r.Messages = append(r.Messages, &pb.ChatMessage{Role: m.Role, Content: m.Content})
	}
	resp, err := c.client.Complete(ctx, r)
	if err != nil {
		return CompleteResponse{}, fromStatus(err)
	}
	return CompleteResponse{Text: resp.Text, Model: resp.Model, InputTokens: int(resp.InputTokens), OutputTokens: int(resp.OutputTokens)}, nil
}

// unimplemented words a call to a service the plugin does not serve: a
// memhost-generator-* binary that serves only an embedder, say.
func unimplemented(st *status.Status) error {
	return fmt.Errorf("%w: the plugin does not serve this kind of provider (%s)", ErrBadRequest, st.Message())
}
