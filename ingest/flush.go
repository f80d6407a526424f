package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Record kinds: the first byte of a WAL payload says which row follows.
const (
	kindEvent byte = iota + 1
	kindAssignment
	kindSession
	kindPageView
	kindOrder
)

func encodeRecord(kind byte, row any) (record, error) {
	b, err := json.Marshal(row)
	if err != nil {
		return record{}, fmt.Errorf("ingest: encode row: %w", err)
	}
	return record{kind: kind, body: b}, nil
}

// decodeInto appends the row of one WAL payload to b.
func decodeInto(b *Batch, p []byte) error {
	if len(p) < 2 {
		return fmt.Errorf("ingest: short WAL record")
	}
	body := p[1:]
	var err error
	switch p[0] {
	case kindEvent:
		b.Events = append(b.Events, Event{})
		if err = decodeEvent(body, &b.Events[len(b.Events)-1]); err != nil {
			b.Events = b.Events[:len(b.Events)-1]
		}
	case kindAssignment:
		b.Assignments = append(b.Assignments, Assignment{})
		err = json.Unmarshal(body, &b.Assignments[len(b.Assignments)-1])
	case kindSession:
		b.Sessions = append(b.Sessions, Session{})
		err = json.Unmarshal(body, &b.Sessions[len(b.Sessions)-1])
	case kindPageView:
		b.PageViews = append(b.PageViews, PageView{})
		err = json.Unmarshal(body, &b.PageViews[len(b.PageViews)-1])
	case kindOrder:
		b.Orders = append(b.Orders, Order{})
		err = json.Unmarshal(body, &b.Orders[len(b.Orders)-1])
	default:
		return fmt.Errorf("ingest: unknown WAL record kind %d", p[0])
	}
	return err
}

// flushLoop is the batcher and flusher: it reads the WAL in order, cuts a
// batch at MaxBatchRows rows or FlushInterval after its first row, inserts it
// (retrying until ClickHouse accepts it) and only then releases the WAL up to
// the batch's end. On Close it drains what is left.
func (in *Ingester) flushLoop() {
	defer close(in.flushed)
	// The batch starts with room for a full one of events: grown from
	// nothing, its copies took 0.47 s of a 10 s phase's 17.5 s of CPU at
	// 512 connections (lift bench ingest --cpuprofile); Reset keeps it.
	var (
		batch   = Batch{Events: make([]Event, 0, in.cfg.MaxBatchRows)}
		first   time.Time
		closing bool
		timer   = time.NewTimer(time.Hour)
	)
	defer timer.Stop()
	for {
		n, err := in.reader.read(in.cfg.MaxBatchRows-batch.Len(), func(p []byte) {
			if err := decodeInto(&batch, p); err != nil {
				// A CRC-valid record we cannot decode is a bug, not data
				// loss we can fix by retrying: log it and go on.
				in.log.Error("ingest: dropping undecodable WAL record", "err", err)
			}
		})
		if err != nil {
			in.log.Error("ingest: reading the WAL", "err", err)
		}
		if n > 0 && first.IsZero() {
			first = time.Now()
		}
		full := batch.Len() >= in.cfg.MaxBatchRows
		due := batch.Len() > 0 && time.Since(first) >= in.cfg.FlushInterval
		if full || due || (closing && batch.Len() > 0 && n == 0) {
			if !in.insert(&batch) {
				return // closing and out of time: the WAL keeps the rest
			}
			seq, off := in.reader.position()
			if err := in.wal.release(seq, off); err != nil {
				in.log.Error("ingest: releasing the WAL", "err", err)
			}
			batch.Reset()
			first = time.Time{}
			continue
		}
		if n > 0 {
			continue // more may be readable right away
		}
		if closing {
			in.drained = true // read before close(in.flushed), so Close sees it
			return
		}
		wait, readable := in.cfg.FlushInterval, in.wal.readable
		if !first.IsZero() {
			// A batch is open: read what arrived every eighth of the
			// interval, not after every group commit (thousands a second
			// under load, each a wakeup and a read for a few rows).
			wait = min(wait-time.Since(first), in.cfg.FlushInterval/8)
			readable = nil
		}
		timer.Reset(max(wait, 0))
		select {
		case <-readable:
		case <-timer.C:
		case <-in.closing:
			closing = true
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// insert sends b until it is accepted. It gives up only when Close's
// deadline passes, and reports whether b landed.
func (in *Ingester) insert(b *Batch) bool {
	wait := in.cfg.RetryMin
	for {
		ctx, cancel := context.WithTimeout(in.drainCtx, in.cfg.InsertTimeout)
		err := in.sink.Insert(ctx, b)
		cancel()
		if err == nil {
			in.inserted.Add(int64(b.Len()))
			in.cfg.Observer.Flushed(b.Len())
			return true
		}
		in.failed.Add(1)
		in.cfg.Observer.FlushFailed()
		in.log.Warn("ingest: insert failed; the rows stay in the WAL and are retried", "rows", b.Len(), "retry_in", wait, "err", err)
		select {
		case <-time.After(wait):
		case <-in.drainCtx.Done():
			return false
		}
		wait = min(2*wait, in.cfg.RetryMax)
	}
}
