//go:build tools

// Package tools pins FerretDB v1.24.0, the local MongoDB-compatible store of auditpipe.
//
// `go install github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.0` is refused (its go.mod has
// replace directives), so this module requires it instead. `auditpipe up` copies this folder into
// tools_dir, runs `go mod vendor`, writes the version file the module zip lacks
// (vendor/github.com/FerretDB/FerretDB/build/version/version.txt) and builds with -mod=vendor.
package tools

import _ "github.com/FerretDB/FerretDB/cmd/ferretdb"
