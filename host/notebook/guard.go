package notebook

import "errors"

// A Guard decides, under the update lock, whether RemoveGuarded or
// RenameGuarded acts. It is given nil when the page (the one moved) is
// there, else the error that says it is not; it returns act false to
// leave everything as it is, and the error the call returns (nil: done,
// nothing to do). host uses it to record a request, or find it done,
// where no other writer can come between the look and the act.
type Guard func(missing error) (act bool, err error)

// decide applies g to what looking for the page found (err: nil when it
// is there). A nil Guard acts on a page that is there and returns the
// error otherwise; a Guard is asked only when the page is there or
// missing, not on other errors.
func (g Guard) decide(err error) (bool, error) {
	if err != nil && !errors.Is(err, ErrNotFound) {
		return false, err
	}
	if g == nil {
		return err == nil, err
	}
	act, gerr := g(err)
	if gerr != nil || (act && err != nil) {
		return false, errors.Join(gerr, err)
	}
	return act, nil
}
