package kafka

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A consumer group shares the partitions of a raw topic (a detector
// each) among its members, and moves a partition to another member when
// one joins, leaves or dies. Each member clusters its partitions and
// publishes their events in Kafka transactions: a transaction holds the
// events published since the last one, each partition's state (the hits
// of the clusters still open, the sorter's and the decoder's, in a
// compacted topic of the group's own) and the input offsets, committed
// together or not at all. A member that takes a partition over reads the
// state the last transaction committed and goes on from its offset, so
// the events published (read with isolation read_committed, as
// facilities' consumers do) are those of one process clustering each
// partition from start to end: none lost, none twice. Transactions, not a
// key consumers deduplicate on, because the consumers are the facility's
// existing file writers and live reduction, which read ev44 as it is.

// GroupOptions configure a member of a consumer group.
type GroupOptions struct {
	In          Target // raw .tpx3 chunks, a detector per partition
	Out         Target // the ev44 events
	Group       string
	Compression string // a key of Compressions; "" is zstd
	Processing  Processing
	// Commit is the time between transactions: how long events wait to
	// be readable; 0 is DefaultCommit.
	Commit time.Duration
	// Idle ends the member once no message has come for this long: its
	// partitions' open clusters are finished, as at the end of a file,
	// and committed. 0: until the context is done, when what was
	// clustered is committed without finishing the open clusters, for
	// the next member to go on.
	Idle time.Duration
	// Session is how long a member may go silent before its partitions
	// move to the others, and the longest a transaction may stay open;
	// 0 is DefaultSession.
	Session time.Duration
	// Logf, when set, hears of partitions taken and handed over.
	Logf func(format string, args ...any)
	// Progress, when set, hears the member's counts so far and how many
	// partitions it holds, after every transaction that ends and every
	// new client (see GroupProgress).
	Progress func(st GroupStats, held int)
}

// The defaults of GroupOptions.
const (
	DefaultCommit  = time.Second
	DefaultSession = 10 * time.Second
)

// maxState is the largest state record: a partition's open hits, 14
// bytes each, at the rate of a busy quad detector over its reorder
// window.
const maxState = 64 << 20

// GroupStats count what a member did; the counts of events are those of
// committed transactions.
type GroupStats struct {
	Partitions      []int32 // taken at some time
	Messages, Bytes int64   // raw messages clustered
	Skipped, Missed int64   // messages not raw .tpx3 chunks; offsets without a message (expired, or transaction markers)
	Clusters        int64   // published as events
	EventMessages   int64   // ev44 messages
	Commits, Aborts int64   // transactions (one of nothing is not counted)
	Restored        int64   // partitions taken over from a state
	Restarts        int64   // new clients after the Kafka client failed
	Left            int64   // clusters not published (see ev44.Encoder)
	// Hits later than the reorder window: near a hand-over they may join
	// clusters otherwise than in one process (see pixel.Checkpoint).
	Late int64
}

// giveUp is how many session timeouts a member goes on starting new
// clients without a transaction ended before it fails: long enough for a
// broker to restart, short enough that a member that cannot work says so.
const giveUp = 5

// clientError is a failure of the member's Kafka client, not of the data
// or the settings: a transaction the brokers refused, events or a state
// not delivered, fetches or offsets the brokers did not answer. The
// transactional producer may be unusable after it (franz-go says no error
// of End can be retried), so the member starts a new client and goes on
// from the committed states; a broker's failover can cause it
// (OUT_OF_ORDER_SEQUENCE_NUMBER for a produce request handled out of
// order), and nothing of the failed transaction is committed.
type clientError struct{ error }

func (e clientError) Unwrap() error { return e.error }

// groupName is what Kafka allows in a topic name, which the state
// topic's takes from the group's: 1 to 200 of a-z, A-Z, 0-9, '.', '_'
// and '-'. Not a regular expression: compiling one of a bounded
// repetition cost every start of the program 2 ms.
func groupName(s string) bool {
	if len(s) < 1 || len(s) > 200 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// StateTopic is the topic of the partitions' states of a group reading
// topic in.
func StateTopic(in, group string) string { return in + "." + group + ".state" }

// member is a running member.
type member struct {
	opt        GroupOptions
	codec      kgo.CompressionCodec
	parts      int // of the input topic
	stateTopic string
	sess       *kgo.GroupTransactSession
	tasks      map[int32]*task

	mu       sync.Mutex
	assigned map[int32]bool
	revoked  map[int32]bool
	failed   error // the first failed delivery

	stats   GroupStats
	pending GroupStats // of the open transaction
	ended   time.Time  // the last transaction ended, or the member started
}

// RunGroup runs a member of the group until its context is done or, with
// Idle, its partitions go quiet. When its Kafka client fails it starts a
// new one, for up to giveUp session timeouts without a transaction ended.
func RunGroup(ctx context.Context, opt GroupOptions) (GroupStats, error) {
	if !groupName(opt.Group) {
		return GroupStats{}, fmt.Errorf("kafka: group %q: use letters, digits, '.', '_' and '-' (it names the group's state topic)", opt.Group)
	}
	codec, ok := Compressions[cmp.Or(opt.Compression, "zstd")]
	if !ok {
		return GroupStats{}, fmt.Errorf("kafka: compression %q: want zstd, lz4 or none", opt.Compression)
	}
	if opt.In.Topic == opt.Out.Topic {
		return GroupStats{}, fmt.Errorf("kafka: the events would go to %s, the raw data's topic", opt.In.Topic)
	}
	opt.Commit = positiveOr(opt.Commit, DefaultCommit)
	opt.Session = positiveOr(opt.Session, DefaultSession)
	m := &member{opt: opt, codec: codec, stateTopic: StateTopic(opt.In.Topic, opt.Group), tasks: map[int32]*task{},
		assigned: map[int32]bool{}, revoked: map[int32]bool{}}
	if err := m.prepareTopics(ctx); err != nil {
		return GroupStats{}, err
	}
	id := make([]byte, 6)
	rand.Read(id)
	host, _ := os.Hostname()
	// The same transactional id for each client: a new one fences the
	// last, whose open transaction the brokers then abort at once.
	txnID := fmt.Sprintf("hitflow-%s-%s-%d-%s", opt.Group, host, os.Getpid(), hex.EncodeToString(id))
	done := func(err error) (GroupStats, error) {
		slices.Sort(m.stats.Partitions)
		return m.stats, err
	}
	m.ended = time.Now()
	for wait := time.Duration(0); ; {
		began := m.ended
		err := m.session(ctx, txnID)
		if err == nil || ctx.Err() != nil || !errors.As(err, new(clientError)) || time.Since(m.ended) > giveUp*opt.Session {
			return done(err)
		}
		// Waits double while no transaction ends, up to a session.
		if !m.ended.Equal(began) || wait == 0 {
			wait = opt.Session / 10
		} else {
			wait = min(2*wait, opt.Session)
		}
		m.stats.Restarts++
		m.logf("kafka: group %s: %v; a new client goes on from the committed states in %v", opt.Group, err, wait)
		m.forget()
		m.progress()
		select {
		case <-ctx.Done():
			return done(err)
		case <-time.After(wait):
		}
	}
}

// session runs the member with a new client until it ends or fails. A
// transaction left open by a failure is aborted, best effort, so that no
// other member waits for it to time out before taking its partitions.
func (m *member) session(ctx context.Context, txnID string) error {
	opt := m.opt
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(opt.In.Brokers...),
		kgo.ConsumerGroup(opt.Group),
		kgo.ConsumeTopics(opt.In.Topic),
		kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(opt.Session),
		kgo.SessionTimeout(opt.Session),
		kgo.HeartbeatInterval(opt.Session/5),
		kgo.RebalanceTimeout(opt.Session),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ProducerBatchCompression(m.codec),
		kgo.ProducerBatchMaxBytes(maxState),
		kgo.RecordDeliveryTimeout(DefaultTimeout), // as a Publisher's: a lost broker fails the client, and another starts
		kgo.RecordPartitioner(partitioner{m.stateTopic, kgo.StickyKeyPartitioner(nil)}),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) { m.membership(a[opt.In.Topic], true) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, r map[string][]int32) { m.membership(r[opt.In.Topic], false) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, l map[string][]int32) { m.membership(l[opt.In.Topic], false) }),
	)
	if err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	m.sess = sess
	defer sess.Close()
	err = m.run(ctx)
	if errors.As(err, new(clientError)) {
		end, cancel := context.WithTimeout(context.WithoutCancel(ctx), opt.Session)
		sess.End(end, kgo.TryAbort)
		cancel()
	}
	return err
}

