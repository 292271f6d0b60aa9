package feature_test

import (
	"fmt"

	"github.com/neardup/neardup/feature"
)

func ExampleSniffHTML() {
	for _, doc := range []string{
		"<!DOCTYPE html><title>Home</title>",
		"<!-- generated -->\n<html lang=en>",
		"<one line to give the program's name>",
		"plain text",
	} {
		fmt.Println(feature.SniffHTML([]byte(doc)))
	}
	// Output:
	// true
	// true
	// false
	// false
}
