package sandbox

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
)

// warmPools keeps, per template bake, a few clones already restored,
// running idle with their agent session up and their code paths warm, so
// a create costs one identity push: clock, fresh entropy (the guest CRNG
// is reseeded), id and hostname. A pooled clone has run nothing but the
// template's own code and a warm-up `true`; no tenant's request reaches it
// before that push.
//
// Under emulation this matters most: a fresh VMM has an empty translation
// cache, and the first calls into a just-restored guest pay for
// translating the agent's code paths (~0.1-0.3 s here).
//
// A pool is keyed by the template's directory (one bake); a rebuilt
// template gets a new pool and the old one is drained.
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
	ready chan *vm.VM   // buffered to size
	kick  chan struct{} // wakes the filler after a take
	stop  chan struct{}
	done  chan struct{}
}

func newWarmPools(h *vm.Host, size int, log *slog.Logger) *warmPools {
	return &warmPools{host: h, size: size, log: log, pools: map[string]*warmPool{}}
}

// take returns a restored clone of tmpl whose agent answers: from the pool
// when one is ready, else restored now. The caller must Prepare it.
func (w *warmPools) take(ctx context.Context, tmpl *template.Template) (*vm.VM, error) {
	if p := w.pool(tmpl); p != nil {
		defer func() {
			select {
			case p.kick <- struct{}{}:
			default:
			}
		}()
		for {
			select {
			case v := <-p.ready:
				if alive(v) {
					return v, nil
				}
				v.Destroy(context.Background())
				continue
			default:
			}
			break
		}
	}
	return restoreClone(ctx, w.host, tmpl)
}

func alive(v *vm.VM) bool {
	select {
	case <-v.Machine.Exited():
		return false
	default:
		return true
	}
}

// restoreClone starts a VMM and restores tmpl into it.
func restoreClone(ctx context.Context, h *vm.Host, tmpl *template.Template) (*vm.VM, error) {
	opts := tmpl.BootOptions()
	opts.ID = vm.NewID("sbx-")
	p, err := h.StartPending(ctx, opts)
	if err != nil {
		return nil, err
	}
	return p.Restore(ctx, tmpl.StatePath(), true)
}

// warm restores a clone and runs the agent's hot paths once.
func warm(ctx context.Context, h *vm.Host, tmpl *template.Template) (*vm.VM, error) {
	v, err := restoreClone(ctx, h, tmpl)
	if err != nil {
		return nil, err
	}
	if err := v.Prepare(ctx, v.ID); err == nil {
		_, err = v.Agent.Exec(ctx, guest.ExecOptions{Argv: []string{"true"}}, io.Discard, io.Discard)
	}
	if err != nil {
		v.Destroy(context.WithoutCancel(ctx))
		return nil, err
	}
	return v, nil
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
	p := &warmPool{tmpl: tmpl, ready: make(chan *vm.VM, w.size), kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	w.pools[tmpl.Dir] = p
	go w.fill(p)
	return p
}

// fill keeps p.ready full until stopped, then destroys what it holds.
func (w *warmPools) fill(p *warmPool) {
	defer close(p.done)
	defer func() {
		for {
			select {
			case v := <-p.ready:
				v.Destroy(context.Background())
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
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			v, err := warm(ctx, w.host, p.tmpl)
			cancel()
			if err != nil {
				w.log.Warn("warm pool: restore clone", "template", p.tmpl.Name, "err", err)
				select {
				case <-p.stop:
					return
				case <-time.After(time.Second):
				}
				continue
			}
			p.ready <- v
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
