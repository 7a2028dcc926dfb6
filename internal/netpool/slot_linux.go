//go:build linux

package netpool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/cleanup"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netguard"
)

// netnsDir is where named namespaces are bind-mounted, as iproute2 does, so
// `ip netns list` / `ip netns exec airlock-<instance>-s7 ...` work for
// operators.
const netnsDir = "/run/netns"

// Slot is one sandbox's network: a named namespace holding the guest link
// (tap0) and one end of a veth pair whose other end (al<instance>-<N>) is on
// the host.
// All exported fields are immutable after the Slot is returned.
type Slot struct {
	// Index is the slot number; it fixes every name and address below.
	Index int
	// NetnsName is "airlock-<instance>-s<Index>"; NetnsPath
	// its bind mount under /run/netns (`ip netns exec` works for operators).
	NetnsName, NetnsPath string
	// TapName is the guest link inside the namespace ("tap0"). QEMU gets a
	// descriptor for it from OpenTap (-netdev tap,fd=N) and stays in the
	// host namespace.
	TapName string
	// HostVeth is the host-side veth ("al<instance>-<Index>"), carrying HostIP.
	HostVeth string
	// Subnet is the slot's /30; HostIP is its .1 (host), NsIP its .2
	// (namespace). Guest traffic leaves the namespace with source NsIP, so
	// host-side components identify the sandbox by it.
	Subnet       netip.Prefix
	HostIP, NsIP netip.Addr
	// GuestPeer is set only with GuestLinkVethForTests: the name, inside the
	// slot namespace, of the veth peer the test moves into its stand-in guest.
	GuestPeer string

	pool *Pool // immutable

	mu       sync.Mutex // serialises SetPolicy and Release on this slot
	policy   Policy     // guarded by mu; what the namespace table enforces
	released bool       // guarded by mu; true once teardown succeeded
}

func (p *Pool) newSlot(i int) *Slot {
	return &Slot{
		Index:     i,
		NetnsName: p.netnsName(i),
		NetnsPath: filepath.Join(netnsDir, p.netnsName(i)),
		TapName:   tapName,
		HostVeth:  p.names.veth(i),
		Subnet:    p.addr.subnet(i),
		HostIP:    p.addr.hostIP(i),
		NsIP:      p.addr.nsIP(i),
		pool:      p,
		policy:    DenyAll(),
	}
}

// Policy returns a copy of the policy the slot currently enforces.
func (s *Slot) Policy() Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.policy.clone()
}

// Do runs fn on an OS thread that is inside the slot's network namespace.
// Sockets fn creates belong to the namespace and stay usable afterwards from
// any goroutine. fn must not start goroutines expecting them to inherit the
// namespace (they will not).
func (s *Slot) Do(fn func() error) error { return inNetns(s.NetnsPath, fn) }

// inNetns runs fn on a fresh goroutine locked to its thread, switched into
// the namespace at path. If switching back fails the goroutine exits still
// locked, so the Go runtime discards the thread instead of reusing a thread
// stuck in the wrong namespace.
func inNetns(path string, fn func() error) error {
	target, err := netns.GetFromPath(path)
	if err != nil {
		return notFoundIfMissing(err, "netpool: open netns %s", path)
	}
	defer target.Close()
	return inNetnsHandle(target, fn)
}

func inNetnsHandle(target netns.NsHandle, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("netpool: current netns: %w", err)
			return
		}
		defer orig.Close()
		if err := netns.Set(target); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("netpool: enter netns: %w", err)
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("netpool: leave netns: %w", err))
			return // still locked: the thread dies with this goroutine
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Compiled is a policy checked once against a pool and ready for any of
// its slots: Slot.Apply puts it in force without checking it again.
type Compiled struct {
	pool   *Pool
	policy Policy
	rules  []compiledRule
}

// Policy is the policy that was compiled.
func (c Compiled) Policy() Policy { return c.policy.clone() }

// Compile checks pol for this pool: Validate, plus what the operator's
// guard decides (a CIDR rule into a special-purpose range the operator has
// not opened, or one no rule may reach, is refused with the range's name),
// no rule into the sandbox range, and domain rules only with an egress
// proxy.
func (p *Pool) Compile(pol Policy) (Compiled, error) {
	rules, err := p.compile(pol)
	if err != nil {
		return Compiled{}, err
	}
	for _, r := range rules {
		if r.domain != "" && !p.proxy.IsValid() {
			return Compiled{}, errdefs.FailedPrecondition("egress rule %q: domain rules need the egress proxy, which is not enabled on this host", r.name)
		}
	}
	return Compiled{pool: p, policy: pol.clone(), rules: rules}, nil
}

