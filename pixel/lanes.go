package pixel

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultWindow is the number of hits per lane window.
const DefaultWindow = 1 << 16

// handOverRoom is how many clusters a lane leaves free at the front of its
// window's storage, for the clusters the assembler merges in at the
// window's start (see handOver): on gamma data they are one or two more
// than the lane's own clusters they replace in most windows.
const handOverRoom = 32

// windowsAhead is how many windows may be in flight beyond one a worker:
// the one the caller fills and one ready for the next free worker, or
// waiting for the assembler. More only add memory in motion, each
// window's hits and clusters (3.6 MB on gamma rays) passing through the
// caches: lanes on two workers ran the paper's gamma rays and tracks
// about an eighth faster with one window a worker plus two than with two
// a worker plus two (medians of eight alternated rounds).
const windowsAhead = 2

// firstCheckpoint is where a window's first state snapshot is taken; the
// following ones are at twice, four times ... that many hits.
const firstCheckpoint = 256

// Lanes clusters a time-ordered stream on several goroutines (the paper's
// data lanes with temporal splitting) and returns exactly the clusters of
// the sequential [Clusterer], features and order included.
//
// The stream is cut into windows of a fixed number of hits, dealt to
// goroutines that each cluster one window from an empty state. A window's
// start differs from the sequential run only through the clusters open at
// its border, so its lane is repaired by the lane before it: once that lane
// has clustered its own window, it goes on into the next one with its
// exact state and compares its open clusters with the ones the next lane
// snapshotted at checkpoints (256, 512, 1024 ... hits in). At the first
// checkpoint where they are equal, both lanes would cluster the rest
// identically; the earlier lane emits every cluster closed by then and
// stops, and the next lane's clusters closed before that point are
// dropped. Open clusters at the border usually close within dt, so the
// repair costs a few hundred hits per window. A cluster longer than a
// window (a hot pixel, a grazing ion) keeps the earlier lane going across
// windows, and the lanes it passes are discarded: correct for any input, at
// the sequential speed while it lasts.
//
// This holds for all three cluster definitions, including the incremental
// ones, where a border can change clusters far from it. On a stream with
// late hits (see [Clusterer.Add]) the lanes cluster them as well as
// possible, which is not always as the sequential clusterer does.
//
// A Lanes is driven from one goroutine like a Clusterer; after Flush it
// can take a new stream.
type Lanes struct {
	cfg    Config
	size   int // hits per window
	check0 int // first checkpoint
	foldAt int // the clusterers' (0: their default); tests fold small buffers
	keep   bool
	cpu    chan struct{} // a token per worker, held while clustering
	slots  chan struct{} // a token per window in flight, for bounded memory
	wg     sync.WaitGroup
	// The assembler puts the clusters in order in assembled, and the
	// caller takes them from there: into an empty output by exchanging
	// storage, so that the storage of both stays in use without growing
	// anew. Most windows' clusters are not copied at all: their lane's
	// storage itself goes to the caller (see handOver in assemble).
	assembledMu   sync.Mutex
	assembled     Clusters
	assemblerDone chan struct{} // closed when the chain's assembler has finished
	// The assembler holds at most about a window's hits in clusters (a
	// window of one-hit clusters) before it waits for the caller to take
	// them: otherwise, while the writer holds up the caller, the windows
	// in flight pile up in one batch, and every batch the caller passes
	// around grows to that (end to end on gamma, 55 K page faults more
	// than sequentially; the trial of auto mode cost a third of a run).
	// The assembler waits on taken, after a token on wake, which the
	// caller looks at wherever it blocks.
	taken *sync.Cond
	wake  chan struct{}
	// Free clusterers and window storage, kept for reuse, the last kept
	// handed out first (see freeList): a sync.Pool would drop them at
	// every garbage collection, and their buffers (a quarter of a
	// megabyte of pixel matrix each) would be made again.
	clusterers freeList[*Clusterer]
	storage    freeList[*windowData]
	segments   freeList[*segment]
	spaces     freeList[*groupSpace] // one a worker (see work)
	cur        *window               // being filled
	last       *window               // last dispatched
	position
	out Clusters  // Add's batch
	dst *Clusters // where the clusters go in the current call
	// The first error of a lane's clusterer (see Err).
	errMu sync.Mutex
	err   error
}

