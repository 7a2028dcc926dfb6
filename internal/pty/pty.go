package pty

import "fmt"

// Limits on a window size: a terminal far larger than any screen is a
// caller's mistake, and a zero size breaks full-screen programs.
const (
	MaxRows = 1000
	MaxCols = 1000
)

// CheckSize refuses a window size outside 1..MaxRows x 1..MaxCols.
func CheckSize(rows, cols uint32) error {
	if rows < 1 || rows > MaxRows || cols < 1 || cols > MaxCols {
		return fmt.Errorf("window size %dx%d: want rows 1..%d and cols 1..%d", rows, cols, MaxRows, MaxCols)
	}
	return nil
}

// EOF is the byte a terminal in canonical mode reads as end of input
// (VEOF, ^D): what "close stdin" means for a process on a terminal,
// whose stdin cannot be closed without hanging it up.
const EOF = 0x04
