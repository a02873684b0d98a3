// Command model-server is the local stack's test workload: it behaves like one host of a multi-host model server as
// far as the controller can see (readiness, a drain on SIGTERM, a crash on demand) and logs each of those moments as
// one JSON line on stdout, so that tests can read from the container logs when and in which order things happened.
//
// Environment: PORT (default 8080), DRAIN_SECONDS (default 0), READY_AFTER_SECONDS (default 0), and POD_NAME,
// POD_NAMESPACE, NODE_NAME from the downward API (only echoed in the logs). EVENTS_FILE: a file that every line is
// appended to as well, on a volume the test reads from the host: a kubelet's log stream can end before a container's
// last line, and the log goes with the pod.
//
// HTTP: GET /readyz is 200 once ready and not draining, else 503; GET /healthz is 200; POST /crash exits with code 1.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// entry is one log line. Fields keep this order in the JSON; the optional ones appear only on the events they fit.
type entry struct {
	Time      string `json:"time"`
	Event     string `json:"event"`
	Pod       string `json:"pod"`
	Namespace string `json:"namespace,omitempty"`
	Node      string `json:"node,omitempty"`
	Port      int    `json:"port,omitempty"`
	PID       int    `json:"pid,omitempty"`
	// Pointers: 0 is a real value for these (no drain, ready at once).
	DrainSeconds      *float64 `json:"drainSeconds,omitempty"`
	ReadyAfterSeconds *float64 `json:"readyAfterSeconds,omitempty"`
	DrainedMs         *int64   `json:"drainedMs,omitempty"`
	Remote            string   `json:"remote,omitempty"`
}

var (
	pod     string
	logLock sync.Mutex
	// events is EVENTS_FILE, opened for appending; nil without it.
	events *os.File
)

// logEvent writes one line with a single write to the unbuffered os.Stdout: once it returns the line has left the
// process, so an exit right after it loses nothing, and lines of concurrent events never interleave.
func logEvent(e entry) {
	e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	e.Pod = pod
	line, err := json.Marshal(e)
	if err != nil {
		panic(err) // a struct of strings and numbers always marshals
	}
	logLock.Lock()
	defer logLock.Unlock()
	line = append(line, '\n')
	_, _ = os.Stdout.Write(line)
	if events != nil {
		_, _ = events.Write(line)
	}
}

// seconds reads a non-negative number of seconds (fractions allowed) from the environment.
func seconds(name string) float64 {
	raw := os.Getenv(name)
	if raw == "" {
		return 0
	}
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil || v < 0 || v > 24*3600 {
		fail(fmt.Sprintf("%s=%q: expected a number of seconds from 0 to 86400", name, raw))
	}
	return v
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "model-server:", msg)
	os.Exit(2)
}

// state is what /readyz answers from.
type state struct {
	mu       sync.Mutex
	ready    bool
	draining bool
}

func (s *state) serving() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready && !s.draining
}

// becomeReady reports whether this call made the server ready: not when a drain began first.
func (s *state) becomeReady() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining || s.ready {
		return false
	}
	s.ready = true
	return true
}

func (s *state) startDrain() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.draining = true
}

func main() {
	pod = os.Getenv("POD_NAME")
	if pod == "" {
		// Outside Kubernetes (a test on the host); in a pod the hostname is the pod's name anyway.
		pod, _ = os.Hostname()
	}
	if path := os.Getenv("EVENTS_FILE"); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fail(fmt.Sprintf("EVENTS_FILE=%q: %v", path, err))
		}
		events = f
	}
	port := 8080
	if raw := os.Getenv("PORT"); raw != "" {
		p, err := strconv.Atoi(raw)
		if err != nil || p < 1 || p > 65535 {
			fail(fmt.Sprintf("PORT=%q: expected a port number from 1 to 65535", raw))
		}
		port = p
	}
	drain := seconds("DRAIN_SECONDS")
	readyAfter := seconds("READY_AFTER_SECONDS")

	// Before anything else, so that a SIGTERM during start-up is a drain like any other, not the default exit.
	terms := make(chan os.Signal, 4)
	signal.Notify(terms, syscall.SIGTERM)

	listener, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "model-server:", err)
		os.Exit(1)
	}
	var st state
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !st.serving() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("POST /crash", func(w http.ResponseWriter, r *http.Request) {
		logEvent(entry{Event: "crash", Remote: r.RemoteAddr})
		// Answer before exiting, so that the caller sees its request taken rather than a reset connection.
		w.Header().Set("Connection", "close")
		_, _ = fmt.Fprintln(w, "crashing")
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		os.Exit(1)
	})
	go func() {
		err := http.Serve(listener, mux)
		if !errors.Is(err, net.ErrClosed) {
			fmt.Fprintln(os.Stderr, "model-server:", err)
			os.Exit(1)
		}
	}()

	logEvent(entry{
		Event:             "started",
		Namespace:         os.Getenv("POD_NAMESPACE"),
		Node:              os.Getenv("NODE_NAME"),
		Port:              port,
		PID:               os.Getpid(),
		DrainSeconds:      &drain,
		ReadyAfterSeconds: &readyAfter,
	})
	// Like a model loading its weights: ready only after a while, if READY_AFTER_SECONDS says so.
	time.AfterFunc(time.Duration(readyAfter*float64(time.Second)), func() {
		if st.becomeReady() {
			logEvent(entry{Event: "ready"})
		}
	})

	<-terms
	// Further SIGTERMs land in the channel and are never read: the drain already under way is not cut short.
	st.startDrain()
	drainStart := time.Now()
	logEvent(entry{Event: "sigterm"})
	time.Sleep(time.Duration(drain * float64(time.Second)))
	drained := time.Since(drainStart).Milliseconds()
	logEvent(entry{Event: "exit", DrainedMs: &drained})
	os.Exit(0)
}
