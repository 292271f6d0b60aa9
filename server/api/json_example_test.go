package api_test

import (
	"fmt"

	"github.com/neardup/neardup/server/api"
)

func ExampleAppendJSON() {
	body, err := api.AppendJSON(nil, api.QueryRequest{Documents: []api.Document{{ID: "p1", Text: "a <b>page</b>", HTML: true}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(body))
	// Output: {"documents":[{"id":"p1","text":"a \u003cb\u003epage\u003c/b\u003e","html":true}]}
}

func ExampleDecodeFast() {
	var r api.QueryResponse
	ok := api.DecodeFast([]byte(`{"results":[{"id":"p1","matches":[{"id":"p0","similarity":0.9,"estimate":0.88,"stderr":0.03,"exact":true}]}]}`), &r)
	fmt.Println(ok, r.Results[0].Matches[0].ID, r.Results[0].Matches[0].Similarity)
	// A body off the plain shape (here a field in other case) is left to
	// encoding/json.
	fmt.Println(api.DecodeFast([]byte(`{"Results":[]}`), &r))
	// Output:
	// true p0 0.9
	// false
}
