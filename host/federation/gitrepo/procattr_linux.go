package gitrepo

import (
	"os/exec"
	"syscall"
)

// dieWithParent has git killed when memhost dies. A memhost killed in the
// middle of a sync (SIGKILL, a crash) otherwise leaves its git fetch
// running, and the next sync's fetch then fails to lock the ref the
// orphan is updating ("cannot lock ref ...": TestSyncKilledMidway under
// load, TestGitDiesWithMemhost).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
