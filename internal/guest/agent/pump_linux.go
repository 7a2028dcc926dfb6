//go:build linux

package agent

import (
	"os"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

func stdinPipe(wanted bool) (r *os.File, w *os.File, err error) {
	if !wanted {
		r, err = os.Open(os.DevNull)
		return r, nil, err
	}
	return os.Pipe()
}

// pump copies one output pipe into exec responses, up to max bytes; the
// rest is read and counted but dropped, so the process never blocks on a
// full pipe and the host never receives more than it asked for.
type pump struct {
	r      *os.File
	max    int64
	out    chan<- *agentpb.ExecResponse
	stdout bool
	total  int64 // written only by run; read after run returns

	lastActive atomic.Int64 // unix nanos of the last read or delivery
	sending    atomic.Bool  // true while blocked handing a chunk to the sender
}

// idleFor is how long the pump has been waiting for input; zero while it
// is still delivering, so a slow host never loses buffered output.
func (p *pump) idleFor() time.Duration {
	if p.sending.Load() {
		return 0
	}
	return time.Since(time.Unix(0, p.lastActive.Load()))
}

func (p *pump) run() {
	defer p.r.Close()
	buf := make([]byte, outChunk)
	p.lastActive.Store(time.Now().UnixNano())
	for {
		n, err := p.r.Read(buf)
		p.lastActive.Store(time.Now().UnixNano())
		if n > 0 {
			keep := int64(n)
			if room := p.max - p.total; room < keep {
				keep = max(room, 0)
			}
			p.total += int64(n)
			if keep > 0 {
				data := append([]byte(nil), buf[:keep]...)
				p.sending.Store(true)
				if p.stdout {
					p.out <- &agentpb.ExecResponse{Msg: &agentpb.ExecResponse_Stdout{Stdout: data}}
				} else {
					p.out <- &agentpb.ExecResponse{Msg: &agentpb.ExecResponse_Stderr{Stderr: data}}
				}
				p.lastActive.Store(time.Now().UnixNano())
				p.sending.Store(false)
			}
		}
		if err != nil {
			return
		}
	}
}
