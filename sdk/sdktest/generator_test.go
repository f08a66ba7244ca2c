package sdktest

import "testing"

func TestFollowsRouteSchema(t *testing.T) {
	for text, ok := range map[string]bool{
		`{"category": "lists", "page": "todos", "tags": []}`:            true,
		`{"category": "reference", "page": "p", "tags": ["a", "b"]}`:    true,
		`{"category": "diary", "page": "p", "tags": []}`:                false,
		`{"category": "lists", "page": "", "tags": []}`:                 false,
		`{"category": "lists", "page": "p"}`:                            false,
		`{"category": "lists", "page": "p", "tags": [1]}`:               false,
		`{"category": "lists", "page": "p", "tags": [], "extra": true}`: false,
		"Sure! Here is the JSON: {\"category\": \"lists\"}":             false,
	} {
		if err := followsRouteSchema(text); (err == nil) != ok {
			t.Errorf("followsRouteSchema(%s) = %v, want ok %v", text, err, ok)
		}
	}
}
