package stats_test

import (
	"fmt"
	"strings"

	"github.com/structtensor/structtensor-go/stats"
	"github.com/structtensor/structtensor-go/structtensor"
)

// Statistics of three recipes, each with a title, an optional rating and
// a list of ingredients with a name and a list of amounts.
func Example() {
	st, err := structtensor.StructFromJSONLines([]byte(`{"title": "pancakes", "rating": [4.5], "ingredients": [{"name": "flour", "grams": [200]}, {"name": "milk", "grams": [300]}]}
{"title": "tea", "rating": [], "ingredients": [{"name": "water", "grams": []}]}
{"title": "toast", "rating": [3.0], "ingredients": []}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	acc, err := stats.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := acc.Add(st); err != nil {
		fmt.Println(err)
		return
	}
	sum := acc.Summary()
	fmt.Println(sum.Records, "records")
	for _, f := range sum.Features {
		fmt.Printf("%s (%s): present %d, empty %d, missing %d, values %d\n",
			strings.Join(f.Path, "."), f.Kind, f.Present, f.Empty, f.Missing, f.Values)
		if n := f.Numbers; n != nil {
			fmt.Printf("  min %v, max %v, mean %v, std_dev %v\n", n.Min.Float64(), n.Max.Float64(), n.Mean, n.StdDev)
		}
		if s := f.Strings; s != nil {
			fmt.Printf("  distinct %d, most frequent %q\n", s.Distinct, s.Top[0].Value)
		}
	}
	// Output:
	// 3 records
	// title (string): present 3, empty 0, missing 0, values 3
	//   distinct 3, most frequent "pancakes"
	// rating (float): present 2, empty 1, missing 0, values 2
	//   min 3, max 4.5, mean 3.75, std_dev 0.75
	// ingredients (struct): present 2, empty 1, missing 0, values 3
	// ingredients.name (string): present 2, empty 0, missing 1, values 3
	//   distinct 3, most frequent "flour"
	// ingredients.grams (int): present 1, empty 1, missing 1, values 2
	//   min 200, max 300, mean 250, std_dev 50
}
