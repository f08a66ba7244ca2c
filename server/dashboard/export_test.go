package dashboard

import "net/http"

// RenderForTest renders a full page with the given body, as a handler
// would: tests use it to make a template fail.
func RenderForTest(d *Dashboard, w http.ResponseWriter, r *http.Request, name string, body any) {
	d.render(w, r, name, layout{Title: "Test", Body: body})
}

// FragmentForTest renders a fragment with the given data, as
// searchFragment would: tests use it to make a template fail.
func FragmentForTest(d *Dashboard, w http.ResponseWriter, name string, data any) {
	d.fragment(w, name, data)
}
