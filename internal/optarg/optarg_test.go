package optarg_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/internal/optarg"
)

type Options struct{ Threads int }

var errBad = errors.New("bad argument")

func TestOne(t *testing.T) {
	if o, err := optarg.One[Options](nil, errBad); err != nil || o != (Options{}) {
		t.Errorf("none: got %+v, %v; want the zero value", o, err)
	}
	if o, err := optarg.One([]Options{{Threads: 3}}, errBad); err != nil || o.Threads != 3 {
		t.Errorf("one: got %+v, %v; want Threads 3", o, err)
	}
	_, err := optarg.One([]Options{{}, {}}, errBad)
	if !errors.Is(err, errBad) || !strings.Contains(err.Error(), "2 Options given, at most one") {
		t.Errorf("two: got %v; want errBad naming 2 Options", err)
	}
}
