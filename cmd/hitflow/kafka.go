package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/hitflow/hitflow/format/ev44"
	"github.com/hitflow/hitflow/online/kafka"
	"github.com/hitflow/hitflow/pixel/analysis"
)

// The defaults of the Kafka flags.
const (
	defaultSource      = "timepix3"
	defaultCompression = "zstd"
)

// kafkaFlags say how clusters are published with -o kafka://.
type kafkaFlags struct {
	source      string
	scale       int
	compression string
	start       string
	timeout     time.Duration
}

func (k *kafkaFlags) add(f *pflag.FlagSet) {
	f.StringVar(&k.source, "source", defaultSource, "with -o kafka://: the source_name of the ev44 messages (the detector)")
	f.IntVar(&k.scale, "super-resolution", 1, "with -o kafka://: pixel_id bins across each pixel (the centroid's bin, y*width*N + x)")
	f.StringVar(&k.compression, "compression", defaultCompression, "with -o kafka://: zstd, lz4 or none")
	f.StringVar(&k.start, "start", "", "with -o kafka://: the wall-clock time of ToA 0, RFC 3339 (default: when the run starts)")
	f.DurationVar(&k.timeout, "delivery-timeout", kafka.DefaultTimeout, "with -o kafka://: how long a message may wait for the brokers, retries included, before the run fails (at least 1s); 0 waits as long as it takes (a live input meanwhile fills --buffer and --spool)")
}

// check refuses the flags without a Kafka output, and the outputs a
// topic cannot take.
func (k *kafkaFlags) check(publish bool, o clusterOptions) error {
	if !publish {
		if k.source != defaultSource || k.scale != 1 || k.compression != defaultCompression || k.start != "" || k.timeout != kafka.DefaultTimeout {
			return usagef("--source, --super-resolution, --compression, --start and --delivery-timeout are for -o kafka://BROKER/TOPIC")
		}
		return nil
	}
	if _, err := kafka.ParseTarget(o.out); err != nil {
		return usageError{err}
	}
	switch {
	case o.live.rotate != "":
		return usagef("--rotate writes numbered files; a Kafka topic takes the whole run")
	case o.shapes:
		return usagef("--shapes adds columns to files; ev44 messages carry each cluster's pixel and time only (--keep chooses the clusters published)")
	case k.source == "":
		return usagef("--source must name the detector")
	}
	if k.timeout != 0 && k.timeout < time.Second {
		return usagef("--delivery-timeout %v: want 0 (no bound) or at least 1s", k.timeout)
	}
	if _, ok := kafka.Compressions[k.compression]; !ok {
		return usagef("--compression %q: want zstd, lz4 or none", k.compression)
	}
	if k.start != "" {
		if _, err := time.Parse(time.RFC3339Nano, k.start); err != nil {
			return usagef("--start %q: want an RFC 3339 time like 2026-11-27T08:00:00Z", k.start)
		}
	}
	return nil
}

// publisher connects to the brokers of target.
func (k *kafkaFlags) publisher(ctx context.Context, target string, width, height int) (*kafka.Publisher, error) {
	t, err := kafka.ParseTarget(target)
	if err != nil {
		return nil, usageError{err}
	}
	grid, err := analysis.NewGrid(width, height, k.scale)
	if err != nil {
		return nil, usagef("--super-resolution: %w", err)
	}
	start := time.Now()
	if k.start != "" {
		start, _ = time.Parse(time.RFC3339Nano, k.start) // checked
	}
	timeout := k.timeout
	if timeout == 0 {
		timeout = -1 // no bound
	}
	return kafka.NewPublisher(ctx, kafka.Options{Target: t, Compression: k.compression, Timeout: timeout,
		Events: ev44.Options{Source: k.source, Grid: grid, Start: start}})
}

// publishedLine says what went to the topic and what did not.
func publishedLine(p *kafka.Publisher, target string) string {
	outside, noPulse, tooLate := p.Skipped()
	return fmt.Sprintf("hitflow: published %d ev44 messages (%d bytes) to %s; clusters not published: %d off the sensor, %d before the first pulse, %d with a time of flight over 2.1 s",
		p.Messages, p.Bytes, target, outside, noPulse, tooLate)
}

// sameTopic refuses -o kafka:// naming the topic a kafka:// input reads
// on a broker they share: the events would land among the raw data.
func sameTopic(out string, inputs []string) error {
	o, err := kafka.ParseTarget(out)
	if err != nil {
		return nil // not a topic, or refused where it is parsed
	}
	for _, in := range inputs {
		t, err := kafka.ParseTarget(in)
		if err != nil || t.Topic != o.Topic {
			continue
		}
		for _, b := range t.Brokers {
			if slices.Contains(o.Brokers, b) {
				return usagef("-o %s is the input %s: the events would land among the raw data", out, in)
			}
		}
	}
	return nil
}
