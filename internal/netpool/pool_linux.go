//go:build linux

package netpool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"runtime"
	"sync"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/airlock-dev/airlock/internal/cleanup"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netguard"
)

// Guest link kinds for Config.GuestLink.
const (
	// GuestLinkTap (the default): a persistent tap "tap0" that QEMU opens.
	GuestLinkTap = "tap"
	// GuestLinkVethForTests: a veth pair tap0<->guest0 inside the slot
	// namespace instead of a tap, so tests can move guest0 into a namespace
	// that stands in for the VM. Never use in production.
	GuestLinkVethForTests = "veth-for-tests"
)

// Config configures a Pool. The zero value is usable (defaults noted).
type Config struct {
	// BaseCIDR is the IPv4 range carved into /30 slots (default 10.200.0.0/16,
	// 16,384 slots). It must not be used by anything else on the host.
	BaseCIDR string
	// MaxSlots caps the slots handed out (default: every /30 in BaseCIDR).
	MaxSlots int
	// Prewarm is how many slots a background goroutine keeps built and
	// ready, so Acquire is a list pop instead of ~10 netlink round trips.
	Prewarm int
	// ProxyAddr is the IPv4 address of the host egress proxy that enforces
	// domain rules ("" = none: domain rules are refused). It must lie
	// outside BaseCIDR (e.g. on a dummy interface), so that allowing the
	// proxy never means allowing a slot address.
	ProxyAddr string
	// Uplinks are host interfaces out of which slot traffic is masqueraded
	// to the host's address, for CIDR rules naming destinations beyond the
	// host. Empty: no NAT on the host; destinations see the slot's NsIP and
	// must route BaseCIDR back to this host.
	Uplinks []string
	// Instance names everything this pool makes on the host: namespaces
	// "airlock-<instance>-s<N>" under /run/netns, host veths
	// "al<instance>-<N>" and the host table "airlock-<instance>". A pool
	// only ever scans, adopts or deletes names of its own instance, so
	// daemons (and tests) with different instances never touch each
	// other's. Required: 1-5 of [a-z0-9] (see InstanceFor).
	Instance string
	// GuestLink is GuestLinkTap (default) or GuestLinkVethForTests.
	GuestLink string
	// TapUID and TapGID may attach to the tap (default 0: root only). Set
	// them to the jailer's uid/gid when QEMU runs unprivileged.
	TapUID, TapGID uint32
	// Guard is the operator's opening of special-purpose destinations
	// (netguard): CIDR rules into a range it has not opened are refused,
	// and every slot drops traffic to special-purpose ranges before any
	// tenant rule or a default "allow" is consulted. The zero Guard opens
	// nothing.
	Guard netguard.Guard
	// Logger receives structured logs (default slog.Default()).
	Logger *slog.Logger
}

// Pool hands out slots. The "host" is the network namespace of the thread
// that calls New (the root namespace in production; tests run New on a
// thread inside a namespace standing in for the host). One Pool per
// instance: it considers every namespace and link named with its instance
// its own, and nothing else.
//
// Concurrency: mu guards the bookkeeping below; slow work (netlink,
// nftables) runs outside it. One background goroutine (prewarm) refills the
// ready list; it owns nothing but the slots it is building.
type Pool struct {
	cfg    Config         // immutable after New
	names  names          // immutable; derived from cfg.Instance
	addr   addressing     // immutable
	max    int            // immutable; slots are 0..max-1
	proxy  netip.Addr     // immutable; invalid when there is no proxy
	hostNs netns.NsHandle // immutable; the namespace New ran in
	log    *slog.Logger   // immutable

	mu       sync.Mutex
	closed   bool          // guarded by mu
	fresh    int           // guarded by mu; lowest never-handed-out index
	free     []int         // guarded by mu; released indices, FIFO (least recently used first)
	reserved map[int]bool  // guarded by mu; indices found on the host at New (or in conflict), awaiting Recover
	owned    map[int]bool  // guarded by mu; indices being built, ready, in use, or stuck after a failed teardown
	ready    []*Slot       // guarded by mu; prewarmed, deny-all, not yet handed out
	inUse    map[int]*Slot // guarded by mu; handed out by Acquire or adopted by Recover
	creating int           // guarded by mu; prewarm builds in flight
	wake     chan struct{} // cap 1; pokes the prewarm goroutine
	cancel   context.CancelFunc
	done     chan struct{} // closed when the prewarm goroutine exits
}

