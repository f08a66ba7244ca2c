package host

import (
	"context"
	"encoding/json"
	"errors"

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
// request is recorded (with the page's hashes and the answer fn filled in)
// under the notebook's lock before the page is renamed into place, and a
// run of the same request id that finds its write on the page writes
// nothing and answers as the first run did. It returns the page the write
// went to (the recorded one on a replay: a daily log retried after
// midnight found yesterday's page) and whether it replayed.
func (h *Host) update(ctx context.Context, r request, rel string, fn func(old []byte, exists bool) ([]byte, error)) (string, bool, error) {
	if err := r.check(); err != nil {
		return rel, false, err
	}
	if r.id == "" {
		return rel, false, h.notebook.Update(ctx, rel, fn)
	}
	// The first run may have written elsewhere (another day's log, a page
	// routed otherwise): look there first.
	if rec, ok, err := h.record(r); err != nil {
		return rel, false, err
	} else if ok && rec.Path != rel {
		landed := false
		err := h.notebook.Update(ctx, rec.Path, func(old []byte, exists bool) ([]byte, error) {
			landed = rec.Landed(old, exists)
			return nil, notebook.ErrUnchanged
		})
		if err != nil && !errors.Is(err, notebook.ErrUnchanged) {
			return rel, false, err
		}
		if landed {
			return rec.Path, true, r.replay(rec)
		}
	}
	var replayed *requests.Record
	err := h.notebook.Update(ctx, rel, func(old []byte, exists bool) ([]byte, error) {
		// Under the lock: a run still going in a server the client gave
		// up on has recorded its write by now, or will find this one's.
		rec, ok, err := h.record(r)
		if err != nil {
			return nil, err
		}
		if ok && rec.Path == rel && rec.Landed(old, exists) {
			replayed = &rec
			return nil, notebook.ErrUnchanged
		}
		data, err := fn(old, exists)
		if err != nil {
			return nil, err
		}
		resp, err := json.Marshal(r.resp)
		if err != nil {
			return nil, err
		}
		err = h.requests.Put(requests.Record{ID: r.id, Op: r.op, Path: rel,
			Before: requests.Hash(old, exists), After: requests.Hash(data, true),
			Inserted: requests.Inserted(old, data), Response: resp})
		return data, err
	})
	if replayed != nil {
		return rel, true, r.replay(*replayed)
	}
	return rel, false, err
}

// landed reports whether the recorded first run of a write that is not
// one page's update (a removal, a move, a model deleted) did its work,
// judged by done from the files as they are, and then fills r.resp with
// its answer: such a retry writes nothing. path and to name what the
// write works on, which the record must match.
func (h *Host) landed(r request, path, to string, done func() bool) (bool, error) {
	if err := r.check(); err != nil {
		return false, err
	}
	rec, ok, err := h.record(r)
	if err != nil || !ok || rec.Path != path || rec.To != to || !done() {
		return false, err
	}
	return true, r.replay(rec)
}

// begin records such a write before it starts, with the answer as far as
// it is known (a retry of a run killed after its work, before its answer,
// gets that); a run that finishes records it again whole (finish).
func (h *Host) begin(r request, path, to string) error {
	if r.id == "" {
		return nil
	}
	resp, err := json.Marshal(r.resp)
	if err != nil {
		return err
	}
	return h.requests.Put(requests.Record{ID: r.id, Op: r.op, Path: path, To: to, Response: resp})
}

// finish records the whole answer of a write begun with begin. A failure
// only leaves the first answer recorded.
func (h *Host) finish(r request, path, to string) {
	if r.id != "" {
		h.begin(r, path, to)
	}
}