// compile is Policy.compile under the pool's guard.
func (p *Pool) compile(pol Policy) ([]compiledRule, error) {
	rules, err := pol.compile()
	if err != nil {
		return nil, err
	}
	var pr problems
	for i, r := range rules {
		if !r.dst.IsValid() {
			continue
		}
		if p.addr.base.Overlaps(r.dst) && r.dst.Bits() >= p.addr.base.Bits() {
			pr.add("allow[%d].cidr: %s is inside this host's sandbox range %s (serve --net-base-cidr): the host's slot addresses and other sandboxes are never reachable", i, r.dst, p.addr.base)
			continue
		}
		switch why, rg := p.cfg.Guard.CheckPrefix(r.dst); why {
		case netguard.RefusedNever:
			pr.add("allow[%d].cidr: %s is in %s (%s), which no rule may reach", i, r.dst, rg.Prefix, rg.Name)
		case netguard.RefusedClosed:
			pr.add("allow[%d].cidr: %s is in %s (%s), which the operator has not opened to sandboxes (airlock serve --egress-open)", i, r.dst, rg.Prefix, rg.Name)
		}
	}
	if len(pr) > 0 {
		return nil, errdefs.InvalidArgument("egress policy: %s", strings.Join(pr, "; "))
	}
	return rules, nil
}

// SetPolicy compiles pol and applies it (Compile, then Apply).
func (s *Slot) SetPolicy(pol Policy) error {
	c, err := s.pool.Compile(pol)
	if err != nil {
		return err
	}
	return s.Apply(c)
}

// Apply replaces the slot's egress policy with c, compiled by this slot's
// pool. The namespace's nftables table is rebuilt in one transaction, then
// the namespace's conntrack table is flushed so flows opened under the old
// policy are judged again by the new one (a revoked allow cuts live
// connections, not just new ones).
func (s *Slot) Apply(c Compiled) error {
	if c.pool != s.pool {
		return errdefs.InvalidArgument("netpool: slot %d: the policy was compiled for another pool", s.Index)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return errdefs.FailedPrecondition("netpool: slot %d was released", s.Index)
	}
	if err := s.pool.applyPolicy(s.NetnsPath, c.rules, c.policy.Default == DefaultAllow, true); err != nil {
		return fmt.Errorf("netpool: slot %d: %w", s.Index, err)
	}
	s.policy = c.policy.clone()
	return nil
}

func (p *Pool) applyPolicy(nsPath string, rules []compiledRule, defaultAllow, flushConntrack bool) error {
	f, err := os.Open(nsPath)
	if err != nil {
		return notFoundIfMissing(err, "open netns %s", nsPath)
	}
	defer f.Close()
	c, err := nftables.New(nftables.WithNetNSFd(int(f.Fd())))
	if err != nil {
		return fmt.Errorf("nftables conn: %w", err)
	}
	var proxy netip.Prefix
	if p.proxy.IsValid() {
		proxy = netip.PrefixFrom(p.proxy, 32)
	}
	slotRuleset(c, slotNet{base: p.addr.base, proxy: proxy, open: p.cfg.Guard.Open, closed: p.cfg.Guard.Closed()}, rules, defaultAllow)
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables transaction: %w", err)
	}
	if !flushConntrack {
		return nil
	}
	h, err := netlink.NewHandleAt(netns.NsHandle(int(f.Fd())), unix.NETLINK_NETFILTER)
	if err != nil {
		return fmt.Errorf("netlink handle: %w", err)
	}
	defer h.Close()
	if err := h.ConntrackTableFlush(netlink.ConntrackTable); err != nil {
		return fmt.Errorf("conntrack flush: %w", err)
	}
	return nil
}

// create builds slot i. Steps run in order; each registers its undo the
// moment its resource exists, so a failure (or ctx ending) leaves nothing.
// The namespace gets its deny-all table before any link exists and before
// forwarding is enabled: a slot is never open, not even while being built.
func (p *Pool) create(ctx context.Context, i int) (_ *Slot, err error) {
	s := p.newSlot(i)
	var cu cleanup.Stack
	defer func() {
		if err != nil {
			if cerr := cu.Clean(ctx); cerr != nil {
				p.log.Error("netpool: rollback of failed slot left resources", "slot", i, "err", cerr)
				err = errors.Join(err, cerr)
			}
		}
	}()
	steps := []struct {
		name string
		do   func() error
	}{
		{"create netns", func() error { return createNetns(s.NetnsPath, &cu) }},
		{"deny-all policy", func() error { return p.applyPolicy(s.NetnsPath, nil, false, false) }},
		{"namespace sysctls", func() error { return inNetns(s.NetnsPath, nsSysctls) }},
		{"veth pair", func() error { return p.createVeth(s, &cu) }},
		{"guest link", func() error { return p.createGuestLink(s) }},
	}
	for _, st := range steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("netpool: slot %d: %s: %w", i, st.name, err)
		}
		if err := st.do(); err != nil {
			return nil, fmt.Errorf("netpool: slot %d: %s: %w", i, st.name, err)
		}
	}
	cu.Release()
	return s, nil
}

