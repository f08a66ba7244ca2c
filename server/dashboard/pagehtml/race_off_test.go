//go:build !race

package pagehtml

const raceDetector = false
