// Package once makes the notebook writes a client may run again
// idempotent: a write is recorded in the request journal (host/requests)
// under the notebook's lock before its page is renamed into place, and a
// run of the same request id that finds its write landed writes nothing
// and answers as the first run did. It imports host/notebook,
// host/requests and fault.
package once

import (
	"context"
	"encoding/json"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/requests"
)

// Writes runs the notebook writes of requests with the journal.
type Writes struct {
	Journal  *requests.Journal
	Notebook *notebook.Notebook
}

// A Request is one run of a write operation as a client names it: the
// operation and the request id the client keeps when it runs the
// operation again because its server died mid-request ("" when it never
// will). resp is the operation's answer, filled in by the write and
// replayed into on a retry of a write that landed.
type Request struct {
	Op, ID string
	Resp   any
}

// Check refuses a request id that cannot name a record.
func (r Request) Check() error {
	if r.ID == "" {
		return nil
	}
	if err := requests.CheckID(r.ID); err != nil {
		return fault.BadInputf("requestId", "%v", err)
	}
	return nil
}

// record returns the journal's record of the request, when there is one
// and it is this operation's.
func (w *Writes) record(r Request) (requests.Record, bool, error) {
	if r.ID == "" {
		return requests.Record{}, false, nil
	}
	rec, ok, err := w.Journal.Get(r.ID)
	if err != nil || !ok {
		return rec, false, err
	}
	if rec.Op != r.Op {
		return rec, false, fault.Errorf(fault.Conflict, "requestId", "request id %s was used for %s, not %s", r.ID, rec.Op, r.Op)
	}
	return rec, true, nil
}

// replay fills r.Resp with the recorded answer.
func (r Request) replay(rec requests.Record) error {
	if len(rec.Response) == 0 || r.Resp == nil {
		return nil
	}
	return json.Unmarshal(rec.Response, r.Resp)
}

// Update is notebook.Update for a write a client may run again: the
// request is recorded (with the page's hashes, the change and the answer
// fn filled in) under the notebook's lock before the page is renamed into
// place, and a run of the same request id that finds its write on the
// page writes nothing and answers as the first run did. It returns the
// page the write went to (the recorded one on a replay: a daily log
// retried after midnight found yesterday's page) and whether it replayed.
func (w *Writes) Update(ctx context.Context, r Request, rel string, fn func(old []byte, exists bool) ([]byte, error)) (string, bool, error) {
	if err := r.Check(); err != nil {
		return rel, false, err
	}
	if r.ID == "" {
		return rel, false, w.Notebook.Update(ctx, rel, fn)
	}
	var replayed *requests.Record
	err := w.Notebook.Update(ctx, rel, func(old []byte, exists bool) ([]byte, error) {
		// Under the lock, which every page write takes: a run still going
		// in a server the client gave up on has recorded its write by
		// now, or will find this one's.
		rec, ok, err := w.record(r)
		if err != nil {
			return nil, err
		}
		if ok {
			page, there := old, exists
			if rec.Path != rel {
				// The first run wrote elsewhere (another day's log, a
				// page routed otherwise): look there.
				page, err = w.Notebook.Read(rec.Path)
				there = err == nil
			}
			if rec.Landed(page, there) {
				replayed = &rec
				return nil, notebook.ErrUnchanged
			}
		}
		data, err := fn(old, exists)
		if err != nil {
			return nil, err
		}
		resp, err := json.Marshal(r.Resp)
		if err != nil {
			return nil, err
		}
		cx, was, now := requests.Change(old, data)
		err = w.Journal.Put(requests.Record{ID: r.ID, Op: r.Op, Path: rel,
			Before: requests.Hash(old, exists), After: requests.Hash(data, true),
			Context: cx, Old: was, New: now, Response: resp})
		return data, err
	})
	if replayed != nil {
		return replayed.Path, true, r.replay(*replayed)
	}
	return rel, false, err
}

// Guard is the notebook.Guard of a removal or a move that a client may
// run again (path and to name what it works on; to is "" for a removal):
// under the notebook's lock, a run whose recorded first run did its work
// (the page is gone) replays that run's answer and acts no more (*landed
// is set to the record); otherwise the request is recorded, with the
// answer as far as it is known, before the page is touched. A page that
// is not there and was not removed by this request is missing, as without
// an id (and nothing is recorded).
func (w *Writes) Guard(r Request, path, to string, landed **requests.Record) notebook.Guard {
	return func(missing error) (bool, error) {
		if err := r.Check(); err != nil {
			return false, err
		}
		if r.ID == "" {
			return missing == nil, missing
		}
		rec, ok, err := w.record(r)
		if err != nil {
			return false, err
		}
		if missing != nil {
			if ok && rec.Path == path && rec.To == to {
				*landed = &rec
				return false, r.replay(rec)
			}
			return false, missing
		}
		return true, w.Begin(r, path, to, false)
	}
}

// Begin records a write before it starts, with the answer as far as it
// is known (a retry of a run killed after its work, before its answer,
// gets that) and whether all its steps are done (Finish).
func (w *Writes) Begin(r Request, path, to string, done bool) error {
	if r.ID == "" {
		return nil
	}
	resp, err := json.Marshal(r.Resp)
	if err != nil {
		return err
	}
	return w.Journal.Put(requests.Record{ID: r.ID, Op: r.Op, Path: path, To: to, Response: resp, Done: done})
}

// Finish records that a write of several steps did them all, with its
// whole answer. A failure only leaves the earlier record, whose retry
// does the steps again.
func (w *Writes) Finish(r Request, path, to string) {
	w.Begin(r, path, to, true)
}

// Answered is the first half of a write that is idempotent by nature (run
// again, it finds nothing left to do) but whose answer is not: when the
// journal holds r's record, it fills r.Resp with the first run's answer
// and returns true, and the write is not run again. Answer, after the
// write, records the answer.
func (w *Writes) Answered(r Request) (bool, error) {
	if err := r.Check(); err != nil {
		return false, err
	}
	rec, ok, err := w.record(r)
	if err != nil || !ok {
		return false, err
	}
	return true, r.replay(rec)
}

// Answer records r's answer (r.Resp) for Answered, when r has an id.
func (w *Writes) Answer(r Request) error {
	if r.ID == "" {
		return nil
	}
	resp, err := json.Marshal(r.Resp)
	if err != nil {
		return err
	}
	return w.Journal.Put(requests.Record{ID: r.ID, Op: r.Op, Response: resp, Done: true})
}