// createNetns makes a new network namespace bind-mounted at path, like
// `ip netns add`. The unshare happens on a throwaway locked thread.
func createNetns(path string, cu *cleanup.Stack) error {
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return errdefs.AlreadyExists("%s exists (orphan of an earlier run? see Pool.Recover)", path)
		}
		return err
	}
	f.Close()
	cu.Add(func(context.Context) error { return removeNetns(path) })

	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("unshare: %w", err)
			return
		}
		self := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
		merr := unix.Mount(self, path, "none", unix.MS_BIND, "")
		if err := netns.Set(orig); err != nil {
			errc <- errors.Join(merr, err)
			return // stay locked: thread is discarded
		}
		runtime.UnlockOSThread()
		if merr != nil {
			merr = fmt.Errorf("bind mount: %w", merr)
		}
		errc <- merr
	}()
	return <-errc
}

// removeNetns unmounts and removes a named namespace; missing is fine. The
// namespace itself dies when its last user (e.g. QEMU) lets go of it.
func removeNetns(path string) error {
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// nsSysctls runs inside the slot namespace: /proc/sys/net is per-namespace
// and resolved against the calling thread.
func nsSysctls() error {
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0); err != nil {
		return err
	}
	// Guests get IPv4 only; no IPv6 means no link-local v6 path to reason about.
	for _, f := range []string{"/proc/sys/net/ipv6/conf/all/disable_ipv6", "/proc/sys/net/ipv6/conf/default/disable_ipv6"} {
		if err := os.WriteFile(f, []byte("1"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// createVeth creates the host veth al<instance>-<N> with its peer veth0 born directly in
// the slot namespace (no name clash on the host), addresses both ends and
// routes the namespace's default via the host end. The host's connected
// route for the /30 is the route back to the slot.
func (p *Pool) createVeth(s *Slot, cu *cleanup.Stack) error {
	nsf, err := os.Open(s.NetnsPath)
	if err != nil {
		return err
	}
	defer nsf.Close()
	host, err := netlink.NewHandleAt(p.hostNs)
	if err != nil {
		return err
	}
	defer host.Close()

	la := netlink.NewLinkAttrs()
	la.Name = s.HostVeth
	veth := &netlink.Veth{LinkAttrs: la, PeerName: nsVethName, PeerNamespace: netlink.NsFd(int(nsf.Fd()))}
	if err := host.LinkAdd(veth); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return errdefs.AlreadyExists("host link %s exists (orphan of an earlier run? see Pool.Recover)", s.HostVeth)
		}
		return fmt.Errorf("add %s: %w", s.HostVeth, err)
	}
	cu.Add(func(context.Context) error { return delHostLink(host0(p), s.HostVeth) })

	hl, err := host.LinkByName(s.HostVeth)
	if err != nil {
		return err
	}
	if err := host.AddrAdd(hl, &netlink.Addr{IPNet: ipnet(netip.PrefixFrom(s.HostIP, 30))}); err != nil {
		return fmt.Errorf("address %s: %w", s.HostVeth, err)
	}
	if err := host.LinkSetUp(hl); err != nil {
		return err
	}

	ns, err := netlink.NewHandleAt(netns.NsHandle(int(nsf.Fd())))
	if err != nil {
		return err
	}
	defer ns.Close()
	lo, err := ns.LinkByName("lo")
	if err != nil {
		return err
	}
	if err := ns.LinkSetUp(lo); err != nil {
		return err
	}
	nl, err := ns.LinkByName(nsVethName)
	if err != nil {
		return err
	}
	if err := ns.AddrAdd(nl, &netlink.Addr{IPNet: ipnet(netip.PrefixFrom(s.NsIP, 30))}); err != nil {
		return fmt.Errorf("address %s: %w", nsVethName, err)
	}
	if err := ns.LinkSetUp(nl); err != nil {
		return err
	}
	return ns.RouteAdd(&netlink.Route{LinkIndex: nl.Attrs().Index, Gw: net.IP(s.HostIP.AsSlice())})
}

// createGuestLink makes tap0 (production) or a veth tap0<->guest0 (tests) in
// the namespace, with the fixed gateway address and MAC.
func (p *Pool) createGuestLink(s *Slot) error {
	if p.cfg.GuestLink == GuestLinkVethForTests {
		s.GuestPeer = guestPeer
		err := inNetns(s.NetnsPath, func() error {
			la := netlink.NewLinkAttrs()
			la.Name = tapName
			return netlink.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: guestPeer})
		})
		if err != nil {
			return err
		}
	} else {
		// A tun device is created in the namespace of the thread that opens
		// /dev/net/tun, so this must run inside the namespace. Persistent:
		// it outlives this call and waits for QEMU to attach by name. Only
		// TapUID/TapGID (root by default) or CAP_NET_ADMIN may attach.
		err := inNetns(s.NetnsPath, func() error {
			la := netlink.NewLinkAttrs()
			la.Name = tapName
			return netlink.LinkAdd(&netlink.Tuntap{LinkAttrs: la, Mode: netlink.TUNTAP_MODE_TAP,
				Flags: netlink.TUNTAP_NO_PI | netlink.TUNTAP_ONE_QUEUE, Owner: p.cfg.TapUID, Group: p.cfg.TapGID})
		})
		if err != nil {
			return fmt.Errorf("tap: %w", err)
		}
	}
	nsf, err := os.Open(s.NetnsPath)
	if err != nil {
		return err
	}
	defer nsf.Close()
	h, err := netlink.NewHandleAt(netns.NsHandle(int(nsf.Fd())))
	if err != nil {
		return err
	}
	defer h.Close()
	l, err := h.LinkByName(tapName)
	if err != nil {
		return err
	}
	if err := h.LinkSetHardwareAddr(l, gatewayMAC); err != nil {
		return err
	}
	gw := netip.PrefixFrom(gatewayAddr, guestPrefix.Bits())
	if err := h.AddrAdd(l, &netlink.Addr{IPNet: ipnet(gw)}); err != nil {
		return err
	}
	return h.LinkSetUp(l)
}

