// Package kafka publishes clusters on Apache Kafka as ESS ev44 messages
// (format/ev44), as neutron and photon facilities carry detector events
// between machines, through the franz-go client: an idempotent producer
// (a retried batch is written once), lz4 or zstd compression, each
// detector's messages on one partition (keyed by the source name) so that
// they stay in order.
package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hitflow/hitflow/format/ev44"
	"github.com/hitflow/hitflow/pixel"
)

// Target is a kafka://BROKER[,BROKER...]/TOPIC address.
type Target struct {
	Brokers []string
	Topic   string
}

// IsTarget reports whether s names a Kafka target.
func IsTarget(s string) bool { return strings.HasPrefix(s, "kafka://") }

// ParseTarget reads kafka://HOST:PORT[,HOST:PORT...]/TOPIC.
func ParseTarget(s string) (Target, error) {
	rest, ok := strings.CutPrefix(s, "kafka://")
	hosts, topic, slash := strings.Cut(rest, "/")
	bad := func(why string) (Target, error) {
		return Target{}, fmt.Errorf("%q: %s: want kafka://HOST:PORT[,HOST:PORT...]/TOPIC", s, why)
	}
	if !ok || !slash || topic == "" || strings.ContainsAny(topic, "/?#") {
		return bad("no topic")
	}
	var t Target
	for h := range strings.SplitSeq(hosts, ",") {
		u, err := url.Parse("//" + h)
		if err != nil || u.Hostname() == "" || u.Port() == "" || u.User != nil || u.Path != "" {
			return bad(fmt.Sprintf("broker %q is not HOST:PORT", h))
		}
		t.Brokers = append(t.Brokers, h)
	}
	t.Topic = topic
	return t, nil
}

// Compressions are the codecs a Publisher takes by name.
var Compressions = map[string]kgo.CompressionCodec{"zstd": kgo.ZstdCompression(), "lz4": kgo.Lz4Compression(), "none": kgo.NoCompression()}

// Options configure a Publisher.
type Options struct {
	Target
	Compression string // a key of Compressions; "" is zstd
	Events      ev44.Options
	// Timeout bounds how long a message may wait for the brokers (its
	// retries included) before the run fails; 0 is DefaultTimeout. A
	// negative one sets no bound: the run waits for the brokers as long
	// as it takes, and only stops when its context is done or its
	// process is interrupted a second time.
	Timeout time.Duration
}

// Publisher publishes batches of clusters; a pipeline.ClusterSink.
type Publisher struct {
	cl      *kgo.Client
	enc     *ev44.Encoder
	key     []byte
	topic   string
	timeout time.Duration
	mu      sync.Mutex
	err     error // the first failed delivery
	// Messages and bytes published (acknowledged).
	Messages, Bytes int64
}

// NewPublisher connects to the brokers and checks that the topic is
// there: a run does not start to find out at its end.
func NewPublisher(ctx context.Context, opt Options) (*Publisher, error) {
	codec, ok := Compressions[cmp.Or(opt.Compression, "zstd")]
	if !ok {
		return nil, fmt.Errorf("kafka: compression %q: want zstd, lz4 or none", opt.Compression)
	}
	enc, err := ev44.NewEncoder(opt.Events)
	if err != nil {
		return nil, err
	}
	timeout := opt.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	opts := []kgo.Opt{kgo.SeedBrokers(opt.Brokers...), kgo.DefaultProduceTopic(opt.Topic), kgo.ProducerBatchCompression(codec)}
	if timeout > 0 {
		opts = append(opts, kgo.RecordDeliveryTimeout(timeout)) // the client's own default: no bound
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	p := &Publisher{cl: cl, enc: enc, key: []byte(opt.Events.Source), topic: opt.Topic, timeout: timeout}
	if err := p.check(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	return p, nil
}

// DefaultTimeout is a Publisher's delivery timeout when Options give none.
const DefaultTimeout = 30 * time.Second

// check asks the brokers for the topic's partitions; a run without a
// bound on its deliveries still needs a broker to start.
func (p *Publisher) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(max(p.timeout, 0), DefaultTimeout))
	defer cancel()
	if err := p.cl.Ping(ctx); err != nil {
		return fmt.Errorf("kafka: no broker answers at %s: %w", strings.Join(p.cl.OptValue(kgo.SeedBrokers).([]string), ","), err)
	}
	parts, err := partitions(ctx, p.cl, p.topic)
	if err != nil {
		return fmt.Errorf("kafka: topic %s: %w", p.topic, err)
	}
	if parts == 0 {
		return fmt.Errorf("kafka: no topic %s on the brokers (create it first)", p.topic)
	}
	return nil
}

// Write encodes the clusters and publishes every full message.
func (p *Publisher) Write(c *pixel.Clusters) error {
	if err := p.failed(); err != nil {
		return err
	}
	return p.enc.Encode(c, p.send)
}

// NeedsMembers is false: an event is a cluster's centroid and time.
func (*Publisher) NeedsMembers() bool { return false }

// send hands a message to the client, which batches and retries it.
func (p *Publisher) send(msg []byte) error {
	// The encoder reuses its buffer; the client keeps the record until
	// it is acknowledged.
	r := &kgo.Record{Key: p.key, Value: append([]byte(nil), msg...)}
	p.cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			if p.err == nil {
				p.err = fmt.Errorf("kafka: publishing to %s: %w", p.topic, err)
			}
			return
		}
		p.Messages++
		p.Bytes += int64(len(r.Value))
	})
	return p.failed()
}

func (p *Publisher) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Flush publishes the message being filled and waits until every message
// is acknowledged.
func (p *Publisher) Flush() error {
	if err := p.enc.Flush(p.send); err != nil {
		return err
	}
	ctx := context.Background()
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout+5*time.Second)
		defer cancel()
	}
	if err := p.cl.Flush(ctx); err != nil {
		return fmt.Errorf("kafka: waiting for the brokers: %w", err)
	}
	return p.failed()
}

// Close flushes and disconnects.
func (p *Publisher) Close() error {
	err := p.Flush()
	p.cl.Close()
	return err
}

// Abort disconnects without waiting: what was published stays.
func (p *Publisher) Abort() { p.cl.Close() }

// Skipped is the clusters not published: centroid off the grid, before
// the first pulse, a time of flight beyond an int32 of ns.
func (p *Publisher) Skipped() (outside, noPulse, tooLate int64) {
	return p.enc.Outside, p.enc.NoPulse, p.enc.TooLate
}

// partitions is the number of partitions of the topic, 0 when the
// brokers do not have it.
func partitions(ctx context.Context, cl *kgo.Client, topic string) (int, error) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, err
	}
	for _, rt := range resp.Topics {
		if rt.Topic == nil || *rt.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				return 0, nil
			}
			return 0, err
		}
		return len(rt.Partitions), nil
	}
	return 0, nil
}
