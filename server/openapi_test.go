package server

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/neardup/neardup/server/api"
)

type openAPIDoc struct {
	OpenAPI string `json:"openapi"`
	Paths   map[string]map[string]struct {
		OperationID string          `json:"operationId"`
		Responses   map[string]any  `json:"responses"`
		RequestBody json.RawMessage `json:"requestBody"`
	} `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]any `json:"properties"`
			Required   []string       `json:"required"`
		} `json:"schemas"`
	} `json:"components"`
}

// TestOpenAPIRoutes checks openapi.json against the routes Install
// registers: the same (method, path) pairs, no more, no fewer, and every
// operation documents its success reply (and 401 when it needs the token).
func TestOpenAPIRoutes(t *testing.T) {
	var doc openAPIDoc
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi version %q", doc.OpenAPI)
	}
	s := &Server{}
	var registered, documented []string
	for _, r := range s.routes() {
		registered = append(registered, r.method+" "+r.path)
		op, ok := doc.Paths[r.path][strings.ToLower(r.method)]
		if !ok {
			continue
		}
		if op.Responses["200"] == nil {
			t.Errorf("%s %s: no 200 response documented", r.method, r.path)
		}
		if r.auth && op.Responses["401"] == nil {
			t.Errorf("%s %s: needs the token but documents no 401", r.method, r.path)
		}
		if r.method == "POST" && op.RequestBody == nil {
			t.Errorf("%s %s: no request body documented", r.method, r.path)
		}
	}
	for path, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+path)
		}
	}
	sort.Strings(registered)
	sort.Strings(documented)
	if !slices.Equal(registered, documented) {
		t.Errorf("routes and openapi.json differ:\nregistered %q\ndocumented %q", registered, documented)
	}
}

// TestOpenAPISchemas checks that every schema named after a type of
// package api lists exactly that type's JSON fields, and that required
// fields are fields.
func TestOpenAPISchemas(t *testing.T) {
	var doc openAPIDoc
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	types := map[string]any{
		"Document": api.Document{}, "AddRequest": api.AddRequest{}, "Match": api.Match{}, "AddResult": api.AddResult{},
		"AddResponse": api.AddResponse{}, "Sketch": api.Sketch{}, "QueryRequest": api.QueryRequest{},
		"QueryResult": api.QueryResult{}, "QueryResponse": api.QueryResponse{}, "DocumentInfo": api.DocumentInfo{},
		"DeleteResponse": api.DeleteResponse{}, "CollapseRequest": api.CollapseRequest{}, "Collapsed": api.Collapsed{},
		"CollapseResponse": api.CollapseResponse{}, "Stats": api.Stats{}, "Journal": api.Journal{}, "BackupRequest": api.BackupRequest{}, "BackupResponse": api.BackupResponse{}, "Error": api.Error{},
	}
	for name, v := range types {
		sc, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("schema %s missing", name)
			continue
		}
		var fields []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			fields = append(fields, tag)
		}
		var props []string
		for p := range sc.Properties {
			props = append(props, p)
		}
		sort.Strings(fields)
		sort.Strings(props)
		if !slices.Equal(fields, props) {
			t.Errorf("schema %s: properties %q, Go fields %q", name, props, fields)
		}
		for _, r := range sc.Required {
			if !slices.Contains(fields, r) {
				t.Errorf("schema %s: required %q is not a field", name, r)
			}
		}
	}
}

// TestListenPolicy: loopback is always allowed; any other address needs a
// token, and TLS or Insecure. (Checked without listening beyond loopback.)
func TestListenPolicy(t *testing.T) {
	for _, c := range []struct {
		host     string
		o        Options
		insecure bool
	}{
		{"127.0.0.1", Options{}, false},
		{"::1", Options{}, false},
		{"localhost", Options{}, false},
		{"0.0.0.0", Options{}, true},
		{"", Options{}, true},
		{"192.0.2.1", Options{Token: "t"}, true},
		{"192.0.2.1", Options{Token: "t", Insecure: true}, false},
		{"192.0.2.1", Options{Insecure: true}, true},
	} {
		s := &Server{o: c.o}
		err := s.checkHost(c.host)
		if got := errors.Is(err, ErrInsecure); got != c.insecure {
			t.Errorf("host %q %+v: %v", c.host, c.o, err)
		}
	}
	s, err := New(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ListenAndServe(t.Context(), "0.0.0.0:0"); !errors.Is(err, ErrInsecure) || !strings.Contains(err.Error(), "bearer token") {
		t.Errorf("ListenAndServe on 0.0.0.0 without a token: %v", err)
	}
}