// teardown removes a slot's resources: the host veth first (cuts the
// sandbox off synchronously; its namespace peer goes with it), then the
// namespace mount. Missing pieces are not errors, so it is idempotent.
func (p *Pool) teardown(i int) error {
	return errors.Join(
		delHostLink(host0(p), p.names.veth(i)),
		removeNetns(filepath.Join(netnsDir, p.netnsName(i))),
	)
}

// host0 returns a fresh handle to the pool's host namespace (nil on error;
// delHostLink reports it).
func host0(p *Pool) *netlink.Handle {
	h, err := netlink.NewHandleAt(p.hostNs)
	if err != nil {
		p.log.Error("netpool: host netlink handle", "err", err)
		return nil
	}
	return h
}

func delHostLink(h *netlink.Handle, name string) error {
	if h == nil {
		return errdefs.Unavailable("netpool: no host netlink handle to delete %s", name)
	}
	defer h.Close()
	l, err := h.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil
		}
		return fmt.Errorf("netpool: find %s: %w", name, err)
	}
	if err := h.LinkDel(l); err != nil && !errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("netpool: delete %s: %w", name, err)
	}
	return nil
}

func ipnet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), 32)}
}

func notFoundIfMissing(err error, format string, args ...any) error {
	if errors.Is(err, os.ErrNotExist) {
		return errdefs.NotFound(format+": %v", append(args, err)...)
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// OpenTap opens a queue of the slot's tap (tap0) for a VMM: the descriptor
// is opened and attached on a thread inside the slot namespace, which is
// where the tap lives, so the VMM can stay in the host namespace and needs
// no CAP_NET_ADMIN (only the descriptor, e.g. as QEMU's -netdev tap,fd=N).
// The caller closes the file once the VMM has its own copy; the tap stays
// (it is persistent) until Release.
func (s *Slot) OpenTap() (*os.File, error) {
	if s.GuestPeer != "" {
		return nil, errdefs.FailedPrecondition("netpool: slot %d has a test veth, not a tap", s.Index)
	}
	var f *os.File
	err := s.Do(func() error {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open /dev/net/tun: %w", err)
		}
		ifr, err := unix.NewIfreq(tapName)
		if err != nil {
			unix.Close(fd)
			return err
		}
		// The flags must match the persistent tap's (no packet info
		// header); TUNSETIFF on an existing name attaches to it.
		ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
			unix.Close(fd)
			return fmt.Errorf("attach %s: %w", tapName, err)
		}
		f = os.NewFile(uintptr(fd), "tap:"+s.NetnsName)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("netpool: slot %d: %w", s.Index, err)
	}
	return f, nil
}
