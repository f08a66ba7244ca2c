package search

import (
	"math"
	"reflect"
	"testing"
)

func TestFuse(t *testing.T) {
	got := Fuse(60, []int64{1, 2, 3}, []int64{3, 1, 4})
	var ids []int64
	for _, f := range got {
		ids = append(ids, f.ID)
	}
	// 1: 1/61+1/62; 3: 1/63+1/61; 2: 1/62; 4: 1/63.
	if !reflect.DeepEqual(ids, []int64{1, 3, 2, 4}) {
		t.Errorf("order = %v", ids)
	}
	if s := Fuse(60, []int64{7}, []int64{7})[0].Score; math.Abs(s-1) > 1e-12 {
		t.Errorf("first in both lists scores %v, want 1", s)
	}
	if s := got[2].Score; math.Abs(s-(1.0/62)/(2.0/61)) > 1e-12 {
		t.Errorf("score of 2 = %v", s)
	}
	if len(Fuse(60)) != 0 || len(Fuse(60, nil, nil)) != 0 {
		t.Error("empty fusion")
	}
}

func TestFuseWeighted(t *testing.T) {
	// With the second list weighted low, an id first only there ranks
	// below one first only in the first list.
	got := FuseWeighted(60, []float64{1, 0.3}, []int64{1, 2}, []int64{2, 3})
	if got[0].ID != 2 || got[1].ID != 1 || got[2].ID != 3 {
		t.Errorf("order = %+v", got)
	}
	if s := FuseWeighted(60, []float64{1, 0.3}, []int64{7}, []int64{7})[0].Score; math.Abs(s-1) > 1e-12 {
		t.Errorf("first in both lists scores %v, want 1", s)
	}
	if a, b := Fuse(10, []int64{1}, []int64{2}), FuseWeighted(10, nil, []int64{1}, []int64{2}); a[0].ID != b[0].ID || a[0].Score != b[0].Score {
		t.Error("Fuse and FuseWeighted(nil) differ")
	}
}
