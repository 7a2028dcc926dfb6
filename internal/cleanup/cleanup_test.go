package cleanup

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestCleanRunsNewestFirstAndJoinsErrors(t *testing.T) {
	var s Stack
	var order []int
	errA, errC := errors.New("a"), errors.New("c")
	s.Add(func(context.Context) error { order = append(order, 1); return errA })
	s.AddFunc(func() { order = append(order, 2) })
	s.Add(func(context.Context) error { order = append(order, 3); return errC })
	if s.Len() != 3 {
		t.Fatalf("Len = %d, want 3", s.Len())
	}
	err := s.Clean(context.Background())
	if !slices.Equal(order, []int{3, 2, 1}) {
		t.Errorf("undo order %v, want [3 2 1]", order)
	}
	if !errors.Is(err, errA) || !errors.Is(err, errC) {
		t.Errorf("Clean = %v, want both errors joined", err)
	}
	if s.Len() != 0 {
		t.Errorf("Len after Clean = %d", s.Len())
	}
	if err := s.Clean(context.Background()); err != nil {
		t.Errorf("second Clean = %v, want nil", err)
	}
	if len(order) != 3 {
		t.Errorf("second Clean ran undos again: %v", order)
	}
}

func TestReleaseHandsOverEverything(t *testing.T) {
	var s Stack
	ran := false
	s.AddFunc(func() { ran = true })
	s.Release()
	if err := s.Clean(context.Background()); err != nil || ran {
		t.Errorf("after Release: Clean = %v, undo ran = %v", err, ran)
	}
}

func TestZeroStackCleansToNil(t *testing.T) {
	var s Stack
	if err := s.Clean(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A build that failed because its context ended still undoes what it
// made, and the undos still see the context's values.
func TestUndosOutliveTheCallersCancellation(t *testing.T) {
	type key struct{}
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, "v"), time.Hour)
	cancel()
	var s Stack
	var sawErr error
	var sawValue any
	var hasDeadline bool
	s.Add(func(ctx context.Context) error {
		sawErr, sawValue = ctx.Err(), ctx.Value(key{})
		_, hasDeadline = ctx.Deadline()
		return nil
	})
	if err := s.Clean(ctx); err != nil {
		t.Fatal(err)
	}
	if sawErr != nil || hasDeadline || sawValue != "v" {
		t.Errorf("undo saw err=%v deadline=%v value=%v; want no cancellation, no deadline, the value", sawErr, hasDeadline, sawValue)
	}
}
