package vm

import (
	"net"

	"github.com/airlock-dev/airlock/internal/image"
)

// Test hooks for the external vm_test package.

var ImageSum = image.FileSHA256

// PendingConnForTest exposes the pre-opened agent connection.
func PendingConnForTest(p *Pending) net.Conn { return p.conn }