// New validates cfg, refuses a BaseCIDR that overlaps an address already on
// a host link, enables IPv4 forwarding on the host, installs the host table
// "airlock-<instance>" (replacing any left by a previous run of the same
// instance) and notes the instance's existing namespaces and links: their
// indices are not handed out until Recover has adopted or deleted them.
// Prewarming starts immediately.
func New(cfg Config) (*Pool, error) {
	p, err := newPool(cfg)
	if err != nil {
		return nil, err
	}
	if err := p.setUpHost(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go p.prewarm(ctx)
	p.poke()
	return p, nil
}

// newPool validates cfg and returns the pool it describes, touching
// nothing on the host.
func newPool(cfg Config) (*Pool, error) {
	addr, err := parseBase(cfg.BaseCIDR)
	if err != nil {
		return nil, err
	}
	p := &Pool{
		cfg: cfg, addr: addr, max: cfg.MaxSlots, log: cfg.Logger,
		reserved: map[int]bool{}, owned: map[int]bool{}, inUse: map[int]*Slot{},
		wake: make(chan struct{}, 1), done: make(chan struct{}),
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	switch {
	case cfg.MaxSlots == 0:
		p.max = addr.capacity
	case cfg.MaxSlots < 0 || cfg.MaxSlots > addr.capacity:
		return nil, errdefs.InvalidArgument("netpool: max_slots %d: must be 1..%d for %s", cfg.MaxSlots, addr.capacity, addr.base)
	}
	if p.max > 1<<20 {
		return nil, errdefs.InvalidArgument("netpool: %d slots is more than this package supports (1<<20); use a smaller base_cidr or max_slots", p.max)
	}
	if cfg.Prewarm < 0 || cfg.Prewarm > p.max {
		return nil, errdefs.InvalidArgument("netpool: prewarm %d: must be 0..%d", cfg.Prewarm, p.max)
	}
	if !ValidInstance(cfg.Instance) {
		return nil, errdefs.InvalidArgument("netpool: instance %q: must be 1-%d of [a-z0-9]", cfg.Instance, maxInstanceLen)
	}
	p.names = namesFor(cfg.Instance)
	switch cfg.GuestLink {
	case "":
		p.cfg.GuestLink = GuestLinkTap
	case GuestLinkTap, GuestLinkVethForTests:
	default:
		return nil, errdefs.InvalidArgument("netpool: guest_link %q: must be %q or %q", cfg.GuestLink, GuestLinkTap, GuestLinkVethForTests)
	}
	if p.proxy, err = parseProxyAddr(cfg.ProxyAddr, addr); err != nil {
		return nil, err
	}
	for _, u := range cfg.Uplinks {
		if u == "" || len(u) > 15 || parseIndex(u, p.names.vethPrefix) >= 0 {
			return nil, errdefs.InvalidArgument("netpool: uplinks: %q is not a usable interface name", u)
		}
	}
	return p, nil
}

// parseProxyAddr checks Config.ProxyAddr ("" is none: the zero Addr): an
// IPv4 address outside the slots, the guest subnet and link-local.
func parseProxyAddr(s string, addr addressing) (netip.Addr, error) {
	if s == "" {
		return netip.Addr{}, nil
	}
	a, err := netip.ParseAddr(s)
	switch {
	case err != nil || !a.Is4():
		return netip.Addr{}, errdefs.InvalidArgument("netpool: proxy_addr %q: not an IPv4 address", s)
	case addr.base.Contains(a) || guestPrefix.Masked().Contains(a) || metadataCIDR.Contains(a):
		return netip.Addr{}, errdefs.InvalidArgument("netpool: proxy_addr %s: must lie outside base_cidr %s, the guest subnet and link-local", a, addr.base)
	}
	return a, nil
}

// setUpHost takes the host's namespace, checks BaseCIDR is unused,
// installs the host table, enables forwarding and reserves the indices of
// slots an earlier run left. On failure the table is removed again.
func (p *Pool) setUpHost() (err error) {
	var cu cleanup.Stack
	defer func() { err = errors.Join(err, cu.Clean(context.Background())) }()
	if p.hostNs, err = currentNetns(); err != nil {
		return fmt.Errorf("netpool: host netns: %w", err)
	}
	cu.AddFunc(func() { p.hostNs.Close() })
	if err := p.checkBaseUnused(); err != nil {
		return err
	}
	if err := p.applyHostTable(); err != nil {
		return fmt.Errorf("netpool: host table: %w", err)
	}
	cu.Add(func(context.Context) error { return p.deleteHostTable() })
	// Forwarding is a host-wide switch; it is turned on, never back off
	// (other software may rely on it). The host table above and the
	// namespace tables decide what is actually forwarded for slots.
	if err := inNetnsHandle(p.hostNs, enableHostForwarding); err != nil {
		return fmt.Errorf("netpool: enable ip_forward: %w", err)
	}
	ns, links, err := p.scan()
	if err != nil {
		return err
	}
	cu.Release()
	for i := range ns {
		p.reserved[i] = true
	}
	for i := range links {
		p.reserved[i] = true
	}
	if len(p.reserved) > 0 {
		p.log.Info("netpool: found slots from an earlier run; call Recover", "count", len(p.reserved))
	}
	return nil
}

func currentNetns() (netns.NsHandle, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return netns.Get()
}

func enableHostForwarding() error {
	const f = "/proc/sys/net/ipv4/ip_forward"
	if b, err := os.ReadFile(f); err == nil && len(b) > 0 && b[0] == '1' {
		return nil
	}
	return os.WriteFile(f, []byte("1"), 0)
}

func (p *Pool) hostConn() (*nftables.Conn, error) {
	return nftables.New(nftables.WithNetNSFd(int(p.hostNs)))
}

func (p *Pool) applyHostTable() error {
	c, err := p.hostConn()
	if err != nil {
		return err
	}
	var proxy netip.Prefix
	if p.proxy.IsValid() {
		proxy = netip.PrefixFrom(p.proxy, 32)
	}
	hostRuleset(c, p.names, p.addr.base, proxy, p.cfg.Uplinks)
	return c.Flush()
}

func (p *Pool) deleteHostTable() error {
	c, err := p.hostConn()
	if err != nil {
		return err
	}
	t := &nftables.Table{Name: p.names.hostTable, Family: nftables.TableFamilyINet}
	c.AddTable(t) // so the delete succeeds even if it is already gone
	c.DelTable(t)
	return c.Flush()
}

// scan lists slot indices that have a namespace mount or a host link.
func (p *Pool) scan() (ns, links map[int]bool, err error) {
	ns, links = map[int]bool{}, map[int]bool{}
	ents, err := os.ReadDir(netnsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("netpool: list %s: %w", netnsDir, err)
	}
	for _, e := range ents {
		if i := parseIndex(e.Name(), p.names.netnsPrefix); i >= 0 {
			ns[i] = true
		}
	}
	h, err := netlink.NewHandleAt(p.hostNs)
	if err != nil {
		return nil, nil, fmt.Errorf("netpool: host netlink: %w", err)
	}
	defer h.Close()
	ll, err := h.LinkList()
	if err != nil {
		return nil, nil, fmt.Errorf("netpool: list links: %w", err)
	}
	for _, l := range ll {
		if i := parseIndex(l.Attrs().Name, p.names.vethPrefix); i >= 0 {
			links[i] = true
		}
	}
	return ns, links, nil
}

// checkBaseUnused refuses a BaseCIDR that overlaps an address on a host
// link other than this instance's own veths: another daemon's slots, a
// LAN, a VPN. Routing would silently send slot traffic the wrong way.
func (p *Pool) checkBaseUnused() error {
	h, err := netlink.NewHandleAt(p.hostNs)
	if err != nil {
		return fmt.Errorf("netpool: host netlink: %w", err)
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		return fmt.Errorf("netpool: list links: %w", err)
	}
	for _, l := range links {
		if parseIndex(l.Attrs().Name, p.names.vethPrefix) >= 0 {
			continue // ours, from an earlier run: Recover decides
		}
		addrs, err := h.AddrList(l, netlink.FAMILY_V4)
		if err != nil {
			return fmt.Errorf("netpool: addresses of %s: %w", l.Attrs().Name, err)
		}
		for _, a := range addrs {
			ap, ok := netip.AddrFromSlice(a.IP.To4())
			ones, _ := a.Mask.Size()
			if !ok {
				continue
			}
			if pfx := netip.PrefixFrom(ap, ones).Masked(); pfx.Overlaps(p.addr.base) {
				return errdefs.FailedPrecondition("netpool: base_cidr %s overlaps %s on host link %s (another airlock instance, or a network in use); choose another range", p.addr.base, pfx, l.Attrs().Name)
			}
		}
	}
	return nil
}

// GuestConfig is the network configuration every guest uses (Guest()).
func (p *Pool) GuestConfig() GuestConfig { return Guest() }

// ProxyAddr is Config.ProxyAddr parsed (invalid when there is none).
func (p *Pool) ProxyAddr() netip.Addr { return p.proxy }

// BaseCIDR is the range slots are carved from.
func (p *Pool) BaseCIDR() netip.Prefix { return p.addr.base }

func (p *Pool) netnsName(i int) string { return p.names.netns(i) }

// Instance is the name every host-wide object of this pool carries.
func (p *Pool) Instance() string { return p.names.instance }

// Stats is a snapshot of the pool's bookkeeping.
type Stats struct {
	Ready, InUse, Capacity int
}

// Stats reports current counts.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Ready: len(p.ready), InUse: len(p.inUse), Capacity: p.max}
}

// takeIndex picks the least recently used free index. Caller holds mu.
// Reusing the least recently used /30 keeps an address pointing at one
// sandbox for as long as possible, which keeps logs and host-side conntrack
// unambiguous.
func (p *Pool) takeIndex() int {
	i := -1
	if len(p.free) > 0 {
		i, p.free = p.free[0], p.free[1:]
	} else {
		for p.fresh < p.max {
			c := p.fresh
			p.fresh++
			// Recover may have adopted an index above fresh: it is owned
			// (and in use) without being reserved any more.
			if !p.reserved[c] && !p.owned[c] {
				i = c
				break
			}
		}
	}
	if i >= 0 {
		p.owned[i] = true
	}
	return i
}

// giveBack returns a torn-down index to the free list. Caller holds mu.
func (p *Pool) giveBack(i int) {
	delete(p.owned, i)
	p.free = append(p.free, i)
}

// buildFailed decides what happens to index i after create failed. Caller
// must not hold mu.
func (p *Pool) buildFailed(i int, err error) {
	if errdefs.Class(err) == errdefs.ErrAlreadyExists {
		// Something we did not make holds the name: never touch it; leave
		// the index for Recover.
		p.mu.Lock()
		delete(p.owned, i)
		p.reserved[i] = true
		p.mu.Unlock()
		return
	}
	terr := p.teardown(i) // create rolled back already; make sure
	p.mu.Lock()
	defer p.mu.Unlock()
	if terr != nil {
		p.log.Error("netpool: slot stuck after failed build; index withheld", "slot", i, "err", terr)
		return // stays owned: never handed out again by this Pool
	}
	p.giveBack(i)
}

// Acquire returns a slot whose namespace denies all egress. It takes a
// prewarmed slot when one is ready, else builds one (honouring ctx).
// Errors: FailedPrecondition after Close, ResourceExhausted when every
// index is taken.
func (p *Pool) Acquire(ctx context.Context) (*Slot, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errdefs.FailedPrecondition("netpool: pool is closed")
	}
	if len(p.ready) > 0 {
		s := p.ready[0]
		p.ready = p.ready[1:]
		p.inUse[s.Index] = s
		p.mu.Unlock()
		p.poke()
		return s, nil
	}
	i := p.takeIndex()
	p.mu.Unlock()
	if i < 0 {
		return nil, errdefs.ResourceExhausted("netpool: all %d slots are in use", p.max)
	}
	s, err := p.create(ctx, i)
	if err != nil {
		p.buildFailed(i, err)
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.discard(s)
		return nil, errdefs.FailedPrecondition("netpool: pool closed during acquire")
	}
	p.inUse[i] = s
	p.mu.Unlock()
	p.poke()
	return s, nil
}

