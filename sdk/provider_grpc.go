package sdk

import (
	"context"
	"fmt"

	"google.golang.org/grpc"

	pb "github.com/memhost/memhost/sdk/proto"
)

// The half of the gRPC adapters every plugin kind shares: Info, Status
// and Configure, the Provider methods. The Embedder and Generator
// adapters (grpc.go, generator_grpc.go) embed these and add their own
// method.

// providerServer serves a Provider's methods. An adapter embeds it beside
// its kind's pb.Unimplemented…Server wrapped one level deeper (see
// unimplementedEmbedder), so that these methods, one level up, are the
// ones the gRPC server calls.
type providerServer struct{ impl Provider }

func (s providerServer) Info(ctx context.Context, _ *pb.InfoRequest) (*pb.InfoResponse, error) {
	info, err := s.impl.Info(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.InfoResponse{Name: info.Name, Version: info.Version, ModelId: info.ModelID,
		Dimensions: int32(info.Dimensions), MaxInputTokens: int32(info.MaxInputTokens)}, nil
}

func (s providerServer) Status(ctx context.Context, _ *pb.StatusRequest) (*pb.StatusResponse, error) {
	st, err := s.impl.Status(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.StatusResponse{State: stateToPB[st.State], Progress: st.Progress, Message: st.Message}, nil
}

func (s providerServer) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	if err := s.impl.Configure(ctx, req.Options); err != nil {
		return nil, toStatus(err)
	}
	return &pb.ConfigureResponse{}, nil
}

// providerCalls is the part of every kind's generated client that calls
// the Provider methods (pb.EmbedderClient and pb.GeneratorClient both
// have it).
type providerCalls interface {
	Info(ctx context.Context, in *pb.InfoRequest, opts ...grpc.CallOption) (*pb.InfoResponse, error)
	Status(ctx context.Context, in *pb.StatusRequest, opts ...grpc.CallOption) (*pb.StatusResponse, error)
	Configure(ctx context.Context, in *pb.ConfigureRequest, opts ...grpc.CallOption) (*pb.ConfigureResponse, error)
}

// providerClient is the host's side of the Provider methods; the
// clients of each kind embed it.
type providerClient struct{ calls providerCalls }

// Info calls the plugin.
func (c providerClient) Info(ctx context.Context) (Info, error) {
	r, err := c.calls.Info(ctx, &pb.InfoRequest{})
	if err != nil {
		return Info{}, fromStatus(err)
	}
	return Info{Name: r.Name, Version: r.Version, ModelID: r.ModelId, Dimensions: int(r.Dimensions), MaxInputTokens: int(r.MaxInputTokens)}, nil
}

// Status calls the plugin.
func (c providerClient) Status(ctx context.Context) (Status, error) {
	r, err := c.calls.Status(ctx, &pb.StatusRequest{})
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
func (c providerClient) Configure(ctx context.Context, options map[string]string) error {
	_, err := c.calls.Configure(ctx, &pb.ConfigureRequest{Options: options})
	return fromStatus(err)
}
