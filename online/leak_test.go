package online

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hitflow/hitflow/pixel/pixelsim"
)

// Every source stopped or closed mid-run leaves no goroutine behind:
// the receivers, the server and its chunk maker.
func TestNoGoroutineLeft(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		Serve(ctx, l, pixelsim.Options{Hits: 1e9, RateMHz: 5, Seed: 1}, ServeOptions{Speed: 1})
	}()
	s, err := Dial(ctx, l.Addr().String(), Options{Memory: 1 << 20, Spool: t.TempDir(), Reconnect: true})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return s.Stats().Received > 100<<10 })
	s.Close()
	cancel()
	<-served

	name := filepath.Join(t.TempDir(), "growing.tpx3")
	os.WriteFile(name, rawRun(t, pixelsim.Options{Hits: 1000, Seed: 1}), 0o644)
	f, err := Follow(context.Background(), name, time.Hour, Options{})
	if err != nil {
		t.Fatal(err)
	}
	io.ReadFull(f, make([]byte, 100))
	f.Close()

	pr, pw := io.Pipe()
	defer pw.Close()
	p := Receive(context.Background(), "pipe", pr, Options{})
	pw.Write(make([]byte, 10))
	p.Stop()
	io.ReadAll(p)
	p.Close()
	pr.Close() // the pipe cannot be interrupted: its receiver ends with it
}
