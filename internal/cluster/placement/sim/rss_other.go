//go:build !linux

package sim

// peakRSSMiB is not measured off Linux.
func peakRSSMiB() float64 { return 0 }
