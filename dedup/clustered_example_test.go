package dedup_test

import (
	"context"
	"fmt"
	"os"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/store"
)

func ExampleOptions_clustered() {
	// Write the pairs as soon as the clusters are final, while the run's
	// documents are still being added to the store.
	text := words(40)
	o := dedup.Options{Store: store.NewMemory(), Clustered: func(ctx context.Context, res *dedup.Result) error {
		fmt.Printf("kept %d, duplicates %d\n", res.Summary.Kept, res.Summary.Duplicates)
		return dedup.WritePairs(os.Stdout, res.Pairs)
	}}
	res, err := dedup.Run(ctx, records([2]string{"a", text}, [2]string{"b", text + " tail"}), o)
	if err != nil {
		panic(err)
	}
	fmt.Println("stages:", len(res.Summary.Stages))
	// Output:
	// kept 1, duplicates 1
	// {"a":"a","b":"b","similarity":0.972973,"estimate":0.96875,"stderr":0.015379,"exact":true,"keys":13,"seq_a":0,"seq_b":1,"kind":"near"}
	// stages: 5
}