// window is a run of hits and what its lane found.
type window struct {
	*windowData
	refs      atomic.Int32 // users of windowData; recycled at zero
	base      int64        // arrival number of the first hit
	freshDone chan struct{}
	next      *window // the following window, nil at the end of the stream
	nextReady chan struct{}
	ext       chan *segment // the lane's clusters after its window
	abort     chan struct{} // closed when another lane has covered this window
}

// windowData is the storage of a window, recycled.
type windowData struct {
	hits        Hits
	checkpoints []int     // snapshot offsets
	snaps       [][]int64 // open state at each checkpoint
	fresh       Clusters  // clusters the lane emitted within the window
}

// acquire takes a reference to w's data, unless it is already recycled.
func (w *window) acquire() bool {
	for {
		r := w.refs.Load()
		if r == 0 {
			return false
		}
		if w.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// release drops a reference; the last one recycles the data.
func (l *Lanes) release(w *window) {
	if w.refs.Add(-1) == 0 {
		l.storage.put(w.windowData)
	}
}

// segment is what a lane emitted while reading the hits of window w (nil:
// the end of the stream) after its own window.
type segment struct {
	w    *window
	out  Clusters
	cut  int64   // arrival number where the lanes met, or -1
	open []int64 // roots of the clusters open there, ascending
}

// NewLanes returns a parallel clusterer with the given number of workers
// (GOMAXPROCS if < 1) and hits per window ([DefaultWindow] if < 1).
func NewLanes(cfg Config, workers, windowHits int) (*Lanes, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	if windowHits < 1 {
		windowHits = DefaultWindow
	}
	l := &Lanes{
		cfg: cfg, size: windowHits, check0: firstCheckpoint,
		cpu:      make(chan struct{}, workers),
		slots:    make(chan struct{}, workers+windowsAhead),
		position: startPosition,
	}
	l.assembled.Reset()
	l.taken, l.wake = sync.NewCond(&l.assembledMu), make(chan struct{}, 1)
	// Windows in flight, plus one lane each on its way out.
	l.clusterers.max = cap(l.slots) + workers
	l.storage.max = cap(l.slots) + workers
	l.segments.max = cap(l.slots) + workers
	l.spaces.max = workers
	l.out.Reset()
	return l, nil
}

// KeepMembers makes the emitted [Clusters] carry the hits of each cluster.
// Call it before the first hit.
func (l *Lanes) KeepMembers(keep bool) { l.keep = keep }

// Add takes a batch of time-ordered hits and returns the clusters finished
// so far, valid until the next call. It blocks while the lanes are full.
func (l *Lanes) Add(h *Hits) *Clusters {
	l.out.Reset()
	l.AddTo(&l.out, h)
	return &l.out
}

// AddTo is Add appending the finished clusters to dst (a reset batch, or
// one holding earlier clusters of the stream), for a caller that keeps
// them: it saves a copy of every cluster. An empty dst may be given the
// lanes' storage in exchange for its own, so keep no slices of it.
func (l *Lanes) AddTo(dst *Clusters, h *Hits) {
	l.dst = dst
	l.stats.Hits += int64(h.Len())
	width, height := l.cfg.Width, l.cfg.Height
	for i := 0; i < h.Len(); {
		if int(h.X[i]) >= width || int(h.Y[i]) >= height {
			l.stats.OutOfRange++
			i++
			continue
		}
		if l.cur == nil {
			l.acquireSlot()
			l.cur = l.newWindow()
		}
		j, restart := inSensorRun(h, i, min(h.Len(), i+l.size-l.cur.hits.Len()), &l.cfg, &l.position)
		l.cur.hits.AppendRange(h, i, j)
		i = j
		switch {
		case restart: // as at the end of a stream, then afresh
			l.endChain()
			l.restartClock()
		case l.cur.hits.Len() == l.size:
			l.dispatch()
		}
	}
	l.take()
	l.stats.Clustered = l.stats.Hits - l.stats.OutOfRange
}

// Err returns the first error of a lane (see [Stream]): a
// [MemberLimitError] from a lane whose clusters held too many hits.
func (l *Lanes) Err() error {
	l.errMu.Lock()
	defer l.errMu.Unlock()
	return l.err
}

// noteErr keeps the first error of a lane's clusterer.
func (l *Lanes) noteErr(c *Clusterer) {
	if err := c.Err(); err != nil {
		l.errMu.Lock()
		if l.err == nil {
			l.err = err
		}
		l.errMu.Unlock()
	}
}

// Flush ends the stream and returns every remaining cluster.
func (l *Lanes) Flush() *Clusters {
	l.out.Reset()
	l.FlushTo(&l.out)
	return &l.out
}

// FlushTo is Flush appending the clusters to dst (see AddTo).
func (l *Lanes) FlushTo(dst *Clusters) {
	l.dst = dst
	l.endChain()
}

// Close ends the lanes' goroutines, dropping the clusters not yet
// flushed: for a stream abandoned before its end. After Close the Lanes
// can take a new stream, as after Flush.
func (l *Lanes) Close() {
	var drop Clusters
	drop.Reset()
	l.FlushTo(&drop)
	l.dst = nil
}

// endChain clusters the windows so far to the end and collects all their
// clusters. An empty current window (a restart at its first hit) is kept
// for the hits after.
func (l *Lanes) endChain() {
	if l.cur != nil && l.cur.hits.Len() > 0 {
		l.dispatch()
	}
	if l.last != nil {
		close(l.last.nextReady)
		l.waitTaking(l.assemblerDone)
		l.wg.Wait()
		l.last = nil
		l.take()
	}
}

func (l *Lanes) newWindow() *window {
	d, ok := l.storage.get()
	if !ok {
		d = &windowData{}
	}
	d.hits.Reset()
	d.hits.Reserve(l.size)
	d.fresh.Reset()
	if !l.keep { // room for the assembler's handOver, dropped otherwise
		d.fresh.extend(handOverRoom)
		for i := range handOverRoom {
			d.fresh.root[i] = math.MinInt64
		}
	}
	d.checkpoints = d.checkpoints[:0]
	w := &window{
		windowData: d,
		base:       l.nextSeq,
		freshDone:  make(chan struct{}),
		nextReady:  make(chan struct{}),
		ext:        make(chan *segment, 1),
		abort:      make(chan struct{}),
	}
	w.refs.Store(2) // its lane and the assembler
	return w
}

// dispatch starts the lane of the filled window.
func (l *Lanes) dispatch() {
	w := l.cur
	l.cur = nil
	l.nextSeq += int64(w.hits.Len())
	for at := l.check0; at < w.hits.Len(); at *= 2 {
		w.checkpoints = append(w.checkpoints, at)
	}
	if l.last == nil {
		l.assemblerDone = make(chan struct{})
		go l.assemble(w, l.assemblerDone)
	} else {
		l.last.next = w
		close(l.last.nextReady)
	}
	l.last = w
	l.wg.Add(1)
	go l.run(w)
}

// inSensorRun returns the end of the run of hits from i (inside the
// sensor) up to at most end that stay inside it and do not restart the
// stream (see [Stats.Restarts]), counting the late ones against the latest
// time p.now, which it advances. The hit at the end restarts the stream if
// restart is true.
func inSensorRun(h *Hits, i, end int, cfg *Config, p *position) (j int, restart bool) {
	// Over sliced columns with the time and count in locals: through the
	// pointers every hit stored both.
	xs, ys, ts := h.X[i:end], h.Y[i:end], h.ToA[i:end]
	ys, ts = ys[:len(xs)], ts[:len(xs)]
	width, height, gap := cfg.Width, cfg.Height, cfg.RestartGap()
	t0, n := p.now, p.stats.Late
	k := 0
	for ; k < len(xs) && int(xs[k]) < width && int(ys[k]) < height; k++ {
		t := ts[k]
		if t >= t0 {
			t0 = t
			continue
		}
		if clockReset(t0, t, gap) {
			restart = true
			break
		}
		n++
	}
	p.now, p.stats.Late = t0, n
	return i + k, restart
}

// acquireSlot waits for room for one more window, which the assembler
// frees, taking its clusters when it waits for that.
func (l *Lanes) acquireSlot() {
	for {
		select {
		case l.slots <- struct{}{}:
			return
		case <-l.wake:
			l.take()
		}
	}
}

// waitTaking waits for done to be closed, taking the assembler's
// clusters when it waits for that.
func (l *Lanes) waitTaking(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-l.wake:
			l.take()
		}
	}
}

