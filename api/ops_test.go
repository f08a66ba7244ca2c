package api

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestOpsCoverAPI: Ops holds one operation for each method of API, each
// running that method, with a path of its own. (The compiler holds Host
// and the client to API; this holds the table to it.)
func TestOpsCoverAPI(t *testing.T) {
	t.Parallel()
	api := reflect.TypeFor[API]()
	methods := map[string]bool{}
	for i := range api.NumMethod() {
		methods[api.Method(i).Name] = false
	}
	paths := map[string]bool{}
	for _, op := range Ops {
		info := op.Info()
		run := reflect.ValueOf(op).FieldByName("Run")
		name := runtime.FuncForPC(run.Pointer()).Name() // ".../api.API.Recall"
		m := name[strings.LastIndex(name, ".")+1:]
		seen, ok := methods[m]
		switch {
		case !ok:
			t.Errorf("op %s runs %s, not a method of API", info.Name, name)
		case seen:
			t.Errorf("API.%s has two ops", m)
		}
		methods[m] = true
		if paths[info.Path()] {
			t.Errorf("two ops have the path %s", info.Path())
		}
		paths[info.Path()] = true
	}
	for m, seen := range methods {
		if !seen {
			t.Errorf("API.%s has no op in Ops", m)
		}
	}
}