// forget drops what the member held when its client failed: the next
// client takes its partitions from their committed states.
func (m *member) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.tasks)
	clear(m.assigned)
	clear(m.revoked)
	m.failed = nil
	m.pending = GroupStats{}
}

func (m *member) logf(format string, args ...any) {
	if m.opt.Logf != nil {
		m.opt.Logf(format, args...)
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func positiveOr(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// partitioner puts the state records on the partition of their own
// (set on the record) and the events by their key, the source.
type partitioner struct {
	state string
	keyed kgo.Partitioner
}

func (p partitioner) ForTopic(topic string) kgo.TopicPartitioner {
	if topic == p.state {
		return kgo.ManualPartitioner().ForTopic(topic)
	}
	return p.keyed.ForTopic(topic)
}

// membership notes partitions assigned or taken away.
func (m *member) membership(parts []int32, assigned bool) {
	if len(parts) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range parts {
		if assigned {
			m.assigned[p] = true
			delete(m.revoked, p)
		} else {
			delete(m.assigned, p)
			m.revoked[p] = true
		}
	}
	m.logf("kafka: group %s: partitions %v %s", m.opt.Group, parts, map[bool]string{true: "taken", false: "handed over"}[assigned])
}

// prepareTopics checks the input and output topics and creates the
// state topic when the group is new.
func (m *member) prepareTopics(ctx context.Context) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(m.opt.In.Brokers...))
	if err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		return fmt.Errorf("kafka: no broker answers at %s: %w", strings.Join(m.opt.In.Brokers, ","), err)
	}
	for _, t := range []string{m.opt.In.Topic, m.opt.Out.Topic} {
		n, err := partitions(ctx, cl, t)
		switch {
		case err != nil:
			return fmt.Errorf("kafka: topic %s: %w", t, err)
		case n == 0:
			return fmt.Errorf("kafka: no topic %s on the brokers (create it first)", t)
		}
		if t == m.opt.In.Topic {
			m.parts = n
		}
	}
	n, err := partitions(ctx, cl, m.stateTopic)
	switch {
	case err != nil:
		return fmt.Errorf("kafka: topic %s: %w", m.stateTopic, err)
	case n > 0 && n < m.parts:
		return fmt.Errorf("kafka: the group's state topic %s has %d partitions, %s has %d", m.stateTopic, n, m.opt.In.Topic, m.parts)
	case n > 0:
		return nil
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = m.stateTopic, int32(m.parts), -1
	for k, v := range map[string]string{"cleanup.policy": "compact", "max.message.bytes": strconv.Itoa(maxState)} {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		t.Configs = append(t.Configs, c)
	}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err == nil && len(resp.Topics) == 1 {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("kafka: creating the group's state topic %s: %w", m.stateTopic, err)
	}
	return nil
}

// run consumes, clusters and commits, a transaction at a time.
func (m *member) run(ctx context.Context) error {
	last := time.Now() // of a message, or of a partition taken
	for {
		if err := m.sess.Begin(); err != nil {
			return clientError{fmt.Errorf("kafka: %w", err)}
		}
		deadline := time.Now().Add(m.opt.Commit)
		idle := false
		for ctx.Err() == nil && time.Now().Before(deadline) && !idle {
			took, err := m.takeOver(ctx)
			if err != nil {
				return err
			}
			until := deadline
			if m.opt.Idle > 0 {
				until = minTime(until, last.Add(m.opt.Idle))
			}
			got, err := m.poll(ctx, until)
			if err != nil {
				return err
			}
			if got || took {
				last = time.Now()
			}
			idle = m.opt.Idle > 0 && time.Since(last) >= m.opt.Idle
		}
		// Past a cancellation the transaction still ends, in its own
		// time: what was clustered is committed.
		end, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.opt.Session+5*time.Second)
		committed, err := m.commit(end, idle)
		cancel()
		switch {
		case err != nil || ctx.Err() != nil || idle && committed:
			return err
		case idle:
			// The finished clusters went with an aborted transaction (a
			// rebalance as the other members leave): the partitions
			// still held are taken again from their states and
			// finished once quiet, or no one would finish them.
			last = time.Now()
		}
	}
}