// take moves the assembled clusters to the output.
func (l *Lanes) take() {
	l.assembledMu.Lock()
	defer l.assembledMu.Unlock()
	a := &l.assembled
	if a.Len() == 0 {
		return
	}
	defer l.taken.Broadcast()
	l.stats.Clusters += int64(a.Len())
	if l.dst.Len() == 0 {
		*l.dst, *a = *a, *l.dst
	} else {
		l.dst.appendAll(a)
	}
	a.Reset()
}

// run is a lane: it clusters window w from an empty state, taking
// snapshots at the checkpoints, then carries on into the next windows.
//
// A lane drives its Clusterer through this contract, and nothing else:
//   - restart(base) starts it on a window whose first hit has arrival
//     number base, so that roots and keys are those of the whole stream;
//   - AddTo and FlushTo cluster and emit as for any caller, in key order;
//   - openState describes the clusters later hits can still join; two
//     clusterers with equal states at one point of the stream cluster the
//     rest of it identically (the lanes' meeting test);
//   - openBefore tells a cluster open since before a window, which no
//     snapshot of that window's lane can hold;
//   - emit(out, emitAllClosed) emits every closed cluster where the lanes
//     meet, the open ones being the next lane's (see assembler).
//
// The worker's group space is lent to the clusterer while it works (see
// work and rest).
func (l *Lanes) run(w *window) {
	defer l.wg.Done()
	c, ok := l.clusterers.get()
	if !ok {
		c, _ = NewClusterer(l.cfg) // validated in NewLanes
	}
	l.work(c)
	c.KeepMembers(l.keep)
	c.restart(w.base)
	if l.foldAt > 0 {
		c.foldAt = l.foldAt
	}
	from := 0
	for k, at := range w.checkpoints {
		c.AddTo(&w.fresh, w.hits.view(from, at))
		from = at
		if k == len(w.snaps) {
			w.snaps = append(w.snaps, nil)
		}
		var ok bool
		if w.snaps[k], ok = c.openState(w.snaps[k][:0]); !ok {
			// Folded hits (in a window of millions): no snapshot from
			// here on can be compared.
			w.checkpoints = w.checkpoints[:k]
			break
		}
	}
	c.AddTo(&w.fresh, w.hits.view(from, w.hits.Len()))
	l.noteErr(c)
	close(w.freshDone)
	l.release(w)
	l.rest(c)
	l.extend(w, c)
	l.clusterers.put(c)
}

