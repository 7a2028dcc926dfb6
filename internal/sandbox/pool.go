package sandbox

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
)

// warmPools keeps, per template bake, a few VMMs already started with
// `-incoming defer` and their agent sockets connected, so a create pays
// only for loading device state, resuming and the identity push.
//
// A pool is keyed by the template's directory (one bake); a rebuilt
// template gets a new pool and the old one drains.
type warmPools struct {
	host *vm.Host
	size int
	log  *slog.Logger

	mu     sync.Mutex
	pools  map[string]*warmPool // guarded by mu; by template dir
	closed bool                 // guarded by mu
}

type warmPool struct {
	tmpl  *template.Template
	ready chan *vm.Pending // buffered to size
	kick  chan struct{}    // wakes the filler after a take
	stop  chan struct{}
	done  chan struct{}
}

func newWarmPools(h *vm.Host, size int, log *slog.Logger) *warmPools {
	return &warmPools{host: h, size: size, log: log, pools: map[string]*warmPool{}}
}

// take returns a pending VMM for tmpl: from the pool if one is ready,
// else started now. The pool is refilled in the background.
func (w *warmPools) take(ctx context.Context, tmpl *template.Template) (*vm.Pending, error) {
	p := w.pool(tmpl)
	if p != nil {
		select {
		case pend := <-p.ready:
			select {
			case p.kick <- struct{}{}:
			default:
			}
			if pend.Alive() {
				return pend, nil
			}
			pend.Discard(context.Background())
		default:
			select {
			case p.kick <- struct{}{}:
			default:
			}
		}
	}
	opts := tmpl.BootOptions()
	opts.ID = vm.NewID("sbx-")
	return w.host.StartPending(ctx, opts)
}

func (w *warmPools) pool(tmpl *template.Template) *warmPool {
	if w.size <= 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	if p, ok := w.pools[tmpl.Dir]; ok {
		return p
	}
	// A new bake of the same template retires the old pool.
	for dir, old := range w.pools {
		if old.tmpl.Name == tmpl.Name {
			close(old.stop)
			delete(w.pools, dir)
		}
	}
	p := &warmPool{tmpl: tmpl, ready: make(chan *vm.Pending, w.size), kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	w.pools[tmpl.Dir] = p
	go w.fill(p)
	return p
}

// fill keeps p.ready full until stopped, then discards what it holds.
func (w *warmPools) fill(p *warmPool) {
	defer close(p.done)
	defer func() {
		for {
			select {
			case pend := <-p.ready:
				pend.Discard(context.Background())
			default:
				return
			}
		}
	}()
	for {
		for len(p.ready) < cap(p.ready) {
			select {
			case <-p.stop:
				return
			default:
			}
			opts := p.tmpl.BootOptions()
			opts.ID = vm.NewID("sbx-")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			pend, err := w.host.StartPending(ctx, opts)
			cancel()
			if err != nil {
				w.log.Warn("warm pool: start VMM", "template", p.tmpl.Name, "err", err)
				select {
				case <-p.stop:
					return
				case <-time.After(time.Second):
				}
				continue
			}
			p.ready <- pend
		}
		select {
		case <-p.stop:
			return
		case <-p.kick:
		}
	}
}

func (w *warmPools) close() {
	w.mu.Lock()
	w.closed = true
	pools := w.pools
	w.pools = map[string]*warmPool{}
	w.mu.Unlock()
	for _, p := range pools {
		close(p.stop)
		<-p.done
	}
}
