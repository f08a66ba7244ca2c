//go:build !linux

package fsx

import "errors"

// errNoOpenat2 means openat2 cannot be used here: the caller walks.
var errNoOpenat2 = errors.New("openat2 is not available")

// openBeneath is openat2's fast path, which only Linux has.
func openBeneath(dir int, rel string, flags int, mode uint32) (int, error) {
	return -1, errNoOpenat2
}