// work waits for a worker to cluster with c, and lends c the worker's
// group space: the one most recently given back, likely still in the
// caches of the core, rather than c's own (see groupSpace).
func (l *Lanes) work(c *Clusterer) {
	l.cpu <- struct{}{}
	sp, ok := l.spaces.get()
	if !ok {
		sp = newGroupSpace(c)
	}
	c.group.lent = sp
}

// rest ends c's work: the worker and its group space are free.
func (l *Lanes) rest(c *Clusterer) {
	l.spaces.put(c.group.lent)
	c.group.lent = nil
	<-l.cpu
}

// extend goes on from the end of w's lane into the following windows until
// its open clusters equal a snapshot of the lane there, or the stream ends.
func (l *Lanes) extend(w *window, c *Clusterer) {
	defer func() {
		select {
		case <-w.abort: // nobody reads w.ext: take back what it holds
			select {
			case seg := <-w.ext:
				l.recycle(seg)
			default:
			}
		default:
		}
		close(w.ext)
	}()
	var state []int64
	for cur := w; ; {
		select {
		case <-cur.nextReady:
		case <-w.abort:
			return
		}
		nx := cur.next
		if nx != nil {
			select {
			case <-nx.freshDone:
			case <-w.abort:
				return
			}
			if !nx.acquire() { // the chain has passed it: w is discarded
				return
			}
		}
		seg := l.newSegment(nx)
		l.work(c)
		if nx == nil {
			c.FlushTo(&seg.out)
		} else {
			from := 0
			for j, at := range nx.checkpoints {
				c.AddTo(&seg.out, nx.hits.view(from, at))
				from = at
				// nx's lane started at nx.base: a cluster open here since
				// before cannot be in its snapshot. Not listing it spares
				// a cluster longer than many windows a listing of all its
				// hits at every checkpoint (quadratic time).
				if c.openBefore(nx.base) {
					continue
				}
				var ok bool
				if state, ok = c.openState(state[:0]); ok && slices.Equal(state, nx.snaps[j]) {
					c.emit(&seg.out, emitAllClosed)
					seg.cut, seg.open = nx.base+int64(at), roots(state)
					break
				}
			}
			if seg.cut < 0 {
				c.AddTo(&seg.out, nx.hits.view(from, nx.hits.Len()))
			}
			l.noteErr(c)
			l.release(nx)
		}
		l.rest(c)
		last := nx == nil || seg.cut >= 0 // seg is the assembler's once sent
		select {
		case w.ext <- seg:
		case <-w.abort:
			l.recycle(seg)
			return
		}
		if last {
			return
		}
		cur = nx
	}
}

