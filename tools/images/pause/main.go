// Command pause is the pod sandbox's process: it holds the pod's namespaces open for its containers, and as PID 1
// of a shared PID namespace it reaps the orphans that would otherwise stay zombies. The local stack builds it
// because it cannot pull registry.k8s.io/pause.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getpid() != 1 {
		// Still useful (a test can run it), but orphans are reaped by whichever process is the namespace's PID 1.
		fmt.Fprintln(os.Stderr, "pause: not PID 1; orphaned processes will not be reaped here")
	}
	// As PID 1 the kernel delivers no signal this process has no handler for: Notify installs them.
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT)
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap collects every child that has exited: SIGCHLDs coalesce, so one signal may stand for several children.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		// 0: children remain, none has exited; ECHILD: no children at all.
		if err != nil || pid <= 0 {
			return
		}
	}
}
