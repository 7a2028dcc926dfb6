package clock

import (
	"testing"
	"time"
)

func TestManualMovesOnlyWhenTold(t *testing.T) {
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	c := NewManual(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now = %v, want %v", got, start)
	}
	if got := c.Advance(1500 * time.Millisecond); !got.Equal(start.Add(1500 * time.Millisecond)) {
		t.Fatalf("Advance returned %v", got)
	}
	c.Set(start.Add(time.Hour))
	if got := c.Now(); !got.Equal(start.Add(time.Hour)) {
		t.Fatalf("after Set, Now = %v", got)
	}
}

func TestManualRefusesToGoBack(t *testing.T) {
	c := NewManual(time.Unix(100, 0))
	for name, f := range map[string]func(){
		"Set":     func() { c.Set(time.Unix(99, 0)) },
		"Advance": func() { c.Advance(-time.Second) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s backwards did not panic", name)
				}
			}()
			f()
		}()
	}
	if got := c.Now(); !got.Equal(time.Unix(100, 0)) {
		t.Fatalf("a refused move changed the clock to %v", got)
	}
}

func TestRealIsWallClock(t *testing.T) {
	var c Clock = Real{}
	before := time.Now()
	got := c.Now()
	if got.Before(before) || got.Sub(before) > time.Minute {
		t.Fatalf("Real.Now = %v, time.Now was %v", got, before)
	}
}
