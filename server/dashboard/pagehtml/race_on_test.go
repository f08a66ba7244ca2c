//go:build race

package pagehtml

// raceDetector: the tests run under -race, which multiplies each
// rendering's CPU by a factor of its own.
const raceDetector = true
