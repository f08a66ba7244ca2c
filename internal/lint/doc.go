// Package lint holds tests that check the whole repository's code for
// what the compiler lets through and memhost does not: see its tests.
package lint