// discard tears down a slot that was never handed out.
func (p *Pool) discard(s *Slot) {
	err := p.teardown(s.Index)
	s.mu.Lock()
	s.released = err == nil
	s.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.log.Error("netpool: teardown failed; index withheld", "slot", s.Index, "err", err)
		return
	}
	p.giveBack(s.Index)
}

// Release tears a slot down: host veth (cutting the sandbox off at once),
// then the namespace mount with its tap and table. Idempotent; after a
// failure it may be called again. Works after Close too.
func (p *Pool) Release(s *Slot) error {
	if s == nil || s.pool != p {
		return errdefs.InvalidArgument("netpool: slot does not belong to this pool")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return nil
	}
	if err := p.teardown(s.Index); err != nil {
		return fmt.Errorf("netpool: release slot %d: %w", s.Index, err)
	}
	s.released = true
	p.mu.Lock()
	if p.inUse[s.Index] == s {
		delete(p.inUse, s.Index)
		p.giveBack(s.Index)
	}
	p.mu.Unlock()
	p.poke()
	return nil
}

// Close stops prewarming and tears down slots that were never handed out.
// Slots still in use are left alone (Release them first for a clean
// shutdown, or leave them for the next run's Recover); the host table is
// removed only when none are left, since in-use slots still rely on it.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	<-p.done

	p.mu.Lock()
	ready := p.ready
	p.ready = nil
	p.mu.Unlock()
	var errs []error
	for _, s := range ready {
		p.discard(s)
		if !s.isReleased() {
			errs = append(errs, fmt.Errorf("netpool: close: slot %d not torn down", s.Index))
		}
	}
	p.mu.Lock()
	busy := len(p.owned) > 0
	p.mu.Unlock()
	if !busy {
		errs = append(errs, p.deleteHostTable())
		p.hostNs.Close()
	}
	return errors.Join(errs...)
}

func (s *Slot) isReleased() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.released
}
