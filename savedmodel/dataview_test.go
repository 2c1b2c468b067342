package savedmodel_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/decode"
	"github.com/structtensor/structtensor-go/savedmodel"
	"github.com/structtensor/structtensor-go/structtensor"
	"github.com/structtensor/structtensor-go/tfbridge"
)

func export(t testing.TB, d *decode.Descriptors, message string, paths ...string) (string, *decode.Plan) {
	t.Helper()
	plan, err := decode.Compile(d, message, paths...)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "dv")
	if err := savedmodel.ExportDataView(dir, plan); err != nil {
		t.Fatal(err)
	}
	return dir, plan
}

func TestExportLoadDecode(t *testing.T) {
	d := copstest.Descriptors(t)
	cases := []struct {
		message string
		paths   []string
	}{
		{"structtensor.testdata.recipe.Recipe", nil},
		{"structtensor.testdata.recipe.Recipe", []string{"ingredients.name", "steps.tools.electric", "title"}},
		{"structtensor.testdata.example.Example", nil},
		{"structtensor.testdata.example.ExampleListWithContext", nil},
		{"structtensor.testdata.scalars.AllScalars", nil},
		{"structtensor.testdata.proto3.Proto3Msg", nil},
	}
	for _, c := range cases {
		t.Run(c.message[strings.LastIndex(c.message, ".")+1:], func(t *testing.T) {
			dir, plan := export(t, d, c.message, c.paths...)
			dv, err := savedmodel.LoadDataView(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer dv.Close()
			if !dv.Spec().Equal(plan.Spec()) {
				t.Fatalf("spec %v, want %v", dv.Spec(), plan.Spec())
			}
			md, _ := d.Message(c.message)
			for _, n := range []int{0, 3, 100} {
				records, err := copstest.Records(md, n, uint64(7*n+1), copstest.Options{})
				if err != nil {
					t.Fatal(err)
				}
				want, err := plan.Decode(records)
				if err != nil {
					t.Fatal(err)
				}
				got, err := dv.Decode(records)
				if err != nil {
					t.Fatal(err)
				}
				if !structtensor.Equal(got, want) {
					t.Errorf("%d records: DataView %v\nplan.Decode %v", n, got, want)
				}
			}
		})
	}
}

func TestLayoutOnDisk(t *testing.T) {
	dir, plan := export(t, copstest.Descriptors(t), "structtensor.testdata.recipe.Recipe", "ingredients.name", "servings")
	for _, f := range []string{"saved_model.pb", "variables", "assets/dataview.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	m, err := savedmodel.ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range m.Components {
		keys = append(keys, c.Key)
	}
	if got, want := strings.Join(keys, " "), "ingredients/row_splits_0 ingredients.name/values servings/values"; got != want {
		t.Errorf("component keys %q, want %q", got, want)
	}
	if m.Message != plan.Message() {
		t.Errorf("message %q, want %q", m.Message, plan.Message())
	}
}

func TestExportRefusesNonEmptyDir(t *testing.T) {
	d := copstest.Descriptors(t)
	plan, err := decode.Compile(d, "structtensor.testdata.recipe.Recipe")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := savedmodel.ExportDataView(dir, plan); !errors.Is(err, savedmodel.ErrExists) {
		t.Errorf("err = %v, want ErrExists", err)
	}
}

func TestLoadRefusesTamperedModel(t *testing.T) {
	dir, _ := export(t, copstest.Descriptors(t), "structtensor.testdata.recipe.Recipe")
	pb := filepath.Join(dir, "saved_model.pb")
	b, err := os.ReadFile(pb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, append(b, 0x08, 0x01), 0o644); err != nil { // an extra field: still a valid proto
		t.Fatal(err)
	}
	if _, err := savedmodel.LoadDataView(dir); !errors.Is(err, savedmodel.ErrFingerprint) {
		t.Errorf("err = %v, want ErrFingerprint", err)
	}
	if _, err := savedmodel.LoadDataView(t.TempDir()); !errors.Is(err, savedmodel.ErrFormat) {
		t.Errorf("empty dir: err = %v, want ErrFormat", err)
	}
}

func TestDecodeBadRecord(t *testing.T) {
	dir, _ := export(t, copstest.Descriptors(t), "structtensor.testdata.recipe.Recipe")
	dv, err := savedmodel.LoadDataView(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dv.Close()
	_, err = dv.Decode([][]byte{{}, {0x22, 0x7f}})
	if !errors.Is(err, tfbridge.ErrInvalidArgument) {
		t.Fatalf("err = %v, want InvalidArgument", err)
	}
	for _, want := range []string{"record 1,", "byte offset", "steps"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	dv.Close()
	if _, err := dv.Decode(nil); !errors.Is(err, savedmodel.ErrClosed) {
		t.Errorf("after Close: err = %v, want ErrClosed", err)
	}
}

// TestDecodeContext checks that a done context stops a DataView decode
// before TensorFlow runs, and that a live one decodes as Decode does.
func TestDecodeContext(t *testing.T) {
	dir, plan := export(t, copstest.Descriptors(t), "structtensor.testdata.recipe.Recipe", "title")
	dv, err := savedmodel.LoadDataView(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dv.Close()
	records := [][]byte{[]byte("\x0a\x03Tea")}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := dv.DecodeContext(ctx, records); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v, want context.Canceled", err)
	}
	got, err := dv.DecodeContext(context.Background(), records)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := plan.Decode(records); !structtensor.Equal(got, want) {
		t.Errorf("DecodeContext = %v, want %v", got, want)
	}
}