// newSegment returns an empty segment for window w. Segments are
// recycled: a lane going on across many windows (a hot pixel) fills one
// per window, with room for as many clusters as the window has hits.
func (l *Lanes) newSegment(w *window) *segment {
	seg, ok := l.segments.get()
	if !ok {
		seg = &segment{}
	}
	seg.w, seg.cut, seg.open = w, -1, nil
	seg.out.Reset()
	return seg
}

// recycle keeps seg for reuse.
func (l *Lanes) recycle(seg *segment) { l.segments.put(seg) }

// roots returns the roots of an open state.
func roots(state []int64) []int64 {
	var r []int64
	for i := 0; i < len(state); i += int(state[i]) + 1 {
		r = append(r, state[i+1])
	}
	return r
}

// assemble follows the chain of lanes whose clusters are exact, from the
// first window, and appends their clusters to l.assembled in key order
// (the sequential output order) with their final ids; it closes done at
// the end of the chain.
func (l *Lanes) assemble(link *window, done chan<- struct{}) {
	defer close(done)
	a := &assembler{l: l, out: &l.assembled, cut: -1}
	a.pend.Reset()
	for link != nil {
		<-link.freshDone
		if !a.handOver(&link.fresh) {
			a.push(&link.fresh)
		}
		l.release(link)
		<-l.slots
		next := (*window)(nil)
		for seg := range link.ext {
			if seg.cut < 0 {
				a.push(&seg.out)
				if seg.w != nil { // the lane covered that window
					close(seg.w.abort)
					l.release(seg.w)
					<-l.slots
				}
				l.recycle(seg)
				continue
			}
			a.meet(seg)
			next = seg.w
			l.recycle(seg)
		}
		link = next
	}
	l.assembledMu.Lock()
	l.appendNumbered(a.out, &a.pend, a.pendAt, a.pend.Len())
	l.assembledMu.Unlock()
}

// assembler puts the lanes' clusters in the sequential order. Its contract
// with the clusterers of the lanes: every cluster carries its root (the
// arrival number of its first hit, the same in every lane that saw that
// hit) and its key (its place in the sequential output); a lane emits its
// clusters in key order, and where it meets the next lane (seg.cut, see
// extend) it has emitted exactly the clusters closed before that hit, the
// ones open there (seg.open) being the next lane's to emit. So a cluster
// of the next lane is exact when its root is at or after the cut, or when
// it is one of those open at the cut; its others (begun before its window
// with part of their hits) are dropped. What the earlier lane emitted
// inside the next window waits in pend, to be merged by key with the next
// lane's clusters.
type assembler struct {
	l      *Lanes
	out    *Clusters // l.assembled, under l.assembledMu
	pend   Clusters  // earlier lanes' clusters not yet sent, by key
	pendAt int       // the first of pend not yet sent
	cut    int64     // arrival number where the last two lanes met, or -1
	open   []int64   // roots of the clusters open there, ascending
	head   Clusters  // handOver's scratch
	merged Clusters  // meet's scratch
}

// keep reports whether cluster i of src, from the lane after the cut, is
// exact.
func (a *assembler) keep(src *Clusters, i int) bool {
	r := src.root[i]
	if r >= a.cut {
		return true
	}
	_, found := slices.BinarySearch(a.open, r)
	return found
}

// merge gives emit, in key order, the kept clusters of src[0, n) and the
// pending clusters due before each, in runs; with rest, the pending
// clusters after them too. Past the cut, where most of a window is, the
// roots are compared without the call.
func (a *assembler) merge(src *Clusters, n int, rest bool, emit func(from *Clusters, i, j int)) {
	for i := 0; i < n; {
		if !a.keep(src, i) {
			i++
			continue
		}
		p := a.pendAt
		for p < a.pend.Len() && a.pend.key[p] < src.key[i] {
			p++
		}
		if p > a.pendAt {
			emit(&a.pend, a.pendAt, p)
			a.pendAt = p
		}
		// The run ends at the next cluster dropped or due after a pending
		// one.
		j := i + 1
		for j < n && (p == a.pend.Len() || src.key[j] < a.pend.key[p]) && (src.root[j] >= a.cut || a.keep(src, j)) {
			j++
		}
		emit(src, i, j)
		i = j
	}
	if rest && a.pendAt < a.pend.Len() {
		emit(&a.pend, a.pendAt, a.pend.Len())
		a.pendAt = a.pend.Len()
	}
}

