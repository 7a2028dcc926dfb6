package vm

import (
	"context"
	"net"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/image"
)

// Test hooks for the external vm_test package.

var ImageSum = image.FileSHA256

// PendingConnForTest exposes the pre-opened agent connection.
func PendingConnForTest(p *Pending) net.Conn { return p.conn }

// ReconnectForTest re-establishes the agent session over conn.
func ReconnectForTest(vm *VM, ctx context.Context, conn net.Conn) error {
	return vm.connect(ctx, guest.DialOptions{First: conn})
}
