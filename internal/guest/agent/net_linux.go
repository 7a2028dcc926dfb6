//go:build linux

package agent

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

// configureNetwork applies a per-clone network identity. Guest networking
// arrives with the netpool work; until then asking for it is an explicit
// error, never a silent no-op.
func configureNetwork(cfg *agentpb.NetConfig) error {
	return status.Error(codes.Unimplemented, "guest network configuration is not available in this agent")
}
