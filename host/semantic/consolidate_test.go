package semantic

import "testing"

func TestCheckAnswer(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		``, `[]`, `{"facts": []}`, `{"facts": [], "relations": [], "extra": 1}`,
		`{"facts": [{"entity": "x", "attribute": "a", "value": "v", "episode": "e0"}], "relations": []}`,
		`{"facts": [{"entity": "x", "attribute": "a", "value": "v", "episode": "e1", "confidence": 2}], "relations": []}`,
		`{"facts": [{"entity": "x", "attribute": "a", "value": "two\nlines", "episode": "e1"}], "relations": []}`,
		`{"facts": [{"entity": "---", "attribute": "a", "value": "v", "episode": "e1"}], "relations": []}`,
		`{"facts": [], "relations": [{"from": "x", "relation": "r", "to": "!!", "episode": "e1"}]}`,
	} {
		if items, why := checkAnswer(bad, 2); why == "" {
			t.Errorf("checkAnswer(%q) accepted %+v", bad, items)
		}
	}
	items, why := checkAnswer(`{"facts": [{"entity": "x", "attribute": "a", "value": "v", "episode": "e2"}], "relations": [{"from": "x", "relation": "r", "to": "Y Z", "episode": "e1"}]}`, 2)
	if why != "" || len(items) != 2 || items[0].value != "[[y-z]]" || items[1].value != "v" {
		t.Fatalf("%+v %q", items, why)
	}
}
