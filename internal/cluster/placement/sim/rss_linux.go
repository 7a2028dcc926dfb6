//go:build linux

package sim

import "syscall"

// peakRSSMiB is the process's peak resident set size (Linux reports it
// in KiB).
func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}
