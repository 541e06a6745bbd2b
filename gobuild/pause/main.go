// Command pause is the sandbox process of a Kubernetes pod: it holds the pod's
// namespaces open and does nothing else. It does what Kubernetes'
// build/pause/linux/pause.c does, written anew in Go: as PID 1 of the pod's PID
// namespace it reaps every orphaned child that is reparented to it (so
// zombies never pile up when the pod shares its PID namespace), and it exits
// 0 on SIGINT or SIGTERM (the runtime's stop). It warns, and still runs, when
// it is not PID 1. `-v` prints its version.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is stamped by gobuild/pause/recipe.sh.
var version = "unknown"

func main() {
	// Like pause.c: -v anywhere prints the version; other arguments are ignored.
	for _, arg := range os.Args[1:] {
		if arg == "-v" {
			fmt.Printf("pause (kubemix) %s\n", version)
			return
		}
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "Warning: pause should be the first process")
	}
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	// A child may have ended before Notify took effect: reap once up front.
	reap()
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		fmt.Fprintf(os.Stderr, "Shutting down, got signal: %s\n", sig)
		os.Exit(0)
	}
}

// reap collects every child that has ended. Signals coalesce (two children
// ending together raise one SIGCHLD), so it loops until none is left.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
