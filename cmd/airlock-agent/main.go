//go:build linux

// Command airlock-agent is the guest's PID 1. It is built static and placed
// in the initramfs as /init; see package agent for what it does.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/airlock-dev/airlock/internal/guest/agent"
)

// version is stamped by release builds only. Development builds leave it
// empty and report the binary's own content hash: the initramfs (and so
// every baked template) is keyed by the agent's content, and a stamp that
// changes with every commit would make each rebuild invalidate them all.
var version = ""

func main() {
	agent.Version = version
	if agent.Version == "" {
		agent.Version = selfHash()
	}
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

// selfHash is "sha256:" and the first 12 hex digits of this binary.
func selfHash() string {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return "dev"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "dev"
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:12]
}
