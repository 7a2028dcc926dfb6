package bench

import (
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/internal/procstat"
)

// MemoryPart is one kind of an idle sandbox VMM's memory, as a mean over
// the idle sandboxes measured.
type MemoryPart struct {
	Part       string
	PSSKiB     int64
	PrivateKiB int64
}

// Parts of a QEMU process's memory, by mapping.
const (
	partGuestRAM  = "guest RAM (template base, copy-on-write)"
	partTCG       = "TCG translation cache"
	partHeap      = "QEMU heap and anonymous"
	partFiles     = "binaries and libraries"
	partOther     = "stacks, vdso, other"
	partGuestPriv = "guest RAM (other)"
)

// memoryPart names what a mapping of a QEMU process holds: the guest's
// RAM is the mapping of the sealed base memfd (or a memfd of its own for
// fork children); TCG's code buffer is the one writable and executable
// anonymous mapping; the rest is QEMU itself.
func memoryPart(m procstat.Mapping) string {
	switch {
	case strings.Contains(m.Name, "memfd:airlock-base"):
		return partGuestRAM
	case strings.Contains(m.Name, "memfd:"):
		return partGuestPriv
	case m.Name == "" && strings.HasPrefix(m.Perms, "rwx"):
		return partTCG
	case m.Name == "[heap]" || m.Name == "":
		return partHeap
	case strings.HasPrefix(m.Name, "/"):
		return partFiles
	}
	return partOther
}

// memoryBreakdown adds pid's mappings by part into sums (KiB).
func memoryBreakdown(pid int, sums map[string]*MemoryPart) error {
	ms, err := procstat.Mappings(pid)
	if err != nil {
		return err
	}
	for _, m := range ms {
		name := memoryPart(m)
		p := sums[name]
		if p == nil {
			p = &MemoryPart{Part: name}
			sums[name] = p
		}
		p.PSSKiB += m.PSS >> 10
		p.PrivateKiB += m.Private >> 10
	}
	return nil
}

// meanParts divides sums by n and orders them largest PSS first.
func meanParts(sums map[string]*MemoryPart, n int) []MemoryPart {
	out := make([]MemoryPart, 0, len(sums))
	for _, p := range sums {
		out = append(out, MemoryPart{Part: p.Part, PSSKiB: p.PSSKiB / int64(n), PrivateKiB: p.PrivateKiB / int64(n)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PSSKiB > out[j].PSSKiB })
	return out
}
