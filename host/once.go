package host

import (
	"context"
	"encoding/json"

	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/requests"
)

// A request is one run of a write operation as a client names it: the
// operation and the request id the client keeps when it runs the
// operation again because its server died mid-request ("" when it never
// will). resp is the operation's answer, filled in by the write and
// replayed into on a retry of a write that landed.
type request struct {
	op, id string
	resp   any
}

// check refuses a request id that cannot name a record.
func (r request) check() error {
	if r.id == "" {
		return nil
	}
	if err := requests.CheckID(r.id); err != nil {
		return fault.BadInputf("requestId", "%v", err)
	}
	return nil
}

// record returns the journal's record of the request, when there is one
// and it is this operation's.
func (h *Host) record(r request) (requests.Record, bool, error) {
	if r.id == "" {
		return requests.Record{}, false, nil
	}
	rec, ok, err := h.requests.Get(r.id)
	if err != nil || !ok {
		return rec, false, err
	}
	if rec.Op != r.op {
		return rec, false, fault.Errorf(fault.Conflict, "requestId", "request id %s was used for %s, not %s", r.id, rec.Op, r.op)
	}
	return rec, true, nil
}

// replay fills r.resp with the recorded answer.
func (r request) replay(rec requests.Record) error {
	if len(rec.Response) == 0 || r.resp == nil {
		return nil
	}
	return json.Unmarshal(rec.Response, r.resp)
}

// update is notebook.Update for a write a client may run again: the
// request is recorded (with the page's hashes, the change and the answer
// fn filled in) under the notebook's lock before the page is renamed into
// place, and a run of the same request id that finds its write on the
// page writes nothing and answers as the first run did. It returns the
// page the write went to (the recorded one on a replay: a daily log
// retried after midnight found yesterday's page) and whether it replayed.
func (h *Host) update(ctx context.Context, r request, rel string, fn func(old []byte, exists bool) ([]byte, error)) (string, bool, error) {
	if err := r.check(); err != nil {
		return rel, false, err
	}
	if r.id == "" {
		return rel, false, h.notebook.Update(ctx, rel, fn)
	}
	var replayed *requests.Record
	err := h.notebook.Update(ctx, rel, func(old []byte, exists bool) ([]byte, error) {
		// Under the lock, which every page write takes: a run still going
		// in a server the client gave up on has recorded its write by
		// now, or will find this one's.
		rec, ok, err := h.record(r)
		if err != nil {
			return nil, err
		}
		if ok {
			page, there := old, exists
			if rec.Path != rel {
				// The first run wrote elsewhere (another day's log, a
				// page routed otherwise): look there.
				page, err = h.notebook.Read(rec.Path)
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
		resp, err := json.Marshal(r.resp)
		if err != nil {
			return nil, err
		}
		cx, was, now := requests.Change(old, data)
		err = h.requests.Put(requests.Record{ID: r.id, Op: r.op, Path: rel,
			Before: requests.Hash(old, exists), After: requests.Hash(data, true),
			Context: cx, Old: was, New: now, Response: resp})
		return data, err
	})
	if replayed != nil {
		return replayed.Path, true, r.replay(*replayed)
	}
	return rel, false, err
}

// guard is the notebook.Guard of a removal or a move that a client may
// run again (path and to name what it works on; to is "" for a removal):
// under the notebook's lock, a run whose recorded first run did its work
// (the page is gone) replays that run's answer and acts no more (*landed
// is set to the record); otherwise the request is recorded, with the
// answer as far as it is known, before the page is touched. A page that
// is not there and was not removed by this request is missing, as without
// an id (and nothing is recorded).
func (h *Host) guard(r request, path, to string, landed **requests.Record) notebook.Guard {
	return func(missing error) (bool, error) {
		if err := r.check(); err != nil {
			return false, err
		}
		if r.id == "" {
			return missing == nil, missing
		}
		rec, ok, err := h.record(r)
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
		return true, h.begin(r, path, to, false)
	}
}

// begin records a write before it starts, with the answer as far as it
// is known (a retry of a run killed after its work, before its answer,
// gets that) and whether all its steps are done (finish).
func (h *Host) begin(r request, path, to string, done bool) error {
	if r.id == "" {
		return nil
	}
	resp, err := json.Marshal(r.resp)
	if err != nil {
		return err
	}
	return h.requests.Put(requests.Record{ID: r.id, Op: r.op, Path: path, To: to, Response: resp, Done: done})
}

// finish records that a write of several steps did them all, with its
// whole answer. A failure only leaves the earlier record, whose retry
// does the steps again.
func (h *Host) finish(r request, path, to string) {
	h.begin(r, path, to, true)
}