// takeOver makes the tasks of the partitions newly assigned, from their
// states, and reports whether there were any.
func (m *member) takeOver(ctx context.Context) (bool, error) {
	m.mu.Lock()
	var parts []int32
	for p := range m.assigned {
		if m.tasks[p] == nil {
			parts = append(parts, p)
		}
	}
	m.mu.Unlock()
	for _, p := range parts {
		if _, err := m.task(ctx, p); err != nil {
			return false, err
		}
	}
	return len(parts) > 0, nil
}

// poll clusters the messages that come until the deadline, reporting
// whether any came.
func (m *member) poll(ctx context.Context, deadline time.Time) (bool, error) {
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	fs := m.sess.PollFetches(pctx)
	for _, e := range fs.Errors() {
		if !errors.Is(e.Err, context.DeadlineExceeded) && !errors.Is(e.Err, context.Canceled) {
			return false, clientError{fmt.Errorf("kafka: topic %s partition %d: %w", e.Topic, e.Partition, e.Err)}
		}
	}
	// The partitions' tasks are taken first, one by one; their messages
	// are then clustered each on a goroutine of its own.
	var work []kgo.FetchTopicPartition
	var tasks []*task
	var err error
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if err != nil || len(p.Records) == 0 {
			return
		}
		var t *task
		if t, err = m.task(ctx, p.Partition); err == nil {
			work, tasks = append(work, p), append(tasks, t)
		}
	})
	if err != nil {
		return false, err
	}
	errs := make([]error, len(work))
	var wg sync.WaitGroup
	for i, p := range work {
		wg.Go(func() { errs[i] = m.feed(tasks[i], p.Records) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	return len(work) > 0, m.deliveryErr()
}

// feed clusters a partition's messages.
func (m *member) feed(t *task, recs []*kgo.Record) error {
	emit := m.emitter(t)
	for _, r := range recs {
		if r.Offset < t.next {
			continue // in the state already
		}
		if err := t.feed(r.Offset, r.Value, emit); err != nil {
			return fmt.Errorf("kafka: topic %s: %w", m.opt.In.Topic, err)
		}
	}
	return nil
}

// emitter publishes a task's ev44 messages in the open transaction.
func (m *member) emitter(t *task) func([]byte) error {
	key := []byte(t.source)
	return func(msg []byte) error {
		r := &kgo.Record{Topic: m.opt.Out.Topic, Key: key, Value: append([]byte(nil), msg...)}
		t.member.EventMessages++
		m.sess.Produce(context.Background(), r, func(_ *kgo.Record, err error) {
			if err != nil {
				m.mu.Lock()
				if m.failed == nil {
					m.failed = clientError{fmt.Errorf("kafka: publishing to %s: %w", m.opt.Out.Topic, err)}
				}
				m.mu.Unlock()
			}
		})
		return m.deliveryErr()
	}
}

func (m *member) deliveryErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failed
}

// task returns partition p's task, taking the partition over from its
// committed state the first time.
func (m *member) task(ctx context.Context, p int32) (*task, error) {
	if t := m.tasks[p]; t != nil {
		return t, nil
	}
	offset, meta, err := m.committed(ctx, p)
	if err != nil {
		return nil, err
	}
	var st *state
	if offset >= 0 {
		at, ok := strings.CutPrefix(meta, statePrefix)
		stateOffset, err := strconv.ParseInt(at, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("kafka: group %s committed offset %d of %s partition %d without a hitflow state (metadata %q): hitflow goes on only from its own commits; use another group name", m.opt.Group, offset, m.opt.In.Topic, p, meta)
		}
		if st, err = m.readState(ctx, p, stateOffset); err != nil {
			return nil, err
		}
		if st.part != p || st.next != offset {
			return nil, fmt.Errorf("kafka: the state at %s partition %d offset %d is of partition %d up to offset %d, the group committed offset %d", m.stateTopic, p, stateOffset, st.part, st.next, offset)
		}
		if want := m.opt.Processing.settings(); st.settings != want {
			return nil, fmt.Errorf("kafka: partition %d of group %s was clustered with other settings (%s) than this member's (%s): give every member the same, or use a new group", p, m.opt.Group, st.settings, want)
		}
		m.stats.Restored++
	}
	t, err := newTask(&m.opt.Processing, p, m.parts, st)
	if err != nil {
		return nil, err
	}
	// The clusters the state's open hits close already go out with this
	// transaction.
	if err := t.publish(m.emitter(t)); err != nil {
		return nil, err
	}
	m.tasks[p] = t
	if !slices.Contains(m.stats.Partitions, p) {
		m.stats.Partitions = append(m.stats.Partitions, p)
	}
	return t, nil
}

// statePrefix opens the metadata of a committed offset: the offset of the
// partition's state that goes with it follows.
const statePrefix = "hitflow state at "

// committed asks for the group's committed offset of partition p and its
// metadata; -1 when there is none. An offset in a transaction not yet
// ended is waited for.
func (m *member) committed(ctx context.Context, p int32) (int64, string, error) {
	for {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group = m.opt.Group
		req.RequireStable = true
		t := kmsg.NewOffsetFetchRequestTopic()
		t.Topic, t.Partitions = m.opt.In.Topic, []int32{p}
		req.Topics = append(req.Topics, t)
		resp, err := req.RequestWith(ctx, m.sess.Client())
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil {
			for _, g := range resp.Groups {
				if err = kerr.ErrorForCode(g.ErrorCode); err != nil {
					break
				}
				for _, rt := range g.Topics {
					for _, rp := range rt.Partitions {
						if rp.Partition == p {
							if err = kerr.ErrorForCode(rp.ErrorCode); err == nil {
								return rp.Offset, deref(rp.Metadata), nil
							}
						}
					}
				}
			}
			for _, rt := range resp.Topics {
				for _, rp := range rt.Partitions {
					if rp.Partition == p && err == nil {
						if err = kerr.ErrorForCode(rp.ErrorCode); err == nil {
							return rp.Offset, deref(rp.Metadata), nil
						}
					}
				}
			}
			if err == nil {
				return -1, "", nil
			}
		}
		if !errors.Is(err, kerr.UnstableOffsetCommit) && !errors.Is(err, kerr.CoordinatorLoadInProgress) && !errors.Is(err, kerr.NotCoordinator) {
			return 0, "", clientError{fmt.Errorf("kafka: the committed offset of group %s on %s partition %d: %w", m.opt.Group, m.opt.In.Topic, p, err)}
		}
		select { // a dead member's transaction, until it times out
		case <-ctx.Done():
			return 0, "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// readState reads the state record of partition p at offset.
func (m *member) readState(ctx context.Context, p int32, offset int64) (*state, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(m.opt.In.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{m.stateTopic: {p: kgo.NewOffset().At(offset)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxPartitionBytes(maxState), kgo.FetchMaxBytes(maxState))
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	where := fmt.Sprintf("the state of partition %d at %s partition %d offset %d", p, m.stateTopic, p, offset)
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, clientError{fmt.Errorf("kafka: %s: not found: %w", where, err)}
		}
		for _, e := range fs.Errors() {
			return nil, clientError{fmt.Errorf("kafka: %s: %w", where, e.Err)}
		}
		for _, r := range fs.Records() {
			if r.Offset < offset {
				continue
			}
			if r.Offset > offset {
				return nil, fmt.Errorf("kafka: %s: gone from the brokers", where)
			}
			st, err := readState(r.Value)
			if err != nil {
				return nil, fmt.Errorf("kafka: %s: %w", where, err)
			}
			return st, nil
		}
	}
}

// commit ends the transaction: with finish, the open clusters first; then
// each partition's state, with its offset, and the events. A transaction
// the brokers abort (a partition handed over meanwhile) drops every task:
// they go on from the committed states. It reports whether the brokers
// committed it.
func (m *member) commit(ctx context.Context, finish bool) (committed bool, err error) {
	// The partitions whose state changed: an idle one costs nothing.
	parts := make([]int32, 0, len(m.tasks))
	for p, t := range m.tasks {
		if t.changed || finish {
			parts = append(parts, p)
		}
	}
	slices.Sort(parts)
	stateAt := map[int32]int64{}
	var buf []byte
	for _, p := range parts {
		t := m.tasks[p]
		emit := m.emitter(t)
		if finish {
			if err := t.finish(emit); err != nil {
				return false, err
			}
		}
		if buf, err = t.checkpoint(emit, buf[:0]); err != nil {
			return false, err
		}
		m.pending.add(&t.member)
		t.member = GroupStats{}
		r := &kgo.Record{Topic: m.stateTopic, Partition: p, Key: []byte(strconv.Itoa(int(p))), Value: append([]byte(nil), buf...)}
		if err := m.sess.ProduceSync(ctx, r).FirstErr(); err != nil {
			return false, clientError{fmt.Errorf("kafka: writing the state of partition %d to %s: %w", p, m.stateTopic, err)}
		}
		stateAt[p] = r.Offset
		t.changed = false
	}
	set := func(req *kmsg.TxnOffsetCommitRequest) error {
		m.offsets(req, parts, stateAt)
		return nil
	}
	committed, err = m.sess.End(kgo.PreTxnCommitFnContext(ctx, set), kgo.TryCommit)
	if err == nil {
		err = m.deliveryErr()
	}
	if err != nil {
		return false, clientError{fmt.Errorf("kafka: ending a transaction: %w", err)}
	}
	// A transaction of nothing (no partition changed: franz-go then asks
	// nothing of the brokers) is neither counted nor progress, which a new
	// client must show within giveUp session timeouts.
	empty := committed && len(parts) == 0
	if !empty {
		m.ended = time.Now()
	}
	m.mu.Lock()
	if !committed {
		m.stats.Aborts++
		clear(m.tasks)
	} else {
		if !empty {
			m.stats.Commits++
		}
		m.stats.add(&m.pending)
		for p := range m.revoked {
			delete(m.tasks, p)
		}
	}
	clear(m.revoked)
	m.pending = GroupStats{}
	m.mu.Unlock()
	m.progress()
	return committed, nil
}

// progress tells Progress the counts so far.
func (m *member) progress() {
	if m.opt.Progress != nil {
		st := m.stats
		st.Partitions = slices.Sorted(slices.Values(st.Partitions))
		m.opt.Progress(st, len(m.tasks))
	}
}

// offsets makes req commit the input's offsets of the partitions parts,
// each with the offset of its state in stateAt, and no other: the client
// lists every partition polled in the transaction, and one whose state
// this transaction does not write (its messages already in the state,
// say) would be committed without one, which no member could take over
// from. Left out, it stays at its last commit. Every partition held whose
// state changed is in parts, those without a message in this transaction
// too (finished).
func (m *member) offsets(req *kmsg.TxnOffsetCommitRequest, parts []int32, stateAt map[int32]int64) {
	req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.TxnOffsetCommitRequestTopic) bool { return t.Topic == m.opt.In.Topic })
	topic := kmsg.NewTxnOffsetCommitRequestTopic()
	topic.Topic = m.opt.In.Topic
	for _, p := range parts {
		t := m.tasks[p]
		if t.next < 0 {
			continue
		}
		part := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		part.Partition, part.LeaderEpoch, part.Offset = p, -1, t.next
		part.Metadata = kmsg.StringPtr(statePrefix + strconv.FormatInt(stateAt[p], 10))
		topic.Partitions = append(topic.Partitions, part)
	}
	if len(topic.Partitions) > 0 {
		req.Topics = append(req.Topics, topic)
	}
}

// add adds the counts of an open transaction.
func (s *GroupStats) add(o *GroupStats) {
	s.Messages += o.Messages
	s.Bytes += o.Bytes
	s.Skipped += o.Skipped
	s.Missed += o.Missed
	s.EventMessages += o.EventMessages
	s.Clusters += o.Clusters
	s.Left += o.Left
	s.Late += o.Late
}
