//go:build linux

package netpool

import (
	"context"
	"time"
)

func (p *Pool) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// prewarm keeps cfg.Prewarm slots ready. It backs off after a failed build
// so a broken host does not spin a core.
func (p *Pool) prewarm(ctx context.Context) {
	defer close(p.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		for {
			p.mu.Lock()
			if p.closed || len(p.ready)+p.creating >= p.cfg.Prewarm {
				p.mu.Unlock()
				break
			}
			i := p.takeIndex()
			if i < 0 {
				p.mu.Unlock()
				break
			}
			p.creating++
			p.mu.Unlock()

			s, err := p.create(ctx, i)
			p.mu.Lock()
			p.creating--
			p.mu.Unlock()
			if err != nil {
				p.buildFailed(i, err)
				if ctx.Err() != nil {
					return
				}
				p.log.Error("netpool: prewarm failed", "slot", i, "err", err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				continue
			}
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				p.discard(s)
				return
			}
			p.ready = append(p.ready, s)
			p.mu.Unlock()
		}
	}
}