// push sends the kept clusters of src, merging in the pending ones, once
// the caller has taken what out holds beyond a window's worth.
func (a *assembler) push(src *Clusters) {
	l := a.l
	l.assembledMu.Lock()
	defer l.assembledMu.Unlock()
	for a.out.Len() >= l.size {
		a.wakeCaller()
	}
	a.merge(src, src.Len(), false, func(from *Clusters, i, j int) { l.appendNumbered(a.out, from, i, j) })
}

// wakeCaller waits, under l.assembledMu, for the caller to take the
// assembled clusters.
func (a *assembler) wakeCaller() {
	select {
	case a.l.wake <- struct{}{}:
	default:
	}
	a.l.taken.Wait()
}

// handOver is push for a window's own clusters, without their copy
// (most of the work of assembling, and as much memory traffic as the
// lane's own stores): once the caller has taken what out holds, it gives
// out src's storage itself, which the caller takes in exchange for its
// own. The kept clusters from the first of src's tail that is all kept and
// due after every pending one go as they are; the head (the pending
// clusters merged with src's kept ones before that) is written over src's
// clusters just before the tail, which it usually fits (the lanes meet
// within the window's first few hundred hits). It reports false, having
// done nothing, when members are kept (their offsets would need
// rewriting) or the head does not fit.
func (a *assembler) handOver(src *Clusters) bool {
	l := a.l
	n := src.Len()
	if l.keep || n == 0 {
		return false
	}
	// Past the cut (nearly all of the window) without the call, as in
	// merge: calls for every cluster took 2 % of a run on gamma rays.
	tail, root := n, src.root[:n]
	for tail > 0 && (root[tail-1] >= a.cut || a.keep(src, tail-1)) {
		tail--
	}
	if a.pendAt < a.pend.Len() {
		for last := a.pend.key[a.pend.Len()-1]; tail < n && src.key[tail] < last; tail++ {
		}
	}
	h := a.pend.Len() - a.pendAt
	for i := range tail {
		if a.keep(src, i) {
			h++
		}
	}
	if tail == n || h > tail {
		return false
	}
	l.assembledMu.Lock()
	defer l.assembledMu.Unlock()
	// The caller takes the clusters it finds in its own batch when that
	// is empty; into one holding others, it copies them. Waiting for it to
	// take the last window's before handing over this one spares the
	// copy, while the lanes go on with the windows in flight.
	for a.out.Len() > 0 {
		a.wakeCaller()
	}
	a.head.Reset()
	a.merge(src, tail, true, a.head.appendRange)
	// Appended to a view of src ending before the tail, the head lands in
	// src's own storage, where it has room.
	at := src.slice(tail-h, tail)
	at.truncate(0)
	at.appendAll(&a.head)
	storage := *a.out
	*a.out = src.slice(tail-h, n)
	for k := range a.out.ID {
		a.out.ID[k] = l.nextID
		l.nextID++
	}
	*src = storage
	return true
}

// meet takes the segment where a lane met the next one: what the lane
// emitted there joins the earlier clusters still pending, to be merged
// with the next lane's, and the meeting point decides which of those are
// exact.
func (a *assembler) meet(seg *segment) {
	a.merged.Reset()
	a.merge(&seg.out, seg.out.Len(), true, a.merged.appendRange)
	a.pend, a.merged, a.pendAt = a.merged, a.pend, 0
	a.cut, a.open = seg.cut, seg.open
}

// freeList keeps things for reuse, up to max of them, and hands out the
// one kept last: its memory is the likeliest to be still in a cache. (A
// channel hands out the one kept longest ago.)
type freeList[T any] struct {
	mu    sync.Mutex
	items []T
	max   int
}

func (f *freeList[T]) get() (v T, ok bool) {
	f.mu.Lock()
	if n := len(f.items); n > 0 {
		v, ok = f.items[n-1], true
		f.items = f.items[:n-1]
	}
	f.mu.Unlock()
	return v, ok
}

func (f *freeList[T]) put(v T) {
	f.mu.Lock()
	if len(f.items) < f.max {
		f.items = append(f.items, v)
	}
	f.mu.Unlock()
}
