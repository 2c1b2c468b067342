package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestServeDemoStep runs the serving section and checks its scores
// against values worked out by hand from the decoded recipes (demo's
// decode section): servings 24, 2, 8; ingredient amounts 3+1+1+1,
// 1+2, 500+350+7+10; step minutes 10+5+10, 2, 10+90+40; ratings 2, 0,
// 1. With kernel (0.5, 0.01, -0.02, 0.25) and bias 1: 12+0.06-0.5+0.5+1,
// 1+0.03-0.04+0+1, 4+8.67-2.8+0.25+1.
func TestServeDemoStep(t *testing.T) {
	var out bytes.Buffer
	if err := runServeDemo(&out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"0       [24 6 25 2]                        13.0600    13.0600    13.0600",
		"1       [2 3 2 0]                          1.9900     1.9900     1.9900",
		"2       [8 867 140 1]                      11.1200    11.1200    11.1200",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the serving section lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCloseScores(t *testing.T) {
	if !closeScores([]float32{1, 13.06}, []float32{1, 13.060001}) {
		t.Error("scores one float32 rounding apart are close")
	}
	if closeScores([]float32{1, 13.06}, []float32{1, 13.07}) || closeScores([]float32{1}, []float32{1, 2}) {
		t.Error("different scores are not close")
	}
}
