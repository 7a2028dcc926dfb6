package mcp

import (
	"context"
	"fmt"
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Serve runs one MCP session over r and w (newline-delimited JSON-RPC,
// MCP's stdio transport) until the client closes its end or ctx ends,
// then kills every sandbox the session created before it returns.
func Serve(ctx context.Context, be Backend, opts Options, r io.ReadCloser, w io.WriteCloser) error {
	o := opts.withDefaults()
	srv, sess := newServer(be, &o, nil)
	defer sess.close()
	// A line carries a whole message: room for the largest document as
	// base64, and some.
	maxLine := int(o.MaxDocumentBytes/3*4 + 1<<20)
	ss, err := srv.Connect(ctx, &sdk.IOTransport{Reader: r, Writer: w, MaxLineLength: maxLine}, nil)
	if err != nil {
		return fmt.Errorf("mcp: start the session: %w", err)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			ss.Close()
		case <-done:
		}
	}()
	err = ss.Wait()
	close(done)
	if ctx.Err() != nil {
		return nil // told to stop: a clean end
	}
	return err
}
