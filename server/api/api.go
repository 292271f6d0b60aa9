// Package api provides the JSON types of neardup's HTTP API, shared by the
// server (package server) and its Go client (package client), so that the
// two cannot drift apart. The OpenAPI 3 document served at /openapi.json
// describes the same shapes.
//
// It holds plain data types and their JSON codec — AppendJSON and
// DecodeFast, hand-written fast paths for the hot bodies that give
// encoding/json's results — and no other behaviour: no validation (the
// server does it), no I/O.
package api

// Document is a document sent to be added or queried: a caller-chosen id,
// unique within the index, and its text (plain text or HTML).
type Document struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// HTML says the text is HTML (as a crawler knows from the response's
	// content type); without it, HTML is recognized by its first tag.
	HTML bool `json:"html,omitempty"`
}

// AddRequest is the body of POST /v1/documents.
type AddRequest struct {
	Documents []Document `json:"documents"`
	// IfNew adds a document only when no near-duplicate of it is found
	// (in the index, or earlier in the same request). The query parameter
	// if_new=true does the same.
	IfNew bool `json:"if_new,omitempty"`
}

// Match is a near-duplicate found in the index.
type Match struct {
	// ID is the id of the stored document.
	ID string `json:"id"`
	// Similarity is the exact Jaccard similarity of the feature sets when
	// both documents have them stored, else the sketch estimate.
	Similarity float64 `json:"similarity"`
	// Estimate and StdErr are the sketch estimate and its standard error.
	Estimate float64 `json:"estimate"`
	StdErr   float64 `json:"stderr"`
	// Exact reports whether Similarity is exact.
	Exact bool `json:"exact"`
}

// AddResult is the fate of one document of an AddRequest, in request
// order.
type AddResult struct {
	ID string `json:"id"`
	// Added reports whether the document was stored (false only with
	// if_new when Matches is not empty).
	Added bool `json:"added"`
	// Matches are the near-duplicates found before adding, most similar
	// first.
	Matches []Match `json:"matches"`
}

// AddResponse is the reply to POST /v1/documents.
type AddResponse struct {
	Results []AddResult `json:"results"`
	// Added counts the documents stored.
	Added int `json:"added"`
}

// Sketch is a sketch made by a client with the index's configuration: its
// binary encoding (package sketch's MarshalBinary), base64 in JSON.
type Sketch struct {
	ID     string `json:"id,omitempty"`
	Sketch []byte `json:"sketch"`
}

// QueryRequest is the body of POST /v1/query: documents to sketch on the
// server, or sketches made by the client (not both).
type QueryRequest struct {
	Documents []Document `json:"documents,omitempty"`
	Sketches  []Sketch   `json:"sketches,omitempty"`
}

// QueryResult holds the near-duplicates of one queried document or sketch.
type QueryResult struct {
	ID      string  `json:"id"`
	Matches []Match `json:"matches"`
}

// QueryResponse is the reply to POST /v1/query, results in request order.
type QueryResponse struct {
	Results []QueryResult `json:"results"`
}

// DocumentInfo is the reply to GET /v1/documents/{id}.
type DocumentInfo struct {
	ID string `json:"id"`
	// Samples is the number of sketch samples stored.
	Samples int `json:"samples"`
	// Features is the number of feature ids stored for exact
	// verification, or -1 when none are.
	Features int `json:"features"`
	// Sketch is the stored sketch's binary encoding.
	Sketch []byte `json:"sketch"`
}

// DeleteResponse is the reply to DELETE /v1/documents/{id}.
type DeleteResponse struct {
	ID      string `json:"id"`
	Removed bool   `json:"removed"`
}

// CollapseRequest is the body of POST /v1/collapse: ids of a ranked
// result list, best first.
type CollapseRequest struct {
	IDs []string `json:"ids"`
}

// Collapsed is a dropped result and the kept result it collapsed into.
type Collapsed struct {
	ID   string `json:"id"`
	Into string `json:"into"`
}

// CollapseResponse is the reply to POST /v1/collapse.
type CollapseResponse struct {
	// Kept is the list with every near-duplicate group reduced to its
	// best-ranked member, in rank order (unknown ids included).
	Kept []string `json:"kept"`
	// Collapsed lists each dropped id with the id it collapsed into, in
	// rank order.
	Collapsed []Collapsed `json:"collapsed"`
	// Unknown lists the ids not in the index (kept, compared with
	// nothing).
	Unknown []string `json:"unknown"`
}

// Stats is the reply to GET /v1/stats.
type Stats struct {
	// Sketch is the sketch header documents are made with, as text.
	Sketch string `json:"sketch"`
	// LSH and Collapse are the supershingle schemes of the index and of
	// the collapse table.
	LSH       string  `json:"lsh"`
	Collapse  string  `json:"collapse"`
	Threshold float64 `json:"threshold"`
	// Store names the backend ("pebble", "redis", ...) and its
	// guarantees.
	Store   string `json:"store"`
	Durable bool   `json:"durable"`
	Atomic  bool   `json:"atomic"`
	Shared  bool   `json:"shared"`
	// Added, Removed and Queried count documents since this process
	// started.
	Added   int64 `json:"added"`
	Removed int64 `json:"removed"`
	Queried int64 `json:"queried"`
	// CollapseDocuments and CollapseBytes describe this process's
	// collapse table.
	CollapseDocuments int `json:"collapse_documents"`
	CollapseBytes     int `json:"collapse_bytes"`
	// Journal describes the shared store's journal this process follows
	// to keep its postings in memory (absent when it follows none).
	Journal *Journal `json:"journal,omitempty"`
	// UptimeSeconds is the time since the server started.
	UptimeSeconds float64 `json:"uptime_seconds"`
}

// BackupRequest is the body of POST /v1/admin/backup. The reply is 200
// with a BackupResponse once the backup is complete; 400 for a dir that
// exists or whose parent does not, 403 without a server token, 501 for a
// store that cannot be backed up by the server (Redis), and 507 (a full
// disk) or 500 when the backup could not be written, in which case no
// directory is left at dir and the index serves on.
type BackupRequest struct {
	// Dir is the absolute path, on the server's machine, of the directory
	// to write the backup into; it must not exist.
	Dir string `json:"dir"`
}

// BackupResponse is the reply to POST /v1/admin/backup.
type BackupResponse struct {
	Dir     string  `json:"dir"`
	Seconds float64 `json:"seconds"`
}

// Journal is the size of a shared store's journal of posting writes
// (entries every live server has read are trimmed) and how often this
// process rebuilt its postings from the store.
type Journal struct {
	Entries int64 `json:"entries"`
	// Bytes is the journal's memory in the store (Redis MEMORY USAGE),
	// -1 when the store does not say.
	Bytes int64 `json:"bytes"`
	// Rebuilds counts the in-memory postings made from the store: 1 at
	// start, one more each time this process was silent past the
	// journal's expiry.
	Rebuilds int64 `json:"rebuilds"`
}

// Error is the body of every reply with a 4xx or 5xx status.
type Error struct {
	Error string `json:"error"`
	// Field names the offending request field when there is one
	// ("documents[3].id", "sketches[0].sketch.k").
	Field string `json:"field,omitempty"`
}
