package jsoncheck

import "testing"

func TestFind(t *testing.T) {
	tests := []struct {
		json   string
		escape string // "" for none
		offset int
		path   string
		field  string
	}{
		{`{"text":"a\ud800b"}`, `\ud800`, 10, "text", "text"},
		{`{"text":"\udc00"}`, `\udc00`, 9, "text", "text"},
		{`{"text":"\ud83d\ude00 ok"}`, "", 0, "", ""},            // a pair: 😀
		{`{"text":"\ud83d\u0041"}`, `\ud83d`, 9, "text", "text"}, // a first half, then no second
		{`{"text":"\ud83d"}`, `\ud83d`, 9, "text", "text"},
		{`{"text":"\\ud800"}`, "", 0, "", ""}, // an escaped backslash, then text
		{`{"text":"\"\ud800"}`, `\ud800`, 11, "text", "text"},
		{`{"a":1,"set":{"url":"x","model":"\uDBFF"}}`, `\uDBFF`, 33, "set.model", "set"},
		{`{"tags":["x","y","\udfff"]}`, `\udfff`, 18, "tags[2]", "tags"},
		{`{"params":{"arguments":{"list":[{"k":"\ud800"}]}}}`, `\ud800`, 38, "params.arguments.list[0].k", "params"},
		{`{"m":{"\ud800":1}}`, `\ud800`, 7, "m", "m"},
		{`{"\ud800":1}`, `\ud800`, 2, "", ""},
		{`"\ud800"`, `\ud800`, 1, "", ""},
		{`["a",{"b":[true,null,"\ud800"]}]`, `\ud800`, 22, "[1].b[2]", ""},
		{`{"text":"\u00e9\u20ac"}`, "", 0, "", ""},
		{`{"text":"\ud800`, `\ud800`, 9, "", ""}, // not JSON: no path
	}
	for _, tt := range tests {
		got := Find([]byte(tt.json))
		if tt.escape == "" {
			if got != nil {
				t.Errorf("%s: found %+v", tt.json, got)
			}
			continue
		}
		if got == nil {
			t.Errorf("%s: found nothing", tt.json)
			continue
		}
		if got.Escape != tt.escape || got.Offset != tt.offset || got.Path != tt.path || got.Field() != tt.field {
			t.Errorf("%s: got %+v (field %q), want %s at %d in %q (field %q)", tt.json, got, got.Field(), tt.escape, tt.offset, tt.path, tt.field)
		}
	}
}
