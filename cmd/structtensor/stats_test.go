package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/stats"
	"github.com/structtensor/structtensor-go/structtensor"
)

const statsRecipes = `{"title": "pancakes", "rating": [4.5], "ingredients": [{"name": "flour", "grams": [200]}, {"name": "milk", "grams": [300]}]}
{"title": "tea", "rating": [], "ingredients": [{"name": "water", "grams": []}]}
{"title": "toast", "rating": [3.0], "ingredients": []}
`

// stats writes package stats' statistics of the input: the JSON equals
// the library's over the same value, with the values worked out by hand;
// pb and pbtxt are the DatasetFeatureStatisticsList.
func TestStatsCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "recipes.jsonl")
	os.WriteFile(in, []byte(statsRecipes), 0o644)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"stats", "--from", "jsonl", in}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	st, err := structtensor.StructFromJSONLines([]byte(statsRecipes))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := stats.New()
	if err := a.Add(st); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	a.Summary().WriteJSON(&want)
	if stdout.String() != want.String() {
		t.Fatalf("stats:\n%s\nthe library:\n%s", stdout.String(), want.String())
	}
	var got struct {
		Records  int
		Features []struct {
			Path                    []string
			Present, Empty, Missing int
			Numbers                 *struct {
				Mean   float64
				StdDev float64 `json:"std_dev"`
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	grams := got.Features[len(got.Features)-1]
	if got.Records != 3 || strings.Join(grams.Path, ".") != "ingredients.grams" || grams.Present != 1 || grams.Empty != 1 ||
		grams.Missing != 1 || grams.Numbers.Mean != 250 || grams.Numbers.StdDev != 50 {
		t.Fatalf("unexpected statistics:\n%s", stdout.String())
	}

	out := filepath.Join(dir, "stats.pbtxt")
	stdout.Reset()
	if code := run([]string{"stats", "--from", "jsonl", "--to", "pbtxt", "--dataset-name", "recipes", "-o", out, in}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	txt, _ := os.ReadFile(out)
	for _, re := range []string{`name:\s*"recipes"`, `num_examples:\s*3`, `step:\s*"grams"`, `mean:\s*250`} {
		if !regexp.MustCompile(re).Match(txt) {
			t.Fatalf("no %s in\n%s", re, txt)
		}
	}
	stdout.Reset()
	if code := run([]string{"stats", "--from", "jsonl", "--to", "pb", in}, nil, &stdout, &stderr); code != 0 || stdout.Len() == 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if code := run([]string{"stats", "--from", "jsonl", "--to", "csv", in}, nil, &stdout, &stderr); code == 0 {
		t.Fatal("--to csv accepted")
	}
}
