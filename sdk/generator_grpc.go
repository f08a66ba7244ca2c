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
	pb.RegisterGeneratorServer(s, &generatorServer{impl: p.Impl})
	return nil
}

// GRPCClient returns a Generator that calls the plugin.
func (p *GeneratorGRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &GeneratorClient{client: pb.NewGeneratorClient(c)}, nil
}

// generatorServer adapts a Generator to the generated gRPC server.
type generatorServer struct {
	pb.UnimplementedGeneratorServer
	impl Generator
}

func (s *generatorServer) Info(ctx context.Context, _ *pb.InfoRequest) (*pb.InfoResponse, error) {
	info, err := s.impl.Info(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return infoToPB(info), nil
}

func (s *generatorServer) Status(ctx context.Context, _ *pb.StatusRequest) (*pb.StatusResponse, error) {
	st, err := s.impl.Status(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.StatusResponse{State: stateToPB[st.State], Progress: st.Progress, Message: st.Message}, nil
}

func (s *generatorServer) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	if err := s.impl.Configure(ctx, req.Options); err != nil {
		return nil, toStatus(err)
	}
	return &pb.ConfigureResponse{}, nil
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

func infoToPB(info Info) *pb.InfoResponse {
	return &pb.InfoResponse{Name: info.Name, Version: info.Version, ModelId: info.ModelID,
		Dimensions: int32(info.Dimensions), MaxInputTokens: int32(info.MaxInputTokens)}
}

// GeneratorClient is the host's side: a Generator that calls a plugin.
// gRPC errors come back as the sdk's sentinels and the context's errors.
type GeneratorClient struct {
	client pb.GeneratorClient
}

var _ Generator = (*GeneratorClient)(nil)

// Info calls the plugin.
func (c *GeneratorClient) Info(ctx context.Context) (Info, error) {
	r, err := c.client.Info(ctx, &pb.InfoRequest{})
	if err != nil {
		return Info{}, fromStatus(err)
	}
	return Info{Name: r.Name, Version: r.Version, ModelID: r.ModelId, Dimensions: int(r.Dimensions), MaxInputTokens: int(r.MaxInputTokens)}, nil
}

// Status calls the plugin.
func (c *GeneratorClient) Status(ctx context.Context) (Status, error) {
	r, err := c.client.Status(ctx, &pb.StatusRequest{})
	if err != nil {
		return Status{}, fromStatus(err)
	}
	st, ok := stateFromPB[r.State]
	if !ok {
		return Status{}, fmt.Errorf("plugin reported an unknown state %v", r.State)
	}
	return Status{State: st, Progress: r.Progress, Message: r.Message}, nil
}

// Configure calls the plugin.
func (c *GeneratorClient) Configure(ctx context.Context, options map[string]string) error {
	_, err := c.client.Configure(ctx, &pb.ConfigureRequest{Options: options})
	return fromStatus(err)
}

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
