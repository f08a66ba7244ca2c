// Package crashtest holds the crash harness (docs/design-notes.md, "Crash
// safety"): a seeded test that kills the memhost binaries with SIGKILL at
// random points of ingest, append, remember, write, daily-log, sync,
// rebuild, embed and serve, and after each kill checks what a crash must
// never cost: an acknowledged
// write lost or doubled, a torn transcript line left behind once memhost
// touched the file again, an index that disagrees with the files after a
// sync, or files left behind after health --repair. In the serve rounds the
// writers run every kind of short write through the launcher, which runs
// the one the kill interrupted again in-process (same request id).
//
// TestServerDiesAfterWrite kills the server at the worst moment for every
// kind of write (daily-log, write, remember, session append, fact add and
// forget, rm, mv, and MCP's notebook_write, daily_log and remember over
// stdio): after the write reached the disk, before the answer
// (MEMHOST_CRASH_AFTER_WRITE). The client's re-run must succeed and add
// nothing.
//
// The package has no code of its own; its test builds memhost-core, the
// memhost launcher and the hello plugin once and drives them as a user
// would. MEMHOST_CRASH_KILLS (default 20) sets the number of kills,
// MEMHOST_CRASH_SEED (default 13) the seed, MEMHOST_CRASH_OPS (comma
// separated op names) limits the operations; `make crash` runs 200 kills.
package crashtest
