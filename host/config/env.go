package config

import (
	"reflect"
	"sort"
	"strings"
)

// otherEnv lists the MEMHOST_ variables read besides the keys' overrides
// (EnvName). It is the one list: the CLI warns of any other MEMHOST_
// variable, and the launcher forwards every MEMHOST_ variable to a server.
var otherEnv = []string{
	"MEMHOST_HOME",         // the home folder
	"MEMHOST_NO_SERVER",    // run commands in the calling process
	"MEMHOST_LOG_LEVEL",    // plugins' log level
	"MEMHOST_SERVE_LOG",    // a detached server's log file (set by serve --detach)
	"MEMHOST_MODELS_DIR",   // the models folder, set by memhost for plugins
	"MEMHOST_PLUGIN",       // the plugin handshake's cookie, set for plugins
	"MEMHOST_CLOCK_OFFSET", // moves the calendar clock (internal/clock), for tests and the tour
	// memhost serve kills itself after a write of this operation ("*":
	// any) before answering: the crash harness's server dying mid-request.
	"MEMHOST_CRASH_AFTER_WRITE",
}

// EnvNames returns every MEMHOST_ variable memhost reads, sorted: the
// override of each key and the variables of otherEnv.
func EnvNames() []string {
	names := append([]string(nil), otherEnv...)
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			key := prefix + t.Field(i).Tag.Get("yaml")
			switch t.Field(i).Type.Kind() {
			case reflect.Struct:
				walk(t.Field(i).Type, key+".")
			case reflect.Map: // plugin options have no variable
			default:
				names = append(names, EnvName(key))
			}
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	sort.Strings(names)
	return names
}

// UnknownEnv returns a one-line warning for each variable of environ
// ("NAME=value" pairs, as os.Environ gives them) whose name starts with
// MEMHOST_ in any case but that memhost does not read, naming the known
// variable closest to it: a misspelt override is otherwise ignored
// without a word. Warnings come in the order of the names; nil when all
// are known.
func UnknownEnv(environ []string) []string {
	known := EnvNames()
	isKnown := make(map[string]bool, len(known))
	for _, k := range known {
		isKnown[k] = true
	}
	var unknown []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToUpper(name), "MEMHOST_") && !isKnown[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	var out []string
	for _, name := range unknown {
		out = append(out, name+" is not a memhost variable and is ignored (did you mean "+closest(name, known)+"?)")
	}
	return out
}

// closest returns the name of known nearest to name by edit distance,
// ignoring case; the first in known's order on a tie.
func closest(name string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		if d := distance(strings.ToUpper(name), k); bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the optimal-string-alignment edit distance between a and b:
// insertions, deletions, substitutions and swaps of two neighbours each
// count one (HOEM is one edit from HOME).
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
