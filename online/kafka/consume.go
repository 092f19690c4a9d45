package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ReadOptions configure a Reader.
type ReadOptions struct {
	Target
	// Partition is the partition read (one detector); -1 takes the
	// topic's only partition and refuses a topic of several.
	Partition int32
	// FromEnd starts at the end of the partition (the data published
	// from now on) rather than at the oldest message kept; Offset, when
	// positive, at that offset (the next offset a stopped run reported;
	// 0 is the start).
	FromEnd bool
	Offset  int64
	// Idle ends the reading once no message has come for this long; 0
	// reads until the context is done.
	Idle time.Duration
}

// Reader reads the raw .tpx3 bytes of a partition's messages, in order,
// as one stream: each message must hold whole chunks (the 8-byte "TPX3"
// header and the packets its size says), which a readout's publisher
// sends as it reads them. A message that does not is skipped and counted,
// never passed on half.
type Reader struct {
	cl        *kgo.Client
	ctx       context.Context
	idle      time.Duration
	last      time.Time
	buf       []byte
	ends      []end // of the messages in buf
	topic     string
	partition int32

	mu       sync.Mutex
	deadline time.Time
	stopPoll context.CancelFunc // of the poll under way
	// Messages and bytes passed on, messages skipped as not raw data, and
	// the offset of the first message not passed on whole: where a next
	// run resumes.
	Messages, Bytes, Skipped, Next int64
	// FirstSkipped describes the first message skipped.
	FirstSkipped string
}

// NewReader connects and finds the partition.
func NewReader(ctx context.Context, opt ReadOptions) (*Reader, error) {
	probe, err := kgo.NewClient(kgo.SeedBrokers(opt.Brokers...))
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	n, err := partitions(pctx, probe, opt.Topic)
	cancel()
	probe.Close()
	switch {
	case err != nil:
		return nil, fmt.Errorf("kafka: topic %s at %s: %w", opt.Topic, strings.Join(opt.Brokers, ","), err)
	case n == 0:
		return nil, fmt.Errorf("kafka: no topic %s on the brokers", opt.Topic)
	case opt.Partition < 0 && n > 1:
		return nil, fmt.Errorf("kafka: topic %s has %d partitions (detectors): choose one with --partition", opt.Topic, n)
	case int(opt.Partition) >= n:
		return nil, fmt.Errorf("kafka: topic %s has no partition %d (it has %d)", opt.Topic, opt.Partition, n)
	}
	p := max(opt.Partition, 0)
	from := kgo.NewOffset().AtStart()
	switch {
	case opt.FromEnd && opt.Offset > 0:
		return nil, errors.New("kafka: start at the end or at an offset, not both")
	case opt.FromEnd:
		from = kgo.NewOffset().AtEnd()
	case opt.Offset > 0:
		from = kgo.NewOffset().At(opt.Offset)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(opt.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{opt.Topic: {p: from}}))
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	return &Reader{cl: cl, ctx: ctx, idle: opt.Idle, last: time.Now(), topic: opt.Topic, partition: p}, nil
}

// Name names the partition read, for messages.
func (r *Reader) Name() string {
	return fmt.Sprintf("kafka topic %s partition %d", r.topic, r.partition)
}

// end is where a message ends in buf, and the offset after it.
type end struct {
	at   int
	next int64
}

// Read passes on the bytes of the messages; io.EOF after Idle without
// one, the context's error once it is done, os.ErrDeadlineExceeded after
// the deadline of SetReadDeadline.
func (r *Reader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if err := r.poll(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	for len(r.ends) > 0 && r.ends[0].at <= n {
		r.Next = r.ends[0].next
		r.ends = r.ends[1:]
	}
	for i := range r.ends {
		r.ends[i].at -= n
	}
	if len(r.buf) == 0 {
		r.buf = r.buf[:0:0] // the fetch's memory goes
	}
	return n, nil
}

// poll waits for the next messages.
func (r *Reader) poll() error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	if r.idle > 0 {
		left := r.idle - time.Since(r.last)
		if left <= 0 {
			return io.EOF
		}
		ctx, cancel = context.WithTimeout(ctx, left)
		defer cancel()
	}
	r.mu.Lock()
	if !r.deadline.IsZero() && !time.Now().Before(r.deadline) {
		r.mu.Unlock()
		return os.ErrDeadlineExceeded
	}
	r.stopPoll = cancel
	r.mu.Unlock()
	fs := r.cl.PollFetches(ctx)
	r.mu.Lock()
	r.stopPoll = nil
	r.mu.Unlock()
	for _, e := range fs.Errors() {
		if !errors.Is(e.Err, context.DeadlineExceeded) && !errors.Is(e.Err, context.Canceled) {
			return fmt.Errorf("kafka: %s: %w", r.Name(), e.Err)
		}
	}
	fs.EachRecord(func(rec *kgo.Record) {
		r.last = time.Now()
		if why := notRaw(rec.Value); why != "" {
			if r.Skipped == 0 {
				r.FirstSkipped = fmt.Sprintf("offset %d: %s", rec.Offset, why)
			}
			r.Skipped++
			if len(r.ends) == 0 && len(r.buf) == 0 {
				r.Next = rec.Offset + 1
			} else {
				r.ends[len(r.ends)-1].next = rec.Offset + 1
			}
			return
		}
		r.Messages++
		r.Bytes += int64(len(rec.Value))
		r.buf = append(r.buf, rec.Value...)
		r.ends = append(r.ends, end{len(r.buf), rec.Offset + 1})
	})
	return nil
}

// SetReadDeadline makes a Read waiting for messages return
// os.ErrDeadlineExceeded once t has passed (online.Receive stops a
// stream so).
func (r *Reader) SetReadDeadline(t time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deadline = t
	if r.stopPoll != nil && !t.IsZero() && !time.Now().Before(t) {
		r.stopPoll()
	}
	return nil
}

// notRaw says why a message is not whole .tpx3 chunks, or "".
func notRaw(b []byte) string {
	if len(b) == 0 {
		return "empty"
	}
	for p := 0; p < len(b); {
		if len(b)-p < 8 || string(b[p:p+4]) != "TPX3" {
			return fmt.Sprintf("byte %d: no chunk header (\"TPX3\")", p)
		}
		size := int(binary.LittleEndian.Uint16(b[p+6:]))
		if size%8 != 0 || p+8+size > len(b) {
			return fmt.Sprintf("byte %d: a chunk of %d bytes in a message of %d", p, size, len(b))
		}
		p += 8 + size
	}
	return ""
}

// Close disconnects.
func (r *Reader) Close() { r.cl.Close() }
