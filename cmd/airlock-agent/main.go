//go:build linux

// Command airlock-agent is the guest's PID 1. It is built static and placed
// in the initramfs as /init; see package agent for what it does.
package main

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/airlock-dev/airlock/internal/guest/agent"
)

var version = "dev"

func main() {
	agent.Version = version
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "airlock-agent runs only as a VM's init (PID 1)")
		os.Exit(2)
	}
	if _, err := agent.Boot(); err != nil {
		// Keep running: the host's health check will report the VM as
		// broken; exiting would panic the kernel and hide the reason.
		log.Error("boot", "err", err)
	}
	srv := agent.NewServer(log)
	for {
		port, err := agent.FindPort(agent.PortName, 30*time.Second)
		if err != nil {
			log.Error("agent port", "err", err)
			continue
		}
		if err := srv.ServePort(port); err != nil {
			log.Error("serve", "err", err)
			time.Sleep(100 * time.Millisecond)
		}
	}
}
