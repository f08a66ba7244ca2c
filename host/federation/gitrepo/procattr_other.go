//go:build !linux

package gitrepo

import "os/exec"

// dieWithParent: other systems have no parent-death signal; a git left
// running by a killed memhost finishes on its own.
func dieWithParent(*exec.Cmd) {}
